"""The Idempotency-Key (IETF draft): the key's request fingerprint is kept
with it; the same key with another body (another text, another dataset) is
422 and writes nothing, the same body replays the first response (its status
and mode: the first call's). On the SQLite file (`gligabao serve`) and on
DynamoDB (moto, the `gb` harness)."""

from __future__ import annotations

from typing import Any

from conftest import Client, Harness
from served import ServedCounting

FIRST = {"user_id": "u1", "text": "Alice works at Acme.", "extract": False}


def run_the_rules(client: Client, counts: Any, key: str) -> None:
    headers = {"Idempotency-Key": key}
    first = client.post("/v1/gb/remember", FIRST, headers=headers)
    assert first.status == 200, first.body
    before = counts()
    for other in (
        {**FIRST, "text": "Bob works at Initech."},
        {**FIRST, "dataset": "elsewhere"},
        {**FIRST, "extract": True},
    ):
        r = client.post("/v1/gb/remember", other, headers=headers)
        assert r.status == 422, r.body
        assert "another request body" in r.body["error"]
        assert r.call_id
        assert counts() == before
    # the key in the body or in the header: the same request, replayed
    again = client.post("/v1/gb/remember", {**FIRST, "idempotency_key": key})
    assert again.status == 200 and again.body == first.body
    # a repeat asking for the queued mode replays the first (synchronous) answer
    queued = client.post("/v1/gb/remember", FIRST, headers={**headers, "Prefer": "respond-async"})
    assert queued.status == 200 and queued.body == first.body
    assert counts() == before


def test_the_key_fingerprint_on_the_sqlite_file(served: ServedCounting) -> None:
    run_the_rules(Client(served.url), served.row_counts, "sqlite-key-1")


def test_the_key_fingerprint_on_dynamodb(gb: Harness) -> None:
    run_the_rules(gb.client, gb.row_counts, "dynamodb-key-1")
