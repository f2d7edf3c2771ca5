"""remember, stage 1: from the text to what the LLM extracted (entities and
facts, by normalized name), and the chunk summaries. Reads only."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..ai import prompts
from ..ai.jsonreply import as_id
from ..errors import Truncated, UpstreamError
from ..graph.port import GraphStore
from ..models import DatasetKey, Entity, merge_description
from ..records.meter import Meter
from ..text import normalize_name
from .llm_json import llm_json
from .options import StageOptions
from .temporal import fact_interval

MIN_SPLIT_CHARS = 200  # a shorter text cut at the output limit is not split again
AROUND_CAP = 100  # live facts read around the known entities for their relations
KNOWN_RELATIONS = 40  # relation names shown to extraction, most used first
PREVIOUS_TEXTS = 4  # the session's last texts given to extraction as context
PREVIOUS_CHARS = 1500  # of each
FACTS_PER_KNOWN = 2  # live facts shown with each known entity, newest first
FACT_CHARS = 160  # of each


@dataclass
class Extracted:
    name: str
    norm: str
    type: str
    description: str
    model_id: int | None
    chunk: int | None  # index of the chunk it came from, None for a short text
    # The attribute values the model gave (its declared type's: validated
    # against the dataset's schema by memory/attributes.py before the write).
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass
class Fact:
    source: str  # normalized names
    target: str
    relation: str
    description: str
    valid_at: str | None  # None: an ended fact whose start the text does not give
    invalid_at: str | None
    chunk: int | None
    # A standing preference or instruction of the speaker (notes/port.KINDS),
    # with the topic it governs; "" for every other fact.
    kind: str = ""
    topic: str = ""
    # The attribute values the model gave (a declared edge type's: validated,
    # and the relation typed or left free, by memory/attributes.py).
    attributes: dict[str, Any] = field(default_factory=dict)
    # The model marked the relation exclusive: a source holds one target at
    # a time (lives_in). Two live ones of a source are a conflict.
    exclusive: bool = False


@dataclass
class Context:
    """What extraction is told besides the text: who speaks, the session's
    previous texts (oldest first), the relation names in use, and a fact or
    two of each known entity (so that the model can tell a namesake)."""

    speaker: str | None = None
    previous: list[str] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    facts: dict[int, list[str]] = field(default_factory=dict)
    # The dataset's schema (memory/schema.py), when it has one: its types.
    types: dict[str, Any] | None = None


def context(
    graph: GraphStore,
    key: DatasetKey,
    speaker: str | None,
    session_id: str | None,
    known: list[Entity],
    exists: bool = True,
) -> Context:
    """The session's last texts (so that "she" and "my sister" resolve), the
    relation names of the live facts around the known entities, most used
    first (so that a restatement reuses them), and the newest facts of each
    known entity (``FACTS_PER_KNOWN``), and the dataset's schema (its
    entity and edge types). Three reads at most."""
    previous = graph.session_texts(key, session_id, PREVIOUS_TEXTS) if session_id else []
    relations: list[str] = []
    facts: dict[int, list[str]] = {}
    if known:
        around = graph.live_edges_around(key, [e.id for e in known], AROUND_CAP)
        counts = Counter(e.relation for e in around)
        relations = [r for r, _ in counts.most_common(KNOWN_RELATIONS)]
        ids = {e.id for e in known}
        for edge in around:  # newest first
            said = (edge.description or edge.relation.replace("_", " "))[:FACT_CHARS]
            for end in {edge.source_id, edge.target_id} & ids:
                have = facts.setdefault(end, [])
                if len(have) < FACTS_PER_KNOWN:
                    have.append(said)
    # Who said each one (a message's speaker), so that "I" there resolves.
    texts = [
        f"{a.speaker}: {a.text[:PREVIOUS_CHARS]}" if a.speaker else a.text[:PREVIOUS_CHARS]
        for a in reversed(previous)
    ]
    types = graph.get_schema(key) if exists else None
    return Context(speaker, texts, relations, facts, types)


def _standing(item: dict[str, Any]) -> tuple[str, str]:
    """The kind and topic of a preference or instruction the model marked."""
    kind = as_str(item.get("kind")).lower()
    if kind not in ("preference", "instruction"):
        return "", ""
    return kind, as_str(item.get("topic"))


def as_str(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _snake(relation: str) -> str:
    return "_".join(normalize_name(relation).split()) or "related_to"


def summarize(meter: Meter, opts: StageOptions, chunks: list[str]) -> list[str]:
    """One summary per chunk (one call each)."""
    summaries: list[str] = []
    for i, chunk in enumerate(chunks):
        data = llm_json(
            meter,
            opts,
            "summarize",
            prompts.SUMMARIZE_SYSTEM,
            prompts.summarize_user(chunk, i, len(chunks)),
            1024,
        )
        summary = as_str(data.get("summary"))
        if not summary:
            meter.reject("summarize", "empty summary")
            raise UpstreamError("LLM summary was empty")
        summaries.append(summary)
    return summaries


def extract(
    meter: Meter,
    opts: StageOptions,
    pieces: list[str],
    chunked: bool,
    reference_time: str,
    known: list[Entity],
    ctx: Context | None = None,
) -> tuple[list[Extracted], list[Fact]]:
    """One extraction call per piece (the text, or each of its chunks). A
    piece so dense in facts that the reply stops at its output limit is
    split in two and each half extracted (again, down to ``MIN_SPLIT_CHARS``)."""
    extracted: list[Extracted] = []
    facts: list[Fact] = []
    for i, piece in enumerate(pieces):
        todo = [piece]
        while todo:
            part = todo.pop(0)
            try:
                data = llm_json(
                    meter,
                    opts,
                    "extract",
                    prompts.EXTRACT_SYSTEM,
                    prompts.extract_user(
                        part,
                        reference_time,
                        known,
                        speaker=ctx.speaker if ctx else None,
                        previous=ctx.previous if ctx else None,
                        relations=ctx.relations if ctx else None,
                        facts=ctx.facts if ctx else None,
                        types=ctx.types if ctx else None,
                    ),
                    schema=prompts.extract_schema(ctx.types if ctx else None),
                )
            except Truncated:
                halves = split_in_two(part)
                if len(part) < MIN_SPLIT_CHARS or len(halves) < 2:
                    raise
                todo[:0] = halves
                continue
            ents, fs = parse_extraction(data, reference_time, i if chunked else None)
            extracted.extend(ents)
            facts.extend(fs)
    return extracted, facts


def split_in_two(text: str) -> list[str]:
    """The text in two halves, cut at the sentence (or else line, or word)
    boundary nearest its middle; [text] when it has none."""
    mid = len(text) // 2
    for pattern in (r"(?<=[.!?])\s+", r"\n+", r"\s+"):
        cuts = [m.end() for m in re.finditer(pattern, text) if 0 < m.start() < len(text)]
        if cuts:
            cut = min(cuts, key=lambda c: abs(c - mid))
            first, second = text[:cut].strip(), text[cut:].strip()
            if first and second:
                return [first, second]
    return [text]


def parse_extraction(
    data: dict[str, Any], reference_time: str, chunk: int | None
) -> tuple[list[Extracted], list[Fact]]:
    raw_entities = data.get("entities")
    raw_edges = data.get("edges")
    if not isinstance(raw_entities, list) or not isinstance(raw_edges, list):
        raise UpstreamError("extraction reply lacks the entities and edges lists")
    seen: dict[str, Extracted] = {}
    ents = _entities_of(raw_entities, chunk, seen)
    facts: list[Fact] = []
    for item in raw_edges:
        if not isinstance(item, dict):
            continue
        src, dst = as_str(item.get("source")), as_str(item.get("target"))
        if not normalize_name(src) or not normalize_name(dst):
            continue
        interval = fact_interval(
            as_str(item.get("valid_at")), as_str(item.get("invalid_at")), reference_time
        )
        s_norm, t_norm = normalize_name(src), normalize_name(dst)
        # Keep the display name as the model wrote it in the entities list.
        facts.append(
            Fact(
                seen[s_norm].norm if s_norm in seen else s_norm,
                seen[t_norm].norm if t_norm in seen else t_norm,
                _snake(as_str(item.get("relation"))),
                as_str(item.get("description")),
                interval.valid_at,
                interval.invalid_at,
                chunk,
                *_standing(item),
                _attributes(item.get("attributes")),
                exclusive=item.get("exclusive") is True,
            )
        )
        for norm, raw in ((s_norm, src), (t_norm, dst)):
            if norm not in seen:
                seen[norm] = Extracted(raw, norm, "", "", None, chunk)
                ents.append(seen[norm])
    return ents, facts


def _entities_of(
    raw_entities: list[Any], chunk: int | None, seen: dict[str, Extracted]
) -> list[Extracted]:
    """The reply's entities, one per name (``seen`` gains them); a name given
    twice merges its descriptions."""
    ents: list[Extracted] = []
    for item in raw_entities:
        if not isinstance(item, dict):
            continue
        name = as_str(item.get("name"))
        norm = normalize_name(name)
        if not norm:
            continue
        ex = Extracted(
            name,
            norm,
            as_str(item.get("type")).lower(),
            as_str(item.get("description")),
            as_id(item.get("id")),
            chunk,
            _attributes(item.get("attributes")),
        )
        if norm in seen:
            prev = seen[norm]
            prev.attributes.update(ex.attributes)  # the later value of a name given twice
            prev.description = merge_description(prev.description, ex.description)
            prev.model_id = prev.model_id or ex.model_id
            prev.type = prev.type or ex.type
            continue
        seen[norm] = ex
        ents.append(ex)
    return ents


def _attributes(value: Any) -> dict[str, Any]:
    """The model's ``attributes`` object as given (its values are checked
    later, against the type's schema); anything else is none."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and v is not None}
