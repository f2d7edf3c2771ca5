"""The consistency checks of the load benchmarks (bench/load.py,
bench/load_crash.py): what every acknowledged remember wrote is there, whole,
and the store holds no duplicate, no dangling edge and counters equal to its
rows. Read through this process's graph store (``wiring.graph_store()``)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from .harness.workload import SENTENCE, relation
from .load import DATASETS, USERS, Result, Stats


def _links_of(read: Any, key: Any) -> Any:
    """The artifacts linked to a row, read once per row."""
    cache: dict[int, set[int]] = {}

    def links(row_id: int) -> set[int]:
        if row_id not in cache:
            cache[row_id] = set(read(key, row_id))
        return cache[row_id]

    return links


def check(stats: Stats, facts_once: bool = False) -> tuple[list[str], list[str]]:
    """Read back every acknowledged remember through the store. Returns the
    problems and the warnings (what the spec does not promise under
    concurrency: the same new fact stated by two concurrent calls; with
    `facts_once`, the fact claims of the commit protocol do, so a fact live
    twice is a problem)."""
    from gligabao import wiring
    from gligabao.models import DatasetKey
    from gligabao.text import normalize_name

    graph = wiring.graph_store()
    problems: list[str] = []
    warnings: list[str] = []
    acked = stats.acked()
    by_key: dict[DatasetKey, list[Result]] = defaultdict(list)
    for r in acked:
        by_key[DatasetKey(r.user, r.dataset)].append(r)
    problems += [
        f"replayed key {r.key} returned another response"
        for r in stats.results
        if r.kind == "replay-mismatch"
    ]

    for key, results in sorted(by_key.items(), key=lambda kv: kv[0].pk):
        where = f"{key.user_id}/{key.dataset}"
        entities = {e.id: e for e in graph.iter_entities(key)}
        edges = {e.id: e for e in graph.iter_edges(key)}
        artifacts = {a.id: a for a in graph.iter_artifacts(key)}

        # IDs acknowledged: one artifact per call, one meaning per entity / edge ID
        artifact_ids = [r.body["artifact_id"] for r in results]
        dup = {i for i in artifact_ids if artifact_ids.count(i) > 1}
        if dup:
            problems.append(f"{where}: artifact IDs acknowledged twice: {sorted(dup)[:10]}")
        entity_names: dict[int, set[str]] = defaultdict(set)
        entity_links = _links_of(graph.entity_artifacts, key)
        edge_links = _links_of(graph.edge_artifacts, key)
        edge_facts: dict[int, set[tuple[int, int, str]]] = defaultdict(set)

        for r in results:
            body = r.body
            art = artifacts.get(body["artifact_id"])
            if art is None or art.text != r.text:
                problems.append(
                    f"{where}: artifact {body['artifact_id']} of an acknowledged call is missing or wrong"
                )
            expected = {(p, v, o) for p, v, o in SENTENCE.findall(r.text)}
            got_names = {normalize_name(e["name"]) for e in body["entities"]}
            for p, _, o in expected:
                for name in (p, o):
                    if normalize_name(name) not in got_names:
                        problems.append(f"{where}: {name!r} of {r.text!r} is not in the response")
            for e in body["entities"]:
                entity_names[e["id"]].add(normalize_name(e["name"]))
                row = entities.get(e["id"])
                if row is None:
                    problems.append(
                        f"{where}: entity {e['id']} ({e['name']}) acknowledged, not stored"
                    )
                elif normalize_name(row.name) != normalize_name(e["name"]):
                    problems.append(
                        f"{where}: entity {e['id']} is {row.name!r}, acknowledged as {e['name']!r}"
                    )
                elif body["artifact_id"] not in entity_links(e["id"]):
                    problems.append(
                        f"{where}: entity {e['id']} has no link to artifact {body['artifact_id']}"
                    )
            facts = {(e["source"], e["relation"], e["target"]) for e in body["edges"]}
            for p, verb, o in expected:
                rel = relation(verb)
                if (p, rel, o) not in facts:
                    problems.append(
                        f"{where}: fact {p} {rel} {o} of {r.text!r} is not in the response"
                    )
            for e in body["edges"]:
                edge_facts[e["id"]].add((e["source_id"], e["target_id"], e["relation"]))
                erow = edges.get(e["id"])
                if erow is None:
                    problems.append(f"{where}: edge {e['id']} acknowledged, not stored")
                    continue
                if (erow.source_id, erow.target_id, erow.relation) != (
                    e["source_id"],
                    e["target_id"],
                    e["relation"],
                ):
                    problems.append(f"{where}: edge {e['id']} differs from its acknowledgement")
                if not erow.live:
                    problems.append(f"{where}: edge {e['id']} was superseded (nothing should be)")
                if body["artifact_id"] not in edge_links(e["id"]):
                    problems.append(
                        f"{where}: edge {e['id']} has no link to artifact {body['artifact_id']}"
                    )
        problems += [
            f"{where}: entity ID {i} acknowledged as {sorted(n)}"
            for i, n in entity_names.items()
            if len(n) > 1
        ]
        problems += [
            f"{where}: edge ID {i} acknowledged as {sorted(f)}"
            for i, f in edge_facts.items()
            if len(f) > 1
        ]

        # the store itself: unique names, claimed by their entity
        by_norm: dict[str, list[int]] = defaultdict(list)
        for e in entities.values():
            by_norm[normalize_name(e.name)].append(e.id)
        twins = {n: ids for n, ids in by_norm.items() if len(ids) > 1}
        if twins:
            problems.append(f"{where}: duplicated entities {dict(list(twins.items())[:5])}")
        claims = graph.entity_ids_by_names(key, sorted(by_norm))
        for n, ids in by_norm.items():
            if claims.get(n) not in ids:
                problems.append(f"{where}: name {n!r} claimed by {claims.get(n)}, entities {ids}")
        # a live fact is stored once
        live: dict[tuple[int, int, str], list[int]] = defaultdict(list)
        for e in edges.values():
            if e.live:
                live[(e.source_id, e.target_id, e.relation)].append(e.id)
        dup_facts = {k: v for k, v in live.items() if len(v) > 1}
        if dup_facts:
            (problems if facts_once else warnings).append(
                f"{where}: {len(dup_facts)} live facts stored more than once "
                f"{dict(list(dup_facts.items())[:3])}"
            )
        for e in edges.values():
            if e.source_id not in entities or e.target_id not in entities:
                problems.append(f"{where}: edge {e.id} points at a missing entity")
        # the counters
        ds = graph.get_dataset(key)
        if ds is None:
            problems.append(f"{where}: dataset row missing")
        elif (ds.entities, ds.edges, ds.artifacts) != (len(entities), len(edges), len(artifacts)):
            problems.append(
                f"{where}: counters {(ds.entities, ds.edges, ds.artifacts)} != rows "
                f"{(len(entities), len(edges), len(artifacts))}"
            )
        extra = set(artifacts) - set(artifact_ids)
        if extra:
            warnings.append(f"{where}: {len(extra)} artifacts no acknowledged call wrote")
    return problems, warnings


def unacknowledged_whole(stats: Stats) -> tuple[int, list[str]]:
    """A visible artifact no acknowledged call wrote (the call committed, then
    its server died before the answer) is whole all the same: every entity
    and fact of its text is there, live, and linked to it. Returns how many
    such artifacts were checked, and the problems."""
    from gligabao import wiring
    from gligabao.models import DatasetKey
    from gligabao.text import normalize_name

    graph = wiring.graph_store()
    acked = {(r.user, r.dataset, r.body["artifact_id"]) for r in stats.acked()}
    checked, problems = 0, []
    for user in USERS:
        for dataset in DATASETS:
            key, where = DatasetKey(user, dataset), f"{user}/{dataset}"
            by_name = {normalize_name(e.name): e.id for e in graph.iter_entities(key)}
            live: dict[tuple[int, int, str], list[int]] = defaultdict(list)
            for e in graph.iter_edges(key):
                if e.live:
                    live[(e.source_id, e.target_id, e.relation)].append(e.id)
            for art in graph.iter_artifacts(key):
                if (user, dataset, art.id) in acked:
                    continue
                checked += 1
                for p, verb, o in SENTENCE.findall(art.text):
                    ids = [by_name.get(normalize_name(n)) for n in (p, o)]
                    for name, eid in zip((p, o), ids, strict=True):
                        if eid is None:
                            problems.append(f"{where}: artifact {art.id} names {name}: missing")
                        elif art.id not in set(graph.entity_artifacts(key, eid)):
                            problems.append(f"{where}: entity {eid} not linked to {art.id}")
                    rel = relation(verb)
                    if ids[0] is None or ids[1] is None:
                        continue
                    edge_ids = live.get((ids[0], ids[1], rel), [])
                    if not edge_ids:
                        problems.append(f"{where}: artifact {art.id}: {p} {rel} {o} not live")
                    elif not any(art.id in set(graph.edge_artifacts(key, i)) for i in edge_ids):
                        problems.append(f"{where}: fact {edge_ids} not linked to {art.id}")
    return checked, problems


def say_check(say: Any, title: str, problems: list[str], warnings: list[str]) -> None:
    """``title: N problem(s), M warning(s)`` and the first of each."""
    say(f"{title}: {len(problems)} problem(s), {len(warnings)} warning(s)")
    for p in problems[:30]:
        say(f"  - {p}")
    for w in warnings[:10]:
        say(f"  ~ {w}")
