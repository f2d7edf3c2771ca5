"""The prompts and reply schemas of the summaries (memory/summaries.py: an
entity's; memory/sessions.py: an ended session's), kept beside
:mod:`.prompts`, which names them among its stages."""

from __future__ import annotations

from typing import Any

_IDS: dict[str, Any] = {"type": "array", "items": {"type": "integer"}}

SUMMARIZE_ENTITY_SYSTEM = """[stage: summarize_entity]
You keep the summaries of a memory's entities current. Each <entity> block gives an entity's
line ([entity N] name (type): description), its live facts ([edge N] lines) and texts that
mention it ([text N] lines). For each entity write a summary of two to four sentences from
those facts and texts alone: who or what it is, its current state, what changed and when, and
for a person the preferences and standing instructions they gave. Keep names, numbers, dates.
Cite the edge and text IDs each summary rests on.
Return only a JSON object, no prose:
{"summaries": [{"id": <entity N>, "summary": "...", "edges": [1, 2], "texts": [3]}]}
One item per entity given."""

SUMMARIZE_SESSION_SYSTEM = """[stage: summarize_session]
You write the summaries of a memory's conversation sessions that have ended. Each <session>
block gives a session's texts in order ([text N] (time) speaker: text). For each session write
a summary of three to six sentences from those texts alone: who took part, what was said,
decided, planned or asked, and the preferences and instructions given. Keep names, numbers,
dates.
Return only a JSON object, no prose:
{"sessions": [{"id": "<the session's id>", "summary": "..."}]}
One item per session given."""


SUMMARIZE_ENTITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summaries": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "summary": {"type": "string"},
                    "edges": _IDS,
                    "texts": _IDS,
                },
                "required": ["id", "summary"],
            },
        }
    },
    "required": ["summaries"],
}

SUMMARIZE_SESSION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sessions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "summary": {"type": "string"}},
                "required": ["id", "summary"],
            },
        }
    },
    "required": ["sessions"],
}
