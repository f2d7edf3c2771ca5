"""query, step 1: keyword terms and the scoring of the keyword seeds, checked
through what reached the LLM (the seeds are the entities of the context when
they have no edges) and the call's trajectory."""

from __future__ import annotations

import pytest
from query_helpers import GraphBuilder, ask, entity_ids, prompt

from conftest import Harness
from gligabao.memory.keywords import keyword_seeds
from gligabao.text import query_terms


def query_call(gb: Harness, question: str, dataset: str = "main") -> dict[str, dict[str, int]]:
    r = gb.client.post(
        "/v1/gb/query", {"user_id": "u1", "query": ask(gb, question), "dataset": dataset}
    )
    assert r.status == 200, r.body
    assert r.body["evidence"] == {"entities": [], "edges": [], "passages": []}
    call = gb.client.get(f"/v1/gb/calls/{r.call_id}?user_id=u1")
    assert call.status == 200, call.body
    return {s["name"]: s for s in call.body["steps"]}


def test_terms_lowercased_short_stopwords_duplicates_dropped(gb: Harness) -> None:
    g = GraphBuilder(gb)
    zebra = g.entity("Zebra", "animal")
    route = g.entity("Route 42", "road")
    for i in range(30):  # recent entities: they would show if the fallback ran
        g.entity(f"Filler {i}")
    g.save()
    steps = query_call(gb, "WHAT is a b c ZEBRA zebra Zebra and the x y 7 42?")
    assert steps["keyword_seeds"]["terms"] == 2  # zebra, 42
    assert steps["keyword_seeds"]["seeds"] == 2
    assert steps["expand"]["fallback"] == 0
    assert entity_ids(prompt(gb)) == [zebra.id, route.id]


def test_at_most_twelve_terms(gb: Harness) -> None:
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()
    g = GraphBuilder(gb)
    ents = {w: g.entity(w.capitalize()) for w in words}
    g.save()
    # Stopwords, one-letter words and repeats do not count towards the 12.
    noisy = "The alpha, a bravo: alpha? b charlie and delta the echo x foxtrot golf of hotel india is juliet kilo lima mike"
    steps = query_call(gb, noisy)
    assert steps["keyword_seeds"]["terms"] == 12
    # The top 10 of the 12 matched (all score 5 + 3, ties to the most recently
    # updated): charlie..lima; mike, the 13th term, is not searched.
    assert entity_ids(prompt(gb)) == [ents[w].id for w in words[2:12]]
    assert query_terms(noisy) == words[:12]


QUESTION = "Tell me about nova terra and zeta with kilo lima mike oscar papa"
BASE_NAME_TERMS = ["kilo", "lima", "mike"]
BASE_DESC_TERMS = ["oscar", "papa"]

# (probe name, probe description, its score for QUESTION)
PROBES = [
    ("Nova Terra", "", 11),  # +5 whole name, +3 nova, +3 terra
    ("Terra Nova", "", 6),  # "terra nova" is not in the question: +3 +3
    ("Zeta Station", "", 3),  # +3 zeta ("zeta station" is not in the question)
    ("Station", "nova terra and zeta", 3),  # +1 per term in the description
    ("Zeta", "zeta then nova", 10),  # +5 whole name, +3 zeta, +1 zeta, +1 nova
    ("Station Nova", "on terra", 4),  # +3 nova, +1 terra
]


def base_entity(g: GraphBuilder, j: int, score: int, updated: int) -> int:
    """A baseline entity whose score for QUESTION is exactly ``score`` (the
    word baseJ keeps its whole name out of the question)."""
    a, b = divmod(score, 3)
    name = " ".join([f"Base{j}", *BASE_NAME_TERMS[:a]])
    return g.entity(name, "", " ".join(BASE_DESC_TERMS[:b]), updated=updated).id


@pytest.mark.parametrize("probe", PROBES, ids=[p[0] for p in PROBES])
def test_keyword_scores(gb: Harness, probe: tuple[str, str, int]) -> None:
    """Ten baseline entities of score K, all more recently updated than the
    probe: the probe is a seed when K = score - 1, not when K = score (a tie
    goes to the most recently updated). That pins the probe's score, and the
    seeds are the top 10."""
    name, description, score = probe
    for k, probe_in in ((score - 1, True), (score, False)):
        g = GraphBuilder(gb, dataset=f"k{k}")
        p = g.entity(name, "", description, updated=1).id
        bases = [base_entity(g, j, k, updated=10 + j) for j in range(10)]
        g.save()
        steps = query_call(gb, QUESTION, dataset=f"k{k}")
        assert steps["keyword_seeds"]["seeds"] == 10
        seeds = entity_ids(prompt(gb))
        if probe_in:  # the probe displaces the least recently updated base
            assert seeds == [p, *bases[1:]], (k, seeds)
        else:
            assert seeds == bases, (k, seeds)
        # The order of the keyword seeds, as the use case ranks them.
        ranked = keyword_seeds(gb.graph, g.key, QUESTION, query_terms(QUESTION), 10)
        if probe_in:
            assert ranked == [p, *reversed(bases[1:])]
        else:
            assert ranked == list(reversed(bases))


def test_tie_goes_to_most_recently_updated(gb: Harness) -> None:
    g = GraphBuilder(gb)
    p = g.entity("Zeta Station", updated=100).id  # score 3, newest
    bases = [base_entity(g, j, 3, updated=10 + j) for j in range(10)]
    g.save()
    query_call(gb, QUESTION)
    assert entity_ids(prompt(gb)) == [p, *bases[1:]]


def test_whole_name_with_punctuation_and_case(gb: Harness) -> None:
    g = GraphBuilder(gb)
    ny = g.entity("New York", "place")  # +5 +3 +3 = 11
    york = g.entity("York", "place")  # +5 +3 = 8
    bases = [g.entity(f"New Base{j} York", updated=100 + j) for j in range(9)]  # 6 each
    g.save()
    query_call(gb, "What's the weather in NEW-YORK today?")
    seeds = entity_ids(prompt(gb))
    assert seeds == [ny.id, york.id, *[b.id for b in bases[1:]]]
    ranked = keyword_seeds(
        gb.graph,
        g.key,
        "What's the weather in NEW-YORK today?",
        query_terms("What's the weather in NEW-YORK today?"),
        10,
    )
    assert ranked[:2] == [ny.id, york.id]


def test_named_entity_found_past_a_common_term(gb: Harness) -> None:
    """The term index is read a bounded number of entries a term (newest
    first): "Acme", named whole by the question, is a seed even when more than
    fifty newer entities mention it."""
    g = GraphBuilder(gb)
    acme = g.entity("Acme", "organization", "a company")
    people = [g.entity(f"Person {i}", "person", "works at Acme") for i in range(60)]
    ny = g.entity("New York", "place", updated=0)  # the least recently updated of all
    shops = [g.entity(f"Shop {i}", "shop", "a new shop in york") for i in range(60)]
    g.save()
    gb.query(ask(gb, "What is Acme?"))
    # Acme: +5 +3; the people +1 each, the 9 most recently updated.
    assert entity_ids(prompt(gb)) == [acme.id, *[p.id for p in people[-9:]]]
    gb.query(ask(gb, "Any news from New York?"))
    # New York: +5 +3 +3; the shops +1 +1.
    assert entity_ids(prompt(gb)) == [ny.id, *[s.id for s in shops[-9:]]]


def test_name_terms_scored_past_a_common_term(gb: Harness) -> None:
    g = GraphBuilder(gb)
    target = g.entity("Alpha Beta Gamma")  # +3 alpha +3 gamma
    others = [g.entity(f"Alpha Person {i}") for i in range(60)]  # +3 alpha each, newer
    g.save()
    question = "Tell me about alpha and gamma"
    gb.query(ask(gb, question))
    assert entity_ids(prompt(gb)) == [target.id, *[o.id for o in others[-9:]]]
    ranked = keyword_seeds(gb.graph, g.key, question, query_terms(question), 10)
    assert ranked == [target.id, *[o.id for o in reversed(others[-9:])]]
