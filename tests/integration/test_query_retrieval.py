"""query: retrieval by similarity, the seeds, the fallback to recent entities,
the one-hop expansion and the facts over time. Each test checks what reached
the LLM (the context) and the response."""

from __future__ import annotations

from query_helpers import (
    GraphBuilder,
    ask,
    edge_ids,
    entity_ids,
    graph_lines,
    passage_blocks,
    prompt,
    ts,
)

from conftest import Harness


def call_steps(gb: Harness, call_id: str) -> dict[str, dict[str, int]]:
    r = gb.client.get(f"/v1/gb/calls/{call_id}?user_id=u1")
    assert r.status == 200, r.body
    return {s["name"]: s.get("counts", s) for s in r.body["steps"]}


def query_reply(gb: Harness, question: str, **extra: object) -> tuple[dict[str, object], str]:
    r = gb.client.post("/v1/gb/query", {"user_id": "u1", "query": question, **extra})
    assert r.status == 200, r.body
    return r.body, r.call_id


# --- similarity -------------------------------------------------------------------


def test_question_embedded_once(gb: Harness) -> None:
    g = GraphBuilder(gb)
    g.entity("Alice", "person")
    g.save()
    gb.query(ask(gb, "Who is Alice?"))
    assert gb.emb.calls() == 1
    assert gb.emb.inputs() == ["Who is Alice?"]
    [req] = gb.emb.requests
    assert req["model"] == "text-embedding-3-small"


def test_similar_entities_best_ten_from_threshold(gb: Harness) -> None:
    g = GraphBuilder(gb)
    sims = [0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.93, 0.92, 0.91, 0.90, 0.89, 0.88]
    for i, s in enumerate(sims):  # 1..12: the best 10 are 1..10
        g.entity(f"Person {i + 1}", "person", sim=s)
    g.entity("Just Above", sim=0.751, id_=20)  # would pass the threshold, but not the best 10
    g.save()
    gb.query(ask(gb, "Who is the manager?"))
    assert entity_ids(prompt(gb)) == list(range(1, 11))

    # Under the threshold nothing is a seed (and the fallback takes over, so
    # check on a dataset where a keyword seed keeps the fallback away).
    g2 = GraphBuilder(gb, dataset="thr")
    g2.entity("Kept", sim=0.751)  # 1
    g2.entity("Dropped", sim=0.749)  # 2
    g2.entity("Zebra")  # 3: the keyword seed
    for i in range(30):  # newer than all of them: the fallback would show them
        g2.entity(f"Filler {i}")
    g2.save()
    gb.query(ask(gb, "Tell me about the zebra"), dataset="thr")
    assert entity_ids(prompt(gb)) == [1, 3]


def test_similar_edges_best_twenty_with_endpoints(gb: Harness) -> None:
    g = GraphBuilder(gb)
    ents = [g.entity(f"Node {i}") for i in range(44)]  # 1..44, no seed among them
    for i in range(22):  # 501..522 between (2i+1, 2i+2), sims 0.99 down to 0.78
        g.edge(ents[2 * i], ents[2 * i + 1], "linked_to", f"fact {i}", sim=0.99 - i / 100)
    g.edge(ents[0], ents[2], "under", "fact under", sim=0.749)  # 523
    g.save()
    out = gb.query(ask(gb, "Which facts matter?"))
    text = prompt(gb)
    # The pool of similar facts is the best 20; all fit in the default budget.
    assert edge_ids(text) == list(range(501, 521))
    # Both endpoints of each, and nothing else (no seed, so no expansion;
    # a similar fact keeps the fallback away).
    assert entity_ids(text) == list(range(1, 41))
    assert out["evidence"] == {"entities": [], "edges": [], "passages": []}


def test_passages_merged_by_chunk(gb: Harness) -> None:
    """Chunks (best 10) and summaries (best 5) merged by chunk: a chunk found
    by its text is given with its text (and its summary when the summary
    index found it too), one found by its summary alone with the summary.
    Each passage is headed with its date; all fit in the default budget. The
    question holds a word of each ("text", "summary"), so none is under the
    relevance floor."""
    g = GraphBuilder(gb)
    text = g.text("the long text")  # 901
    spec = {  # name: (text sim, summary sim)
        "A": (0.95, 0.80),  # 902: text + summary
        "B": (0.90, None),  # 903: text
        "C": (None, 0.93),  # 904: summary
        "D": (0.85, None),  # 905: text
        "E": (None, 0.84),  # 906: summary
        "F": (0.80, None),  # 907: text
        "G": (0.78, None),  # 908: text
        "H": (0.77, None),  # 909: text
        "I": (None, 0.83),  # 910: summary
        "J": (None, 0.79),  # 911: 6th summary hit (the dangling one is 1st): not taken
        "K": (None, 0.749),  # 913: under the threshold
    }
    ids = {}
    for i, (name, (ts_, ss)) in enumerate(spec.items()):
        ids[name] = g.chunk(
            text, i, f"chunk text {name}", f"summary {name}", text_sim=ts_, summary_sim=ss
        ).id
    g.dangling("summaries", 950, 0.99)  # a deleted chunk's vector: dropped
    g.save()
    gb.llm.script("query", {"answer": "yes", "passages": [ids["E"], ids["C"], ids["D"]]})
    out = gb.query(ask(gb, "What does the text say in its summary?"))
    blocks = passage_blocks(prompt(gb))

    def block(name: str, with_summary: bool, with_text: bool) -> str:
        # The chunks of one text share its date: only the first block says it.
        at = f" {text.reference_time}" if name == "A" else ""
        lines = [f"[passage {ids[name]}]{at} (chunk {ids[name] - 902} of text 901)"]
        if with_summary:
            lines.append(f"summary: summary {name}")
        if with_text:
            lines.append(f"text: chunk text {name}")
        return "\n".join(lines)

    by_text = "ABDFGH"
    by_summary = "ACEI"
    assert blocks == {
        ids[n]: block(n, n in by_summary, n in by_text) for n in sorted(set(by_text + by_summary))
    }
    # No entity: the fallback runs, but the dataset has none.
    assert graph_lines(prompt(gb)) == []
    assert out["evidence"]["passages"] == [
        {"artifact_id": ids["C"], "parent_id": 901, "index": 2, "summary": "summary C"},
        {"artifact_id": ids["D"], "parent_id": 901, "index": 3, "text": "chunk text D"},
        {"artifact_id": ids["E"], "parent_id": 901, "index": 4, "summary": "summary E"},
    ]


def test_summary_only_passages_at_most_five(gb: Harness) -> None:
    """The best 3 found by text only, then the 5 summary hits all given with
    their summary only."""
    g = GraphBuilder(gb)
    text = g.text("the long text")
    for i in range(3):
        g.chunk(text, i, f"text {i}", f"sum {i}", text_sim=0.99 - i / 100)
    for i in range(3, 10):
        g.chunk(text, i, f"text {i}", f"sum {i}", summary_sim=0.95 - i / 100)
    g.save()
    gb.query(ask(gb, "What happened?"))
    blocks = passage_blocks(prompt(gb))
    assert sorted(blocks) == [902, 903, 904, 905, 906, 907, 908, 909]
    assert all("text:" in blocks[i] and "summary:" not in blocks[i] for i in (902, 903, 904))
    assert all("summary:" in blocks[i] and "text:" not in blocks[i] for i in range(905, 910))


# --- seeds ------------------------------------------------------------------------


def test_seeds_union_keyword_then_similarity(gb: Harness) -> None:
    g = GraphBuilder(gb)
    # 1..10 keyword seeds ("zebra" in the name); 8..10 also similar.
    for i in range(10):
        g.entity(f"Zebra {i}", sim=0.9 if i >= 7 else None)
    for i in range(7):  # 11..17 similar only
        g.entity(f"Unnamed {i}", sim=0.85)
    g.entity("Nobody")  # 18
    g.save()
    out, call_id = query_reply(gb, ask(gb, "zebra"))
    assert out["answer"] == "ok"
    assert entity_ids(prompt(gb)) == list(range(1, 18))
    steps = call_steps(gb, call_id)
    assert steps["keyword_seeds"]["seeds"] == 10
    assert steps["search_vectors"]["entities"] == 10
    assert steps["expand"]["seeds"] == 17
    assert steps["expand"]["fallback"] == 0


def test_fallback_to_recent_entities(gb: Harness) -> None:
    g = GraphBuilder(gb)
    old = g.entity("Ancient", updated=1)  # 1: not among the 25
    ents = [g.entity(f"Thing {i}", updated=100 + i) for i in range(30)]  # 2..31
    g.edge(ents[29], old, "knows", "the newest knows the ancient one")  # 501
    g.edge(old, ents[0], "knows")  # 502: not around a seed, two hops from one
    g.save()
    out, call_id = query_reply(gb, ask(gb, "What do you know?"))
    text = prompt(gb)
    # The 25 most recently updated (7..31), expanded one hop (1 via 501) and
    # two hops (2 via 502).
    assert entity_ids(text) == [1, 2, *range(7, 32)]
    assert edge_ids(text) == [501, 502]
    assert call_steps(gb, call_id)["expand"]["fallback"] == 1
    assert out["evidence"] == {"entities": [], "edges": [], "passages": []}


def test_fallback_order_is_updated_not_created(gb: Harness) -> None:
    g = GraphBuilder(gb)
    for i in range(30):  # created 1..30, updated in reverse: 1 is the newest
        g.entity(f"Thing {i}", updated=1000 - i)
    g.save()
    gb.query(ask(gb, "Anything?"))
    assert entity_ids(prompt(gb)) == list(range(1, 26))


def test_no_fallback_with_a_similar_fact(gb: Harness) -> None:
    g = GraphBuilder(gb)
    a, b = g.entity("Rock"), g.entity("Paper")
    for i in range(5):
        g.entity(f"Recent {i}")
    g.edge(a, b, "beats", "Rock beats paper? no.", sim=0.9)
    g.save()
    gb.query(ask(gb, "What wins?"))
    assert entity_ids(prompt(gb)) == [1, 2]
    assert edge_ids(prompt(gb)) == [501]


def test_fallback_with_passages_only(gb: Harness) -> None:
    """No seed and no similar fact: the fallback runs even when passages
    matched."""
    g = GraphBuilder(gb)
    g.entity("Alpha")
    g.entity("Beta")
    text = g.text("a long text")
    g.chunk(text, 0, "chunk", "summary", text_sim=0.9)
    g.save()
    gb.query(ask(gb, "What does it say?"))
    assert entity_ids(prompt(gb)) == [1, 2]
    assert list(passage_blocks(prompt(gb))) == [text.id + 1]


# --- expansion --------------------------------------------------------------------


def test_expansion_newest_first_capped_plus_similar_facts(gb: Harness) -> None:
    g = GraphBuilder(gb)
    hub = g.entity("Zorro", "person")  # 1: the keyword seed
    others = [g.entity(f"Contact {i}") for i in range(105)]  # 2..106
    around = []
    for i, o in enumerate(others):  # 501..605: live, around the seed, either direction
        src, dst = (hub, o) if i % 2 else (o, hub)
        # 501, the oldest, is beyond the cap but similar: added anyway
        around.append(g.edge(src, dst, "met", sim=0.88 if i == 0 else None))
    x, y = g.entity("Xavier"), g.entity("Yolanda")  # 107, 108
    similar_far = g.edge(x, y, "married_to", "Xavier married Yolanda.", sim=0.9)  # 606
    # Superseded edges around the seed, newer than all: they must not take
    # room under the cap (nor appear), even when their vector matches.
    sup = [
        g.edge(hub, others[i], "knew", expired_at=ts(9000), invalid_at=ts(8000), sim=0.95)
        for i in range(3)
    ]  # 607..609
    g.save()

    gb.llm.script("query", {"answer": "many", "edges": [sup[0].id, 605, 501]})
    # The largest budget: the pools, not the budget, decide here ("met" is in
    # every fact around Zorro, so none is under the relevance floor).
    out = gb.query(ask(gb, "Who has Zorro met?"), max_context_tokens=16000)
    text = prompt(gb)
    newest = list(range(506, 606))  # the 100 newest live edges around the seed
    assert edge_ids(text) == [501, *newest, similar_far.id]
    assert all(s.id not in edge_ids(text) for s in sup)
    # Every edge with both ends: the seed, the contacts at the other end.
    want_entities = {1, 107, 108} | {
        others[i].id for i in range(105) if around[i].id in newest or i == 0
    }
    assert set(entity_ids(text)) == want_entities
    # The superseded edge cited is dropped from the evidence.
    assert [e["id"] for e in out["evidence"]["edges"]] == [501, 605]
    assert [e["id"] for e in out["evidence"]["entities"]] == [1, 2, 106]


def test_superseded_and_ended_facts(gb: Harness) -> None:
    g = GraphBuilder(gb)
    alice = g.entity("Alice", "person")  # 1: keyword seed
    acme, globex, initech = g.entity("Acme"), g.entity("Globex"), g.entity("Initech")
    bob, carol = g.entity("Bob"), g.entity("Carol")
    superseded = g.edge(
        alice,
        acme,
        "works_at",
        "Alice works at Acme.",
        valid_at="2020-01-01T00:00:00Z",
        invalid_at="2023-01-01T00:00:00Z",
        expired_at="2023-01-02T00:00:00Z",
        sim=0.99,
    )  # 501
    live = g.edge(
        alice, globex, "works_at", "Alice works at Globex.", valid_at="2023-01-01T00:00:00Z"
    )
    ended = g.edge(
        alice,
        initech,
        "consulted_for",
        "Alice worked for Initech as a consultant.",  # "work": as relevant as the live one
        valid_at="2019-01-01T00:00:00Z",
        invalid_at="2019-06-01T00:00:00Z",
    )  # 503
    # A superseded fact between non-seeds, found only by its vector: dropped.
    other_sup = g.edge(bob, carol, "dates", "Bob dates Carol.", expired_at=ts(50), sim=0.97)  # 504
    g.save()
    gb.llm.script(
        "query",
        {
            "answer": "Globex",
            "edges": [superseded.id, live.id, ended.id, other_sup.id],
            "entities": [2, 5],
        },
    )
    out = gb.query(ask(gb, "Where does Alice work now?"))
    text = prompt(gb)
    assert edge_ids(text) == [live.id, ended.id]
    assert entity_ids(text) == [1, 3, 4]  # Acme, Bob and Carol only came with superseded facts
    lines = graph_lines(text)
    assert (
        "[edge 502] Alice(1) --works_at--> Globex(3): Alice works at Globex. "
        "[valid_at=2023-01-01T00:00:00Z]"
    ) in lines
    assert (
        "[edge 503] Alice(1) --consulted_for--> Initech(4): Alice worked for Initech as a "
        "consultant. "
        "[valid_at=2019-01-01T00:00:00Z, invalid_at=2019-06-01T00:00:00Z]"
    ) in lines
    assert "Acme" not in text and "Bob" not in text
    ev = out["evidence"]
    assert [e["id"] for e in ev["edges"]] == [502, 503]
    assert ev["edges"][1]["invalid_at"] == "2019-06-01T00:00:00Z"
    assert all("expired_at" not in e for e in ev["edges"])
    assert [e["id"] for e in ev["entities"]] == [1, 3, 4]


def test_superseded_similar_fact_alone_falls_back(gb: Harness) -> None:
    g = GraphBuilder(gb)
    a, b = g.entity("Bob"), g.entity("Carol")
    g.edge(a, b, "dates", "Bob dates Carol.", expired_at=ts(50), sim=0.97)
    g.save()
    gb.query(ask(gb, "Who is dating?"))
    text = prompt(gb)
    assert edge_ids(text) == []
    assert entity_ids(text) == [1, 2]  # the recent entities
