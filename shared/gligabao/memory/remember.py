"""remember: from a text to the bi-temporal graph, the use case.

The data's way, one module per step: ``extract`` (the LLM reads the text),
``resolve`` (which stored entity each name is), ``facts`` (new, restated,
superseded), ``plan`` (the typed write), ``commit`` (the writes). All LLM and
embeddings work happens first and reads only; the writes come last, so a call
that fails leaves nothing a later query could see. LLM calls per text: one
`extract` (per chunk for a long text), at most one `invalidate`, one
`summarize` per chunk. Embeddings: two requests.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

from .. import clock
from ..config import Settings
from ..graph.port import GraphStore
from ..models import DatasetKey
from ..records.meter import Meter
from ..text import chunk_text, estimate_tokens, fact_text, passage_windows
from ..vectors.port import VectorIndex
from . import extract, facts, resolve
from .commit import Texts, Writer
from .options import StageOptions
from .passages import embedded_text

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
    speaker: str | None = None


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
        self.writer = Writer(graph, vectors)

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
            # A text too short to chunk but longer than a passage (a chat
            # session) is searched by windows of its lines: its children.
            windows = [] if chunks else passage_windows(inp.text, self.settings.passage_tokens)
            c["chunks"] = len(chunks)
            c["passages"] = len(windows)
        pieces = chunks or [inp.text]  # what extraction reads
        passages = chunks or windows or [inp.text]  # what the search finds

        # Embeddings, request 1: the passages. Finds the known entities the
        # text probably names; the vectors are stored.
        with call.step("embed_text") as c:
            # A turn of a session is embedded after the end of the one before.
            sid = inp.session_id if exists and passages == [inp.text] else None
            before = self.graph.session_texts(key, sid, 1) if sid is not None else []
            embedded = [embedded_text(p, inp.speaker, next(iter(before), None)) for p in passages]
            text_vectors = meter.embed(embedded, "document").vectors
            c["inputs"] = len(passages)

        with call.step("known_entities") as c:
            known = (
                resolve.known_entities(
                    self.graph,
                    self.vectors,
                    self.settings.query_threshold,
                    key,
                    inp.text,
                    text_vectors,
                )
                if exists
                else []
            )
            c["entities"] = len(known)
        known_by_id = {e.id: e for e in known}

        # Context for extraction: the speaker, the session's previous texts,
        # the relation names in use around the known entities.
        with call.step("context") as c:
            ctx = extract.context(
                self.graph, key, inp.speaker, inp.session_id if exists else None, known
            )
            c["previous"] = len(ctx.previous)
            c["relations"] = len(ctx.relations)

        # Summaries, one call per chunk.
        with call.step("summarize") as c:
            summaries = extract.summarize(meter, opts, chunks)
            c["chunks"] = len(chunks)

        # 3. Extraction: one call per text, or per chunk.
        with call.step("extract") as c:
            extracted, stated = extract.extract(
                meter, opts, pieces, bool(chunks), inp.reference_time, known, ctx
            )
            c["entities"] = len(extracted)
            c["edges"] = len(stated)

        # 4. Entity resolution: by the model's ID, by the names table, by the
        # name rules over the candidates that keywords and name vectors find
        # (embeddings request 2 also carries the texts to store).
        with call.step("resolve") as c:
            resolved, pending = resolve.resolve_exact(self.graph, key, extracted, known_by_id)
            edge_texts = [fact_text(f.relation, f.description) for f in stated]
            pending_names = [p.extracted[0].name for p in pending.values()]
            batch = meter.embed(pending_names + edge_texts + summaries, "document").vectors
            name_vecs = dict(zip(pending, batch[: len(pending_names)], strict=True))
            edge_vecs = batch[len(pending_names) : len(pending_names) + len(edge_texts)]
            summary_vecs = batch[len(pending_names) + len(edge_texts) :]
            resolve.resolve_similar(
                self.graph,
                self.vectors,
                self.settings.resolve_threshold,
                key,
                pending,
                name_vecs,
                resolved,
                known,
            )
            c["resolved"] = sum(1 for r in resolved.values() if not r.created)
            c["new"] = sum(1 for r in resolved.values() if r.created)

        # Facts: a fact already live between the same entities with the same
        # relation is restated (a new provenance link), not duplicated.
        by_norm = {norm: r for r in resolved.values() for norm in {x.norm for x in r.extracted}}
        with call.step("facts") as c:
            fplan = facts.classify(self.graph, key, stated, edge_vecs, by_norm)
            c["new"] = len(fplan.new)
            c["restated"] = len(fplan.restated)

        # 5. Invalidation: one call for all new facts, none without candidates.
        with call.step("invalidate") as c:
            c["candidates"] = facts.invalidate(
                self.graph,
                self.vectors,
                self.settings.query_threshold,
                key,
                meter,
                opts,
                fplan,
                by_norm,
            )
            c["invalidated"] = len(fplan.superseded)

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
        texts = Texts(
            inp.text,
            chunks or windows,
            summaries,
            text_vectors,
            summary_vecs,
            name_vecs,
            inp.reference_time,
            inp.session_id,
            inp.call_id,
            inp.speaker,
            embedded,
        )
        with call.step("write") as c:
            result = self.writer.write(key, now, texts, resolved, fplan)
            c["entities"] = len(result["entities"])
            c["edges"] = len(result["edges"])
        return result
