"""query with as_of: the world as it stood at that instant (superseded and
ended facts included when they held then), through HTTP and the fake LLM."""

from __future__ import annotations

import pytest
from query_helpers import graph_lines, prompt, section
from remember_helpers import works_at

from conftest import Harness
from gligabao.ai import prompts

Y2020, Y2024 = "2020-01-01T00:00:00Z", "2024-01-01T00:00:00Z"
REF = "2025-01-31T09:00:00Z"


def employers(gb: Harness) -> None:
    """Alice at Acme from 2020, at Globex from 2024 (Acme superseded), and at
    Initech from 2010 to 2015 (ended, never superseded)."""
    gb.llm.script("extract", works_at(valid_at=Y2020))
    gb.remember("Alice works at Acme since 2020.", reference_time=REF)  # edge 1
    gb.llm.script("extract", works_at("Alice", "Globex", valid_at=Y2024))
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    out = gb.remember("Alice joined Globex in 2024.", reference_time=REF)  # edge 2
    assert [i["id"] for i in out["invalidated"]] == [1]
    gb.llm.script(
        "extract",
        works_at(
            "Alice", "Initech", valid_at="2010-01-01T00:00:00Z", invalid_at="2015-01-01T00:00:00Z"
        ),
    )
    gb.remember("Alice was at Initech from 2010 to 2015.", reference_time=REF)  # edge 3


def edge_ids(gb: Harness) -> list[int]:
    return sorted(
        int(line.split("]")[0][6:]) for line in graph_lines(prompt(gb)) if "[edge " in line
    )


def test_before_and_after_a_change_of_employer(gb: Harness) -> None:
    employers(gb)
    gb.llm.script("query", {"answer": "Acme", "entities": [], "edges": [1], "passages": []})
    out = gb.query("Where did Alice work?", as_of="2022-06-01T00:00:00Z")
    assert edge_ids(gb) == [1]  # Acme, superseded since; not Globex, not Initech
    assert section(prompt(gb), "as_of") == "2022-06-01T00:00:00Z"
    [edge] = out["evidence"]["edges"]
    assert edge["id"] == 1 and edge["expired_at"]  # the evidence says it was superseded
    assert (edge["valid_at"], edge["invalid_at"]) == (Y2020, Y2024)

    out = gb.query("Where did Alice work?", as_of="2024-06-01T00:00:00Z")
    assert edge_ids(gb) == [2]  # Globex

    gb.query("Where did Alice work?", as_of="2012-03-01T10:00:00+01:00")
    assert edge_ids(gb) == [3]  # Initech, ended, never superseded
    assert section(prompt(gb), "as_of") == "2012-03-01T09:00:00Z"  # in UTC

    gb.query("Where did Alice work?", as_of="2000-01-01T00:00:00Z")
    assert "[edge " not in prompt(gb)  # nothing had begun yet

    # without as_of: the spec's rules, live facts only (Initech ended: history)
    gb.query("Where does Alice work?")
    assert edge_ids(gb) == [2, 3]
    assert section(prompt(gb), "as_of") is None


def test_the_prompt_says_what_as_of_means() -> None:
    assert "<as_of>" in prompts.QUERY_SYSTEM
    assert "Answer as of that time" in prompts.QUERY_SYSTEM


@pytest.mark.parametrize(
    "as_of", ["2022-06-01", "yesterday", "2022-06-01T00:00:00", "2022-13-01T00:00:00Z", 2022, ""]
)
def test_a_malformed_as_of_is_400(gb: Harness, as_of: object) -> None:
    employers(gb)
    calls = gb.llm.calls(), gb.emb.calls()
    r = gb.client.post(
        "/v1/gb/query", {"user_id": "u1", "query": "Where did Alice work?", "as_of": as_of}
    )
    assert r.status == 400, r.body
    assert "as_of" in r.body["error"]
    assert (gb.llm.calls(), gb.emb.calls()) == calls  # nothing asked, nothing read
