"""Async remember under `sam local start-api`: SAM CLI marks its containers with
AWS_SAM_LOCAL=true; with no queue there, the remember function's own process runs
the jobs. Deployed, nothing changes (503 without a queue)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gligabao import wiring
from gligabao.errors import NotConfigured
from gligabao.local.sam_local import compose_remember
from gligabao.queue.local import LocalJobQueue


@pytest.fixture(autouse=True)
def no_local_queue(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    saved = list(wiring._local_queue)
    wiring._local_queue.clear()
    wiring.remember_queue.cache_clear()
    monkeypatch.delenv("GB_REMEMBER_QUEUE_URL", raising=False)
    monkeypatch.delenv("AWS_SAM_LOCAL", raising=False)
    wiring.reset()  # settings read again, without a queue URL
    yield
    for queue in wiring._local_queue:
        if isinstance(queue, LocalJobQueue):
            queue.shutdown(wait=False)
    wiring._local_queue[:] = saved
    wiring.reset()


def test_under_sam_local_without_a_queue_jobs_run_in_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_SAM_LOCAL", "true")
    assert compose_remember()
    assert isinstance(wiring.remember_queue(), LocalJobQueue)


def test_deployed_without_a_queue_stays_not_configured() -> None:
    assert not compose_remember()
    with pytest.raises(NotConfigured):
        wiring.remember_queue()


def test_under_sam_local_a_configured_queue_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SAM_LOCAL", "true")
    monkeypatch.setenv("GB_REMEMBER_QUEUE_URL", "http://127.0.0.1:9/queue/q")
    assert not compose_remember()
    assert not wiring._local_queue
