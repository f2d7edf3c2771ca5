"""A dataset's schema (issue 47): PUT and GET /v1/gb/datasets/{name}/schema
on both stores; a bad schema (an unknown attribute type, too many types, an
edge type naming an undeclared entity type, too large) is 400 and stores
nothing; the schema goes with its dataset."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import Harness

CRM: dict[str, Any] = {
    "entity_types": {
        "Customer": {
            "description": "A company that buys from us.",
            "attributes": {
                "tier": {"type": "string", "enum": ["gold", "silver"], "description": "plan"},
                "renewal_date": {"type": "string", "format": "date-time"},
            },
        },
        "Account": {"description": "A billing account."},
    },
    "edge_types": {
        "OWNS_ACCOUNT": {
            "description": "The customer owns the account.",
            "source_types": ["Customer"],
            "target_types": ["Account"],
        }
    },
}
STORED = {
    "entity_types": {
        "Customer": {
            "description": "A company that buys from us.",
            "attributes": {
                "tier": {"type": "string", "enum": ["gold", "silver"], "description": "plan"},
                "renewal_date": {"type": "string", "format": "date-time"},
            },
        },
        "Account": {"description": "A billing account.", "attributes": {}},
    },
    "edge_types": {
        "OWNS_ACCOUNT": {
            "description": "The customer owns the account.",
            "attributes": {},
            "source_types": ["Customer"],
            "target_types": ["Account"],
        }
    },
}
PATH = "/v1/gb/datasets/crm/schema?user_id=u1"


def _put(gb: Harness, body: Any, path: str = PATH) -> Any:
    return gb.client.request("PUT", path, body)


def test_a_schema_is_stored_and_read_back(server: Harness) -> None:
    r = _put(server, CRM)
    assert r.status == 200, r.body
    assert r.body == {"dataset": "crm", **STORED}
    r = server.client.get(PATH)
    assert r.status == 200 and r.body == {"dataset": "crm", **STORED}
    # the dataset exists now, empty
    (ds,) = server.client.get("/v1/gb/datasets?user_id=u1").body["datasets"]
    assert (ds["name"], ds["entities"]) == ("crm", 0)
    # the Python client says the same
    from gligabao.client import Client as GbClient

    client = GbClient(server.client.base, user_id="u1")
    assert client.schema("crm").model_dump(exclude_none=True) == {"dataset": "crm", **STORED}
    small = {"entity_types": {"Ticket": {"attributes": {"severity": {"type": "integer"}}}}}
    out = client.put_schema("crm", small)
    assert out.entity_types["Ticket"].attributes["severity"].type == "integer"
    assert out.edge_types == {}


def _many(n: int) -> dict[str, Any]:
    return {"entity_types": {f"Type{i}": {} for i in range(n)}}


BAD = {
    "unknown attribute type": {
        "entity_types": {"Customer": {"attributes": {"tier": {"type": "money"}}}}
    },
    "too many entity types": _many(11),
    "too many edge types": {"edge_types": {f"REL_{i}": {} for i in range(11)}},
    "too many attributes": {
        "entity_types": {
            "Customer": {"attributes": {f"a{i}": {"type": "string"} for i in range(11)}}
        }
    },
    "edge type naming an unknown entity type": {
        "entity_types": {"Customer": {}},
        "edge_types": {"OWNS_ACCOUNT": {"source_types": ["Customer"], "target_types": ["Account"]}},
    },
    "a format of a number": {
        "entity_types": {
            "Customer": {"attributes": {"since": {"type": "number", "format": "date-time"}}}
        }
    },
    "an enum of numbers": {
        "entity_types": {"Customer": {"attributes": {"tier": {"enum": [1, 2]}}}}
    },
    "a reserved attribute": {"entity_types": {"Customer": {"attributes": {"name": {}}}}},
    "a lowercase type": {"entity_types": {"customer": {}}},
    "an unknown field": {"entity_types": {}, "ontology": "owl"},
    "too large": {
        "entity_types": {
            "Customer": {
                "description": "x" * 400,
                "attributes": {f"a{i}": {"enum": ["v" * 99] * 50} for i in range(4)},
            }
        }
    },
    "not an object": ["Customer"],
}


@pytest.mark.parametrize("body", BAD.values(), ids=BAD.keys())
def test_a_bad_schema_is_400_and_nothing_is_stored(server: Harness, body: Any) -> None:
    r = _put(server, body)
    assert r.status == 400, r.body
    assert server.client.get(PATH).status == 404  # no dataset, no schema
    assert server.client.get("/v1/gb/datasets?user_id=u1").body["datasets"] == []


def test_a_bad_schema_keeps_the_one_stored(server: Harness) -> None:
    assert _put(server, CRM).status == 200
    assert _put(server, BAD["unknown attribute type"]).status == 400
    assert server.client.get(PATH).body == {"dataset": "crm", **STORED}


def test_the_schema_goes_with_its_dataset(server: Harness) -> None:
    assert server.client.get(PATH).status == 404
    assert _put(server, CRM).status == 200
    assert server.client.delete("/v1/gb/datasets/crm?user_id=u1").status == 204
    assert server.client.get(PATH).status == 404
    # the name used again: a new dataset, without the old schema
    server.llm.script("extract", {"entities": [], "edges": []})
    server.remember("Hello.", dataset="crm")
    r = server.client.get(PATH)
    assert r.status == 200 and r.body == {"dataset": "crm", "entity_types": {}, "edge_types": {}}


def test_bad_parameters_are_400(server: Harness) -> None:
    assert _put(server, CRM, "/v1/gb/datasets/crm/schema").status == 400  # no user_id
    assert _put(server, CRM, "/v1/gb/datasets/crm/schema?user_id=u1&x=1").status == 400
    assert server.client.get("/v1/gb/datasets?user_id=u1").body["datasets"] == []
