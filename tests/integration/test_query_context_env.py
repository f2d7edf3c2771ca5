"""GB_CONTEXT_TOKENS sets the server's budget; a request's
max_context_tokens overrides it."""

from __future__ import annotations

import pytest
from query_helpers import GraphBuilder, ask, edge_ids, prompt

from conftest import Harness
from gligabao.text import estimate_tokens


@pytest.fixture
def gb_env() -> dict[str, str]:
    return {"GB_CONTEXT_TOKENS": "300"}


def test_the_server_budget_and_the_request_budget(gb: Harness) -> None:
    g = GraphBuilder(gb)
    hub = g.entity("Zorro", "person")
    for i in range(40):
        g.edge(hub, g.entity(f"Contact {i}"), "knows", f"Zorro knows contact {i} well.")
    g.save()
    gb.query(ask(gb, "Who does Zorro know?"))
    small = prompt(gb)
    # Close to it (lines are charged a little over their share of the estimate).
    assert 300 - 60 < estimate_tokens(small) <= 300
    gb.query(ask(gb, "Who does Zorro know?"), max_context_tokens=3000)
    assert edge_ids(prompt(gb)) == list(range(501, 541))
    assert len(edge_ids(small)) < 40
