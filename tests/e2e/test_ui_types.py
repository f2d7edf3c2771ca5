"""The page shows declared attributes (issue 47) in a real headless Chromium
(as test_ui_browser.py drives it) against `gligabao serve`: an entity's view
lists its attributes with the values they replaced, and a typed fact its own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_ui_browser import CHROMIUM, WAIT_MS, _browser_or_skip

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from served import Served

pytestmark = pytest.mark.timeout(240)

SCHEMA = {
    "entity_types": {
        "Customer": {
            "attributes": {
                "tier": {"type": "string", "enum": ["gold", "silver"]},
                "renewal_date": {"type": "string", "format": "date-time"},
            }
        },
        "Account": {},
    },
    "edge_types": {
        "OWNS_ACCOUNT": {
            "source_types": ["Customer"],
            "target_types": ["Account"],
            "attributes": {"share": {"type": "number"}},
        }
    },
}
FIRST = {
    "entities": [
        {
            "name": "Acme",
            "type": "Customer",
            "attributes": {"tier": "gold", "renewal_date": "2027-03-01T09:30:00Z"},
        },
        {"name": "Acme Savings", "type": "Account"},
    ],
    "edges": [
        {
            "source": "Acme",
            "target": "Acme Savings",
            "relation": "OWNS_ACCOUNT",
            "description": "Acme owns half of Acme Savings.",
            "attributes": {"share": 0.5},
        }
    ],
}
SECOND = {"entities": [{"name": "Acme", "type": "Customer", "attributes": {"tier": "silver"}}]}


@pytest.fixture(scope="module")
def page() -> Iterator[tuple[Any, Served]]:
    sync_playwright = _browser_or_skip()
    with FakeAnthropic() as llm, FakeOpenAI() as emb:
        s = Served({**llm.env(), **emb.env(), "GB_EMBEDDING_DIMENSION": "64"})
        try:
            put = s.client.request("PUT", "/v1/gb/datasets/main/schema?user_id=u1", SCHEMA)
            assert put.status == 200, put.body
            llm.script("extract", FIRST)
            s.remember("Acme, a gold customer, owns half of Acme Savings.")
            llm.script("extract", {**SECOND, "edges": []})
            s.remember("Acme is silver now.")
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                try:
                    p = browser.new_page(viewport={"width": 1280, "height": 800})
                    p.set_default_timeout(WAIT_MS)
                    yield p, s
                finally:
                    browser.close()
        finally:
            s.stop()


def test_the_entity_view_shows_its_attributes_and_their_history(
    page: tuple[Any, Served],
) -> None:
    p, s = page
    acme = s.client.get("/v1/gb/entities?user_id=u1&type=customer").body["entities"][0]["id"]
    p.goto(f"{s.client.base}/ui/?user_id=u1&dataset=main&entity={acme}")
    p.wait_for_selector("#panel-details h2:has-text('Acme')")
    p.wait_for_selector("#panel-details [aria-label=Attributes]")
    tier = p.inner_text("#panel-details [data-attribute=tier]")
    assert tier.startswith("silver") and "was gold until" in tier
    renewal = p.inner_text("#panel-details [data-attribute=renewal_date]")
    assert renewal == "2027-03-01T09:30:00Z"
    # the typed fact's own values, beside it in the facts list
    facts = p.inner_text("#panel-details [aria-label=Facts]")
    assert "OWNS_ACCOUNT" in facts and "share=0.5" in facts
