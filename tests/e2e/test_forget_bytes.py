"""A forget on `gligabao serve` is a forget of the bytes: after it and a
clean stop (SIGTERM), neither the SQLite file nor its write-ahead log holds
the removed text, its words (the full-text index keeps them lowercased) or
the names only it mentioned. Deleted rows are overwritten
(secure_delete), not left in free pages; the log is checkpointed and
truncated on the stop."""

from __future__ import annotations

import signal
from pathlib import Path

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from served import ALICE_AT_ACME, Served, one_fact

KEPT = "Alice works at Acme, says Wobbleton."
GONE = "Alice moved from Acme to Globex, whispered Quixotlan."
GLOBEX = one_fact(
    ("Alice", "person"), "works_at", ("Globex", "organization"), "Alice works at Globex."
)


def _file_bytes(data: str) -> bytes:
    """The database file and whatever journal files sit beside it."""
    base = Path(data)
    return b"".join(p.read_bytes() for p in base.parent.glob(base.name + "*"))


def _traces(blob: bytes, *needles: str) -> list[str]:
    low = blob.lower()
    return [n for n in needles if n.lower().encode() in low]


def test_forgotten_text_is_not_in_the_file_after_a_clean_stop(
    fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    env = {**fake_anthropic.env(), **fake_openai.env(), "GB_EMBEDDING_DIMENSION": "64"}
    s = Served(env)
    try:
        fake_anthropic.script("extract", ALICE_AT_ACME)
        s.remember(KEPT, session_id="s1")
        fake_anthropic.script("extract", GLOBEX)
        fake_anthropic.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
        gone = s.remember(GONE, session_id="s1").body["artifact_id"]
        # before the forget the file (or its log) holds the text
        assert _traces(_file_bytes(s.data), "Quixotlan", "Globex") == ["Quixotlan", "Globex"]
        r = s.client.delete(f"/v1/gb/artifacts/{gone}?user_id=u1")
        assert r.status == 200, r.body
        assert r.body["removed"]["entities"], r.body  # Globex went with it
    finally:
        code, _ = s.stop(signal.SIGTERM)
    assert code == 0
    wal = Path(s.data + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    blob = _file_bytes(s.data)
    assert _traces(blob, "Quixotlan", "whispered", "Globex", GONE) == []
    # the scan reads the real file: the kept text is there
    assert _traces(blob, "Wobbleton") == ["Wobbleton"]


def test_an_erased_user_is_not_in_the_file_after_a_clean_stop(
    fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    env = {**fake_anthropic.env(), **fake_openai.env(), "GB_EMBEDDING_DIMENSION": "64"}
    s = Served(env)
    try:
        fake_anthropic.script("extract", GLOBEX)
        r = s.client.post("/v1/gb/remember", {"user_id": "quixotlan-user", "text": GONE})
        assert r.status == 200, r.body
        fake_anthropic.script("extract", ALICE_AT_ACME)
        r = s.client.post("/v1/gb/remember", {"user_id": "kept-user", "text": KEPT})
        assert r.status == 200, r.body
        assert _traces(_file_bytes(s.data), "Quixotlan", "quixotlan-user") == [
            "Quixotlan",
            "quixotlan-user",
        ]
        r = s.client.delete("/v1/gb/users/quixotlan-user")
        assert r.status == 202, r.body
    finally:
        code, _ = s.stop(signal.SIGTERM)
    assert code == 0
    blob = _file_bytes(s.data)
    assert _traces(blob, "Quixotlan", "whispered", "Globex", GONE, "quixotlan-user") == []
    assert _traces(blob, "Wobbleton", "kept-user") == ["Wobbleton", "kept-user"]
