"""The corpus of bench/remember_corpus.py and the fake LLM that reads it back.

Short chat messages from sentence templates ("Alice Martin works at Globex.",
"Bob Chen moved to Lyon.", ...) and a few long documents (about 3,000 tokens,
over the default chunking threshold of 2,000) made of the same sentences among
filler prose. The fake LLM plays a careful model: its ``extract`` reply is
derived from the text it is sent (the same templates, read back with regular
expressions), reusing the ID of a known entity the prompt shows; its
``invalidate`` reply supersedes a live ``works_at`` / ``lives_in`` fact of the
same person that a new one replaces; ``summarize`` gives the first sentence of
the chunk."""

from __future__ import annotations

import random
import re
from typing import Any

FIRST = [
    "Alice",
    "Bob",
    "Chloe",
    "David",
    "Emma",
    "Farid",
    "Grace",
    "Hugo",
    "Ines",
    "Jonas",
    "Karin",
    "Liam",
    "Maya",
    "Noah",
    "Olga",
    "Paulo",
]
LAST = ["Martin", "Chen", "Dubois", "Okafor", "Rossi", "Tanaka", "Nowak", "Silva"]
ORGS = [
    "Globex",
    "Acme",
    "Initech",
    "Umbrella",
    "Hooli",
    "Stark",
    "Wayne",
    "Tyrell",
    "Soylent",
    "Cyberdyne",
]
CITIES = [
    "Paris",
    "Lyon",
    "Berlin",
    "Madrid",
    "Lisbon",
    "Oslo",
    "Vienna",
    "Prague",
    "Dublin",
    "Milan",
]
HOBBIES = ["chess", "climbing", "jazz", "sailing", "pottery", "tennis", "baking", "astronomy"]
ROLES = ["engineer", "designer", "manager", "researcher", "nurse", "teacher", "lawyer", "chef"]
FILLER = [
    "The weather was mild for the season and the trains ran on time.",
    "Several meetings were moved to the afternoon because of the holidays.",
    "The quarterly report was discussed at length without any decision.",
    "Coffee in the new office turned out to be better than expected.",
    "Most of the week went into planning and small fixes to old documents.",
    "There was a long debate about the budget, the timeline and the risks.",
]

NAME = r"([A-Z][a-z]+(?: [A-Z][a-z]+)?)"
# (regex, relation, source type, target type, ended)
PATTERNS: list[tuple[re.Pattern[str], str, str, str, bool]] = [
    (re.compile(rf"{NAME} works at {NAME}\."), "works_at", "person", "organization", False),
    (
        re.compile(rf"{NAME} joined {NAME} last month\."),
        "works_at",
        "person",
        "organization",
        False,
    ),
    (re.compile(rf"{NAME} left {NAME}\."), "works_at", "person", "organization", True),
    (re.compile(rf"{NAME} lives in {NAME}\."), "lives_in", "person", "city", False),
    (re.compile(rf"{NAME} moved to {NAME}\."), "lives_in", "person", "city", False),
    (re.compile(rf"{NAME} met {NAME} at a conference\."), "met", "person", "person", False),
    (re.compile(rf"{NAME} likes ([a-z]+)\."), "likes", "person", "concept", False),
    (
        re.compile(rf"{NAME} is headquartered in {NAME}\."),
        "headquartered_in",
        "organization",
        "city",
        False,
    ),
]
ROLE = re.compile(rf"{NAME} is an? ([a-z]+)\.")


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def sentence(rng: random.Random) -> str:
    p = person(rng)
    kind = rng.randrange(9)
    if kind == 0:
        return f"{p} works at {rng.choice(ORGS)}."
    if kind == 1:
        return f"{p} joined {rng.choice(ORGS)} last month."
    if kind == 2:
        return f"{p} lives in {rng.choice(CITIES)}."
    if kind == 3:
        return f"{p} moved to {rng.choice(CITIES)}."
    if kind == 4:
        return f"{p} met {person(rng)} at a conference."
    if kind == 5:
        return f"{p} likes {rng.choice(HOBBIES)}."
    if kind == 6:
        return f"{rng.choice(ORGS)} is headquartered in {rng.choice(CITIES)}."
    if kind == 7:
        return f"{p} left {rng.choice(ORGS)}."
    return f"{p} is a {rng.choice(ROLES)}."


def message(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(1, 3)))


def document(rng: random.Random, target_chars: int = 12_000) -> str:
    paras: list[str] = []
    size = 0
    while size < target_chars:
        sents = [sentence(rng) for _ in range(rng.randint(2, 4))]
        sents += rng.sample(FILLER, rng.randint(2, 4))
        rng.shuffle(sents)
        para = " ".join(sents)
        paras.append(para)
        size += len(para) + 2
    return "\n\n".join(paras)


def corpus(messages: int, documents: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    texts = [("msg", message(rng)) for _ in range(messages)]
    every = max(1, messages // max(1, documents))
    for i in range(documents):  # spread the documents through the stream
        texts.insert(min(len(texts), (i + 1) * every + i), ("doc", document(rng)))
    return texts


# --- the fake LLM's replies ---------------------------------------------------------


def _user_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def extract_reply(body: dict[str, Any]) -> dict[str, Any]:
    prompt = _user_text(body)
    ref = re.search(r"<reference_time>(.*?)</reference_time>", prompt)
    ref_time = ref.group(1) if ref else None
    known = {
        m.group(2): int(m.group(1))
        for m in re.finditer(r"\[entity (\d+)\] ([^(\n:]+?)(?: \(|:|\n|$)", prompt)
    }
    m = re.search(r"<text>\n(.*)\n</text>", prompt, re.S)
    text = m.group(1) if m else ""
    entities: dict[str, dict[str, Any]] = {}
    edges: list[dict[str, Any]] = []

    def add(name: str, type_: str, description: str = "") -> None:
        if name not in entities:
            entities[name] = {"name": name, "type": type_, "description": description}
            if name in known:
                entities[name]["id"] = known[name]
        elif description and not entities[name]["description"]:
            entities[name]["description"] = description

    for pattern, relation, stype, ttype, ended in PATTERNS:
        for hit in pattern.finditer(text):
            src, dst = hit.group(1), hit.group(2)
            add(src, stype)
            add(dst, ttype)
            edges.append(
                {
                    "source": src,
                    "target": dst,
                    "relation": relation,
                    "description": hit.group(0),
                    "valid_at": None,
                    "invalid_at": ref_time if ended else None,
                }
            )
    for hit in ROLE.finditer(text):
        add(hit.group(1), "person", hit.group(2))
    return {"entities": list(entities.values()), "edges": edges}


NEW_FACT = re.compile(r"^\[new (\d+)\] (.+?) --(\w+)--> (.+?)(?::| \[)", re.M)
OLD_FACT = re.compile(r"^\[edge (\d+)\] (.+?)\(\d+\) --(\w+)--> (.+?)\(\d+\)", re.M)
EXCLUSIVE = {"works_at", "lives_in"}


def invalidate_reply(body: dict[str, Any]) -> dict[str, Any]:
    prompt = _user_text(body)
    new = [(int(m.group(1)), m.group(2), m.group(3), m.group(4)) for m in NEW_FACT.finditer(prompt)]
    out = []
    for m in OLD_FACT.finditer(prompt):
        edge_id, src, rel, dst = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        for i, nsrc, nrel, ndst in new:
            if rel in EXCLUSIVE and (nsrc, nrel) == (src, rel) and ndst != dst:
                out.append({"edge_id": edge_id, "by": i})
                break
    return {"invalidated": out}


def summarize_reply(body: dict[str, Any]) -> dict[str, Any]:
    m = re.search(r"<chunk[^>]*>\n(.*?[.!?])", _user_text(body), re.S)
    return {"summary": m.group(1) if m else "A part of a longer text."}
