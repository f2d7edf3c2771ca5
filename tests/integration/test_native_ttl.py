"""DynamoDB's native TTL where it is right (moto): the rows whose expiry needs
no forget logic carry a TTL attribute with the right epoch and their tables
a TimeToLiveSpecification; the rows of texts, facts and their links carry
none, because forgetting a text must set back what it superseded (the
retention sweep runs the forget; docs/api.md, "Retention")."""

from __future__ import annotations

import time
from typing import Any

from conftest import Harness

DAY_S = 86_400


def _epoch(item: dict[str, Any], attr: str) -> int:
    return int(item[attr]["N"])


def test_records_and_idempotency_rows_carry_the_right_epoch(gb: Harness) -> None:
    from gligabao.config import IDEMPOTENCY_TTL_S, settings

    days = settings().records_retention_days
    gb.llm.script("extract", {"entities": [], "edges": []})
    before = int(time.time())
    r = gb.client.post(
        "/v1/gb/remember",
        {"user_id": "u1", "text": "A note to keep.", "extract": False},
        headers={"Idempotency-Key": "ttl-key-1"},
    )
    after = int(time.time()) + 1
    assert r.status == 200, r.body
    calls = gb.scan("calls")
    assert calls
    for row in calls:
        assert before + days * DAY_S <= _epoch(row, "expires_at") <= after + days * DAY_S
    for row in gb.scan("inferences"):  # the embedding's row
        assert before + days * DAY_S <= _epoch(row, "expires_at") <= after + days * DAY_S
    keys = gb.scan("idempotency")
    assert keys
    for row in keys:
        assert before + IDEMPOTENCY_TTL_S <= _epoch(row, "expiration") <= after + IDEMPOTENCY_TTL_S


def test_ttl_is_on_for_the_record_tables_and_off_for_the_memory(gb: Harness) -> None:
    import boto3

    from gligabao.config import settings

    cfg = settings()
    client = boto3.client(
        "dynamodb", endpoint_url=cfg.dynamodb_endpoint or None, region_name=cfg.region
    )

    def ttl(short: str) -> dict[str, Any]:
        desc = client.describe_time_to_live(TableName=cfg.table(short))
        return dict(desc["TimeToLiveDescription"])

    assert ttl("calls") == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}
    assert ttl("inferences") == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}
    assert ttl("idempotency") == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expiration"}
    # A text's expiry is the sweep's: its forget sets back what it superseded.
    for short in ("artifacts", "links", "edges", "entities"):
        assert ttl(short)["TimeToLiveStatus"] == "DISABLED"
