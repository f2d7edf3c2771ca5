"""The small world of the load benchmarks: texts such as "Person07 works at
Org3. Person07 lives in City2." from small pools of names (so that concurrent
calls keep naming the same entities), and the fake LLM's extraction of them."""

from __future__ import annotations

import random
import re
from typing import Any

PEOPLE = [f"Person{i:02d}" for i in range(40)]
ORGS = [f"Org{i}" for i in range(8)]
CITIES = [f"City{i}" for i in range(8)]

# "Person07 works at Org3." / "Person07 lives in City2."
SENTENCE = re.compile(r"\b(Person\d+) (works at|lives in) ((?:Org|City)\d+)\.")
TEXT_BLOCK = re.compile(r"<text>\n(.*)\n</text>", re.S)


def relation(verb: str) -> str:
    return "works_at" if verb == "works at" else "lives_in"


def extract_reply(body: dict[str, Any]) -> dict[str, Any]:
    """Entities and facts read off the text of an `extract` request."""
    content = body["messages"][0]["content"]
    prompt = content if isinstance(content, str) else "".join(b["text"] for b in content)
    m = TEXT_BLOCK.search(prompt)
    text = m.group(1) if m else ""
    entities: dict[str, dict[str, str]] = {}
    edges: list[dict[str, Any]] = []
    for person, verb, place in SENTENCE.findall(text):
        kind = "organization" if place.startswith("Org") else "city"
        entities.setdefault(person, {"name": person, "type": "person", "description": ""})
        entities.setdefault(place, {"name": place, "type": kind, "description": ""})
        edges.append(
            {
                "source": person,
                "target": place,
                "relation": relation(verb),
                "description": f"{person} {verb} {place}.",
            }
        )
    return {"entities": list(entities.values()), "edges": edges}


def make_text(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(1, 3)):
        p = rng.choice(PEOPLE)
        if rng.random() < 0.5:
            sentences.append(f"{p} works at {rng.choice(ORGS)}.")
        else:
            sentences.append(f"{p} lives in {rng.choice(CITIES)}.")
    return " ".join(sentences)
