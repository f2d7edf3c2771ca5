"""Idempotency records of any size: a remember whose response is past
DynamoDB's 400 KB item limit is recorded (compressed, or by reference in
parts) and replayed whole, without writing again."""

from __future__ import annotations

import json
import random
import string

import pytest
from remember_helpers import ent, extraction

from conftest import Harness


def _big_extraction(n: int, seed: int) -> dict[str, object]:
    """``n`` entities, each with a long description that compresses badly
    (random letters), so that the response is past 400 KB even compressed."""
    rng = random.Random(seed)
    words = ["".join(rng.choices(string.ascii_lowercase, k=550)) for _ in range(n)]
    return extraction([ent(f"Thing{i:04d}", "thing", words[i]) for i in range(n)])


@pytest.mark.parametrize("random_text", [True, False], ids=["by-reference", "compressed"])
def test_a_response_past_400_kb_is_recorded_and_replayed(gb: Harness, random_text: bool) -> None:
    n = 1000 if random_text else 720
    reply = _big_extraction(n, 7)
    if not random_text:  # compresses well: stored inline, compressed
        reply = extraction([ent(f"Thing{i:04d}", "thing", "x" * 550) for i in range(n)])
    gb.llm.script("extract", reply)
    body = {"user_id": "u1", "text": "A catalogue of many things."}
    first = gb.client.post("/v1/gb/remember", body, headers={"Idempotency-Key": "big"})
    assert first.status == 200, first.body
    assert len(json.dumps(first.body)) > 400 * 1024
    assert len(first.body["entities"]) == n
    stored = gb.scan("idempotency")
    parts = [r for r in stored if r["id"]["S"].startswith("gb-part#")]
    assert bool(parts) is random_text
    assert all(len(json.dumps(r)) < 400 * 1024 for r in stored if "data" not in r)

    again = gb.client.post("/v1/gb/remember", body, headers={"Idempotency-Key": "big"})
    assert again.status == 200
    assert again.body == first.body  # the first response, whole
    assert gb.llm.calls("extract") == 1  # nothing done again ...
    assert len(gb.scan("artifacts")) == 1  # ... nothing written again
    [ds] = gb.client.get("/v1/gb/datasets?user_id=u1").body["datasets"]
    assert (ds["entities"], ds["artifacts"]) == (n, 1)
