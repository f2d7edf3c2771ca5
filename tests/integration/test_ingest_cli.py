"""`gligabao ingest FILE.jsonl` (issue 32): on the local SQLite file and
through a server (``--url``); the progress, a bad file (nothing written), a
failure in the middle and the rerun with the same key, and a process killed
between two pieces whose rerun finishes the file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_helpers import conversation, extract, invalidate

from conftest import Harness
from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from gligabao import wiring
from gligabao.local.cli import main
from gligabao.models import DatasetKey


@pytest.fixture
def gb(gb_http: Harness) -> Harness:
    """Over a loopback socket: `gligabao ingest --url` needs a server on a port."""
    return gb_http


ROOT = Path(__file__).resolve().parents[2]
KEY = DatasetKey("u1", "main")


@pytest.fixture
def env(
    monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> Iterator[FakeAnthropic]:
    # main() sets these itself; set first here so that they are restored after.
    for name in ("GB_LOCAL", "GB_DATA", "GB_DYNAMODB_ENDPOINT", "GB_OPENSEARCH_URL"):
        monkeypatch.setenv(name, "")
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
    monkeypatch.setenv("GB_EMBEDDING_DIMENSION", "64")
    monkeypatch.setenv("GB_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("GB_BATCH_WINDOW_TEXTS", "10")
    fake_anthropic.default("extract", extract).default("invalidate", invalidate)
    yield fake_anthropic
    wiring.reset()


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def rows(n: int = 30) -> list[dict[str, Any]]:
    return [{"user_id": "u1", **it} for it in conversation(n)]


def stored(db: Path) -> list[str]:
    # (the env fixture restores both after the test)
    os.environ["GB_LOCAL"], os.environ["GB_DATA"] = "1", str(db)
    wiring.reset()
    arts = sorted(wiring.graph_store().iter_artifacts(KEY), key=lambda a: a.id)
    return [a.text for a in arts]


def test_ingest_the_local_file_with_progress(
    env: FakeAnthropic, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, db = write(tmp_path / "chat.jsonl", rows(30)[::-1]), tmp_path / "gb.db"
    assert main(["ingest", str(src), "--data", str(db)]) == 0
    out = capsys.readouterr()
    assert "ingest: 30/30 texts" in out.err and "texts/s" in out.err and "s left" in out.err
    assert "ingested 30 of 30 texts (0 skipped, 0 failed)" in out.out
    assert env.calls("extract") == 3  # ten texts per extraction call (GB_BATCH_WINDOW_TEXTS)
    assert stored(db) == [r["text"] for r in rows(30)]  # in the order of their time


def test_more_texts_than_a_batch_holds_go_as_several_batches_in_time_order(
    env: FakeAnthropic, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 1,001 lines: a batch holds at most 1,000 items
    lines = [
        {
            "user_id": "u1",
            "text": f"note {i}",
            "reference_time": f"2025-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z",
            "extract": False,
        }
        for i in range(1001)
    ]
    src, db = write(tmp_path / "many.jsonl", lines[::-1]), tmp_path / "gb.db"
    assert main(["ingest", str(src), "--data", str(db)]) == 0
    assert "ingested 1001 of 1001 texts (0 skipped, 0 failed)" in capsys.readouterr().out
    assert stored(db) == [r["text"] for r in lines]  # in the order of their time
    assert env.calls() == 0


def test_a_bad_line_is_named_and_nothing_is_written(
    env: FakeAnthropic, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = rows(5)
    lines[3] = {"user_id": "u1", "text": "x", "reference_time": "yesterday"}
    src, db = write(tmp_path / "bad.jsonl", lines), tmp_path / "gb.db"
    assert main(["ingest", str(src), "--data", str(db)]) == 2
    err = capsys.readouterr().err
    assert "line 4: reference_time" in err
    assert env.calls() == 0 and stored(db) == []


def test_a_failure_in_the_middle_and_the_rerun_with_the_same_key(
    env: FakeAnthropic, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, db = write(tmp_path / "chat.jsonl", rows(30)), tmp_path / "gb.db"
    env.script("extract", extract, times=1)
    env.fail_next(400, stage="extract")  # the second window's, for good
    assert main(["ingest", str(src), "--data", str(db)]) == 1
    out = capsys.readouterr()
    assert "ingested 20 of 30 texts (0 skipped, 10 failed)" in out.out, out
    assert "run the same command again" in out.err
    assert len(stored(db)) == 20
    calls = env.calls("extract")
    assert main(["ingest", str(src), "--data", str(db)]) == 0
    out = capsys.readouterr()
    assert "ingested 30 of 30 texts (20 skipped, 0 failed)" in out.out, out
    assert env.calls("extract") == calls + 1  # only the failed window again
    assert sorted(stored(db)) == sorted(r["text"] for r in rows(30))  # no text twice


def test_ingest_through_a_server(
    gb: Harness, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gb.llm.default("extract", extract).default("invalidate", invalidate)
    src = write(tmp_path / "chat.jsonl", [{**r, "dataset": "chat"} for r in rows(30)])
    assert main(["ingest", str(src), "--url", gb.client.base]) == 0
    out = capsys.readouterr()
    assert "ingest: 30/30 texts" in out.err
    assert "ingested 30 of 30 texts" in out.out
    arts = list(gb.graph.iter_artifacts(DatasetKey("u1", "chat")))
    assert len(arts) == 30
    # again: every text is skipped, no LLM call
    calls = gb.llm.calls()
    assert main(["ingest", str(src), "--url", gb.client.base]) == 0
    assert "(30 skipped, 0 failed)" in capsys.readouterr().out
    assert gb.llm.calls() == calls


def test_killed_between_pieces_the_rerun_finishes_the_file(
    env: FakeAnthropic, tmp_path: Path
) -> None:
    src, db = write(tmp_path / "chat.jsonl", rows(30)), tmp_path / "gb.db"
    second, release = threading.Event(), threading.Event()
    seen = [0]

    def slow(body: dict[str, Any]) -> dict[str, Any]:
        seen[0] += 1
        if seen[0] == 2:  # the second window: hold it until the process is gone
            second.set()
            release.wait(30)
        return extract(body)

    env.default("extract", slow)
    child_env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "shared"),
        "GB_LOCAL": "1",
        "GB_DATA": str(db),
    }
    cmd = [sys.executable, "-m", "gligabao.local.cli", "ingest", str(src), "--data", str(db)]
    proc = subprocess.Popen(cmd, env=child_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert second.wait(120), proc.communicate(timeout=5)
        os.kill(proc.pid, signal.SIGKILL)  # between the first piece and the second
        proc.wait(10)
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert len(stored(db)) == 10  # the first window, committed
    done = subprocess.run(cmd, env=child_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "(10 skipped, 0 failed)" in done.stdout
    texts = stored(db)
    assert sorted(texts) == sorted(r["text"] for r in rows(30)) and len(texts) == 30
