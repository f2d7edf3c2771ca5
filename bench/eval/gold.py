"""The gold of the evaluation corpus, and the fake LLM that replays it.

A conversation's entities (by every name it uses), facts and messages
(``Conv``); and ``GoldLLM``, the fake Anthropic server's replies: ``extract``
replays the gold extraction of the message whose text is in the request's
``<text>`` (a gold entity that the prompt lists among the known entities, by
one of its names, is given with that ID and name); ``invalidate`` maps the
prompt's numbered new facts and candidate edges to the message's gold
supersessions, by names and relation; ``query`` records the rendered context
and answers a placeholder."""

from __future__ import annotations

import math
import re
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tests.fakes.extraction import known_entities

CATEGORIES = ("single", "multi_hop", "temporal", "changed", "past", "alias", "unanswerable")
PLACEHOLDER = {"answer": "(evaluation: not answered)", "entities": [], "edges": [], "passages": []}

EDGE_LINE = re.compile(
    r"^\[edge (\d+)\] (.+?)\((\d+)\) --([^\s]+?)--> (.+?)\((\d+)\)(?:: (.*?))?(?: \[([^\[\]]*)\])?$"
)
ENTITY_LINE = re.compile(r"^\[entity (\d+)\] ([^(:]+?)(?: \(|:|$)")
NEW_FACT_LINE = re.compile(r"^\[new (\d+)\] (.+?) --([^\s]+?)--> (.+?)(?:: .*?)?(?: \[[^\[\]]*\])?$")



def norm(name: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", name.casefold()))


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def when(ts: str | None) -> datetime | None:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")) if ts else None


def section(text: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return m.group(1) if m else ""


def user_text(body: dict[str, Any]) -> str:
    parts: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [b.get("text", "") for b in content if isinstance(b, dict)]
    return "\n".join(parts)


def times(raw: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in (raw or "").split(","):
        k, _, v = item.strip().partition("=")
        if v:
            out[k] = v
    return out


# ------------------------------------------------------------------ corpus


@dataclass
class Fact:
    id: str
    source: str
    relation: str
    target: str
    valid_at: str
    invalid_at: str | None
    superseded_by: str | None
    stated_in: list[int]


@dataclass
class Conv:
    raw: dict[str, Any]
    id: str
    user: str
    key_of: dict[str, str]  # normalized name -> entity key
    names: dict[str, set[str]]  # entity key -> normalized names
    canonical: dict[str, str]  # entity key -> canonical name
    facts: dict[str, Fact]
    by_triple: dict[tuple[str, str, str], list[Fact]]
    messages: list[dict[str, Any]]
    seen: set[str] = field(default_factory=set)  # entity keys already remembered

    @classmethod
    def load(cls, raw: dict[str, Any]) -> Conv:
        key_of: dict[str, str] = {}
        names: dict[str, set[str]] = {}
        for e in raw["entities"]:
            names[e["key"]] = {norm(n) for n in e["names"]}
            for n in e["names"]:
                key_of[norm(n)] = e["key"]
        facts = {
            f["id"]: Fact(f["id"], f["source"], f["relation"], f["target"], f["valid_at"],
                          f["invalid_at"], f["superseded_by"], f["stated_in"])
            for f in raw["facts"]
        }
        by_triple: dict[tuple[str, str, str], list[Fact]] = defaultdict(list)
        for f in facts.values():
            by_triple[(f.source, f.relation, f.target)].append(f)
        return cls(raw, raw["id"], raw["user_id"], key_of, names,
                   {e["key"]: e["name"] for e in raw["entities"]}, facts, by_triple,
                   raw["messages"])

    def fact_for(self, src: str, rel: str, tgt: str, valid_at: str | None) -> Fact | None:
        """The gold fact of a stored edge, by the names of its ends, its
        relation and (among facts of the same triple) its valid_at."""
        ks, kt = self.key_of.get(norm(src)), self.key_of.get(norm(tgt))
        if ks is None or kt is None:
            return None
        cands = self.by_triple.get((ks, rel, kt), [])
        if len(cands) > 1 and valid_at:
            exact = [f for f in cands if when(f.valid_at) == when(valid_at)]
            cands = exact or cands
        return cands[0] if cands else None


# ------------------------------------------------------------ the fake LLM


@dataclass
class GoldLLM:
    """Replays the gold through the fake Anthropic server, and counts."""

    convs: dict[str, Conv]
    by_text: dict[str, tuple[Conv, dict[str, Any]]]
    current: tuple[Conv, dict[str, Any]] | None = None
    last_context: str | None = None
    stats: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    handled: set[tuple[str, str]] = field(default_factory=set)  # (old fact, new fact)
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    supersede: bool = True  # False: a model that never invalidates (checks the leak metric)

    def extract(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = user_text(body)
        text = section(prompt, "text").strip()
        found = self.by_text.get(text)
        if found is None:
            self.problems.append(f"extract: unknown text {text[:60]!r}")
            return {"entities": [], "edges": []}
        conv, msg = found
        known = [(k.id, k.name) for k in known_entities(prompt)]
        gold = msg["extraction"]
        name_of: dict[str, str] = {}
        entities = []
        with self.lock:
            for e in gold["entities"]:
                key = e["key"]
                hits = [(i, n) for i, n in known if norm(n) in conv.names[key]]
                hits.sort(key=lambda h: (norm(h[1]) != norm(conv.canonical[key]), h[0]))
                out = {"name": e["name"], "type": e["type"], "description": e["description"]}
                if key in conv.seen:
                    self.stats["known mentions"] += 1
                    if hits:
                        self.stats["known listed"] += 1
                if hits:
                    out["id"], out["name"] = hits[0]
                name_of[key] = out["name"]
                entities.append(out)
                conv.seen.add(key)
        edges = [
            {"source": name_of[g["source"]], "target": name_of[g["target"]],
             "relation": g["relation"], "description": g["description"],
             "valid_at": g["valid_at"], "invalid_at": g["invalid_at"]}
            for g in gold["edges"]
        ]
        return {"entities": entities, "edges": edges}

    def invalidate(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = user_text(body)
        if self.current is None or not self.supersede:
            return {"invalidated": []}
        conv, msg = self.current
        new: list[tuple[int, Fact | None]] = []
        for line in section(prompt, "new_facts").splitlines():
            m = NEW_FACT_LINE.match(line.strip())
            if m:
                valid = times(line.rsplit("[", 1)[-1].rstrip("]")).get("valid_at")
                new.append((int(m.group(1)),
                            conv.fact_for(m.group(2), m.group(3), m.group(4), valid)))
        old: list[tuple[int, Fact | None]] = []
        for line in section(prompt, "existing_facts").splitlines():
            m = EDGE_LINE.match(line.strip())
            if m:
                t = times(m.group(8))
                old.append((int(m.group(1)),
                            conv.fact_for(m.group(2), m.group(4), m.group(5), t.get("valid_at"))))
        out = []
        for inv in msg["invalidates"]:
            by = next((i for i, f in new if f and f.id == inv["by"]), None)
            edge = next((e for e, f in old if f and f.id == inv["fact"]), None)
            if by is not None and edge is not None:
                out.append({"edge_id": edge, "by": by})
                self.handled.add((inv["fact"], inv["by"]))
        return {"invalidated": out}

    def query(self, body: dict[str, Any]) -> dict[str, Any]:
        self.last_context = user_text(body)
        return PLACEHOLDER
