"""The system prompts and the renderings of the context sent to the LLM.

Every system prompt names its stage as ``[stage: NAME]`` on its first line and
names the JSON keys of its reply, so that any instruction-following model fits
and a test double can tell the stages apart.
"""

from __future__ import annotations

from ..models import Edge, Entity

EXTRACT_SYSTEM = """[stage: extract]
You extract a knowledge graph from a text for a memory service.
Return only a JSON object, no prose:
{"entities": [{"name": "...", "type": "...", "description": "...", "id": 12}],
 "edges": [{"source": "...", "target": "...", "relation": "...", "description": "...",
            "valid_at": "2025-01-31T09:00:00Z", "invalid_at": null}]}
Rules:
- entities: the people, organizations, locations, things and concepts the text states facts about.
  "type" is one lowercase word (person, organization, place, event, object, concept, ...).
  "description" is a short phrase about the entity from this text.
- If an entity is one of the known entities listed, give its "id" and reuse its exact name.
  Give "id" only for a listed entity; never invent one.
- edges: the facts the text states between two entities. "source" and "target" are entity
  names from your "entities" list. "relation" is a snake_case verb phrase (works_at, lives_in).
  "description" is one sentence stating the fact.
- "valid_at": when the fact started to hold, as an RFC 3339 UTC timestamp, resolving relative
  dates against the reference time; null when the text states it as current without a date.
  "invalid_at": when it stopped holding, if the text says it ended; else null.
- Extract only what the text states. Empty lists when it states nothing."""

INVALIDATE_SYSTEM = """[stage: invalidate]
You keep a knowledge graph consistent over time. You get new facts, numbered from 0, and
existing facts, each with its edge ID. An existing fact is invalidated when a new fact
contradicts it or replaces it (for example a new employer, a new home, a changed status).
Facts that can both hold (two friends, two hobbies) do not invalidate each other.
Return only a JSON object, no prose:
{"invalidated": [{"edge_id": 3, "by": 0}]}
with "by" the number of the new fact that invalidates the edge. Use an empty list when
nothing is contradicted."""

SUMMARIZE_SYSTEM = """[stage: summarize]
You summarize one chunk of a longer text for a memory service, in two to four sentences that
keep the names, numbers and dates it states.
Return only a JSON object, no prose: {"summary": "..."}"""

QUERY_SYSTEM = """[stage: query]
You answer a question from a memory: a knowledge graph inside <graph> tags and, sometimes,
passages of long texts inside <passages> tags.
- Answer only from the graph and the passages. If they do not hold the answer, say that the
  memory does not have the information.
- An edge with no invalid_at is still true. An edge with an invalid_at stopped being true at
  that time: use it only for questions about the past. <current_time> is now.
- Cite the IDs of the entities, edges and passages you used.
Return only a JSON object, no prose:
{"answer": "...", "entities": [1, 2], "edges": [1], "passages": [14]}"""

DETECT_GEO_SYSTEM = """[stage: detect_geo]
You list the geographic places (cities, regions, countries, addresses, landmarks) that a
question mentions, with their names as written.
Return only a JSON object, no prose: {"places": ["Paris", "Lyon"]}
Use an empty list when the question mentions no place."""


def entity_line(e: Entity) -> str:
    head = f"[entity {e.id}] {e.name}"
    if e.type:
        head += f" ({e.type})"
    if e.description:
        head += f": {e.description}"
    return head


def edge_line(edge: Edge, names: dict[int, str]) -> str:
    src = names.get(edge.source_id, "?")
    dst = names.get(edge.target_id, "?")
    line = f"[edge {edge.id}] {src}({edge.source_id}) --{edge.relation}--> {dst}({edge.target_id})"
    if edge.description:
        line += f": {edge.description}"
    times = []
    if edge.valid_at:
        times.append(f"valid_at={edge.valid_at}")
    if edge.invalid_at:
        times.append(f"invalid_at={edge.invalid_at}")
    if times:
        line += f" [{', '.join(times)}]"
    return line


def extract_user(text: str, reference_time: str, known: list[Entity]) -> str:
    parts = [f"<reference_time>{reference_time}</reference_time>"]
    if known:
        lines = "\n".join(entity_line(e) for e in known)
        parts.append(f"<known_entities>\n{lines}\n</known_entities>")
    else:
        parts.append("<known_entities>\n(none)\n</known_entities>")
    parts.append(f"<text>\n{text}\n</text>")
    return "\n".join(parts)


def invalidate_user(new_facts: list[str], existing: list[Edge], names: dict[int, str]) -> str:
    new_lines = "\n".join(f"[new {i}] {fact}" for i, fact in enumerate(new_facts))
    old_lines = "\n".join(edge_line(e, names) for e in existing)
    return (
        f"<new_facts>\n{new_lines}\n</new_facts>\n<existing_facts>\n{old_lines}\n</existing_facts>"
    )


def summarize_user(chunk: str, index: int, total: int) -> str:
    return f'<chunk index="{index}" of="{total}">\n{chunk}\n</chunk>'
