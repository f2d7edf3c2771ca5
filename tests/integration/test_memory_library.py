"""``gligabao.Memory`` as a library: a file that outlives it, a RAM file that
does not, one open at a time, and no server, queue or socket thread (the contract of its
methods is tests/contract/test_api_transports.py)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI


@pytest.fixture(autouse=True)
def _models(
    monkeypatch: pytest.MonkeyPatch,
    fake_anthropic_shared: FakeAnthropic,
    fake_openai_shared: FakeOpenAI,
) -> None:
    for k, v in {**fake_anthropic_shared.env(), **fake_openai_shared.env()}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("GB_EMBEDDING_DIMENSION", "64")
    monkeypatch.delenv("GB_DYNAMODB_ENDPOINT", raising=False)


def test_a_file_outlives_its_memory(tmp_path: Path) -> None:
    from gligabao import Memory

    path = tmp_path / "agent.db"
    with Memory(path=path, user_id="alice") as gb:
        gb.remember("Alice works at Acme.", extract=False)
    with Memory(path=str(path), user_id="alice") as gb:
        [dataset] = gb.datasets().datasets
        assert dataset.artifacts == 1
        assert "Acme" in gb.search("Where does Alice work?").passages[0].text


def test_memory_in_ram_is_gone_at_close() -> None:
    from gligabao import Memory

    gb = Memory(user_id="alice")
    gb.remember("Alice works at Acme.", extract=False)
    assert os.path.exists(gb.path)
    gb.close()
    assert not os.path.exists(gb.path)
    with pytest.raises(RuntimeError, match="closed"):
        gb.datasets()
    with Memory(user_id="alice") as again:  # a new one starts empty
        assert again.datasets().datasets == []


def test_one_memory_at_a_time_and_the_environment_back_after(tmp_path: Path) -> None:
    from gligabao import Memory
    from gligabao.config import settings

    before = settings().data_path
    with Memory(user_id="alice") as gb:
        assert settings().data_path == gb.path and settings().store == "sqlite"
        with pytest.raises(RuntimeError, match="already open"):
            Memory(path=tmp_path / "other.db")
    assert settings().data_path == before


def test_no_server_queue_or_socket_thread(tmp_path: Path) -> None:
    """What the API queues runs in the caller's thread; the only threads a
    search adds are the use case's read pool (memory/parallel.py), which
    overlaps the embeddings request with the keyword reads, as in Lambda."""
    from gligabao import Memory

    before = set(threading.enumerate())
    with Memory(path=tmp_path / "t.db", user_id="alice") as gb:
        gb.remember("Alice works at Acme.", extract=False)
        gb.remember_batch([{"text": "Bob joined.", "extract": False}])
        gb.search("Who joined?")
        added = [t.name for t in set(threading.enumerate()) - before]
    assert all(name.startswith("gb-reads") for name in added), added
