"""The system prompts and the renderings of the context sent to the LLM.

Every system prompt names its stage as ``[stage: NAME]`` on its first line and
names the JSON keys of its reply, so that any instruction-following model fits
and a test double can tell the stages apart.
"""

from __future__ import annotations

from typing import Any

from ..models import Edge, Entity

# The summaries' stages, kept in their own module and named here with the rest.
from .summary_prompts import SUMMARIZE_ENTITY_SCHEMA, SUMMARIZE_SESSION_SCHEMA
from .summary_prompts import SUMMARIZE_ENTITY_SYSTEM as SUMMARIZE_ENTITY_SYSTEM
from .summary_prompts import SUMMARIZE_SESSION_SYSTEM as SUMMARIZE_SESSION_SYSTEM

EXTRACT_SYSTEM = """[stage: extract]
You extract a knowledge graph from a text for a memory service.
Return only a JSON object, no prose, of this shape:
{"entities": [{"name": "<name>", "type": "<one word>", "description": "<phrase>"}],
 "edges": [{"source": "<entity name>", "target": "<entity name>", "relation": "<snake_case>",
            "description": "<one sentence>", "valid_at": "<RFC 3339 UTC or null>",
            "invalid_at": "<RFC 3339 UTC or null>"}]}
Rules:
- entities: the people, organizations, places, things and concepts the text states facts about.
  "type" is one lowercase word (person, organization, place, event, object, concept, ...).
  "description" is a short phrase about the entity from this text.
- Speaker: the text is said by the speaker named in <speaker>. "I", "me", "my" are the speaker:
  use the speaker's name as the entity (a person). Without a <speaker>, "I" is the entity "user".
- Pronouns and references ("she", "he", "they", "my sister", "the company") are resolved to the
  entity they refer to, using <previous_messages> when the text alone does not say who; an edge
  never has a pronoun as source or target.
- Known entities: <known_entities> lists stored entities the text may name, each on an
  [entity N] line with its name, type, description and a fact or two. For each entity you
  extract, decide which listed entity it is, if any: when it is the same real-world entity, add
  "id" with the number N of its line and reuse its exact name. Leave "id" out when it is none of
  them, and for a namesake: a relative who shares a surname, someone with the same first name
  and another surname, a name a letter apart, an organization and a place of the same name.
  Add "id" only for a listed entity.
- edges: the facts the text states between two different entities. "source" and "target" are
  names from your "entities" list. Never an edge from an entity to itself.
- "relation": a snake_case verb phrase in the present tense for a state (works_at, lives_in,
  married_to), even when the text speaks of the past: the time goes in valid_at and invalid_at,
  never in the relation (not worked_at, not used_to_live_in, not left, not former_employee_of).
  Reuse a relation from <known_relations> when it means the same thing.
- "description" is one sentence stating the fact, with its time if the text gives one.
- "valid_at": when the fact started to hold, as an RFC 3339 UTC timestamp; "invalid_at": when it
  stopped holding. Resolve relative dates ("last year", "two weeks ago") against
  <reference_time>. A bare year is its first instant ("in 2020" -> "2020-01-01T00:00:00Z"); a
  month is its first day. "For a year" from a start gives the end a year later.
- A fact stated as current with no date: valid_at null and invalid_at null. A fact that ended
  ("left", "used to", "no longer", "until 2020"): invalid_at is the end, valid_at its start if the
  text gives one, else null.
- Dates come only from what the text says about that fact: never take a date from another event
  in the text, and never use <reference_time> as a start the text does not state.
- <previous_messages> are context only: extract the facts that the <text> states.
- Standing preferences and instructions: when the speaker tells the memory how they want
  things from now on ("always include encryption details when I ask about privacy", "I prefer a
  balanced approach", "from now on, metric units", "never suggest ..."), state it as an edge
  from the speaker with "kind": "preference" (what they like or want) or "instruction" (how
  answers should be given), and "topic": the few words of the subject it governs ("data
  privacy", "hiring with AI", "units of measure"). Every other edge leaves "kind" out.
- A relation whose source holds one target at a time (a person lives in one city, works for one
  employer, is married to one person) gets "exclusive": true. A relation that can hold many
  targets at once (knows, likes, visited) leaves "exclusive" out.
- Extract only what the text states. Empty lists when it states nothing."""

INVALIDATE_SYSTEM = """[stage: invalidate]
You keep a knowledge graph consistent over time. You get new facts, numbered from 0, and
existing facts, each with its edge ID and its time (valid_at: since when it holds; invalid_at:
when it stopped).
- Invalidated: an existing fact is invalidated by a new fact that contradicts it or replaces it
  (a new employer, a new home, a changed status, "left Acme" for "works at Acme"). Facts that can
  both hold (two friends, two hobbies, two past employers at different times) do not invalidate
  each other. Judge the meaning: the relation names may differ.
- Duplicate: a new fact that states the same thing as an existing fact (a restatement, in other
  words or with another relation name, possibly saying when it ended) is a duplicate of it.
- A new fact is either a duplicate of one existing fact, or new (and may invalidate some).
- Time is judged by the code, not by you: do not leave out a contradiction because of its dates.
Return only a JSON object, no prose:
{"invalidated": [{"edge_id": <edge ID>, "by": <new fact number>}],
 "duplicates": [{"edge_id": <edge ID>, "of": <new fact number>}]}
Use empty lists when nothing is contradicted or restated."""

SUMMARIZE_SYSTEM = """[stage: summarize]
You summarize one chunk of a longer text for a memory service, in two to four sentences that
keep the names, numbers and dates it states.
Return only a JSON object, no prose: {"summary": "..."}"""

QUERY_SYSTEM = """[stage: query]
You answer a question from a memory: a knowledge graph inside <graph> tags and, sometimes,
passages of long texts inside <passages> tags.
- Answer only from the graph and the passages. If they do not hold the answer, say that the
  memory does not have the information.
- A passage is headed by its ID and date (and session); one headed by its ID alone has the
  date and session of the passage above it. Its text follows the head (a chunk of a longer
  text labels its summary and text).
- <notes>, when given, holds summaries of entities and the user's standing preferences and
  instructions: follow a preference or instruction whenever it governs the question, whatever
  the question's words.
- An edge with no invalid_at is still true. An edge with an invalid_at stopped being true at
  that time: use it only for questions about the past. <current_time> is now.
- When <as_of> is given, the question is asked about the world as it stood at that instant:
  the graph holds the facts valid then, including some that have ended or been replaced
  since. Answer as of that time, not as of now.
- Cite the IDs of the entities, edges and passages you used.
Return only a JSON object, no prose:
{"answer": "...", "entities": [1, 2], "edges": [1], "passages": [14]}"""

DETECT_GEO_SYSTEM = """[stage: detect_geo]
You list the geographic places (cities, regions, countries, addresses, landmarks) that a
question mentions, with their names as written.
Return only a JSON object, no prose: {"places": ["Paris", "Lyon"]}
Use an empty list when the question mentions no place."""


_NULLABLE_TIME: dict[str, Any] = {"type": ["string", "null"], "description": "RFC 3339 UTC"}
_IDS: dict[str, Any] = {"type": "array", "items": {"type": "integer"}}

# The JSON Schemas of the replies, asked for through the provider's
# structured-output feature where it has one (every stage still accepts JSON
# text). Kept loose where a model's slip is handled in code (a missing "id").
EXTRACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string"},
                    "description": {"type": "string"},
                    "id": {"type": "integer", "description": "only for a listed known entity"},
                },
                "required": ["name", "type"],
            },
        },
        "edges": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                    "relation": {"type": "string", "description": "present-tense snake_case"},
                    "description": {"type": "string"},
                    "valid_at": _NULLABLE_TIME,
                    "invalid_at": _NULLABLE_TIME,
                    "kind": {
                        "type": "string",
                        "enum": ["preference", "instruction"],
                        "description": "only for the speaker's standing preferences and "
                        "instructions",
                    },
                    "topic": {"type": "string", "description": "what a preference governs"},
                    "exclusive": {
                        "type": "boolean",
                        "description": "the source holds one target of this relation at a time",
                    },
                },
                "required": ["source", "target", "relation", "description"],
            },
        },
    },
    "required": ["entities", "edges"],
}


def _pairs(second: str) -> dict[str, Any]:
    return {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"edge_id": {"type": "integer"}, second: {"type": "integer"}},
            "required": ["edge_id", second],
        },
    }


INVALIDATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"invalidated": _pairs("by"), "duplicates": _pairs("of")},
    "required": ["invalidated", "duplicates"],
}

SUMMARIZE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"summary": {"type": "string"}},
    "required": ["summary"],
}

QUERY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "entities": _IDS,
        "edges": _IDS,
        "passages": _IDS,
    },
    "required": ["answer", "entities", "edges", "passages"],
}

DETECT_GEO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"places": {"type": "array", "items": {"type": "string"}}},
    "required": ["places"],
}


def _attribute_specs(declared: dict[str, Any]) -> dict[str, Any]:
    """The attributes of a kind of declared types, by name (an attribute
    name declared twice with two specs is left unconstrained)."""
    specs: dict[str, Any] = {}
    for spec in declared.values():
        for name, attr in (spec.get("attributes") or {}).items():
            want = {k: v for k, v in attr.items() if k in ("type", "format", "enum")}
            specs[name] = want if specs.get(name, want) == want else {}
    return specs


def extract_schema(types: dict[str, Any] | None) -> dict[str, Any]:
    """The extraction's reply schema for a dataset: each entity (and each
    edge) may carry ``attributes`` when the dataset declares some
    (memory/schema.py). One object for every type (the model picks the
    type): the code validates each value against its own type anyway."""
    out = EXTRACT_SCHEMA
    for kind, declared in (("entities", "entity_types"), ("edges", "edge_types")):
        specs = _attribute_specs((types or {}).get(declared) or {})
        if not specs:
            continue
        item = out["properties"][kind]["items"]
        attributes = {
            "type": "object",
            "description": "the values the text states of the attributes its declared type has",
            "properties": specs,
        }
        items = {**item, "properties": {**item["properties"], "attributes": attributes}}
        listed = {**out["properties"][kind], "items": items}
        out = {**out, "properties": {**out["properties"], kind: listed}}
    return out


SCHEMAS: dict[str, dict[str, Any]] = {
    "extract": EXTRACT_SCHEMA,
    "invalidate": INVALIDATE_SCHEMA,
    "summarize": SUMMARIZE_SCHEMA,
    "summarize_entity": SUMMARIZE_ENTITY_SCHEMA,
    "summarize_session": SUMMARIZE_SESSION_SCHEMA,
    "query": QUERY_SCHEMA,
    "detect_geo": DETECT_GEO_SCHEMA,
}


def entity_line(e: Entity) -> str:
    head = f"[entity {e.id}] {e.name}"
    if e.type:
        head += f" ({e.type})"
    if e.description:
        head += f": {e.description}"
    if e.attributes:  # its declared type's values (the dataset's schema)
        head += " {" + ", ".join(f"{k}={v}" for k, v in sorted(e.attributes.items())) + "}"
    return head


def known_line(e: Entity, facts: list[str]) -> str:
    """A candidate of the extraction: the entity's line, then its facts."""
    line = entity_line(e)
    return f"{line} | facts: {' | '.join(facts)}" if facts else line


def edge_line(edge: Edge, names: dict[int, str]) -> str:
    src = names.get(edge.source_id, "?")
    dst = names.get(edge.target_id, "?")
    line = f"[edge {edge.id}] {src}({edge.source_id}) --{edge.relation}--> {dst}({edge.target_id})"
    if edge.description:
        line += f": {edge.description}"
    if edge.attributes:  # its declared edge type's values (the dataset's schema)
        line += " {" + ", ".join(f"{k}={v}" for k, v in sorted(edge.attributes.items())) + "}"
    times = []
    if edge.valid_at:
        times.append(f"valid_at={edge.valid_at}")
    if edge.invalid_at:
        times.append(f"invalid_at={edge.invalid_at}")
    if times:
        line += f" [{', '.join(times)}]"
    return line


def extract_user(
    text: str,
    reference_time: str,
    known: list[Entity],
    *,
    speaker: str | None = None,
    previous: list[str] | None = None,
    relations: list[str] | None = None,
    facts: dict[int, list[str]] | None = None,
    types: dict[str, Any] | None = None,
) -> str:
    parts = [f"<reference_time>{reference_time}</reference_time>"]
    if types and (types.get("entity_types") or types.get("edge_types")):
        parts.append(f"<types>\n{types_text(types)}\n</types>")
    if speaker:
        parts.append(f"<speaker>{speaker}</speaker>")
    if previous:
        lines = "\n".join(f"<message>{m}</message>" for m in previous)
        parts.append(f"<previous_messages>\n{lines}\n</previous_messages>")
    if known:
        lines = "\n".join(known_line(e, (facts or {}).get(e.id, [])) for e in known)
        parts.append(f"<known_entities>\n{lines}\n</known_entities>")
    else:
        parts.append("<known_entities>\n(none)\n</known_entities>")
    if relations:
        parts.append(f"<known_relations>{', '.join(relations)}</known_relations>")
    parts.append(f"<text>\n{text}\n</text>")
    return "\n".join(parts)


def _attribute_text(name: str, spec: dict[str, Any]) -> str:
    kind = spec.get("format") or spec.get("type", "string")
    if spec.get("enum"):
        kind = "one of " + ", ".join(spec["enum"])
    desc = f": {spec['description']}" if spec.get("description") else ""
    return f"{name} ({kind}{desc})"


def types_text(types: dict[str, Any]) -> str:
    """The dataset's own types (memory/schema.py), for the <types> section:
    the entity types to use as "type", the edge types as "relation"."""
    lines = [
        "The dataset declares these types. An entity of one of these kinds takes its name as "
        '"type"; a fact of one of these edge types takes its name as "relation" (between the '
        "entity types it names). Anything else keeps a free type or relation. An entity of a "
        'type with attributes adds "attributes": an object of the values the text states of '
        "them (an enum value exactly as listed, a date-time in RFC 3339 UTC, a number as a JSON "
        "number); leave out an attribute the text does not state. So does a fact of an edge "
        "type with attributes."
    ]
    for name, spec in types.get("entity_types", {}).items():
        attrs = [_attribute_text(a, s) for a, s in spec.get("attributes", {}).items()]
        desc = f": {spec['description']}" if spec.get("description") else ""
        extra = f" Attributes: {'; '.join(attrs)}." if attrs else ""
        lines.append(f"- entity type {name}{desc}{extra}")
    for name, spec in types.get("edge_types", {}).items():
        ends = (
            f" ({'|'.join(spec.get('source_types') or ['any'])} -> "
            f"{'|'.join(spec.get('target_types') or ['any'])})"
        )
        desc = f": {spec['description']}" if spec.get("description") else ""
        attrs = [_attribute_text(a, s) for a, s in spec.get("attributes", {}).items()]
        extra = f" Attributes: {'; '.join(attrs)}." if attrs else ""
        lines.append(f"- edge type {name}{ends}{desc}{extra}")
    return "\n".join(lines)


def invalidate_user(new_facts: list[str], existing: list[Edge], names: dict[int, str]) -> str:
    new_lines = "\n".join(f"[new {i}] {fact}" for i, fact in enumerate(new_facts))
    old_lines = "\n".join(edge_line(e, names) for e in existing)
    return (
        f"<new_facts>\n{new_lines}\n</new_facts>\n<existing_facts>\n{old_lines}\n</existing_facts>"
    )


def summarize_user(chunk: str, index: int, total: int) -> str:
    return f'<chunk index="{index}" of="{total}">\n{chunk}\n</chunk>'


# Added to EXTRACT_SYSTEM when the <text> is a window of several messages (a
# chat exchange, or texts of a bulk import): one call reads them all.
EXTRACT_WINDOW_RULES = """- Messages: this <text> holds several messages, each starting on a line
  "[message N] <time> <speaker>: ". "I", "me", "my" in a message are that message's speaker
  (a speaker "user" is the entity "user"; "assistant", "system" and "tool" are not people to
  extract unless a message states a fact about them). Resolve a message's relative dates
  against its own time, not <reference_time>. The messages are in time order: a later message
  may change what an earlier one said; state each fact as its message does.
- Add "message": N to each edge, the number of the message that states it."""


def window_text(lines: list[tuple[int, str, str, str]]) -> str:
    """The <text> of a window: (number, time, speaker, content) per message."""
    return "\n".join(
        f"[message {n}] {time} {speaker}: {content}" for n, time, speaker, content in lines
    )
