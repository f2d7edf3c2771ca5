"""The page in a real headless Chromium against `gligabao serve` (as
test_ui_facts.py drives it): an entity's view shows its summary, written by
the model off the request path; the local server's users are listed to pick
from, and picking one loads that user's memory."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from remember_helpers import works_at
from test_ui_browser import CHROMIUM, WAIT_MS, _browser_or_skip

from fakes.anthropic_server import FakeAnthropic
from fakes.extraction import prompt_text
from fakes.openai_server import FakeOpenAI
from served import Served

pytestmark = pytest.mark.timeout(240)


def _summaries(body: dict[str, Any]) -> dict[str, Any]:
    """A model that summarizes each entity it is given by its name."""
    heads = re.findall(r"<entity>\n\[entity (\d+)\] ([^(:\n]+)", prompt_text(body))
    return {"summaries": [{"id": int(i), "summary": f"SUMMARY-OF-{n.strip()}"} for i, n in heads]}


def _summary(s: Served, user: str, eid: int) -> str | None:
    return s.client.get(f"/v1/gb/entities/{eid}?user_id={user}").body.get("summary")


@pytest.fixture(scope="module")
def page() -> Iterator[tuple[Any, Served]]:
    sync_playwright = _browser_or_skip()
    with FakeAnthropic() as llm, FakeOpenAI() as emb:
        llm.default("summarize_entity", _summaries)
        s = Served({**llm.env(), **emb.env(), "GB_EMBEDDING_DIMENSION": "64", "GB_SUMMARIES": "on"})
        try:
            llm.script("extract", works_at("Alice", "Acme"))
            s.remember("Alice works at Acme.")
            llm.script("extract", works_at("Bob", "Globex"))
            s.client.post("/v1/gb/remember", {"user_id": "u2", "text": "Bob works at Globex."})
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


def test_an_entity_shows_its_summary_and_a_user_is_picked(page: tuple[Any, Served]) -> None:
    p, s = page
    alice = s.client.get("/v1/gb/entities?user_id=u1&q=Alice").body["entities"][0]["id"]
    end = time.monotonic() + 120  # the job runs on a background thread (a bound, not a timing)
    while not _summary(s, "u1", alice) and time.monotonic() < end:
        time.sleep(0.1)
    assert _summary(s, "u1", alice) == "SUMMARY-OF-Alice"

    p.goto(f"{s.client.base}/ui/?user_id=u1&dataset=main&entity={alice}")
    p.wait_for_selector("#panel-details h2:has-text('Alice')")
    p.wait_for_selector("#summary .summary-text")
    assert p.inner_text("#summary .summary-text") == "SUMMARY-OF-Alice"
    assert "current" in p.inner_text("#summary")

    # The local server's users, to pick from: picking u2 loads u2's memory.
    p.wait_for_selector("#user-pick-label:not([hidden])")
    options = p.locator("#user-pick option").all_inner_texts()
    assert [o for o in options if o != "—"] == ["u1", "u2"]
    assert p.input_value("#user-pick") == "u1"
    p.select_option("#user-pick", "u2")
    p.wait_for_function("document.getElementById('user').value === 'u2'")
    p.locator("#find").fill("Bob")
    p.wait_for_selector("#find-results button:has-text('Bob')")
    p.locator("#find-results button:has-text('Bob')").first.click()
    p.wait_for_selector("#panel-details h2:has-text('Bob')")
    assert "user_id=u2" in p.url
