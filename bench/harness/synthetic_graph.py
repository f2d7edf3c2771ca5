"""A synthetic graph of any size, the same for every benchmark that asks for
it: entities ~ edges/3 with names from generated word lists (people,
organizations, places), edges between them with a skew (a few hubs have
hundreds of facts), 10% of the facts ended and 10% superseded, and one long
text in five chunks per 500 edges. bench/query_scale.py writes it to DynamoDB,
bench/sqlite_serve.py to the SQLite file, bench/peers_sides.py to Kuzu and Qdrant."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from gligabao.models import Artifact, DatasetKey, Edge, Entity
from gligabao.text import normalize_name

FIRST = (
    "Alice Bob Carol David Emma Farid Grace Hugo Ines Jonas Kenji Lena Marco Nadia Omar "
    "Priya Quentin Rosa Samir Tara Ugo Vera Wei Ximena Yusuf Zoe Aaron Bianca Chen Dmitri "
    "Elena Felix Giulia Hana Ivan Julia Karim Laura Mateo Nina Oscar Paula Rafael Sofia "
    "Tomas Uma Viktor Wanda Yara Zeno"
).split()
LAST = (
    "Smith Garcia Müller Rossi Tanaka Kowalski Dubois Silva Novak Jensen Okafor Haddad "
    "Ivanova Moreau Santos Becker Conti Lindqvist Nguyen Park Kaur Singh Ahmed Costa Fischer "
    "Romano Schmidt Petrov Laurent Martins Weber Ricci Berg Kim Li Ali Hassan Torres Ortiz "
    "Klein Wolf Marino Sato Suzuki Meyer Fontaine Lopez Reyes Cruz"
).split()
ORG_A = (
    "Blue Red Green Silver Golden North South Bright Quantum Atlas Nova Summit Pioneer "
    "Harbor Cedar Granite Swift Vertex Orbit Lumen"
).split()
ORG_B = (
    "River Peak Bridge Forge Field Stone Wave Cloud Leaf Spark Path Gate Point Crest "
    "Works Grove Bay Ridge Lake Harbor"
).split()
ORG_C = "Labs Systems Group Partners Foods Motors Health Logistics Studio Capital".split()
PLACE_A = "New Old North South East West Port Saint Upper Lower Great Little".split()
PLACE_B = (
    "Ashford Brookfield Carlton Dunmore Elmwood Fairhaven Glenrock Hillcrest Ivydale "
    "Kingsbridge Lakeside Marlow Northgate Oakridge Pinecrest Queensbury Riverton "
    "Stonebury Thornhill Westwood"
).split()
TOPICS = "chess sailing jazz painting robotics cycling poetry gardening climbing astronomy".split()
ROLES = "engineer designer doctor teacher lawyer chef analyst nurse writer manager".split()


@dataclass
class Graph:
    key: DatasetKey
    entities: list[Entity] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    chunks: list[Artifact] = field(default_factory=list)
    people: list[int] = field(default_factory=list)
    orgs: list[int] = field(default_factory=list)
    places: list[int] = field(default_factory=list)


def ts(minutes: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_600_000_000 + minutes * 60))


def generate(key: DatasetKey, n_edges: int, rng: random.Random) -> Graph:
    g = Graph(key)
    n_ent = max(30, n_edges // 3)
    names: set[str] = set()

    def unique(*makers: Any) -> str:
        """The first new name from the makers, simplest first (a maker is
        tried 20 times before the next, richer one)."""
        for make in makers:
            for _ in range(20):
                name = str(make())
                if normalize_name(name) not in names:
                    names.add(normalize_name(name))
                    return name
        raise RuntimeError("name space exhausted")

    def pick(words: list[str]) -> str:
        return rng.choice(words)

    for i in range(n_ent):
        eid = i + 1
        r = i % 10
        if r < 6:
            name = unique(
                lambda: f"{pick(FIRST)} {pick(LAST)}",
                lambda: f"{pick(FIRST)} {pick(LAST)}-{pick(LAST)}",
                lambda: f"{pick(FIRST)} {pick(FIRST)} {pick(LAST)}-{pick(LAST)}",
            )
            e = Entity(eid, name, "person", f"{pick(ROLES)} who likes {pick(TOPICS)}")
            g.people.append(eid)
        elif r < 8:
            name = unique(
                lambda: f"{pick(ORG_A)} {pick(ORG_B)} {pick(ORG_C)}",
                lambda: f"{pick(ORG_A)} {pick(ORG_B)} {pick(ORG_C)} {rng.randint(2, 9999)}",
            )
            e = Entity(eid, name, "organization", f"a {pick(ORG_C).lower()} company")
            g.orgs.append(eid)
        else:
            name = unique(
                lambda: f"{pick(PLACE_A)} {pick(PLACE_B)}",
                lambda: f"{pick(PLACE_A)} {pick(PLACE_B)} {pick(ORG_B)}",
                lambda: f"{pick(PLACE_B)} {pick(ORG_B)} {rng.randint(2, 9999)}",
            )
            e = Entity(eid, name, "place", "a town")
            g.places.append(eid)
        e.created_at = e.updated_at = ts(i)
        g.entities.append(e)

    def skewed(ids: list[int]) -> int:
        # A few hubs get most of the facts (Pareto-ish).
        return ids[min(len(ids) - 1, int(rng.paretovariate(1.2)) - 1)]

    by_id = {e.id: e for e in g.entities}
    for j in range(n_edges):
        eid = j + 1
        kind = rng.random()
        src = rng.choice(g.people)
        if kind < 0.4:
            dst, rel = skewed(g.orgs), "works_at"
        elif kind < 0.7:
            dst, rel = skewed(g.places), "lives_in"
        elif kind < 0.9:
            dst, rel = rng.choice(g.people), "knows"
        else:
            src, dst, rel = rng.choice(g.orgs), skewed(g.places), "located_in"
        if dst == src:
            dst = g.entities[(src % len(g.entities))].id
        desc = f"{by_id[src].name} {rel.replace('_', ' ')} {by_id[dst].name}."
        edge = Edge(eid, src, dst, rel, desc, None, ts(n_ent + j), None, ts(n_ent + j), None)
        fate = rng.random()
        if fate < 0.1:
            edge.invalid_at = ts(n_ent + j + 10)
        elif fate < 0.2:
            edge.invalid_at = ts(n_ent + j + 10)
            edge.expired_at = ts(n_ent + j + 20)
        g.edges.append(edge)

    # One long text per 500 edges, in five chunks (IDs set by renumber_artifacts).
    for c in range(max(1, n_edges // 100)):
        if c % 5 == 0:
            g.chunks.append(Artifact(0, "(the whole text)", ts(0), ts(0)))
        person = by_id[rng.choice(g.people)]
        text = f"Notes about {person.name}: {person.description}. " * 20
        summary = f"{person.name} is a {person.description}."
        g.chunks.append(Artifact(0, text, ts(0), ts(0), parent_id=0, index=c % 5, summary=summary))
    return g


def renumber_artifacts(g: Graph) -> None:
    """Parents first in each group of five chunks; parent_id points at them."""
    parent: int | None = None
    for i, a in enumerate(g.chunks):
        a.id = i + 1
        if a.parent_id is None:
            parent = a.id
        else:
            a.parent_id = parent
