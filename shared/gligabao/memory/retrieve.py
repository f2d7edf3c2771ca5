"""retrieve: from a question to the context the answer is given from: the
seeds (keyword and vector), the edges around them and the similar facts, and
the passages. No LLM call (except the nearby search's place detection, when
the server has geo on and the caller asked).

Round trips do not grow with the graph: one keyword query per term (at most
12), one batch read of the names the question holds whole (and one of their
entities when the term index left them out), one embeddings request, one vector search round trip for the four
indexes, one batch read of the similar facts, one or two edge queries per seed
(at most 35 seeds), one batch read of the entities, one of the passages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ai import prompts
from ..config import Settings
from ..graph.port import GraphStore
from ..models import Artifact, DatasetKey, Edge, Entity
from ..records.meter import Meter
from ..text import estimate_tokens, query_terms
from ..vectors.port import Hit, SearchRequest, VectorIndex
from .keywords import keyword_seeds
from .options import StageOptions
from .temporal import Interval, contains

KEYWORD_SEEDS = 10
SIMILAR_ENTITIES = 10
SIMILAR_EDGES = 10
SIMILAR_PASSAGES = 5
FALLBACK_SEEDS = 25
EDGE_CAP = 100
PASSAGES_WITH_TEXT = 3
PASSAGES_SUMMARY_ONLY = 5


@dataclass
class QueryInput:
    user_id: str
    dataset: str
    query: str
    session_id: str | None
    options: StageOptions
    geo_radius_km: float | None = None  # set when the caller asked for nearby search
    as_of: str | None = None  # the world as it stood then (RFC 3339 UTC), else now


@dataclass
class Passage:
    chunk: Artifact
    summary: str | None  # given when the summary index found it
    text: str | None  # given for the best few only

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"artifact_id": self.chunk.id}
        if self.chunk.parent_id is not None:
            out["parent_id"] = self.chunk.parent_id
        if self.chunk.index is not None:
            out["index"] = self.chunk.index
        if self.summary is not None:
            out["summary"] = self.summary
        if self.text is not None:
            out["text"] = self.text
        return out

    def render(self) -> str:
        lines = [
            f"[passage {self.chunk.id}] chunk {self.chunk.index} of text {self.chunk.parent_id}"
        ]
        if self.summary is not None:
            lines.append(f"summary: {self.summary}")
        if self.text is not None:
            lines.append(f"text: {self.text}")
        return "\n".join(lines)


@dataclass
class Context:
    entities: dict[int, Entity]
    edges: dict[int, Edge]
    passages: dict[int, Passage]
    nearby: dict[str, Any] | None = None
    as_of: str | None = None

    @property
    def empty(self) -> bool:
        return not self.entities and not self.edges and not self.passages

    def render(self, question: str, now: str) -> str:
        """The user message of the answer call: the graph, the passages and
        the question."""
        names = {i: e.name for i, e in self.entities.items()}
        graph_lines = [prompts.entity_line(self.entities[i]) for i in sorted(self.entities)]
        graph_lines += [prompts.edge_line(self.edges[i], names) for i in sorted(self.edges)]
        parts = [f"<current_time>{now}</current_time>"]
        if self.as_of is not None:
            parts.append(f"<as_of>{self.as_of}</as_of>")
        parts += ["<graph>", *graph_lines, "</graph>"]
        if self.passages:
            parts += [
                "<passages>",
                "\n\n".join(self.passages[i].render() for i in sorted(self.passages)),
                "</passages>",
            ]
        parts.append(f"<question>{question}</question>")
        return "\n".join(parts)

    def token_estimate(self, question: str, now: str) -> int:
        return estimate_tokens(self.render(question, now))


def _held(edge: Edge, instant: str) -> bool:
    """The edge's fact held at ``instant`` (its validity interval contains it)."""
    return contains(Interval(edge.valid_at, edge.invalid_at), instant)


def rank_passages(chunk_hits: list[Hit], summary_hits: list[Hit]) -> list[tuple[int, bool, bool]]:
    """Merge the two indexes by chunk: (chunk id, found by text, found by
    summary), best score first (a chunk's score is the better of its two)."""
    score: dict[int, float] = {}
    by_text: set[int] = set()
    by_summary: set[int] = set()
    for h in chunk_hits:
        score[h.id] = max(score.get(h.id, -2.0), h.score)
        by_text.add(h.id)
    for h in summary_hits:
        score[h.id] = max(score.get(h.id, -2.0), h.score)
        by_summary.add(h.id)
    order = sorted(score, key=lambda cid: (-score[cid], cid))
    return [(cid, cid in by_text, cid in by_summary) for cid in order]


class Retriever:
    def __init__(
        self, graph: GraphStore, vectors: VectorIndex, settings: Settings, nearby: Any = None
    ) -> None:
        self.graph = graph
        self.vectors = vectors
        self.settings = settings
        self.nearby = nearby  # geo: the nearby search, when the server has geo on

    def retrieve(self, key: DatasetKey, inp: QueryInput, meter: Meter) -> Context:
        call = meter.call
        with call.step("keyword_seeds") as c:
            terms = query_terms(inp.query)
            seeds = keyword_seeds(self.graph, key, inp.query, terms, KEYWORD_SEEDS)
            c["terms"] = len(terms)
            c["seeds"] = len(seeds)

        with call.step("search_vectors") as c:
            qvec = meter.embed([inp.query], "query").vectors[0]
            t = self.settings.query_threshold
            ent_hits, edge_hits, chunk_hits, sum_hits = self.vectors.search(
                key,
                [
                    SearchRequest("entities", qvec, SIMILAR_ENTITIES, t),
                    SearchRequest("edges", qvec, SIMILAR_EDGES, t),
                    SearchRequest("chunks", qvec, SIMILAR_PASSAGES, t),
                    SearchRequest("summaries", qvec, SIMILAR_PASSAGES, t),
                ],
            )
            c["entities"] = len(ent_hits)
            c["edges"] = len(edge_hits)
            c["chunks"] = len(chunk_hits)
            c["summaries"] = len(sum_hits)

        with call.step("expand") as c:
            similar_seeds = [h.id for h in ent_hits]
            matched = list(dict.fromkeys(seeds + similar_seeds))
            # Superseded facts never enter the context, whichever way they
            # came; with as_of, the facts valid then do, superseded or not.
            similar_edges = [
                e
                for e in self.graph.get_edges(key, [h.id for h in edge_hits]).values()
                if (e.live if inp.as_of is None else _held(e, inp.as_of))
            ]
            seed_entities = self.graph.get_entities(key, matched) if matched else {}
            seeds = [i for i in matched if i in seed_entities]  # drop deleted rows
            matched_entities = [seed_entities[i] for i in seeds]  # not the fallback's
            fallback = False
            if not seeds and not similar_edges:
                recent = self.graph.recent_entities(key, FALLBACK_SEEDS)
                seed_entities = {e.id: e for e in recent}
                seeds = [e.id for e in recent]
                fallback = True
            around = self.graph.live_edges_around(key, seeds, EDGE_CAP) if seeds else []
            if inp.as_of is not None and seeds:
                around += self.graph.expired_edges_around(key, seeds, EDGE_CAP)
            edges = {e.id: e for e in around if inp.as_of is None or _held(e, inp.as_of)}
            for e in similar_edges:
                edges.setdefault(e.id, e)
            c["seeds"] = len(seeds)
            c["fallback"] = int(fallback)
            c["edges"] = len(edges)

        nearby: dict[str, Any] | None = None
        if self.nearby is not None:
            with call.step("nearby") as c:
                nearby, near_edges = self.nearby.search(key, inp, meter, matched_entities)
                for e in near_edges:
                    if inp.as_of is None or _held(e, inp.as_of):
                        edges.setdefault(e.id, e)
                c["entities"] = len(nearby["nearby"]) if nearby else 0

        with call.step("entities") as c:
            entities = dict(seed_entities)
            if nearby:
                for n in nearby.get("_entities", []):
                    entities.setdefault(n.id, n)
            need = {i for e in edges.values() for i in (e.source_id, e.target_id)} - set(entities)
            if need:
                entities.update(self.graph.get_entities(key, sorted(need)))
            # An edge whose endpoint row is gone cannot be read: leave it out.
            edges = {
                i: e
                for i, e in edges.items()
                if e.source_id in entities and e.target_id in entities
            }
            c["entities"] = len(entities)

        with call.step("passages") as c:
            passages = self._passages(key, chunk_hits, sum_hits)
            c["with_text"] = sum(1 for p in passages.values() if p.text is not None)
            c["summary_only"] = sum(1 for p in passages.values() if p.text is None)

        if nearby is not None:
            nearby.pop("_entities", None)
        return Context(entities, edges, passages, nearby, inp.as_of)

    def _passages(
        self, key: DatasetKey, chunk_hits: list[Hit], sum_hits: list[Hit]
    ) -> dict[int, Passage]:
        ranked = rank_passages(chunk_hits, sum_hits)
        if not ranked:
            return {}
        rows = self.graph.get_artifacts(key, [cid for cid, _, _ in ranked])
        ranked = [r for r in ranked if r[0] in rows]  # a deleted row's vector is dropped
        out: dict[int, Passage] = {}
        for cid, _by_text, by_summary in ranked[:PASSAGES_WITH_TEXT]:
            row = rows[cid]
            out[cid] = Passage(row, row.summary if by_summary else None, row.text)
        extra = 0
        for cid, _by_text, by_summary in ranked[PASSAGES_WITH_TEXT:]:
            if extra == PASSAGES_SUMMARY_ONLY:
                break
            if not by_summary:  # found only by its own text: nothing to give
                continue
            row = rows[cid]
            out[cid] = Passage(row, row.summary, None)
            extra += 1
        return out
