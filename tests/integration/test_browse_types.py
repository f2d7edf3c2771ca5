"""Browse by type (issue 47): ``GET /v1/gb/entities?type=`` lists the
entities of one type (with ``q`` too, and page by page), ``GET
/v1/gb/entities/{id}?edge_type=`` keeps the entity's facts of one relation or
edge type (a free relation spelled as a declared edge type is not of it); a
bad value is 400 and writes nothing; on both stores."""

from __future__ import annotations

from typing import Any

import pytest
from test_edge_attributes import _remember

from conftest import Harness

BASE = "/v1/gb/entities?user_id=u1&dataset=crm"


def _get(gb: Harness, path: str, status: int = 200) -> Any:
    r = gb.client.get(path)
    assert r.status == status, r.body
    return r.body


def _names(gb: Harness, query: str) -> list[str]:
    return sorted(e["name"] for e in _get(gb, BASE + query)["entities"])


def test_the_entities_of_a_type(server: Harness) -> None:
    _remember(server)
    assert _names(server, "&type=Customer") == ["Acme"]
    assert _names(server, "&type=account") == ["Acme Savings", "Bob Checking"]
    assert _names(server, "&type=account&q=acme") == ["Acme Savings"]
    assert _names(server, "&type=Nobody") == []
    first = _get(server, BASE + "&type=ACCOUNT&limit=1")
    assert len(first["entities"]) == 1 and first["next_cursor"]
    second = _get(server, BASE + f"&type=ACCOUNT&limit=1&cursor={first['next_cursor']}")
    assert second["next_cursor"] is None
    assert {first["entities"][0]["name"], second["entities"][0]["name"]} == {
        "Acme Savings",
        "Bob Checking",
    }


def test_the_python_clients_carry_the_filters(server: Harness) -> None:
    from gligabao.client import Client as GbClient

    r = _remember(server)
    acme = next(e["id"] for e in r.body["entities"] if e["name"] == "Acme")
    client = GbClient(server.client.base, user_id="u1", dataset="crm")
    assert [e.name for e in client.entities(type="customer").entities] == ["Acme"]
    (fact,) = client.entity(acme, edge_type="OWNS_ACCOUNT").facts
    assert fact.attributes == {"since": "2020-01-15T00:00:00Z", "share": 0.5}


def test_a_type_scan_stops_at_its_bound_with_a_cursor(
    server: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gligabao.memory import browse

    _remember(server)
    monkeypatch.setattr(browse, "TYPE_BATCH", 1)
    monkeypatch.setattr(browse, "TYPE_SCAN", 1)  # one entity read per page
    seen: list[str] = []
    query, pages = "&type=account&limit=5", 0
    while True:
        page = _get(server, BASE + query)
        seen += [e["name"] for e in page["entities"]]
        pages += 1
        if page["next_cursor"] is None:
            break
        query = f"&type=account&limit=5&cursor={page['next_cursor']}"
    assert sorted(seen) == ["Acme Savings", "Bob Checking"]
    assert pages >= 4  # four entities, one read a page: some pages are short


def test_an_entitys_facts_of_one_edge_type(server: Harness) -> None:
    r = _remember(server)
    ids = {e["name"]: e["id"] for e in r.body["entities"]}
    page = f"/v1/gb/entities/{ids['Acme']}?user_id=u1&dataset=crm"
    assert len(_get(server, page)["facts"]) == 2  # OWNS_ACCOUNT, and Bob's works_at
    (owns,) = _get(server, page + "&edge_type=owns_account")["facts"]
    assert owns["relation"] == "OWNS_ACCOUNT" and owns["attributes"]["share"] == 0.5
    assert [f["relation"] for f in _get(server, page + "&edge_type=WORKS_AT")["facts"]] == [
        "works_at"
    ]
    bob = f"/v1/gb/entities/{ids['Bob']}?user_id=u1&dataset=crm"
    # Bob's owns_account is free (a Person owns no account by the schema): not of the type
    assert _get(server, bob + "&edge_type=OWNS_ACCOUNT")["facts"] == []


@pytest.mark.parametrize(
    "query",
    ["&type=", "&type=%20", "&type=" + "x" * 65, "&type=a%01b", "&kind=Customer"],
)
def test_a_bad_type_is_400_and_writes_nothing(server: Harness, query: str) -> None:
    _remember(server)
    before = _get(server, "/v1/gb/datasets?user_id=u1")
    body = _get(server, BASE + query, 400)
    assert "type" in str(body) or "kind" in str(body)
    acme = _get(server, BASE + "&type=Customer")["entities"][0]["id"]
    bad_edge = query.replace("&type=", "&edge_type=")
    _get(server, f"/v1/gb/entities/{acme}?user_id=u1&dataset=crm{bad_edge}", 400)
    assert _get(server, "/v1/gb/datasets?user_id=u1") == before
