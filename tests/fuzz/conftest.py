"""The fuzz tests: hypothesis properties over bad input. Their settings (example counts,
derandomized) come from tests/fakes/fuzz.py `fuzzed`; KIZUNA_FUZZ_EXAMPLES=N runs N examples
of every property."""
