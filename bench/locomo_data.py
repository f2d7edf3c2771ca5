"""LoCoMo's conversations as the rulers read them (bench/locomo.py measures
them, bench/beam.py reads BEAM into the same shapes): turns, questions with
their evidence, and the users they are remembered under."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from . import chat_formats, ruler
from .ruler import tokens

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DEFAULT_DATA = ruler.DATA / "locomo" / "locomo_dev.json"


@dataclass
class Turn:
    id: str  # dia_id, "D3:5"
    session: int
    speaker: str
    text: str  # as remembered: the caption of a shared photo appended
    date: str  # the session's, RFC 3339
    at: int = 0  # its place in the session

    @property
    def line(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass
class Question:
    text: str
    category: int
    evidence: list[str]
    answer: str


@dataclass
class Conversation:
    id: str
    speakers: tuple[str, str]
    sessions: list[tuple[int, str, list[Turn]]]  # number, date, turns
    questions: list[Question]
    turns: dict[str, Turn] = field(default_factory=dict)
    format: str = "plain"  # how a session's lines are written (bench/chat_formats.py)

    def __post_init__(self) -> None:
        self.turns = {t.id: t for _, _, ts in self.sessions for t in ts}

    @property
    def tokens(self) -> int:
        return tokens("\n".join(t.line for t in self.turns.values()))

    def said(self, t: Turn) -> str:
        """The turn as a line of its session's text, in the conversation's
        format."""
        return chat_formats.line(self.format, t.speaker, t.text, t.date, t.at, t.id)


def session_date(raw: str) -> str:
    """"1:56 pm on 8 May, 2023" -> "2023-05-08T13:56:00Z"."""
    dt = datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y")
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def evidence_ids(raw: list[str], known: dict[str, Turn]) -> list[str]:
    """The dataset's evidence lists, tidied: "D9:1 D4:4" is two, "D:11:26" is
    D11:26; an ID naming no turn is dropped."""
    out: list[str] = []
    for item in raw:
        for part in item.replace(";", " ").split():
            m = re.fullmatch(r"D:?(\d+):(\d+)", part)
            if m and (i := f"D{m.group(1)}:{m.group(2)}") in known and i not in out:
                out.append(i)
    return out


def load(path: Path, only: str = "") -> list[Conversation]:
    """The conversations of the file: all, the first N, or those named."""
    convs = load_raw(json.loads(path.read_text()))
    if only.isdigit():
        return convs[: int(only)]
    if only:
        wanted = set(only.split(","))
        return [c for c in convs if c.id in wanted]
    return convs


def load_raw(data: list[dict[str, Any]]) -> list[Conversation]:
    convs: list[Conversation] = []
    for raw in data:
        c = raw["conversation"]
        sessions = []
        for key in sorted((k for k in c if re.fullmatch(r"session_\d+", k)),
                          key=lambda k: int(k.split("_")[1])):
            n = int(key.split("_")[1])
            if not c[key]:
                continue
            date = session_date(c[f"{key}_date_time"])
            turns = []
            for at, t in enumerate(c[key]):
                text = t["text"]
                if t.get("blip_caption"):
                    text += f" [shares a photo: {t['blip_caption']}]"
                turns.append(Turn(t["dia_id"], n, t["speaker"], text, date, at))
            sessions.append((n, date, turns))
        conv = Conversation(raw["sample_id"], (c["speaker_a"], c["speaker_b"]), sessions, [])
        for q in raw["qa"]:
            if q.get("category") in CATEGORIES:
                ev = evidence_ids(q.get("evidence", []), conv.turns)
                if ev:
                    conv.questions.append(
                        Question(q["question"], q["category"], ev, str(q.get("answer", ""))))
        convs.append(conv)
    return convs


def first(conv: Conversation, n: int) -> None:
    """The conversation cut to its first ``n`` sessions, and the questions
    whose evidence is all in them."""
    conv.sessions = conv.sessions[:n]
    conv.turns = {t.id: t for _, _, ts in conv.sessions for t in ts}
    conv.questions = [q for q in conv.questions if all(i in conv.turns for i in q.evidence)]


def user_of(conv: Conversation, mode: str) -> str:
    own = f"-{conv.format}" if mode == "sessions" and conv.format != "plain" else ""
    return f"{conv.id}-{mode}{own}".replace("/", "-")
