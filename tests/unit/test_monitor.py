"""A call's metrics are its own: calls emitted at once from many threads (the
local server) each print one EMF document with their endpoint and counts."""

from __future__ import annotations

import json
import sys
import threading

import pytest

from gligabao.records.model import CallRecord
from gligabao.records.monitor import emit


def _documents(out: str) -> list[dict[str, object]]:
    """Every JSON document printed: print() writes a document and its newline
    apart, so two threads' lines may share one line."""
    decoder, docs, at = json.JSONDecoder(), [], 0
    while (at := out.find("{", at)) != -1:
        doc, at = decoder.raw_decode(out, at)
        docs.append(doc)
    return docs


def test_concurrent_calls_never_mix_their_metrics(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    monkeypatch.delenv("POWERTOOLS_DEV", raising=False)
    calls = [
        CallRecord(f"c{n}", "query", "u1", "d1", None, "2026-01-01T00:00:00Z") for n in range(16)
    ]
    start = threading.Barrier(len(calls))

    def run(n: int) -> None:
        start.wait()
        for _ in range(20):
            emit(calls[n], f"endpoint-{n}", 500 if n % 2 else 200)

    # Switch threads as often as the interpreter can: calls interleave mid-emit.
    sys.setswitchinterval(1e-6)
    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(0.005)
    docs = [doc for doc in _documents(capsys.readouterr().out) if "_aws" in doc]
    assert len(docs) == 16 * 20
    for doc in docs:
        n = int(str(doc["endpoint"]).removeprefix("endpoint-"))
        assert doc["Calls"] == [1.0]  # one call's metric set: never another's values added
        assert doc["Errors"] == [1.0 if n % 2 else 0.0]
