"""The corpus model: entities, facts, messages, and a conversation that
records what a careful extractor would take from each message."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from .pools import FILLERS, NOISE_TEMPLATES, NOISE_TOPICS

SEED = 20240108
NOISE_PER_MESSAGE = (6, 12)  # --long: messages without a fact before each message
GAP_FACTOR_LONG = 5  # --long: sessions this many times further apart
CATEGORIES = ("single", "multi_hop", "temporal", "changed", "past", "alias", "unanswerable")


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def day(t: datetime) -> datetime:
    return t.replace(hour=0, minute=0, second=0, microsecond=0)


def an(word: str) -> str:
    return f"{'an' if word[0].lower() in 'aeiou' else 'a'} {word}"


def norm(name: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", name.casefold()))


@dataclass
class Ent:
    key: str
    name: str  # canonical: the full name
    type: str
    names: list[str]  # every name the conversation uses for it, canonical first


@dataclass
class Fact:
    id: str
    source: str  # entity keys
    relation: str
    target: str
    description: str
    valid_at: str
    invalid_at: str | None = None
    superseded_by: str | None = None
    stated_in: list[int] = field(default_factory=list)


@dataclass
class Message:
    index: int
    session: int
    reference_time: str
    text: str
    entities: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    invalidates: list[dict[str, str]] = field(default_factory=list)


class Conversation:
    def __init__(
        self, cid: str, user: str, rng: random.Random, start: datetime, long: bool = False
    ) -> None:
        self.id = cid
        self.long = long
        # The noise has its own stream, so that the facts, the names and the
        # questions are drawn exactly as in the short corpus.
        self.noise_rng = random.Random(f"{SEED}:{cid}:noise")
        self.noise_pool = [t.format(t=topic) for t in NOISE_TEMPLATES for topic in NOISE_TOPICS]
        self.noise_rng.shuffle(self.noise_pool)
        self.user = user
        self.rng = rng
        self.now = start
        self.session = 0
        self.entities: dict[str, Ent] = {}
        self.facts: dict[str, Fact] = {}
        self.messages: list[Message] = []
        self.questions: list[dict[str, Any]] = []
        self.filler_pool = list(FILLERS)
        rng.shuffle(self.filler_pool)
        self._msg: Message | None = None

    # -- entities and messages
    def ent(self, key: str, name: str, type_: str, *aliases: str) -> str:
        if key in self.entities:
            e = self.entities[key]
            for a in (name, *aliases):
                if a not in e.names:
                    e.names.append(a)
            return key
        self.entities[key] = Ent(key, name, type_, list(dict.fromkeys([name, *aliases])))
        return key

    def new_session(self, gap_days: tuple[int, int]) -> None:
        self.session += 1
        if self.messages:
            gap = self.rng.randint(*gap_days) * (GAP_FACTOR_LONG if self.long else 1)
            self.now = day(self.now) + timedelta(days=gap)
        self.now = self.now.replace(hour=self.rng.choice([8, 12, 18, 20, 21]),
                                    minute=self.rng.randint(0, 50))

    def say(self, text: str) -> Message:
        if self.long:
            for _ in range(self.noise_rng.randint(*NOISE_PER_MESSAGE)):
                self._say(self.noise_pool.pop(), self.noise_rng)
        return self._say(text, self.rng)

    def _say(self, text: str, rng: random.Random) -> Message:
        if self.messages:
            self.now += timedelta(minutes=rng.randint(2, 9), seconds=rng.randint(0, 59))
        first = self.entities["me"].name.split()[0]  # who speaks: "Dana: ..."
        msg = Message(len(self.messages), self.session, iso(self.now), f"{first}: {text}")
        self.messages.append(msg)
        self._msg = msg
        return msg

    def filler(self) -> None:
        self.say(self.filler_pool.pop())

    def mention(self, key: str, surface: str, description: str) -> None:
        """The message names the entity as ``surface``; ``description`` is
        what a careful extractor would write about it from this message."""
        assert self._msg is not None
        self.ent(key, self.entities[key].name, self.entities[key].type, surface)
        for e in self._msg.entities:
            if e["key"] == key:
                return
        self._msg.entities.append(
            {"key": key, "name": surface, "type": self.entities[key].type,
             "description": description}
        )

    def fact(self, src: str, rel: str, tgt: str, desc: str, valid_at: datetime | None = None,
             invalid_at: datetime | None = None) -> str:
        """A new fact stated by the current message. ``valid_at`` None: stated
        as current, so it holds from the message's reference time."""
        assert self._msg is not None
        fid = f"{self.id}.f{len(self.facts) + 1}"
        self.facts[fid] = Fact(fid, src, rel, tgt, desc,
                               iso(valid_at) if valid_at else self._msg.reference_time,
                               iso(invalid_at) if invalid_at else None,
                               stated_in=[self._msg.index])
        self._msg.edges.append({"fact": fid, "source": src, "relation": rel, "target": tgt,
                                "description": desc,
                                "valid_at": iso(valid_at) if valid_at else None,
                                "invalid_at": iso(invalid_at) if invalid_at else None})
        return fid

    def end(self, fid: str, at: datetime, desc: str) -> None:
        """The current message says the fact ended (no replacement): the
        extractor restates it with its invalid_at."""
        assert self._msg is not None
        f = self.facts[fid]
        f.invalid_at = iso(at)
        f.stated_in.append(self._msg.index)
        self._msg.edges.append({"fact": fid, "source": f.source, "relation": f.relation,
                                "target": f.target, "description": desc, "valid_at": None,
                                "invalid_at": iso(at)})

    def restate(self, fid: str, desc: str) -> None:
        """The current message says again what a fact already says."""
        assert self._msg is not None
        f = self.facts[fid]
        f.stated_in.append(self._msg.index)
        self._msg.edges.append({"fact": fid, "source": f.source, "relation": f.relation,
                                "target": f.target, "description": desc, "valid_at": None,
                                "invalid_at": None})

    def supersede(self, old: str, new: str) -> None:
        """The current message's fact ``new`` replaces ``old`` without saying
        that ``old`` ended: the invalidate stage is what closes it."""
        assert self._msg is not None
        o, n = self.facts[old], self.facts[new]
        o.invalid_at = n.valid_at
        o.superseded_by = new
        self._msg.invalidates.append({"fact": old, "by": new})

    # -- questions
    def ask(self, category: str, question: str, needs: list[str], *,
            superseded: list[str] | None = None, tags: list[str] | None = None,
            as_of: datetime | None = None) -> None:
        """``as_of``: the question is asked about that instant (query's
        ``as_of``); its needs held then, superseded since or not, and
        ``superseded`` lists the facts that did not hold then."""
        assert category in CATEGORIES
        for fid in needs:
            f = self.facts[fid]
            if as_of is None:
                assert f.superseded_by is None, (question, fid)
            else:
                assert f.valid_at <= iso(as_of) < (f.invalid_at or "~"), (question, fid)
        q: dict[str, Any] = {"category": category, "question": question, "needs": needs,
                             "superseded": superseded or [], "tags": tags or []}
        if as_of is not None:
            q["as_of"] = iso(as_of)
        self.questions.append(q)

    def between(self, old: str, new: str) -> datetime:
        """Noon of the day halfway between the starts of two facts."""
        a = datetime.fromisoformat(self.facts[old].valid_at.replace("Z", "+00:00"))
        b = datetime.fromisoformat(self.facts[new].valid_at.replace("Z", "+00:00"))
        return day(a + (b - a) / 2) + timedelta(hours=12)

    def after(self, fid: str, days: int = 3) -> datetime:
        start = datetime.fromisoformat(self.facts[fid].valid_at.replace("Z", "+00:00"))
        return day(start) + timedelta(days=days, hours=12)

    def name(self, key: str) -> str:
        return self.entities[key].name

    # -- export
    def export(self) -> dict[str, Any]:
        def fact_ref(fid: str) -> dict[str, Any]:
            f = self.facts[fid]
            return {"fact": fid, "source": self.name(f.source), "relation": f.relation,
                    "target": self.name(f.target), "valid_at": f.valid_at,
                    "invalid_at": f.invalid_at}

        names: dict[str, str] = {}
        for e in self.entities.values():
            for n in e.names:
                other = names.setdefault(norm(n), e.key)
                assert other == e.key, f"{self.id}: the name {n!r} names {other} and {e.key}"
        return {
            "id": self.id,
            "user_id": self.user,
            "entities": [{"key": e.key, "name": e.name, "type": e.type, "names": e.names}
                         for e in self.entities.values()],
            "facts": [
                {"id": f.id, "source": f.source, "relation": f.relation, "target": f.target,
                 "description": f.description, "valid_at": f.valid_at,
                 "invalid_at": f.invalid_at, "superseded_by": f.superseded_by,
                 "stated_in": f.stated_in}
                for f in self.facts.values()
            ],
            "messages": [
                {"index": m.index, "session": m.session, "reference_time": m.reference_time,
                 "text": m.text, "extraction": {"entities": m.entities, "edges": m.edges},
                 "invalidates": m.invalidates}
                for m in self.messages
            ],
            "questions": [
                {"id": f"{self.id}.q{i + 1}", **{k: v for k, v in q.items() if k != "needs"},
                 "gold": [fact_ref(fid) for fid in q["needs"]],
                 "superseded": [fact_ref(fid) for fid in q["superseded"]]}
                for i, q in enumerate(self.questions)
            ],
        }
