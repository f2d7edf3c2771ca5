"""Reading the product's ``extract`` prompt from a fake's side, and replies
that say which listed entity a name is (the model's half of resolution).

    fake.script("extract", links(reply, {"Bob": "Robert Smith"}))

answers ``reply`` with ``"id"`` added to the entity named ``Bob``, the ID of
the known entity ``Robert Smith`` when the prompt lists it (a model that
links only what it was shown); unlisted, the reply goes as it is.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._server import iter_text_blocks

# [entity N] Name (type): description | facts: one | two
_KNOWN_LINE = re.compile(
    r"^\[entity (\d+)\] (.+?)(?: \(([^()]*)\))?(?:: (.*?))?(?: \| facts: (.*))?$"
)


@dataclass(frozen=True)
class Known:
    id: int
    name: str
    type: str
    description: str
    facts: tuple[str, ...]


def prompt_text(body: dict[str, Any]) -> str:
    """The user messages of a Messages request body, as one text."""
    out: list[str] = []
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            out.extend(iter_text_blocks(message.get("content")))
    return "\n".join(out)


def section(prompt: str, tag: str) -> str:
    """The text inside ``<tag>...</tag>`` (stripped), or ""."""
    m = re.search(rf"<{tag}>(.*?)</{tag}>", prompt, re.S)
    return m.group(1).strip() if m else ""


def known_entities(prompt: str) -> list[Known]:
    """The candidates the prompt lists in ``<known_entities>``."""
    out: list[Known] = []
    for line in section(prompt, "known_entities").splitlines():
        m = _KNOWN_LINE.match(line.strip())
        if m:
            facts = tuple(f for f in (m.group(5) or "").split(" | ") if f)
            out.append(
                Known(int(m.group(1)), m.group(2), m.group(3) or "", m.group(4) or "", facts)
            )
    return out


def _norm(name: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", name.casefold()))


def links(reply: dict[str, Any], same: dict[str, str]) -> Callable[[dict[str, Any]], Any]:
    """A scripted ``extract`` reply that gives, for each extracted name in
    ``same``, the ID of the listed known entity of the mapped name."""

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        listed = {_norm(k.name): k.id for k in known_entities(prompt_text(body))}
        out = copy.deepcopy(reply)
        for entity in out.get("entities", []):
            stored = same.get(entity.get("name", ""))
            if stored is not None and _norm(stored) in listed:
                entity["id"] = listed[_norm(stored)]
        return out

    return answer
