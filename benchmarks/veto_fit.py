"""The learned veto of memory/encoding/veto.py: its weights fitted from the labelled messages of
benchmarks/data/intentions.json, and measured leaving one part out.

    python benchmarks/veto_fit.py            # fit on the training parts, write veto.json
    python benchmarks/veto_fit.py --folds    # leave one part out: rules alone against the veto

The training parts are those tuned on (TRAIN); the yardsticks never tuned on are left out. Each
find of `spot` in a training message is one example, positive when the message expects an
intention. The model: logistic regression over memory.encoding.veto's hashed features, with an
L2 penalty (LAMBDA; the bias is not penalised), fitted by Nesterov's accelerated gradient for a
fixed number of steps from zero weights, so the same data give the same weights. The
threshold below which a find is dropped is chosen by leaving one part out only: the highest
that loses at most MAX_LOST of the parts' expected intentions found with the right day, summed
over the folds. --folds prints each part's counts (benchmarks/intentions.py's) with the rules
alone and with the veto fitted on the other parts, at that threshold; the last line is JSON."""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from intentions import CASES, NOW, PARTS, YARDSTICKS, Case, load_parts, score

from memory.encoding.spotting import Spotted
from memory.encoding.veto import WEIGHTS_FILE, Veto, features

TRAIN = tuple(part for part in PARTS if part not in YARDSTICKS)
LAMBDA = 1e-3
STEPS = 3000
DIGITS = 3  # the weights as written: rounded, so a refit on another machine writes the same
MAX_LOST = 0.01  # of the expected intentions found with the right day, over the folds
THRESHOLDS = tuple(round(0.02 * i, 2) for i in range(1, 26))
FOUND = ("found_in(text)", "[found] = local_reading", "== [spotted]")
ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests" / "test_intentions.py"
OUT = Path(__file__).resolve().parent.parent / "memory" / "encoding" / WEIGHTS_FILE

Examples = tuple[list[list[int]], npt.NDArray[np.float64]]


def tests_sentences() -> list[Case]:
    """The sentences tests/test_intentions.py reads, each with whether it expects an intention:
    those a test asks for a kind or a due time of, or finds one in, do; those it asks for
    nothing of (`== []`) do not. Said at the benchmark's moment (the features know no time)."""
    source = TESTS.read_text(encoding="utf-8")
    lines = source.splitlines()  # once: ast.get_source_segment splits the file at each call
    cases: list[Case] = []
    for function in ast.parse(source).body:
        if not isinstance(function, ast.FunctionDef):
            continue
        body = "\n".join(lines[function.lineno - 1 : function.end_lineno])
        for decorator in function.decorator_list:
            if not (
                isinstance(decorator, ast.Call)
                and ast.unparse(decorator.func).endswith("parametrize")
                and isinstance(decorator.args[1], ast.List)
            ):
                continue
            names = ast.literal_eval(decorator.args[0])
            names = names.split(",") if isinstance(names, str) else list(names)
            if names[0].strip() != "text":
                continue
            if len(names) > 1 or any(x in body for x in FOUND):
                expected: dict[str, Any] | None = {"kind": "", "due": "", "stated_time": False}
            elif "== []" in body:
                expected = None
            else:
                continue
            for value in decorator.args[1].elts:
                text = value.elts[0] if isinstance(value, ast.Tuple) else value
                if isinstance(text, ast.Constant) and isinstance(text.value, str):
                    cases.append((text.value, expected, NOW))
    return cases


def examples(cases: Sequence[Case]) -> Examples:
    """Each message's features, and whether it expects an intention."""
    rows = [features(text) for text, _, _ in cases]
    return rows, np.array([0.0 if expected is None else 1.0 for _, expected, _ in cases])


def fit(rows: list[list[int]], labels: npt.NDArray[np.float64]) -> tuple[float, dict[int, float]]:
    """The bias and the weights (by hashed feature, those of the examples) of an L2-penalised
    logistic regression, by a fixed number of accelerated gradient steps."""
    columns = sorted({f for row in rows for f in row})
    index = {f: i for i, f in enumerate(columns)}
    at_row = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
    at_col = np.array([index[f] for row in rows for f in row], dtype=np.int64)
    n, d = len(rows), len(columns)

    def times(w: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.bincount(at_row, weights=w[at_col], minlength=n).astype(np.float64)

    def times_t(r: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.bincount(at_col, weights=r[at_row], minlength=d).astype(np.float64)

    # The gradient's Lipschitz constant: a quarter of the largest eigenvalue of X'X / n (with a
    # column of ones for the bias), by power iteration from a fixed start.
    v = np.ones(d + 1)
    for _ in range(50):
        u = times(v[:d]) + v[d]
        v = np.append(times_t(u), u.sum())
        v /= np.linalg.norm(v)
    u = times(v[:d]) + v[d]
    step = 1 / (0.25 * float(u @ u) / n + LAMBDA)
    theta = np.zeros(d + 1)
    previous = theta
    for k in range(STEPS):
        look = theta + (k / (k + 3)) * (theta - previous)
        p = 1 / (1 + np.exp(-(times(look[:d]) + look[d])))
        gradient = np.append(times_t(p - labels) / n + LAMBDA * look[:d], (p - labels).mean())
        previous, theta = theta, look - step * gradient
    weights = {f: round(float(w), DIGITS) for f, w in zip(columns, theta[:d], strict=True)}
    return round(float(theta[d]), DIGITS), {f: w for f, w in weights.items() if w != 0.0}


def featured(parts: dict[str, list[Case]]) -> dict[str, Examples]:
    """The examples of each training part, and of the sentences of the tests and of the first
    set (benchmarks/intentions.py's CASES) as "always": their features reckoned once."""
    each = {name: examples(parts[name]) for name in TRAIN}
    each["always"] = examples([*tests_sentences(), *first_set()])
    return each


def model(each: dict[str, Examples], names: Sequence[str], threshold: float) -> Veto:
    """The veto fitted on the parts `names` and the sentences always trained on."""
    chosen = [each[name] for name in ("always", *names)]
    rows = [row for r, _ in chosen for row in r]
    bias, weights = fit(rows, np.concatenate([y for _, y in chosen]))
    return Veto(bias, MappingProxyType(weights), threshold)


def first_set() -> list[Case]:
    return [(text, None if e is None else {"kind": e[0]}, NOW) for text, e in CASES]


def rules_alone(text: str, found: list[Spotted]) -> list[Spotted]:
    return found


def folds(parts: dict[str, list[Case]], known: dict[str, Examples]) -> dict[str, Any]:
    """Each training part measured with the rules alone and with the veto fitted on the other
    parts, at each threshold, with the share of its distractors the veto would drop (the rules
    were tuned on every training part and find none of its distractors: this is what the veto
    would do to those they had found); the threshold chosen, and the figures at it."""
    alone = {name: score(parts[name], False, rules_alone) for name in TRAIN}
    # A message vetoed yields nothing: each message's counts alone, summed with or without it.
    each = {name: [score([case], False, rules_alone) for case in parts[name]] for name in TRAIN}
    chances: dict[str, list[float]] = {}
    for name in TRAIN:
        fitted = model(known, [p for p in TRAIN if p != name], 0.0)
        chances[name] = [fitted.probability(text) for text, _, _ in parts[name]]
    sweep: dict[float, dict[str, dict[str, float]]] = {}
    for t in THRESHOLDS:
        sweep[t] = {}
        for name in TRAIN:
            kept = [c for c, p in zip(each[name], chances[name], strict=True) if p >= t]
            cases = zip(parts[name], chances[name], strict=True)
            nothing = [p for (_, e, _), p in cases if e is None]
            sweep[t][name] = {
                "found": sum(c["found"] for c in kept),
                "false_positives": sum(c["false_positives"] for c in kept),
                "distractors_dropped": round(sum(p < t for p in nothing) / len(nothing), 3),
            }
    found = sum(alone[p]["found"] for p in TRAIN)
    expected = sum(alone[p]["expected"] for p in TRAIN)
    chosen = max(
        t
        for t in THRESHOLDS
        if found - sum(sweep[t][p]["found"] for p in TRAIN) <= MAX_LOST * expected
    )
    return {"threshold": chosen, "rules": alone, "veto": sweep[chosen], "sweep": sweep}


def weights_text(parts: dict[str, list[Case]]) -> str:
    """veto.json's text: the model fitted on all the training parts, at the threshold leaving
    one part out chooses."""
    known = featured(parts)
    fitted = model(known, TRAIN, folds(parts, known)["threshold"])
    body = {
        "threshold": fitted.threshold,
        "bias": fitted.bias,
        "weights": {str(f): w for f, w in sorted(fitted.weights.items())},
    }
    return json.dumps(body, separators=(",", ":")) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", action="store_true", help="leave one part out, and print")
    args = parser.parse_args()
    parts = load_parts()
    if not args.folds:
        OUT.write_text(weights_text(parts), encoding="utf-8")
        return
    measured = folds(parts, featured(parts))
    for t, row in measured["sweep"].items():
        lost = sum(measured["rules"][p]["found"] - row[p]["found"] for p in TRAIN)
        print(f"{t:.2f} lost {lost:3} dropped", [row[p]["distractors_dropped"] for p in TRAIN])
    print("part      expected  found rules/veto  false positives rules/veto  distractors dropped")
    for name in TRAIN:
        rules, veto = measured["rules"][name], measured["veto"][name]
        print(
            f"{name:9} {rules['expected']:8}  {rules['found']:5} / {veto['found']:<5}"
            f"  {rules['false_positives']:11} / {veto['false_positives']:<11}"
            f"  {veto['distractors_dropped']:.3f}"
        )
    print(json.dumps({k: v for k, v in measured.items() if k != "sweep"}))


if __name__ == "__main__":
    main()
