"""Erase a user (issue 27): DELETE /v1/gb/users/{user_id} answers 202 with a
call ID; every dataset, row, vector, call record, inference row, idempotency
record and queued job of the user is gone from every table (a scan of each
finds none of the texts, names or the ID), on DynamoDB (moto) with the
in-process vectors and with the DynamoDB-vectors fake; nothing of it comes
back through the API; the other user keeps everything; IDs are not reused
when the user comes back; bad input is refused and changes nothing."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from erase_helpers import (
    FORGOTTEN_NEEDLES,
    OTHER,
    PATH_USER,
    TEXT,
    USER,
    ZEPH_WORK,
    assert_api_returns_nothing,
    assert_other_user_kept,
    erase,
    populate,
    traces,
    wait_call,
)

from conftest import Harness
from gligabao.dynamodb.tables import ALL_MODELS, short_name


def _scan_all(gb: Harness) -> dict[str, str]:
    return {short_name(m): json.dumps(gb.scan(short_name(m))) for m in ALL_MODELS}


@pytest.mark.parametrize("gb_store", ["memory", "dynamodb"])
def test_an_erase_leaves_nothing_in_any_table(gb: Harness, gb_store: str) -> None:
    first = populate(gb)
    # after the forget: nothing of the forgotten text in any table
    for table, raw in _scan_all(gb).items():
        assert traces(raw, FORGOTTEN_NEEDLES) == [], table
    # before the erase, the scan does find the user (it can fail)
    assert traces("".join(_scan_all(gb).values()))
    if gb_store == "memory":
        assert gb.vectors.count(_key("main"), "edges") > 0

    out = erase(gb)
    removed = out["removed"]
    assert out["status"] == "ok" and out["finished_at"]
    assert removed["datasets"] == 2 and removed["artifacts"] == 2 and removed["edges"] == 2
    assert removed["calls"] >= 3 and removed["inferences"] >= 3 and removed["idempotency"] == 1
    for table, raw in _scan_all(gb).items():
        assert traces(raw) == [], (table, traces(raw))
    if gb_store == "memory":
        for dataset in ("main", "hobbies"):
            for kind in ("entities", "edges", "chunks", "summaries"):
                assert gb.vectors.count(_key(dataset), kind) == 0
    # the call record says when it finished and what went, and no text
    call = wait_call(gb, USER, out["call_id"])
    assert call["type"] == "erase" and call["status"] == "ok"
    assert call["result"] == {"finished_at": out["finished_at"], "removed": removed}
    assert traces(json.dumps(call)) == []
    assert_api_returns_nothing(gb)
    assert_other_user_kept(gb)

    # erasing again is the same answer shape, with no dataset left (only
    # the records of the calls made since)
    again = erase(gb)
    assert again["call_id"] != out["call_id"]
    assert again["removed"]["datasets"] == again["removed"]["idempotency"] == 0

    # the user comes back: IDs go on from where they were (never reused)
    gb.llm.script("extract", ZEPH_WORK)
    back = gb.remember(TEXT, user=USER)
    assert back["artifact_id"] > first["last_artifact"]
    assert min(e["id"] for e in back["edges"]) > 2


def test_a_queued_job_of_an_erased_user_is_dropped(gb: Harness) -> None:
    from gligabao.handlers.remember_worker import process_job

    populate(gb)
    erase(gb)
    job = {
        "kind": "remember",
        "call_id": "queued-before-erase",
        "reference_time": "2025-01-01T00:00:00Z",
        "request": {"user_id": USER, "text": TEXT},
    }
    before = gb.row_counts()
    assert process_job(job) is False
    assert gb.row_counts() == before
    assert gb.llm.calls("extract") >= 0 and gb.client.get(
        f"/v1/gb/datasets?user_id={PATH_USER}"
    ).body == {"datasets": []}


@pytest.mark.parametrize(
    "path",
    [
        "/v1/gb/users/a%01b",  # a control character
        "/v1/gb/users/" + "x" * 129,  # too long
        "/v1/gb/users/%ff%fe",  # not UTF-8
        f"/v1/gb/users/{PATH_USER}?user_id={OTHER}",  # no query parameters
    ],
)
def test_bad_erases_are_400_and_remove_nothing(gb: Harness, path: str) -> None:
    populate(gb)
    before = gb.row_counts()
    r = gb.client.delete(path)
    assert r.status == 400, r.body
    assert r.body["error"]
    assert gb.row_counts() == before


def test_a_jwt_principal_erases_itself_only(gb: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    from gligabao import wiring
    from gligabao.handlers import datasets
    from gligabao.local.server import make_event

    populate(gb)
    before = gb.row_counts()
    monkeypatch.setenv("GB_AUTH_MODE", "jwt")
    wiring.settings.cache_clear()

    def call(user: str, claims: dict[str, Any]) -> tuple[int, Any]:
        event = make_event("DELETE", f"/v1/gb/users/{quote(user, safe='')}", {}, b"", "127.0.0.1")
        event["requestContext"]["authorizer"] = {"jwt": {"claims": claims, "scopes": None}}
        out = datasets.lambda_handler(event, None)
        return out["statusCode"], json.loads(out["body"])

    status, body = call(USER, {"sub": OTHER})
    assert status == 403, body
    assert gb.row_counts() == before
    status, body = call(USER, {"sub": USER})
    assert status == 202 and body["removed"]["datasets"] == 2, body
    status, body = call(OTHER, {"sub": "ops", "groups": ["gligabao-operators"]})
    assert status == 202 and body["removed"]["datasets"] == 1, body


def _key(dataset: str) -> Any:
    from gligabao.models import DatasetKey

    return DatasetKey(USER, dataset)
