"""benchmarks/locomo_qa.py end to end on the fake OpenAI server: a tiny LoCoMo-format slice is
remembered and recalled through a real bank, answered and judged by a scripted model; the
figures of its last JSON line must follow from what the fake judged and served."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAI, HttpError, Malformed
from tests.fakes.secret_scan import leaks_in
from tests.fakes.secrets import OPENAI_API_KEY

sys.path.append(str(Path(__file__).resolve().parent.parent / "benchmarks"))

import locomo_qa  # a script in benchmarks/, found through the path above

# (speaker, text) per session; questions name the words of their evidence turn.
SESSIONS = [
    (
        "1:56 pm on 8 May, 2023",
        [
            ("Ana", "I adopted a grey cat called Mochi from the shelter."),
            ("Ben", "Lovely! I started learning the cello this spring."),
            ("Ana", "My sister Lena is moving to Lisbon next month."),
        ],
    ),
    (
        "10:02 am on 20 June, 2023",
        [
            ("Ben", "I played the cello at my first recital yesterday."),
            ("Ana", "Mochi knocked my pottery vase off the shelf."),
            ("Ben", "I am training for a marathon in Berlin in September."),
        ],
    ),
]
QUESTIONS = [  # (question, gold, evidence, category)
    ("What is the name of Ana's cat?", "Mochi", "D1:1", 4),
    ("Which instrument is Ben learning?", "the cello", "D1:2", 4),
    ("Where is Ana's sister Lena moving?", "Lisbon", "D1:3", 1),
    ("When did Ben play at his first cello recital?", "19 June 2023", "D2:1", 2),
    ("What did Mochi knock off the shelf?", "a pottery vase", "D2:2", 4),
    ("Would Ben likely enjoy running events?", "Yes", "D2:3", 3),
    ("Where is Ben's marathon?", "Berlin", "D2:3", 1),
    ("What did Ana's dog knock over?", "", "D2:2", 5),
]
KNOWN = {0, 2, 3, 6, 7}  # indexes the scripted answerer gets right; the rest it gets wrong


def conversation(name: str) -> dict[str, Any]:
    body: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Ben"}
    for n, (when, turns) in enumerate(SESSIONS, start=1):
        body[f"session_{n}_date_time"] = when
        body[f"session_{n}"] = [
            {"speaker": s, "dia_id": f"D{n}:{i}", "text": t} for i, (s, t) in enumerate(turns, 1)
        ]
    qa: list[dict[str, Any]] = []
    for question, gold, evidence, category in QUESTIONS:
        item: dict[str, Any] = {"question": question, "evidence": [evidence], "category": category}
        if category == 5:
            item["adversarial_answer"] = "a pottery vase"
        else:
            item["answer"] = gold
        qa.append(item)
    return {"sample_id": name, "conversation": body, "qa": qa}


def evidence_text(dia_id: str) -> str:
    session, turn = (int(x) for x in dia_id[1:].split(":"))
    return SESSIONS[session - 1][1][turn - 1][1]


def quoted(label: str, text: str) -> str:
    """The JSON string after `label: ` on its own line of a prompt."""
    match = re.search(rf"^{label}: (\".*\")$", text, re.MULTILINE)
    assert match, f"no {label} line"
    value = json.loads(match.group(1))
    assert isinstance(value, str)
    return value


class ScriptedModel:
    """Answers the answer prompt (right for KNOWN questions, else wrongly) and judges the judge
    prompt by exact match with the gold answer, keeping its verdicts; its first judgement has
    no label, to be asked again. Counts what each served request cost as the fake counts it
    (words)."""

    def __init__(self) -> None:
        self.gold = {q: (locomo_qa.NOT_MENTIONED if c == 5 else g) for q, g, _, c in QUESTIONS}
        self.answered: Counter[str] = Counter()
        self.verdicts: list[tuple[str, bool]] = []
        self.prompts: dict[str, str] = {}  # question -> the answer prompt's user message
        self.tokens = [0, 0]
        self.mumbled = False

    def __call__(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        if messages[0]["content"].startswith("You answer questions"):
            user = messages[1]["content"]
            question = quoted("Question", user)
            self.prompts[question] = user
            self.answered[question] += 1
            index = [q for q, *_ in QUESTIONS].index(question)
            reply = self.gold[question] if index in KNOWN else "something else entirely"
        else:
            prompt = messages[0]["content"]
            assert prompt.startswith("Label a generated answer")
            question, gold = quoted("Question", prompt), quoted("Gold answer", prompt)
            assert gold == self.gold[question]
            if not self.mumbled:
                self.mumbled = True
                reply = "Hard to say."
            else:
                correct = quoted("Generated answer", prompt) == gold
                self.verdicts.append((question, correct))
                label = "CORRECT" if correct else "WRONG"
                reply = json.dumps({"reason": "compared with the gold answer", "label": label})
        self.tokens[0] += sum(len(m["content"].split()) for m in messages)
        self.tokens[1] += len(reply.split())
        return reply


async def test_answers_and_judges_through_kizuna(tmp_path: Path, capsys: Any) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([conversation("conv-a"), conversation("conv-b")]))
    model = ScriptedModel()
    async with FakeOpenAI(api_key=OPENAI_API_KEY, default_reply=model) as fake:
        # The first request fails for good (400 is not retried); the second is a body cut
        # short, which the client retries.
        fake.reply(HttpError(400), Malformed())
        environ = {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": OPENAI_API_KEY}
        argv = [str(data), "--model", "fake-chat", "--embedder", "hash", "--limit", "13"]
        argv += ["--concurrency", "3", "--retry-delay", "0.01"]
        assert await locomo_qa.main(argv, environ) == 0
        requests = len(fake.chat_requests)
        models = {body["model"] for body in fake.chat_requests}
    out = capsys.readouterr()
    assert not leaks_in(out.out + out.err)
    assert models == {"fake-chat"}
    figures = json.loads(out.out.strip().splitlines()[-1])

    # --limit 13: all 8 questions of conv-a, the first 5 of conv-b; the 400 answered one.
    asked = Counter(q for q, *_ in QUESTIONS) + Counter(q for q, *_ in QUESTIONS[:5])
    unanswered = asked - model.answered
    assert sum(unanswered.values()) == 1 and figures["questions"] == 13
    assert figures["failed"] == 1 and figures["judged"] == 12 == len(model.verdicts)
    # The figures are the fake judge's verdicts, counted by category.
    category = {q: c for q, _, _, c in QUESTIONS}
    for number, name in locomo_qa.NAMES.items():
        verdicts = [v for q, v in model.verdicts if category[q] == number]
        row = figures["by_category"][name]
        assert row["questions"] == sum(n for q, n in asked.items() if category[q] == number)
        assert row["failed"] == sum(n for q, n in unanswered.items() if category[q] == number)
        assert (row["judged"], row["correct"]) == (len(verdicts), sum(verdicts))
        assert row["accuracy"] == (round(sum(verdicts) / len(verdicts), 4) if verdicts else None)
    four = [v for q, v in model.verdicts if category[q] != 5]
    assert figures["accuracy"] == round(sum(four) / len(four), 4)
    everything = [v for _, v in model.verdicts]
    assert figures["accuracy_with_adversarial"] == round(sum(everything) / len(everything), 4)
    assert 0 < sum(everything) < len(everything)

    # Calls: every HTTP request but the client's own retry of the cut body; the unlabelled
    # judgement was asked again, a call of its own. Tokens: what the fake served.
    assert figures["calls"] == requests - 1
    assert figures["by_purpose"]["judge"]["calls"] == 12 + 1
    assert figures["by_purpose"]["answer"]["failures"] == 1
    assert figures["tokens"] == {
        "prompt": model.tokens[0],
        "completion": model.tokens[1],
        "total": sum(model.tokens),
    }

    # Recall brought each question's evidence into the answer prompt, dated.
    for question, _, evidence, category_number in QUESTIONS:
        prompt = model.prompts[question]
        assert "Today is 20 June 2023, 10:02." in prompt
        if category_number != 5:
            assert json.dumps(evidence_text(evidence)) in prompt


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ('{"reason": "same city", "label": "CORRECT"}', True),
        ('```json\n{"reason": "no", "label": "wrong"}\n```', False),
        ("The answer names another place. WRONG", False),
        ("CORRECT or WRONG, hard to say", None),
        ("I cannot tell.", None),
    ],
)
def test_reads_the_judges_label(text: str, verdict: bool | None) -> None:
    assert locomo_qa.parse_verdict(text) is verdict


async def test_no_endpoint_is_an_error_not_a_crash(tmp_path: Path, capsys: Any) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([conversation("conv-a")]))
    assert await locomo_qa.main([str(data)], {}) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
