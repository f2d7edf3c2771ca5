"""A rule-based model for the batch tests: ``extract`` reads "<Name> lives
in <City>." and "<Name> works at <Org>." in a text or in each message of a
window (tagging each edge with its message); ``invalidate`` supersedes a
live fact of the same person and relation with another target. The same
conversation then gives the same graph one text at a time or in bulk, if
the product applies the texts in order."""

from __future__ import annotations

import re
import time
from typing import Any

from conftest import Harness
from fakes.extraction import prompt_text, section
from gligabao.models import DatasetKey

RULE = re.compile(r"([A-Z]\w+) (lives in|works at) ([A-Z]\w+)\.")
RELATION = {"lives in": "lives_in", "works at": "works_at"}
TYPE = {"lives_in": "city", "works_at": "organization"}
MESSAGE = re.compile(r"^\[message (\d+)\] \S+ [^:\n]+: (.*)$", re.M)
NEW = re.compile(r"^\[new (\d+)\] (.+?) --(\S+?)--> (.+?)(?::| \[|$)", re.M)
OLD = re.compile(r"^\[edge (\d+)\] (.+?)\(\d+\) --(\S+?)--> (.+?)\(\d+\)", re.M)


def extract(body: dict[str, Any]) -> dict[str, Any]:
    text = section(prompt_text(body), "text")
    lines: list[tuple[int | None, str]] = [(int(n), c) for n, c in MESSAGE.findall(text)]
    entities: dict[str, dict[str, str]] = {}
    edges = []
    for n, content in lines or [(None, text)]:
        for who, verb, what in RULE.findall(content):
            rel = RELATION[verb]
            entities.setdefault(who, {"name": who, "type": "person", "description": ""})
            entities.setdefault(what, {"name": what, "type": TYPE[rel], "description": ""})
            edge: dict[str, Any] = {
                "source": who,
                "target": what,
                "relation": rel,
                "description": f"{who} {verb} {what}.",
                "valid_at": None,
                "invalid_at": None,
            }
            if n is not None:
                edge["message"] = n
            edges.append(edge)
    return {"entities": list(entities.values()), "edges": edges}


def invalidate(body: dict[str, Any]) -> dict[str, Any]:
    prompt = prompt_text(body)
    new = NEW.findall(section(prompt, "new_facts"))
    old = OLD.findall(section(prompt, "existing_facts"))
    out = []
    for i, src, rel, dst in new:
        for eid, osrc, orel, odst in old:
            if (osrc, orel) == (src, rel) and odst != dst:
                out.append({"edge_id": int(eid), "by": int(i)})
    return {"invalidated": out}


def use_world(gb: Harness) -> None:
    gb.llm.default("extract", extract)
    gb.llm.default("invalidate", invalidate)


def facts(gb: Harness, user: str = "u1", dataset: str = "main") -> dict[str, set[tuple[Any, ...]]]:
    """The dataset's facts by names and validity: live and superseded."""
    key = DatasetKey(user, dataset)
    edges = list(gb.graph.iter_edges(key))
    ids = sorted({i for e in edges for i in (e.source_id, e.target_id)})
    names = {i: e.name for i, e in gb.graph.get_entities(key, ids).items()} if ids else {}
    out: dict[str, set[tuple[Any, ...]]] = {"live": set(), "superseded": set()}
    for e in edges:
        row = (names[e.source_id], e.relation, names[e.target_id], e.valid_at, e.invalid_at)
        out["live" if e.live else "superseded"].add(row)
    return out


def wait(gb: Harness, call_id: str, user: str = "u1", timeout: float = 60.0) -> Any:
    end = time.monotonic() + timeout
    while True:
        body = gb.client.get(f"/v1/gb/calls/{call_id}?user_id={user}").body
        if body["status"] not in ("accepted", "running") and not body["status"].startswith(
            "retrying"
        ):
            return body
        assert time.monotonic() < end, body
        time.sleep(0.05)


def conversation(n: int = 30) -> list[dict[str, Any]]:
    """A chat over n days: moves and job changes between small talk."""
    said = {
        2: "Dana lives in Lyon.",
        5: "Dana works at Acme.",
        9: "Dana lives in Paris.",
        13: "Dana works at Initech.",
        14: "Sam lives in Lyon.",
        20: "Dana lives in Rome.",
        21: "Sam works at Acme.",
    }
    return [
        {
            "text": said.get(d, f"Small talk number {d}."),
            "speaker": "Dana",
            "reference_time": f"2025-01-{d + 1:02d}T10:00:00Z",
            "session_id": "s1",
        }
        for d in range(n)
    ]
