"""remember, stage 1 for several texts at once: a window of messages (a chat
exchange, or the texts of a bulk import) read by one extraction call.

Each message keeps its own speaker and time; the model tags each fact with
the number of the message that states it, so that the fact's start defaults
to that message's time and its provenance is that message."""

from __future__ import annotations

from dataclasses import dataclass

from ..ai import prompts
from ..errors import Truncated
from ..models import Entity
from ..records.meter import Meter
from .extract import Context, Extracted, Fact, parse_extraction
from .llm_json import llm_json
from .options import StageOptions


@dataclass(frozen=True)
class Said:
    """One text of a window: what was said, by whom, when."""

    text: str
    speaker: str | None
    reference_time: str
    session_id: str | None = None  # a bulk window's own; else the request's


def extract_window(
    meter: Meter,
    opts: StageOptions,
    said: list[Said],
    known: list[Entity],
    ctx: Context | None = None,
) -> tuple[list[Extracted], list[Fact]]:
    """One extraction call for the whole window. A window whose reply stops
    at the output limit is cut in two halves of messages, each extracted
    (down to one message, then the error stands). ``Fact.chunk`` is the
    message's index in ``said`` (None when the model did not say which);
    entities have none (they are linked to every message of the window)."""
    extracted: list[Extracted] = []
    facts: list[Fact] = []
    todo = [list(range(len(said)))]
    while todo:
        part = todo.pop(0)
        lines = [
            (n, said[i].reference_time, said[i].speaker or "user", said[i].text)
            for n, i in enumerate(part)
        ]
        last_time = max(said[i].reference_time for i in part)
        try:
            data = llm_json(
                meter,
                opts,
                "extract",
                prompts.EXTRACT_SYSTEM + "\n" + prompts.EXTRACT_WINDOW_RULES,
                prompts.extract_user(
                    prompts.window_text(lines),
                    last_time,
                    known,
                    previous=ctx.previous if ctx else None,
                    relations=ctx.relations if ctx else None,
                    facts=ctx.facts if ctx else None,
                    types=ctx.types if ctx else None,
                ),
                schema=prompts.extract_schema(ctx.types if ctx else None),
            )
        except Truncated:
            if len(part) < 2:
                raise
            half = len(part) // 2
            todo[:0] = [part[:half], part[half:]]
            continue
        if not isinstance(data.get("entities"), list) or not isinstance(data.get("edges"), list):
            parse_extraction(data, last_time, None)  # raises: the reply lacks its lists
        # Each edge's message: its time is the edge's reference time.
        groups: dict[int | None, list[object]] = {}
        for item in data["edges"]:
            n = message_number(item, len(part))
            groups.setdefault(None if n is None else part[n], []).append(item)
        listed, _ = parse_extraction({"entities": data["entities"], "edges": []}, last_time, None)
        extracted.extend(listed)
        have = {ex.norm for ex in listed}
        for index, items in sorted(groups.items(), key=lambda g: -1 if g[0] is None else g[0]):
            ref = last_time if index is None else said[index].reference_time
            ents, fs = parse_extraction({"entities": data["entities"], "edges": items}, ref, index)
            for ex in ents:  # only the names an edge gives that the list lacks
                if ex.norm not in have:
                    have.add(ex.norm)
                    extracted.append(ex)
            facts.extend(fs)
    return extracted, facts


def message_number(item: object, size: int) -> int | None:
    """The edge's "message": a number of the window's lines, else None."""
    n = item.get("message") if isinstance(item, dict) else None
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < size:
        return None
    return n
