"""The page's issue-44 views in a real headless Chromium (as test_ui_browser.py
drives it) against `gligabao serve`: a deep link to an entity shows its
facts and its merges; the Conflicts panel resolves a planted conflict; the
back button returns to the entity before."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from remember_helpers import ent, extraction, fact, works_at
from test_ui_browser import CHROMIUM, WAIT_MS, _browser_or_skip

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from served import Served

pytestmark = pytest.mark.timeout(240)


def _seed(s: Served, llm: FakeAnthropic) -> None:
    """works_at superseded itself (Bob); Alice then has two live employers."""
    llm.script("extract", works_at("Bob", "Acme"))
    s.remember("Bob works at Acme.")
    llm.script("extract", works_at("Bob", "Globex"))
    llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    s.remember("Bob moved to Globex.")
    llm.script("extract", works_at("Alice", "Acme"))
    s.remember("Alice works at Acme.")
    llm.script(
        "extract",
        extraction(
            [ent("Alice", "person"), ent("Initech", "organization")],
            [fact("Alice", "Initech", "works_at")],
        ),
    )
    llm.script("invalidate", {"invalidated": []})
    s.remember("Alice works at Initech.")


@pytest.fixture(scope="module")
def page() -> Iterator[tuple[Any, Served]]:
    sync_playwright = _browser_or_skip()
    with FakeAnthropic() as llm, FakeOpenAI() as emb:
        s = Served({**llm.env(), **emb.env(), "GB_EMBEDDING_DIMENSION": "64"})
        try:
            _seed(s, llm)
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


def test_a_deep_link_a_conflict_resolved_and_the_back_button(page: tuple[Any, Served]) -> None:
    p, s = page
    alice = s.client.get("/v1/gb/entities?user_id=u1&q=Alice").body["entities"][0]["id"]
    acme = s.client.get("/v1/gb/entities?user_id=u1&q=Acme").body["entities"][0]["id"]
    p.goto(f"{s.client.base}/ui/?user_id=u1&dataset=main&entity={alice}")
    p.wait_for_selector("#panel-details h2:has-text('Alice')")
    facts = p.locator("#panel-details [aria-label=Facts] button[data-edge]").all_inner_texts()
    assert sorted(facts) == ["Alice —works_at→ Acme", "Alice —works_at→ Initech"]
    p.wait_for_selector("#merges [aria-label=Merges] li")
    assert "(same name)" in p.inner_text("#merges")

    # Another entity: a step in the history.
    p.locator("#find").fill("Acme")
    p.click(f"#find-results button[data-entity='{acme}']")
    p.wait_for_selector("#panel-details h2:has-text('Acme')")
    assert f"entity={acme}" in p.url

    # The conflict, resolved by ending one of the two facts.
    p.click("#tab-conflicts")
    p.wait_for_selector("#panel-conflicts [aria-label=Conflicts] li.conflict")
    assert "Alice —works_at→" in p.inner_text("#panel-conflicts")
    p.locator("#panel-conflicts button.end").first.click()
    p.wait_for_selector("#panel-conflicts #no-conflicts")
    assert s.client.get("/v1/gb/conflicts?user_id=u1").body == {"conflicts": []}

    # Back: Alice again, as the deep link opened her.
    p.go_back()
    p.wait_for_selector("#panel-details h2:has-text('Alice')")
    assert f"entity={alice}" in p.url
