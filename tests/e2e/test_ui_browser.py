"""The web page at /ui/ in a real headless Chromium (Debian's package, driven
by Playwright for Python), against `gligabao serve` started here on seeded
data: Alice works at Acme, then moves to Globex (a superseded fact), Bob lives
in Paris; the fake LLM scripts extraction, invalidation and the answer.

The tests share one server and one page and run in order (the last ones
forget a text). Without chromium or playwright they are skipped, except in
CI (CI=true), where they fail (`bash infra/browser.sh` installs chromium).
The steps that need the browse routes (GET /v1/gb/entities, edges,
artifacts; DELETE /v1/gb/artifacts) skip when the server has none.
Screenshots go to the test's temporary folder (printed)."""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from remember_helpers import ent, extraction, fact, works_at

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from served import Served

pytestmark = pytest.mark.timeout(240)

CHROMIUM = os.environ.get("GB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
QUESTION = "Where does Alice work?"
WAIT_MS = 20_000


def _browser_or_skip() -> Any:
    reason = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = "playwright is not installed (the dev extra has it)"
    if reason is None and not os.path.exists(CHROMIUM):
        reason = f"no chromium at {CHROMIUM} (bash infra/browser.sh installs Debian's)"
    if reason:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return sync_playwright


@dataclass
class Ui:
    served: Served
    page: Any
    shots: Path
    console: list[str] = field(default_factory=list)
    browse: bool = True

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(self.shots / f"{name}.png"))

    def drawn(self) -> dict[str, Any]:
        out: dict[str, Any] = self.page.evaluate("window.gligabao.drawn()")
        return out

    def drawn_names(self) -> set[str]:
        return {n["name"] for n in self.drawn()["nodes"]}

    def drawn_edges(self) -> set[int]:
        return {e["id"] for e in self.drawn()["edges"]}

    def api(self, path: str) -> Any:
        r = self.served.client.get(path)
        assert r.status == 200, r.body
        return r.body


def seed(s: Served, llm: FakeAnthropic) -> None:
    llm.script("extract", works_at("Alice", "Acme"))
    s.remember("Alice works at Acme.", session_id="chat-1")
    time.sleep(1.1)  # timestamps have second precision: the two facts get apart
    llm.script("extract", works_at("Alice", "Globex"))
    llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
    s.remember("Alice moved to Globex.", session_id="chat-1")
    llm.script(
        "extract",
        extraction(
            [ent("Bob", "person"), ent("Paris", "place")], [fact("Bob", "Paris", "lives_in")]
        ),
    )
    s.remember("Bob lives in Paris.", session_id="chat-2")


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ui]:
    sync_playwright = _browser_or_skip()
    shots = tmp_path_factory.mktemp("ui-screenshots")
    print(f"screenshots in {shots}")
    with FakeAnthropic() as llm, FakeOpenAI() as emb:
        s = Served({**llm.env(), **emb.env(), "GB_EMBEDDING_DIMENSION": "64"})
        try:
            seed(s, llm)
            llm.script(
                "query", {"answer": "At Globex.", "entities": [], "edges": [2], "passages": []}
            )
            assert f"  page:       {s.client.base}/ui/" in "\n".join(s.banner)
            probe = s.client.get("/v1/gb/entities?user_id=u1")
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                try:
                    page = browser.new_page(viewport={"width": 1280, "height": 800})
                    page.set_default_timeout(WAIT_MS)
                    ui = Ui(s, page, shots, browse=probe.status != 404)
                    page.on(
                        "console",
                        lambda m: ui.console.append(_console(m)) if m.type == "error" else None,
                    )
                    page.on("pageerror", lambda e: ui.console.append(f"page error: {e}"))
                    page.goto(f"{s.client.base}/ui/")
                    if ui.browse:
                        page.wait_for_selector("body[data-loaded]")
                    else:
                        page.wait_for_selector("#status.error")
                    ui.shot("01-loaded")
                    yield ui
                finally:
                    browser.close()
        finally:
            s.stop()


def _console(message: Any) -> str:
    where = message.location.get("url", "") if message.location else ""
    return f"{message.text} [{where}]"


@pytest.fixture
def browse(ui: Ui) -> Ui:
    """The steps that need the browse routes: skipped while the server has none."""
    if not ui.browse:
        pytest.skip("the server has no browse routes (GET /v1/gb/entities answers 404)")
    return ui


def test_the_graph_shows_the_seeded_entities(browse: Ui) -> None:
    ui = browse
    assert ui.drawn_names() == {"Alice", "Acme", "Globex", "Bob", "Paris"}
    live = {e["id"] for e in ui.api("/v1/gb/entities/1?user_id=u1")["facts"]}
    live |= {e["id"] for e in ui.api("/v1/gb/entities/4?user_id=u1")["facts"]}
    assert ui.drawn_edges() == live == {2, 3}  # the superseded fact (1) is not drawn now
    assert "5 entities" in ui.page.inner_text("#status")
    ui.page.click("summary:has-text('Entities drawn')")
    assert ui.page.locator("#drawn-list button").count() == 5


def test_clicking_an_entity_on_the_canvas_shows_its_facts_and_texts(browse: Ui) -> None:
    ui, page = browse, browse.page
    alice = next(n["id"] for n in ui.drawn()["nodes"] if n["name"] == "Alice")
    point = page.evaluate(f"window.gligabao.point({alice})")
    page.mouse.click(point["x"], point["y"])
    page.wait_for_selector("#panel-details h2:has-text('Alice')")
    facts = page.locator("#panel-details [aria-label=Facts] button[data-edge]")
    assert facts.all_inner_texts() == ["Alice —works_at→ Globex"]
    texts = page.locator("#panel-details button[data-text]").all_inner_texts()
    assert sorted(texts) == ["text 1", "text 2"]
    ui.shot("02-entity")


def test_the_history_of_a_superseded_fact_shows_both_facts(browse: Ui) -> None:
    ui, page = browse, browse.page
    page.click("#panel-details button[data-edge='2']")
    history = page.locator("#panel-details [aria-label=History]")
    history.locator("button[data-edge='1']").wait_for()
    assert "it replaced: Alice —works_at→ Acme" in history.inner_text()
    assert "because of text 2" in history.inner_text()
    ui.shot("03-history-new")
    history.locator("button[data-edge='1']").click()
    history.locator("button[data-edge='2']").wait_for()  # the view of fact 1
    assert "replaced by: Alice —works_at→ Globex" in history.inner_text()
    assert page.locator("#panel-details .fact .tag").inner_text() == "superseded"
    ui.shot("04-history-old")


def test_the_as_of_slider_changes_what_is_drawn(browse: Ui) -> None:
    ui, page = browse, browse.page
    stops = page.evaluate("window.gligabao.stops()")
    assert stops >= 2
    slider = page.locator("#asof")
    slider.focus()
    page.keyboard.press("Home")
    seen = []
    for _ in range(stops + 1):
        seen.append((page.inner_text("#asof-label"), frozenset(ui.drawn_edges())))
        page.keyboard.press("ArrowRight")
    by_edges = {edges: label for label, edges in seen}
    assert frozenset({1}) in by_edges, seen  # Alice at Acme, before she moved
    assert seen[-1] == ("now (live facts)", frozenset({2, 3}))
    page.keyboard.press("Home")
    for _ in range(stops):
        if ui.drawn_edges() == {1}:
            break
        page.keyboard.press("ArrowRight")
    assert ui.drawn_edges() == {1}
    assert "Globex" not in ui.drawn_names()
    ui.shot("05-as-of")
    # the timeline of Alice: the live fact, and the superseded one set apart
    page.click("#drawn-list button[data-entity='1']")
    page.click("#panel-details button:has-text('Timeline')")
    rows = page.locator("#panel-timeline .fact-row")
    assert rows.count() == 2
    assert page.locator("#panel-timeline .fact-row.superseded").get_attribute("data-edge") == "1"
    assert "Superseded (1)" in page.inner_text("#panel-timeline")
    ui.shot("06-timeline")
    slider.focus()
    page.keyboard.press("End")
    assert page.inner_text("#asof-label") == "now (live facts)"


def test_a_question_shows_its_answer_and_evidence(ui: Ui) -> None:
    page = ui.page
    page.click("#tab-ask")
    page.fill("#question", QUESTION)
    page.click("button:has-text('Ask (query)')")
    assert page.locator("#answer").inner_text(timeout=WAIT_MS) == "At Globex."
    evidence = page.locator("#evidence-facts button[data-edge]").all_inner_texts()
    assert evidence == ["Alice —works_at→ Globex"]
    if ui.browse:
        marked = {e["id"] for e in ui.drawn()["edges"] if e["evidence"]}
        assert marked == {2}
        assert {n["name"] for n in ui.drawn()["nodes"] if n["evidence"]} == {"Alice", "Globex"}
    ui.shot("07-answer")
    page.click("button:has-text('Context only (search)')")
    page.wait_for_selector("#context-tokens")
    same = ui.served.client.post("/v1/gb/search", {"user_id": "u1", "query": QUESTION})
    assert page.inner_text("#context-tokens") == f"{same.body['context_tokens']:,}"
    context = page.inner_text("#context-text")
    assert f"<question>{QUESTION}</question>" in context
    for edge in same.body["edges"]:
        assert f"[edge {edge['id']}] " in context
    ui.shot("08-search")


def test_the_costs_chart_has_the_seeded_inferences(ui: Ui) -> None:
    page = ui.page
    page.click("#tab-costs")
    page.wait_for_selector("#costs-table tbody tr")
    rows = ui.api("/v1/gb/inferences?user_id=u1&limit=200")["inferences"]
    per_stage = Counter(r["stage"] for r in rows)
    assert {"extract", "invalidate", "query"} <= set(per_stage)
    shown: Counter[str] = Counter()
    for row in page.locator("#costs-table tbody tr").all():
        cells = row.locator("td").all_inner_texts()
        shown[cells[1]] += int(cells[2].replace(",", ""))
    assert shown == per_stage
    for stage in per_stage:
        assert page.locator(f"#costs-chart rect[data-stage='{stage}']").count() >= 1
    page.wait_for_selector("#calls .call")
    first = page.locator("#calls .call").first
    assert first.locator(".steps [role=listitem]").count() >= 1
    page.check("input[name=measure][value=usd]")
    assert "$" in (page.text_content("#costs-chart") or "")
    ui.shot("09-costs")


def test_forgetting_a_text_removes_it_from_the_graph(browse: Ui) -> None:
    ui, page = browse, browse.page
    page.click("#drawn-list button[data-entity='3']")  # Globex
    page.click("#panel-details button[data-text='2']")
    page.wait_for_selector("#panel-details h2:has-text('Text 2')")
    loaded = page.get_attribute("body", "data-loaded")
    page.click("#forget")
    page.wait_for_selector("dialog#confirm[open]")
    ui.shot("10-confirm")
    page.click("#confirm-ok")
    done = page.locator("#forgotten")
    done.wait_for()
    page.wait_for_function("(before) => document.body.dataset.loaded !== before", arg=loaded)
    text = done.inner_text()
    assert "Text 2 forgotten" in text
    rows = dict(
        zip(done.locator("dt").all_inner_texts(), done.locator("dd").all_inner_texts(), strict=True)
    )
    assert "Globex (3)" in rows["entities removed"]
    assert "Alice —works_at→ Globex (2)" in rows["facts removed"]
    assert rows["facts restored"] == "1: Alice —works_at→ Acme (1)"
    assert ui.served.client.get("/v1/gb/artifacts/2?user_id=u1").status == 404
    assert "Globex" not in ui.drawn_names()
    assert ui.drawn_edges() == {1, 3}  # Alice at Acme again: restored
    ui.shot("11-forgotten")


def test_narrow_window_and_keyboard(ui: Ui) -> None:
    page = ui.page
    page.set_viewport_size({"width": 420, "height": 800})
    page.wait_for_timeout(200)
    assert page.evaluate("document.documentElement.scrollWidth") <= 420
    page.focus("#tab-details")
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#tab-timeline", "aria-selected") == "true"
    assert page.evaluate("document.activeElement.id") == "tab-timeline"
    ui.shot("12-narrow")
    page.set_viewport_size({"width": 1280, "height": 800})


AS_OF_CASES = """async () => {
  const { shownAt } = await import('./js/memory.js');
  const edge = { valid_at: '2024-01-01T00:00:00Z', invalid_at: '2025-01-01T00:00:00Z',
                 created_at: '2024-06-01T00:00:00Z', expired_at: '2024-09-01T00:00:00Z' };
  const at = (iso, world = false, e = edge) => shownAt(e, Date.parse(iso), world);
  return {
    before_learned: at('2024-03-01T00:00:00Z'),
    at_learned: at('2024-06-01T00:00:00Z'),
    at_expired: at('2024-09-01T00:00:00Z'),
    world_after_expired: at('2024-10-01T00:00:00Z', true),
    world_at_invalid: at('2025-01-01T00:00:00Z', true),
    world_before_valid: at('2023-12-31T23:59:59Z', true),
    open_ended: at('2030-01-01T00:00:00Z', false, { valid_at: null, invalid_at: null,
                   created_at: '2024-01-01T00:00:00Z', expired_at: null }),
  };
}"""


def test_the_as_of_rule_of_the_page(ui: Ui) -> None:
    """valid_at <= T < invalid_at and created_at <= T < expired_at, as the
    page computes it (memory.js), at its bounds."""
    got = ui.page.evaluate(AS_OF_CASES)
    assert got == {
        "before_learned": False,
        "at_learned": True,
        "at_expired": False,
        "world_after_expired": True,
        "world_at_invalid": False,
        "world_before_valid": False,
        "open_ended": True,
    }


def test_no_console_errors(ui: Ui) -> None:
    errors = ui.console
    if not ui.browse:  # the page's requests to the missing routes are logged as 404s
        errors = [e for e in errors if "/v1/gb/entities" not in e and "/v1/gb/artifacts" not in e]
    assert errors == []
