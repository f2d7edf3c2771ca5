"""remember: from a text to the bi-temporal graph.

All LLM and embeddings work happens first and reads only; the writes come last
(vectors, then the graph rows in one `apply` that undoes itself on failure), so
a call that fails leaves nothing a later query could see. LLM calls per text:
one `extract` (per chunk for a long text), at most one `invalidate`, one
`summarize` per chunk. Embeddings: two requests.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .. import clock
from ..ai import prompts
from ..ai.jsonreply import as_id, parse_json_object
from ..ai.port import LLMRequest
from ..config import Settings
from ..errors import UpstreamError
from ..graph.port import GraphStore, fact_triple
from ..models import Artifact, DatasetKey, Edge, Entity, GraphWrite
from ..records.meter import Meter
from ..text import chunk_text, estimate_tokens, fact_text, index_terms, normalize_name
from ..vectors.port import SearchRequest, VectorIndex, VectorItem
from .keywords import keyword_seeds
from .options import StageOptions

KNOWN_BY_KEYWORD = 15
KNOWN_BY_SIMILARITY = 10
KNOWN_MAX = 30
MAX_TEXT_TERMS = 40
AROUND_CAP = 100  # live facts around the new facts' entities shown to invalidate
MAX_DESCRIPTION = 600
RESOLVE_CANDIDATES = 3  # similar names read per new name, best first
WRITE_ATTEMPTS = 8  # the graph write, again after a concurrent update of an entity
WRITE_BACKOFF_S = 0.05  # the first pause; doubled after each attempt, with jitter
WRITE_BACKOFF_MAX_S = 1.0
PLACE_TYPES = frozenset(
    {
        "place",
        "location",
        "city",
        "country",
        "region",
        "town",
        "village",
        "state",
        "province",
        "continent",
        "landmark",
        "address",
    }
)


class GeoResolver(Protocol):
    def resolve(self, name: str) -> tuple[float, float] | None: ...


@dataclass
class RememberInput:
    user_id: str
    dataset: str
    text: str
    session_id: str | None
    reference_time: str
    options: StageOptions
    call_id: str | None = None


@dataclass
class _Extracted:
    name: str
    norm: str
    type: str
    description: str
    model_id: int | None
    chunk: int | None  # index of the chunk it came from, None for a short text


@dataclass
class _Fact:
    source: str  # normalized names
    target: str
    relation: str
    description: str
    valid_at: str
    invalid_at: str | None
    chunk: int | None


@dataclass
class _Resolved:
    entity: Entity
    created: bool
    extracted: list[_Extracted] = field(default_factory=list)


def _merge_description(old: str, new: str) -> str:
    """Enrich, never lose: the old text stays, a new phrase is appended."""
    new = new.strip()
    if not new or new.casefold() in old.casefold():
        return old
    if not old:
        return new[:MAX_DESCRIPTION]
    return f"{old}; {new}"[:MAX_DESCRIPTION]


def _str(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _snake(relation: str) -> str:
    return "_".join(normalize_name(relation).split()) or "related_to"


def _restated(olds: list[Edge], f: _Fact) -> Edge | None:
    """The live edge that a fact states again, or None when the fact is new.
    ``olds`` (newest first) have the fact's source, target and relation."""
    if not olds:
        return None
    for old in olds:  # the period in which the fact starts
        if (old.valid_at or "") <= f.valid_at and (
            old.invalid_at is None or f.valid_at < old.invalid_at
        ):
            return old
    if f.invalid_at is None and all(o.invalid_at and o.invalid_at <= f.valid_at for o in olds):
        return None  # holds again after every period of it ended: a new period
    return next((o for o in olds if o.invalid_at is None), olds[0])


class Remember:
    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorIndex,
        settings: Settings,
        geo: GeoResolver | None = None,
    ) -> None:
        self.graph = graph
        self.vectors = vectors
        self.settings = settings
        self.geo = geo

    # ------------------------------------------------------------------ steps
    def _llm_json(
        self,
        meter: Meter,
        opts: StageOptions,
        stage: str,
        system: str,
        user: str,
        max_tokens: int = 4096,
    ) -> dict[str, Any]:
        reply = meter.complete(
            LLMRequest(stage, system, user, opts.model(stage), opts.level(stage), max_tokens)
        )
        try:
            return parse_json_object(reply.text)
        except UpstreamError:
            meter.reject(stage, "unparsable reply")
            raise

    def _known_entities(
        self, key: DatasetKey, text: str, vectors: list[list[float]]
    ) -> list[Entity]:
        terms = sorted(index_terms(text), key=lambda t: text.casefold().find(t))[:MAX_TEXT_TERMS]
        ids = keyword_seeds(self.graph, key, text, terms, KNOWN_BY_KEYWORD)
        if vectors:
            reqs = [
                SearchRequest("entities", v, KNOWN_BY_SIMILARITY, self.settings.query_threshold)
                for v in vectors
            ]
            for hits in self.vectors.search(key, reqs):
                ids.extend(h.id for h in hits if h.id not in ids)
        ids = ids[:KNOWN_MAX]
        found = self.graph.get_entities(key, ids)
        return [found[i] for i in ids if i in found]

    def run(self, inp: RememberInput, meter: Meter) -> dict[str, Any]:
        key = DatasetKey(inp.user_id, inp.dataset)
        call = meter.call
        if inp.call_id is None:  # the artifacts name the call that wrote them
            inp = replace(inp, call_id=call.call_id)
        opts = inp.options
        now = clock.now_str()
        exists = self.graph.get_dataset(key) is not None

        # 1-2. Chunking.
        with call.step("chunk") as c:
            long_text = estimate_tokens(inp.text) > self.settings.chunk_threshold_tokens
            chunks = (
                chunk_text(
                    inp.text, self.settings.chunk_target_tokens, self.settings.chunk_overlap_tokens
                )
                if long_text
                else []
            )
            c["chunks"] = len(chunks)
        pieces = chunks or [inp.text]

        # Embeddings, request 1: the text (or its chunks). Finds the known
        # entities the text probably names; a chunk's vector is also stored.
        with call.step("embed_text") as c:
            text_vectors = meter.embed(pieces, "document").vectors
            c["inputs"] = len(pieces)

        with call.step("known_entities") as c:
            known = self._known_entities(key, inp.text, text_vectors) if exists else []
            c["entities"] = len(known)
        known_by_id = {e.id: e for e in known}

        # Summaries, one call per chunk.
        summaries: list[str] = []
        with call.step("summarize") as c:
            for i, chunk in enumerate(chunks):
                data = self._llm_json(
                    meter,
                    opts,
                    "summarize",
                    prompts.SUMMARIZE_SYSTEM,
                    prompts.summarize_user(chunk, i, len(chunks)),
                    1024,
                )
                summary = _str(data.get("summary"))
                if not summary:
                    meter.reject("summarize", "empty summary")
                    raise UpstreamError("LLM summary was empty")
                summaries.append(summary)
            c["chunks"] = len(chunks)

        # 3. Extraction: one call per text, or per chunk.
        extracted: list[_Extracted] = []
        facts: list[_Fact] = []
        with call.step("extract") as c:
            for i, piece in enumerate(pieces):
                data = self._llm_json(
                    meter,
                    opts,
                    "extract",
                    prompts.EXTRACT_SYSTEM,
                    prompts.extract_user(piece, inp.reference_time, known),
                )
                chunk_no = i if chunks else None
                ents, fs = self._parse_extraction(data, inp.reference_time, chunk_no)
                extracted.extend(ents)
                facts.extend(fs)
            c["entities"] = len(extracted)
            c["edges"] = len(facts)

        # 4. Entity resolution: by the model's ID, by normalized name, by
        # name similarity (embeddings request 2 also carries the texts to store).
        with call.step("resolve") as c:
            resolved, pending = self._resolve_exact(key, extracted, known_by_id)
            edge_texts = [fact_text(f.relation, f.description) for f in facts]
            pending_names = [exs[0].name for exs in pending.values()]
            batch = meter.embed(pending_names + edge_texts + summaries, "document").vectors
            name_vecs = dict(zip(pending, batch[: len(pending_names)], strict=True))
            edge_vecs = batch[len(pending_names) : len(pending_names) + len(edge_texts)]
            summary_vecs = batch[len(pending_names) + len(edge_texts) :]
            self._resolve_similar(key, pending, name_vecs, resolved)
            c["resolved"] = sum(1 for r in resolved.values() if not r.created)
            c["new"] = sum(1 for r in resolved.values() if r.created)

        # Facts: a fact already live between the same entities with the same
        # relation is restated (a new provenance link), not duplicated.
        by_norm = {norm: r for r in resolved.values() for norm in {x.norm for x in r.extracted}}
        existing_ids = [r.entity.id for r in resolved.values() if not r.created]
        with call.step("facts") as c:
            around = (
                self.graph.live_edges_around(key, existing_ids, AROUND_CAP) if existing_ids else []
            )
            live_by_triple: dict[tuple[int, int, str], list[Edge]] = {}
            for e in around:  # newest first
                live_by_triple.setdefault((e.source_id, e.target_id, e.relation), []).append(e)
            new_facts: list[tuple[_Fact, int, int, list[float]]] = []
            restated: dict[int, Edge] = {}
            ended: dict[int, Edge] = {}
            seen: set[tuple[int, int, str]] = set()
            for f, vec in zip(facts, edge_vecs, strict=True):
                s, t = by_norm[f.source].entity, by_norm[f.target].entity
                triple = (s.id, t.id, f.relation)
                # A new entity has no ID yet (0): a fact is told apart by the
                # resolved entities themselves, one object per entity.
                same = (id(by_norm[f.source]), id(by_norm[f.target]), f.relation)
                if same in seen:
                    continue
                seen.add(same)
                old = (
                    _restated(live_by_triple.get(triple, []), f)
                    if not (by_norm[f.source].created or by_norm[f.target].created)
                    else None
                )
                if old is not None:
                    restated[old.id] = old
                    if f.invalid_at and not old.invalid_at:
                        ended[old.id] = replace(old, invalid_at=f.invalid_at)
                    continue
                new_facts.append((f, s.id, t.id, vec))
            c["new"] = len(new_facts)
            c["restated"] = len(restated)

        # 5. Invalidation: one call for all new facts, none without candidates.
        names = {r.entity.id: r.entity.name for r in resolved.values()}
        for e in around:
            names.setdefault(e.source_id, "")
            names.setdefault(e.target_id, "")
        superseded: dict[int, int] = {}  # edge id -> index of the new fact
        with call.step("invalidate") as c:
            candidates = [e for e in around if e.id not in restated]
            if new_facts and candidates:
                missing = [i for i, n in names.items() if not n]
                if missing:
                    for eid, ent in self.graph.get_entities(key, missing).items():
                        names[eid] = ent.name
                lines = []
                for f, _sid, _tid, _ in new_facts:
                    # by_norm, not names: a new entity's ID is still 0 here
                    src, dst = by_norm[f.source].entity.name, by_norm[f.target].entity.name
                    line = f"{src} --{f.relation}--> {dst}"
                    if f.description:
                        line += f": {f.description}"
                    line += f" [valid_at={f.valid_at}" + (
                        f", invalid_at={f.invalid_at}]" if f.invalid_at else "]"
                    )
                    lines.append(line)
                data = self._llm_json(
                    meter,
                    opts,
                    "invalidate",
                    prompts.INVALIDATE_SYSTEM,
                    prompts.invalidate_user(lines, candidates, names),
                    2048,
                )
                cand_ids = {e.id for e in candidates}
                for item in data.get("invalidated") or []:
                    if not isinstance(item, dict):
                        continue
                    edge_id, by = as_id(item.get("edge_id")), as_id(item.get("by"))
                    if (
                        edge_id is not None
                        and edge_id in cand_ids
                        and by is not None
                        and 0 <= by < len(new_facts)
                    ):
                        superseded.setdefault(edge_id, by)
            c["candidates"] = len(candidates)
            c["invalidated"] = len(superseded)

        # Geo: places get coordinates.
        if self.geo is not None:
            with call.step("geo") as c:
                for r in resolved.values():
                    ent = r.entity
                    if r.created and ent.type.lower() in PLACE_TYPES and ent.lat is None:
                        coords = self.geo.resolve(ent.name)
                        if coords:
                            ent.lat, ent.lon = coords
                c["places"] = sum(1 for r in resolved.values() if r.entity.lat is not None)

        # ------------------------------------------------------------ writes
        with call.step("write") as c:
            result = self._write(
                key,
                inp,
                now,
                chunks,
                summaries,
                text_vectors,
                summary_vecs,
                resolved,
                name_vecs,
                new_facts,
                restated,
                ended,
                superseded,
                around,
            )
            c["entities"] = len(result["entities"])
            c["edges"] = len(result["edges"])
        return result

    # ---------------------------------------------------------------- helpers
    def _parse_extraction(
        self, data: dict[str, Any], reference_time: str, chunk: int | None
    ) -> tuple[list[_Extracted], list[_Fact]]:
        ents: list[_Extracted] = []
        raw_entities = data.get("entities")
        raw_edges = data.get("edges")
        if not isinstance(raw_entities, list) or not isinstance(raw_edges, list):
            raise UpstreamError("extraction reply lacks the entities and edges lists")
        seen: dict[str, _Extracted] = {}
        for item in raw_entities:
            if not isinstance(item, dict):
                continue
            name = _str(item.get("name"))
            norm = normalize_name(name)
            if not norm:
                continue
            ex = _Extracted(
                name,
                norm,
                _str(item.get("type")).lower(),
                _str(item.get("description")),
                as_id(item.get("id")),
                chunk,
            )
            if norm in seen:
                prev = seen[norm]
                prev.description = _merge_description(prev.description, ex.description)
                prev.model_id = prev.model_id or ex.model_id
                prev.type = prev.type or ex.type
                continue
            seen[norm] = ex
            ents.append(ex)
        facts: list[_Fact] = []
        for item in raw_edges:
            if not isinstance(item, dict):
                continue
            src, dst = _str(item.get("source")), _str(item.get("target"))
            if not normalize_name(src) or not normalize_name(dst):
                continue
            valid_at = clock.normalize(_str(item.get("valid_at"))) or reference_time
            invalid_at = clock.normalize(_str(item.get("invalid_at")))
            s_norm, t_norm = normalize_name(src), normalize_name(dst)
            # Keep the display name as the model wrote it in the entities list.
            facts.append(
                _Fact(
                    seen[s_norm].norm if s_norm in seen else s_norm,
                    seen[t_norm].norm if t_norm in seen else t_norm,
                    _snake(_str(item.get("relation"))),
                    _str(item.get("description")),
                    valid_at,
                    invalid_at,
                    chunk,
                )
            )
            for norm, raw in ((s_norm, src), (t_norm, dst)):
                if norm not in seen:
                    seen[norm] = _Extracted(raw, norm, "", "", None, chunk)
                    ents.append(seen[norm])
        return ents, facts

    def _resolve_exact(
        self, key: DatasetKey, extracted: list[_Extracted], known: dict[int, Entity]
    ) -> tuple[dict[str, _Resolved], dict[str, list[_Extracted]]]:
        """Resolution by the model's ID (only IDs it was shown) and by
        normalized name. Returns (resolved, pending), both by normalized name."""
        resolved: dict[str, _Resolved] = {}
        by_id: dict[int, _Resolved] = {}
        names = self.graph.entity_ids_by_names(key, sorted({e.norm for e in extracted}))
        need = [names[e.norm] for e in extracted if e.norm in names and names[e.norm] not in known]
        fetched = dict(known)
        if need:
            fetched.update(self.graph.get_entities(key, need))
        pending: dict[str, list[_Extracted]] = {}
        for ex in extracted:
            target: Entity | None = None
            if ex.model_id is not None and ex.model_id in known:
                target = known[ex.model_id]
            elif ex.norm in names and names[ex.norm] in fetched:
                target = fetched[names[ex.norm]]
            if target is None:
                pending.setdefault(ex.norm, []).append(ex)
                continue
            r = by_id.get(target.id) or _Resolved(replace(target), created=False)
            by_id[target.id] = r
            r.extracted.append(ex)
            resolved[ex.norm] = r
        return resolved, pending

    def _resolve_similar(
        self,
        key: DatasetKey,
        pending: dict[str, list[_Extracted]],
        vecs: dict[str, list[float]],
        resolved: dict[str, _Resolved],
    ) -> None:
        names = list(pending)
        hits = (
            self.vectors.search(
                key,
                [
                    SearchRequest(
                        "entities", vecs[n], RESOLVE_CANDIDATES, self.settings.resolve_threshold
                    )
                    for n in names
                ],
            )
            if names
            else []
        )
        by_id = {r.entity.id: r for r in resolved.values()}
        wanted = {h.id for found in hits for h in found} - set(by_id)
        fetched = self.graph.get_entities(key, sorted(wanted)) if wanted else {}
        # The best hit whose row exists: a vector left by a failed call (its
        # row never landed) must not hide a real entity ranked after it.
        match_ids = {
            n: next((h.id for h in found if h.id in by_id or h.id in fetched), None)
            for n, found in zip(names, hits, strict=True)
        }
        for n in names:
            exs = pending[n]
            mid = match_ids.get(n)
            r: _Resolved | None = None
            if mid is not None:
                r = by_id.get(mid)
                if r is None and mid in fetched:
                    r = by_id[mid] = _Resolved(replace(fetched[mid]), created=False)
            if r is None:
                # New: the ID comes at write time. Two names of the same text
                # that normalize alike were already merged by the parser.
                r = _Resolved(Entity(0, exs[0].name, exs[0].type, ""), created=True)
            for ex in exs:
                r.extracted.append(ex)
                resolved[ex.norm] = r

    def _write(
        self,
        key: DatasetKey,
        inp: RememberInput,
        now: str,
        chunks: list[str],
        summaries: list[str],
        text_vectors: list[list[float]],
        summary_vecs: list[list[float]],
        resolved: dict[str, _Resolved],
        name_vecs: dict[str, list[float]],
        new_facts: list[tuple[_Fact, int, int, list[float]]],
        restated: dict[int, Edge],
        ended: dict[int, Edge],
        superseded: dict[int, int],
        around: list[Edge],
    ) -> dict[str, Any]:
        unique = list({id(r): r for r in resolved.values()}.values())
        creating = [r for r in unique if r.created]
        self.graph.ensure_dataset(key)
        first_entity, first_edge, first_artifact = self.graph.allocate_ids(
            key, len(creating), len(new_facts), 1 + len(chunks)
        )
        # Claim the names of the new entities; a concurrent call that claimed
        # one first wins, and this call reuses its entity.
        proposals = {
            normalize_name(r.entity.name): first_entity + i for i, r in enumerate(creating)
        }
        owners = self.graph.claim_names(key, proposals) if proposals else {}
        claimed = {n: i for n, i in proposals.items() if owners.get(n) == i}
        fact_claimed: dict[str, int] = {}  # filled by _write_claimed
        try:
            return self._write_claimed(
                key,
                inp,
                now,
                chunks,
                summaries,
                text_vectors,
                summary_vecs,
                unique,
                creating,
                owners,
                claimed,
                name_vecs,
                first_edge,
                first_artifact,
                new_facts,
                restated,
                ended,
                superseded,
                around,
                fact_claimed,
            )
        except Exception:
            try:
                if fact_claimed:
                    self.graph.release_facts(key, fact_claimed)
            finally:
                self.graph.release_names(key, claimed)
            raise

    def _write_claimed(
        self,
        key: DatasetKey,
        inp: RememberInput,
        now: str,
        chunks: list[str],
        summaries: list[str],
        text_vectors: list[list[float]],
        summary_vecs: list[list[float]],
        unique: list[_Resolved],
        creating: list[_Resolved],
        owners: dict[str, int],
        claimed: dict[str, int],
        name_vecs: dict[str, list[float]],
        first_edge: int,
        first_artifact: int,
        new_facts: list[tuple[_Fact, int, int, list[float]]],
        restated: dict[int, Edge],
        ended: dict[int, Edge],
        superseded: dict[int, int],
        around: list[Edge],
        fact_claimed: dict[str, int],
    ) -> dict[str, Any]:
        parent = Artifact(
            first_artifact, inp.text, now, inp.reference_time, inp.session_id, call_id=inp.call_id
        )
        artifacts = [parent]
        chunk_ids = [first_artifact + 1 + i for i in range(len(chunks))]
        for i, chunk in enumerate(chunks):
            artifacts.append(
                Artifact(
                    chunk_ids[i],
                    chunk,
                    now,
                    inp.reference_time,
                    inp.session_id,
                    parent.id,
                    i,
                    inp.call_id,
                    summaries[i],
                )
            )

        lost = [
            r for r in creating if owners.get(normalize_name(r.entity.name)) not in claimed.values()
        ]
        if lost:  # lost a name race: reuse the winner's entity
            winners = self.graph.get_entities(
                key, [owners[normalize_name(r.entity.name)] for r in lost]
            )
            for r in lost:
                wid = owners[normalize_name(r.entity.name)]
                r.created = False
                # The winner's row may not have landed yet: a placeholder
                # that the first write attempt finds stale (see _refresh).
                r.entity = replace(winners[wid]) if wid in winners else replace(r.entity, id=wid)
        entity_vectors: list[VectorItem] = []
        for r in unique:
            if r.created:
                r.entity.id = claimed[normalize_name(r.entity.name)]
                vec = next((name_vecs[ex.norm] for ex in r.extracted if ex.norm in name_vecs), None)
                if vec is not None:
                    entity_vectors.append(VectorItem(r.entity.id, vec, r.entity.lat, r.entity.lon))
        # Claim the new open facts; a concurrent call that claimed one first
        # wins, and this call states its edge again instead of a twin.
        ids_by_norm = {ex.norm: r.entity.id for r in unique for ex in r.extracted}
        raced = self._claim_facts(key, new_facts, first_edge, ids_by_norm, fact_claimed)
        edge_vectors = [
            VectorItem(first_edge + i, nf[3]) for i, nf in enumerate(new_facts) if i not in raced
        ]

        # Vectors first: a vector whose row never lands is invisible, because
        # every hit is resolved through the graph store and IDs are not reused.
        self.vectors.upsert(key, "entities", entity_vectors)
        self.vectors.upsert(key, "edges", edge_vectors)
        if chunks:
            self.vectors.upsert(
                key,
                "chunks",
                [VectorItem(cid, v) for cid, v in zip(chunk_ids, text_vectors, strict=True)],
            )
            self.vectors.upsert(
                key,
                "summaries",
                [VectorItem(cid, v) for cid, v in zip(chunk_ids, summary_vecs, strict=True)],
            )

        # The rows. An entity update is conditional on the row being the one
        # read: when a concurrent call changed it first, the write is undone,
        # the entity read again, and its description merged again.
        for attempt in range(WRITE_ATTEMPTS):
            write, entities_out, edges_out, invalidated = self._graph_write(
                inp,
                now,
                parent,
                chunk_ids,
                artifacts,
                unique,
                first_edge,
                new_facts,
                restated,
                ended,
                superseded,
                around,
                raced,
            )
            try:
                self.graph.apply(key, write)
                break
            except UpstreamError:
                # (both refreshes run: each updates what it read)
                stale = self._refresh(key, unique, write) | self._refresh_raced(key, raced)
                if attempt + 1 == WRITE_ATTEMPTS or not stale:
                    raise
                cap = min(WRITE_BACKOFF_MAX_S, WRITE_BACKOFF_S * 2**attempt)
                time.sleep(random.uniform(cap / 2, cap))

        names = {e.id: e.name for e in entities_out}
        for e in edges_out:
            for side in (e.source_id, e.target_id):
                names.setdefault(side, "")
        missing = [i for i, n in names.items() if not n]
        if missing:
            for eid, ent in self.graph.get_entities(key, missing).items():
                names[eid] = ent.name
        created = {r.entity.id for r in unique if r.created}
        out: dict[str, Any] = {}
        if inp.session_id is not None:
            out["session_id"] = inp.session_id
        out["artifact_id"] = parent.id
        out["entities"] = [
            {**e.public(), "created": e.id in created}
            for e in sorted(entities_out, key=lambda e: e.id)
        ]
        out["edges"] = [e.public(names) for e in sorted(edges_out, key=lambda e: e.id)]
        out["invalidated"] = invalidated
        out["chunks"] = len(chunks)
        return out

    def _graph_write(
        self,
        inp: RememberInput,
        now: str,
        parent: Artifact,
        chunk_ids: list[int],
        artifacts: list[Artifact],
        unique: list[_Resolved],
        first_edge: int,
        new_facts: list[tuple[_Fact, int, int, list[float]]],
        restated: dict[int, Edge],
        ended: dict[int, Edge],
        superseded: dict[int, int],
        around: list[Edge],
        raced: dict[int, Edge],
    ) -> tuple[GraphWrite, list[Entity], list[Edge], list[dict[str, Any]]]:
        """The rows to write, from the entities as last read (no mutation of
        ``unique``: a retry builds them again)."""
        write = GraphWrite(artifacts=list(artifacts))
        entities_out: list[Entity] = []
        for r in unique:
            desc, type_ = r.entity.description, r.entity.type
            for ex in r.extracted:
                desc = _merge_description(desc, ex.description)
                type_ = type_ or ex.type
            if r.created:
                ent = replace(
                    r.entity, description=desc, type=type_, created_at=now, updated_at=now
                )
                write.new_entities.append(ent)
            elif (desc, type_) != (r.entity.description, r.entity.type) or not r.entity.updated_at:
                # (no updated_at: the winner of a name race whose row has not
                # landed; written conditionally too, so that this call fails
                # rather than link to an entity that may never exist)
                ent = replace(r.entity, description=desc, type=type_, updated_at=now)
                write.updated_entities.append((r.entity, ent))
            else:
                ent = r.entity
            entities_out.append(ent)
        ids_by_norm = {ex.norm: r.entity.id for r in unique for ex in r.extracted}

        def artifact_of(chunk: int | None) -> list[int]:
            return [parent.id] if chunk is None else [parent.id, chunk_ids[chunk]]

        for r in unique:
            for a in sorted({a for ex in r.extracted for a in artifact_of(ex.chunk)}):
                write.entity_links.append((r.entity.id, a))

        edges_out: list[Edge] = []
        for i, (f, _sid, _tid, _vec) in enumerate(new_facts):
            if i in raced:
                continue
            edge = Edge(
                first_edge + i,
                ids_by_norm[f.source],
                ids_by_norm[f.target],
                f.relation,
                f.description,
                parent.id,
                f.valid_at,
                f.invalid_at,
                now,
                None,
            )
            write.new_edges.append(edge)
            edges_out.append(edge)
            for a in artifact_of(f.chunk):
                write.edge_links.append((edge.id, a))
        for eid, old in restated.items():
            new = ended.get(eid, old)
            if new is not old:
                write.updated_edges.append((old, new))
            write.edge_links.append((eid, parent.id))
            edges_out.append(new)
        # Facts whose claim a concurrent call won: restated on its edge. The
        # edge is written again unchanged (a conditional put), so that this
        # write fails rather than link to an edge whose write was undone.
        touched: set[int] = set()
        for i, winner in sorted(raced.items()):
            for a in artifact_of(new_facts[i][0].chunk):
                write.edge_links.append((winner.id, a))
            if winner.id in restated or winner.id in touched:
                continue
            touched.add(winner.id)
            write.updated_edges.append((winner, winner))
            edges_out.append(winner)
        invalidated: list[dict[str, Any]] = []
        by_id = {e.id: e for e in around}
        for eid, by in sorted(superseded.items()):
            old = by_id[eid]
            new = replace(
                old, expired_at=now, invalid_at=old.invalid_at or new_facts[by][0].valid_at
            )
            write.updated_edges.append((old, new))
            invalidated.append({"id": eid, "invalid_at": new.invalid_at, "expired_at": now})
        for eid, new in sorted(ended.items()):
            invalidated.append({"id": eid, "invalid_at": new.invalid_at})
        return write, entities_out, edges_out, invalidated

    def _claim_facts(
        self,
        key: DatasetKey,
        new_facts: list[tuple[_Fact, int, int, list[float]]],
        first_edge: int,
        ids_by_norm: dict[str, int],
        claimed: dict[str, int],
    ) -> dict[int, Edge]:
        """Claim the triple of each new open fact (no ``invalid_at``) for its
        edge ID (``first_edge`` + its index). Adds the claims won to
        ``claimed``; returns, by index in ``new_facts``, the edge of a
        concurrent call that owns the triple. That edge may not have landed
        yet: it is waited for (bounded); when its call failed, its claim is
        gone and the next attempt takes it."""
        pending: dict[str, int] = {}  # triple -> index
        for i, (f, _sid, _tid, _vec) in enumerate(new_facts):
            if f.invalid_at is None:
                triple = fact_triple(ids_by_norm[f.source], f.relation, ids_by_norm[f.target])
                pending.setdefault(triple, i)
        raced: dict[int, Edge] = {}
        for attempt in range(WRITE_ATTEMPTS):
            if not pending:
                return raced
            if attempt:
                cap = min(WRITE_BACKOFF_MAX_S, WRITE_BACKOFF_S * 2 ** (attempt - 1))
                time.sleep(random.uniform(cap / 2, cap))
            owners = self.graph.claim_facts(key, {t: first_edge + i for t, i in pending.items()})
            lost: dict[str, int] = {}
            for triple, i in pending.items():
                owner = owners.get(triple, first_edge + i)
                if owner == first_edge + i:
                    claimed[triple] = owner
                else:
                    lost[triple] = owner
            winners = self.graph.get_edges(key, sorted(set(lost.values()))) if lost else {}
            for triple, owner in lost.items():
                if owner in winners:
                    raced[pending[triple]] = winners[owner]
            pending = {t: pending[t] for t, owner in lost.items() if owner not in winners}
        if pending:
            raise UpstreamError("a fact is claimed by a concurrent write that has not landed")
        return raced

    def _refresh_raced(self, key: DatasetKey, raced: dict[int, Edge]) -> bool:
        """After a failed write: read again the edges of the fact races lost.
        True when one changed or is missing (its call's write was undone and
        may be retried), so that a new attempt can succeed."""
        if not raced:
            return False
        fresh = self.graph.get_edges(key, sorted({e.id for e in raced.values()}))
        stale = False
        for i, edge in raced.items():
            cur = fresh.get(edge.id)
            if cur != edge:
                stale = True
                if cur is not None:
                    raced[i] = cur
        return stale

    def _refresh(self, key: DatasetKey, unique: list[_Resolved], write: GraphWrite) -> bool:
        """After a failed write: read again the entities it updated. True when
        one of them changed since it was read (a concurrent call enriched it,
        or it had not landed yet), so that a new attempt can succeed."""
        read = {old.id: old for old, _ in write.updated_entities}
        if not read:
            return False
        fresh = self.graph.get_entities(key, list(read))
        stale = False
        for r in unique:
            old = read.get(r.entity.id)
            if old is None or r.created:
                continue
            cur = fresh.get(old.id)
            if cur is None or (cur.description, cur.type, cur.updated_at) != (
                old.description,
                old.type,
                old.updated_at,
            ):
                stale = True
                if cur is not None:
                    r.entity = replace(cur)
        return stale
