"""Property tests over bad input (hypothesis): config and persona files, character cards,
dates, messages through the engine and every surface, attachments, search text. Settings and
strategies are in tests/fakes/fuzz.py; KIZUNA_FUZZ_EXAMPLES=N runs N examples of each."""
