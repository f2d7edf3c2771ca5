"""remember: from a text to the bi-temporal graph, the use case.

The data's way, one module per step: ``extract`` (the LLM reads the text),
``resolve`` (which stored entity each name is), ``facts`` (new, restated,
superseded), ``plan`` (the typed write), ``commit`` (the writes). All LLM and
embeddings work happens first and reads only; the writes come last, so a call
that fails leaves nothing a later query could see. LLM calls per text: one
`extract` (per chunk for a long text), at most one `invalidate`, one
`summarize` per chunk. Embeddings: two requests.

``messages`` (a window of several texts, each with its speaker and time)
are stored one artifact each and extracted by one call together
(``window.py``). ``extract=False`` stores the texts as passages only: no LLM
call, one embeddings request.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .. import clock
from ..config import Settings
from ..graph.port import GraphStore
from ..models import Artifact, DatasetKey, Entity
from ..records.meter import Meter
from ..text import chunk_text, estimate_tokens, fact_text, passage_windows
from ..vectors.port import VectorIndex
from . import attributes, extract, facts, resolve, window
from .commit import Texts, Writer
from .dataset_settings import ttl_expiry
from .notes_hook import NotesHook
from .options import StageOptions
from .passage_vectors import PassageInput, embedded_text, part_inputs, passage_vectors

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
    messages: list[window.Said] | None = None  # instead of ``text``: a window, in order
    extract: bool = True
    expires_at: str | None = None  # forgotten then by the retention sweep
    # Queue the summary job after the commit (a batch queues it once, at its end).
    schedule_summaries: bool = True
    close_session: bool = False  # its session ends with it (memory/sessions.py)


@dataclass
class Read:
    """What ``Remember.read`` found in the texts, for ``Remember.apply``."""

    said: list[window.Said]
    windowed: bool
    chunks: list[str]
    text_vectors: list[list[float]]
    known: list[Entity] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    extracted: list[extract.Extracted] = field(default_factory=list)
    stated: list[extract.Fact] = field(default_factory=list)
    windows: list[str] = field(default_factory=list)  # a session-sized text's passages
    words: list[str] = field(default_factory=list)  # what each passage embeds, its words
    # The dataset's declared entity types, casefolded (its schema): two
    # entities of different declared types are never one.
    declared: frozenset[str] = frozenset()
    # The dataset's generation when the call started (None: no dataset yet):
    # the commit lands only in that one (an erase is a fence, ``Writer``).
    generation: str | None = None


class Remember:
    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorIndex,
        settings: Settings,
        geo: GeoResolver | None = None,
        notes: NotesHook | None = None,
    ) -> None:
        self.graph = graph
        self.vectors = vectors
        self.settings = settings
        self.geo = geo
        self.writer = Writer(graph, vectors)
        self.notes = notes  # summaries and preferences, after the commit

    def run(self, inp: RememberInput, meter: Meter) -> dict[str, Any]:
        if inp.call_id is None:  # the artifacts name the call that wrote them
            inp = replace(inp, call_id=meter.call.call_id)
        return self.apply(inp, meter, self.read(inp, meter))

    def read(self, inp: RememberInput, meter: Meter) -> Read:
        """Everything before the writes that reads the text: chunks, vectors,
        the known entities, the context, summaries and the extraction (the
        LLM calls but ``invalidate``). Writes nothing."""
        key = DatasetKey(inp.user_id, inp.dataset)
        call = meter.call
        opts = inp.options
        found = self.graph.get_dataset(key)
        exists = found is not None

        said = inp.messages or [window.Said(inp.text, inp.speaker, inp.reference_time)]
        windowed = inp.messages is not None
        joined = "\n".join(m.text for m in said)

        # 1-2. Chunking (of a text; a message is stored whole).
        with call.step("chunk") as c:
            long_text = (
                not windowed and estimate_tokens(inp.text) > self.settings.chunk_threshold_tokens
            )
            chunks = (
                chunk_text(
                    inp.text, self.settings.chunk_target_tokens, self.settings.chunk_overlap_tokens
                )
                if long_text
                else []
            )
            # A text too short to chunk but longer than a passage (a chat
            # session) is searched by windows of its lines: its children.
            windows = (
                []
                if chunks or windowed
                else passage_windows(inp.text, self.settings.passage_tokens)
            )
            c["chunks"] = len(chunks)
            c["passages"] = len(windows)
        pieces = chunks or [m.text for m in said]  # what extraction reads

        # Embeddings, request 1: the passages (the texts, chunks or windows).
        # Finds the known entities the texts probably name; each is also
        # stored as a passage.
        with call.step("embed_text") as c:
            passages = self._passages(key, inp, said, chunks or windows, exists)
            words = [p.embedded for p in passages]
            text_vectors = passage_vectors(
                lambda texts: meter.embed(texts, "document").vectors, passages
            )
            c["inputs"] = len(words)
        read = Read(said, windowed, chunks, text_vectors, windows=windows, words=words)
        read.generation = found.generation if found is not None else None
        if not inp.extract:  # passages only: no LLM call, no graph rows
            return read

        with call.step("known_entities") as c:
            read.known = (
                resolve.known_entities(
                    self.graph,
                    self.vectors,
                    self.settings.query_threshold,
                    key,
                    joined,
                    text_vectors,
                )
                if exists
                else []
            )
            c["entities"] = len(read.known)

        # Context for extraction: the speaker, the session's previous texts,
        # the relation names in use around the known entities.
        with call.step("context") as c:
            ctx = extract.context(
                self.graph, key, inp.speaker, inp.session_id if exists else None, read.known, exists
            )
            read.declared = frozenset(
                t.casefold() for t in ((ctx.types or {}).get("entity_types") or {})
            )
            c["previous"] = len(ctx.previous)
            c["relations"] = len(ctx.relations)

        # Summaries, one call per chunk.
        with call.step("summarize") as c:
            read.summaries = extract.summarize(meter, opts, chunks)
            c["chunks"] = len(chunks)

        # 3. Extraction: one call per text, or per chunk, or per window.
        with call.step("extract") as c:
            if windowed:
                read.extracted, read.stated = window.extract_window(
                    meter, opts, said, read.known, ctx
                )
            else:
                read.extracted, read.stated = extract.extract(
                    meter, opts, pieces, bool(chunks), inp.reference_time, read.known, ctx
                )
            c["entities"] = len(read.extracted)
            c["edges"] = len(read.stated)
            # Checked in code against the schema: what does not validate is
            # dropped (counted here), never stored.
            dropped = attributes.keep_valid(read.extracted, ctx.types)
            # A relation is typed only when it is a declared edge type between
            # the entity types it allows; else it stays free (never dropped).
            lost, c["relations_untyped"] = attributes.type_facts(
                read.extracted, read.stated, ctx.types
            )
            c["attributes_dropped"] = dropped + lost
        return read

    def _passages(
        self,
        key: DatasetKey,
        inp: RememberInput,
        said: list[window.Said],
        children: list[str],
        exists: bool,
    ) -> list[PassageInput]:
        """What each passage's vector embeds (and its words hold): a chunk
        or window after its text's speaker (a window of one turn after the
        window before it: :func:`part_inputs`); a message after the end of
        the session's text before it (the window's previous message, or the
        session's last stored text: one read). With each, what its sentences
        are read from (passage_vectors)."""
        if children:
            return part_inputs(children, inp.speaker)
        sid = inp.session_id if exists else None
        before = next(iter(self.graph.session_texts(key, sid, 1)), None) if sid else None
        last: dict[str | None, Artifact | None] = {inp.session_id: before}
        out: list[PassageInput] = []
        for m in said:
            own = m.session_id or inp.session_id
            whole = embedded_text(m.text, m.speaker, last.get(own) if own else None)
            out.append(PassageInput(whole, m.text, m.speaker))
            last[own] = Artifact(0, m.text, "", m.reference_time, own, speaker=m.speaker)
        return out

    def apply(self, inp: RememberInput, meter: Meter, read: Read) -> dict[str, Any]:
        """From what ``read`` found to the graph: entity resolution, facts,
        invalidation (one LLM call at most), then the writes."""
        key = DatasetKey(inp.user_id, inp.dataset)
        call = meter.call
        now = clock.now_str()
        said, windowed, chunks = read.said, read.windowed, read.chunks
        # The request's own expires_at, else the dataset's text_ttl_days from now.
        expires = inp.expires_at or (
            ttl_expiry(self.notes.notes, key, now) if self.notes is not None else None
        )
        joined = "\n".join(m.text for m in said)
        if not inp.extract:  # passages only: no LLM call, no graph rows
            texts = Texts(
                joined,
                chunks or read.windows,
                [],
                read.text_vectors,
                [],
                {},
                inp.reference_time,
                inp.session_id,
                inp.call_id,
                said if windowed else None,
                inp.speaker,
                read.words or None,
                bool(read.windows),
                expires,
            )
            with call.step("write") as c:
                result = self.writer.write(key, now, texts, {}, facts.FactsPlan(), read.generation)
                c["passages"] = len(read.text_vectors)
            if self.notes is not None and not chunks and not read.windows:
                turns = [
                    Artifact(aid, m.text, "", m.reference_time, speaker=m.speaker or inp.speaker)
                    for aid, m in zip(result.get("artifacts", []), said, strict=False)
                ]
                self.notes.after_passages(key, turns, read.text_vectors)
            if self.notes is not None:
                self.notes.after_session(
                    key, said, inp.session_id, inp.close_session, inp.schedule_summaries
                )
            return result
        known, extracted, stated, summaries = (
            read.known,
            read.extracted,
            read.stated,
            read.summaries,
        )
        known_by_id = {e.id: e for e in known}
        opts = inp.options

        # 4. Entity resolution: by the model's ID, by the names table, by the
        # name rules over the candidates that keywords and name vectors find
        # (embeddings request 2 also carries the texts to store).
        with call.step("resolve") as c:
            resolved, pending = resolve.resolve_exact(
                self.graph, key, extracted, known_by_id, read.declared
            )
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
                read.declared,
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
            joined,
            chunks or read.windows,
            summaries,
            read.text_vectors,
            summary_vecs,
            name_vecs,
            inp.reference_time,
            inp.session_id,
            inp.call_id,
            said if windowed else None,
            inp.speaker,
            read.words or None,
            bool(read.windows),
            expires,
        )
        with call.step("write") as c:
            result = self.writer.write(key, now, texts, resolved, fplan, read.generation)
            c["entities"] = len(result["entities"])
            c["edges"] = len(result["edges"])
        if self.notes is not None:
            stated_vecs = list(zip(stated, edge_vecs, strict=True))
            self.notes.after_write(key, result, stated_vecs, schedule=inp.schedule_summaries)
            self.notes.after_session(
                key, said, inp.session_id, inp.close_session, inp.schedule_summaries
            )
        return result
