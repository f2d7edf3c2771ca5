"""The retrieval rulers (bench/locomo.py, bench/hotpotqa.py) on tiny
synthetic data, so that they cannot rot: each starts a real `gligabao serve`
with the local embedder and the fake LLM, remembers, asks, and scores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fakes.anthropic_server import FakeAnthropic, iter_text_blocks

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(600)


def run(
    module: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m bench.MODULE ARGS`` from the repository root, as its
    docstring says to run it."""
    full = {**os.environ, **(env or {}), "PYTHONPATH": str(ROOT / "shared")}
    return subprocess.run(
        [sys.executable, "-m", f"bench.{module}", *args],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=540,
    )


def bench(module: str, *args: str, env: dict[str, str] | None = None) -> str:
    """As ``run``, and it succeeded: its standard output."""
    done = run(module, *args, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def turn(n: int, i: int, speaker: str, text: str, **extra: str) -> dict[str, Any]:
    return {"speaker": speaker, "dia_id": f"D{n}:{i}", "text": text, **extra}


CONVERSATION = [
    {
        "sample_id": "conv-t1",
        "conversation": {
            "speaker_a": "Ada",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                turn(1, 1, "Ada", "Hi Ben! How was your week?"),
                turn(1, 2, "Ben", "Busy. I started a pottery class at the community centre."),
                turn(
                    1,
                    3,
                    "Ada",
                    "Nice! I adopted a greyhound named Pixel.",
                    img_url="http://x",
                    blip_caption="a photo of a grey dog on a sofa",
                ),
                turn(1, 4, "Ben", "Pixel is a great name. Dogs are the best."),
            ],
            "session_2_date_time": "10:00 am on 20 June, 2023",
            "session_2": [
                turn(2, 1, "Ada", "I ran my first half marathon in Lisbon last Sunday!"),
                turn(2, 2, "Ben", "Congratulations! My pottery teacher says my bowls improved."),
                turn(2, 3, "Ada", "Pixel came to watch the race with my sister."),
            ],
        },
        "qa": [
            {
                "question": "What class did Ben start?",
                "answer": "pottery",
                "evidence": ["D1:2"],
                "category": 4,
            },
            {
                "question": "Where did Ada run a half marathon?",
                "answer": "Lisbon",
                "evidence": ["D2:1"],
                "category": 2,
            },
            {
                "question": "What is the name of Ada's dog and who came with it to the race?",
                "answer": "Pixel, her sister",
                "evidence": ["D1:3 D2:3", "D:9:9"],
                "category": 1,
            },
            {
                "question": "What is on the sofa in the photo Ada shared?",
                "answer": "a grey dog",
                "evidence": ["D1:3"],
                "category": 4,
            },
            {
                "question": "Is this unanswerable?",
                "adversarial_answer": "x",
                "evidence": ["D1:1"],
                "category": 5,
            },
        ],
    }
]


def test_locomo_ruler_on_a_tiny_conversation(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(CONVERSATION))
    out = tmp_path / "out.json"
    printed = bench(
        "locomo",
        "--data",
        str(data),
        "--budget",
        "default,100",
        "--jobs",
        "1",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "e.npz"),
    )
    assert "turns, budget default" in printed and "sessions, budget 100" in printed
    rows = json.loads(out.read_text())
    for mode in ("turns", "sessions"):
        by = {(r["question"], r["budget"]): r for r in rows[mode]}
        assert len(by) == 8  # four questions (category 5 left out), two budgets
        # The dataset's evidence lists tidied: "D1:3 D2:3" is two; D:9:9 names no turn.
        dog = "What is the name of Ada's dog and who came with it to the race?"
        assert by[(dog, None)]["evidence"] == ["D1:3", "D2:3"]
        # A distinctive word: the turn that holds it reaches the context.
        assert by[("What class did Ben start?", None)]["found"] == ["D1:2"]
        assert by[("Where did Ada run a half marathon?", None)]["found"] == ["D2:1"]
        for r in rows[mode]:
            assert set(r["baselines"]) == {"cosine", "bm25", "fused"}
            assert r["share"] >= 0 and (r["share"] > 0) == (r["tokens"] > 0)
        # 100 tokens hold less than the whole conversation.
        assert by[(dog, 100)]["tokens"] <= 100
    # A shared photo's caption is part of the turn's text (the passage is the turn).
    photo = {r["question"]: r for r in rows["turns"] if r["budget"] is None}
    assert photo["What is on the sofa in the photo Ada shared?"]["found"] == ["D1:3"]


def test_locomo_ruler_on_the_dynamodb_stack_against_the_local_one(tmp_path: Path) -> None:
    """bench.locomo_dynamodb: the ruler once on `gligabao serve`'s SQLite file,
    once on DynamoDB (moto) with its vector indexes' fake, and the recall of
    both side by side."""
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(CONVERSATION))
    out = tmp_path / "out.json"
    done = run(
        "locomo_dynamodb",
        "--data",
        str(data),
        "--mode",
        "turns",
        "--budget",
        "default",
        "--jobs",
        "1",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "e.npz"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # The second server is the AWS-shaped stack, by its own wiring's account.
    assert "vectors:    DynamoVectorIndex (GB_VECTOR_STORE=dynamodb)" in done.stderr
    assert "storage:    dynamodb at http://127.0.0.1:" in done.stderr
    rows = json.loads(out.with_suffix(".dynamodb.json").read_text())["turns"]
    found = {r["question"]: r["found"] for r in rows}
    assert found["What class did Ben start?"] == ["D1:2"]
    assert found["Where did Ada run a half marathon?"] == ["D2:1"]
    assert found["What is on the sofa in the photo Ada shared?"] == ["D1:3"]
    assert "| turns | default | overall | 4 | 1.00 | 1.00 | +0.000 |" in done.stdout
    assert "0 of 4 questions found other evidence" in done.stdout


def test_locomo_dynamodb_backend_refuses_a_store(tmp_path: Path) -> None:
    """moto keeps its data in memory: a file to reuse would be a lie."""
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(CONVERSATION))
    done = run("locomo", "--data", str(data), "--backend", "dynamodb", "--store", str(tmp_path))
    assert done.returncode == 2 and "no --store" in done.stderr
    assert list(tmp_path.iterdir()) == [data]


def test_locomo_live_against_the_fakes(tmp_path: Path) -> None:
    """--live: the server's model answers, the judge grades (both the fake
    Anthropic here); J is the share the judge calls CORRECT."""

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        text = " ".join(t for m in body["messages"] for t in iter_text_blocks(m["content"]))
        said = "Pottery." if "What class" in text else "I don't know."
        return {"answer": said, "entities": [], "edges": [], "passages": []}

    def grade(body: dict[str, Any]) -> dict[str, Any]:
        text = " ".join(t for m in body["messages"] for t in iter_text_blocks(m["content"]))
        return {"reasoning": "-", "label": "WRONG" if "I don't know" in text else "CORRECT"}

    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(CONVERSATION))
    with FakeAnthropic() as fake:
        fake.default("query", answer).default("judge", grade)
        env = {
            **fake.env(),
            "GB_EMBEDDING_PROVIDER": "local",
            "GB_LLM_PROVIDER": "anthropic",
            "GB_LLM_MAX_RETRIES": "0",
        }
        printed = bench(
            "locomo",
            "--live",
            "--data",
            str(data),
            "--mode",
            "turns",
            "--jobs",
            "1",
            "--out",
            str(tmp_path / "out.json"),
            "--judge-model",
            "judge-m",
            "--cache",
            str(tmp_path / "e.npz"),
            env=env,
        )
        assert fake.calls("judge") == 4
        assert fake.calls("extract") == 7  # every turn, by the server's model
        assert {r["model"] for r in fake.requests_for("judge")} == {"judge-m"}
    assert "LLM judge judge-m" in printed
    rows = json.loads((tmp_path / "locomo-live.json").read_text())["turns"]
    assert [r["correct"] for r in rows] == [True, False, False, False]
    assert all(r["input_tokens"] > 0 and r["latency_ms"] > 0 for r in rows)
    assert "| overall | 4 | 0.25 |" in printed


PARAGRAPHS = {
    "Lumen Bridge": ["Lumen Bridge is a footbridge in Arden.", " It was designed by Cora Vale."],
    "Cora Vale": ["Cora Vale is an engineer.", " She was born in Maple Harbour."],
    "Maple Harbour": ["Maple Harbour is a fishing town on the north coast."],
    "Tin Orchard": ["Tin Orchard is a band from Arden that plays folk music."],
}
QUESTIONS = [
    {
        "question": "Where was the designer of Lumen Bridge born?",
        "answer": "Maple Harbour",
        "type": "bridge",
        "level": "easy",
        "context": [],
        "_id": "1",
        "supporting_facts": [["Lumen Bridge", 1], ["Cora Vale", 1]],
    },
    {
        "question": "What music does Tin Orchard play?",
        "answer": "folk",
        "type": "bridge",
        "level": "easy",
        "context": [],
        "_id": "2",
        "supporting_facts": [["Tin Orchard", 0]],
    },
]


def test_hotpotqa_ruler_on_tiny_paragraphs(tmp_path: Path) -> None:
    (tmp_path / "hotpotqa_dev100_corpus.json").write_text(json.dumps(PARAGRAPHS))
    (tmp_path / "hotpotqa_dev100.json").write_text(json.dumps(QUESTIONS))
    out = tmp_path / "out.json"
    printed = bench(
        "hotpotqa",
        "--data",
        str(tmp_path),
        "--budget",
        "default",
        "--jobs",
        "1",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "e.npz"),
    )
    rows = {r["question"]: r for r in json.loads(out.read_text())}
    assert rows["What music does Tin Orchard play?"]["found"] == ["Tin Orchard"]
    assert "Lumen Bridge" in rows["Where was the designer of Lumen Bridge born?"]["found"]
    assert set(rows["What music does Tin Orchard play?"]["baselines"]) == {
        "cosine",
        "bm25",
        "fused",
    }
    assert "| default | all | 2 |" in printed


def beam_conversation() -> dict[str, Any]:
    """A tiny conversation in the shape of ../shared/data/beam's file: a
    user, and an assistant whose long Markdown reply is searched by windows."""
    reply = "\n\n".join(
        [
            "Here is a plan for your week.",
            "## Training",
            "Run three times: an easy run on Monday, intervals on Wednesday, a long run on "
            "Saturday. " * 4,
            "## Food",
            "Eat oats in the morning and keep a banana for after the long run. " * 4,
        ]
    )
    turns = [
        (1, "March-15-2024", "user", "I'm Dana, training for the Porto half marathon in May."),
        (1, "March-15-2024", "assistant", reply),
        (2, "April-02-2024", "user", "Always answer me in bullet points from now on."),
        (2, "April-02-2024", "assistant", "Understood: bullet points from now on."),
    ]
    return {
        "dataset": "beam-100K",
        "conv_id": "100K/t1",
        "turns": [
            {"id": i, "session": s, "date": d, "speaker": who, "text": text}
            for i, (s, d, who, text) in enumerate(turns)
        ],
        "questions": [
            {
                "qid": "information_extraction-1",
                "question": "Which half marathon am I training for?",
                "answer": "Porto",
                "category": "information_extraction",
                "gold_turn_ids": [0],
                "gold_session_ids": [1],
                "cutoff_turn_index": None,
            },
            {
                "qid": "information_extraction-2",
                "question": "What should I eat after the long run?",
                "answer": "a banana",
                "category": "information_extraction",
                "gold_turn_ids": [1],
                "gold_session_ids": [1],
                "cutoff_turn_index": None,
            },
            {
                "qid": "abstention-1",
                "question": "What is my cat called?",
                "answer": "not said",
                "category": "abstention",
                "gold_turn_ids": [],
                "gold_session_ids": [],
                "cutoff_turn_index": None,
            },
        ],
    }


def test_beam_ruler_on_a_tiny_conversation(tmp_path: Path) -> None:
    data = tmp_path / "beam.jsonl"
    data.write_text(json.dumps(beam_conversation()) + "\n")
    out = tmp_path / "out.json"
    printed = bench(
        "beam",
        "--data",
        str(data),
        "--budget",
        "default,300",
        "--jobs",
        "1",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "e.npz"),
    )
    assert "turns, budget default" in printed and "embedding tokens per stored token" in printed
    rows = json.loads(out.read_text())["turns"]
    assert len(rows) == 4  # two questions with evidence (abstention has none), two budgets
    by = {(r["question"], r["budget"]): r for r in rows}
    assert by[("Which half marathon am I training for?", None)]["found"] == ["0"]
    # The reply is found by one of its windows: the message counts as found.
    assert by[("What should I eat after the long run?", None)]["found"] == ["1"]
    for r in rows:
        assert set(r["baselines"]) == {"cosine", "bm25", "fused"}


def test_beam_ruler_reuses_its_store_and_compares_profiles(tmp_path: Path) -> None:
    """A second run on --store asks again without remembering, one round per
    profile of a JSON --sweep (the notes on and off), BM25 alone with
    --no-cosine; a kept instruction in the notes is its turn found."""
    conv = beam_conversation()
    conv["questions"].append(
        {
            "qid": "instruction_following-1",
            "question": "Can you list my training days?",
            "answer": "in bullet points",
            "category": "instruction_following",
            "gold_turn_ids": [2],
            "gold_session_ids": [2],
            "cutoff_turn_index": None,
        }
    )
    data = tmp_path / "beam.jsonl"
    data.write_text(json.dumps(conv) + "\n")
    common = [
        "--data",
        str(data),
        "--budget",
        "default",
        "--jobs",
        "1",
        "--store",
        str(tmp_path / "store"),
        "--no-cosine",
        "--out",
        str(tmp_path / "out.json"),
    ]
    bench("beam", *common)
    printed = bench(
        "beam", *common, "--sweep", json.dumps({"notes": {}, "no notes": {"notes_standing": 0}})
    )
    assert "reused from --store" in printed
    rows = json.loads((tmp_path / "out.json").read_text())
    assert set(rows) == {"turns notes", "turns no notes"}
    for r in rows["turns notes"] + rows["turns no notes"]:
        assert set(r["baselines"]) == {"bm25"}
    by = {r["question"]: r for r in rows["turns notes"]}
    assert by["Can you list my training days?"]["found"] == ["2"]


def test_locomo_ruler_rewrites_the_sessions_in_a_chat_format(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(CONVERSATION))
    out = tmp_path / "out.json"
    printed = bench(
        "locomo",
        "--data",
        str(data),
        "--mode",
        "sessions",
        "--format",
        "slack",
        "--budget",
        "default",
        "--jobs",
        "1",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "e.npz"),
    )
    assert "format slack" in printed
    by = {r["question"]: r for r in json.loads(out.read_text())["sessions"]}
    # The turn's header and text lines reached the context: the turn is found.
    assert by["What class did Ben start?"]["found"] == ["D1:2"]
