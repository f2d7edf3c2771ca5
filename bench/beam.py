"""BEAM through the running product, measured as bench/locomo.py measures
LoCoMo: does the evidence of a long user/assistant conversation reach the
query context, at what size, against plain baselines at the same size, and
how fast is it remembered?

    .venv/bin/python -m bench.beam [--data PATH] [--conversations N | 100K/14,100K/15]
        [--budget default,1000,2000,4000] [--jobs 2] [--store DIR] [--route search|query]
        [--messages N] [--threads N] [--set NAME=VALUE ...] [--sweep NAME=V1,V2]

Each conversation of ``../shared/data/beam/beam_100k_dev.jsonl`` (read in
place; its README gives the shape) is remembered turn by turn as an agent
would: every message a `remember` with ``extract: false``, its speaker
(``user`` or ``assistant``) as ``speaker``, its session as ``session_id``,
its date as ``reference_time``. Then every question with evidence is asked
(``search``) at each budget; per category: the share of its evidence
messages whose text reached the context (a long reply is searched by its
windows: one of them found is the message found; a kept preference or
instruction in the context's notes is its turn found), the share of questions
with all of it, the context's tokens and share, and the same recall for the
messages ranked by cosine (same local model, ``speaker: text``), BM25 and
both fused, best first while they fit in our context's tokens.

``--store DIR`` keeps the remembered file and reuses it: a second run asks
the questions again without remembering (query-side changes, or a profile's
fields with ``--set``/``--sweep``, e.g. ``--set notes_standing=0 --set
notes_summaries=0`` for the context without notes).

Remembering is timed: stored tokens a second, and the embedding tokens the
server sent (its inference records) per stored token. The server embeds on
``--threads`` threads (1 by default, steady on a shared machine; 0: every
core, what `gligabao serve` does by default).
"""

from __future__ import annotations

import json
import sys
import urllib.parse
from datetime import datetime
from pathlib import Path
from typing import Any

from . import locomo, ruler
from .locomo_data import Conversation, Question, Turn

DEFAULT_DATA = ruler.DATA / "beam" / "beam_100k_dev.jsonl"
CATEGORIES = {c: c.replace("_", " ") for c in (
    "contradiction_resolution", "event_ordering", "information_extraction",
    "instruction_following", "knowledge_update", "multi_session_reasoning",
    "preference_following", "summarization", "temporal_reasoning")}


def beam_date(raw: str) -> str:
    """"March-15-2024" -> "2024-03-15T00:00:00Z"."""
    return datetime.strptime(raw.strip(), "%B-%d-%Y").strftime("%Y-%m-%dT%H:%M:%SZ")


def conversation(raw: dict[str, Any]) -> Conversation:
    by_session: dict[int, list[Turn]] = {}
    for t in raw["turns"]:
        own = by_session.setdefault(int(t["session"]), [])
        own.append(Turn(str(t["id"]), int(t["session"]), t["speaker"], t["text"],
                        beam_date(t["date"]), len(own)))
    sessions = [(n, ts[0].date, ts) for n, ts in sorted(by_session.items())]
    conv = Conversation(raw["conv_id"], ("user", "assistant"), sessions, [])
    for q in raw["questions"]:
        ev = [str(i) for i in q.get("gold_turn_ids") or [] if str(i) in conv.turns]
        if ev and q["category"] in CATEGORIES:
            conv.questions.append(Question(q["question"], q["category"], ev, str(q["answer"])))
    return conv


def load(path: Path, only: str = "", messages: int = 0) -> list[Conversation]:
    """The conversations of the file: all, the first N, or those named; with
    ``messages``, each cut to its first that many messages and the questions
    whose evidence is all among them (a quick measure, not BEAM's)."""
    raws = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    if messages:
        for raw in raws:
            raw["turns"] = raw["turns"][:messages]
            kept = {t["id"] for t in raw["turns"]}
            raw["questions"] = [q for q in raw["questions"]
                                if set(q.get("gold_turn_ids") or []) <= kept]
    convs = [conversation(raw) for raw in raws]
    if only.isdigit():
        return convs[: int(only)]
    if only:
        wanted = set(only.split(","))
        return [c for c in convs if c.id in wanted]
    return convs


def remember(base: str, conv: Conversation, mode: str) -> int:
    """Every message on its own, in order, passages only."""
    user = locomo.user_of(conv, mode)
    for n, _, turns in conv.sessions:
        for t in turns:
            ruler.call(base, "/v1/gb/remember", {
                "user_id": user, "text": t.text, "speaker": t.speaker,
                "session_id": f"session_{n}", "reference_time": t.date, "extract": False})
    return len(conv.turns)


def embedded_tokens(base: str, user: str) -> int:
    """The embedding tokens of the user's inference records (page by page)."""
    total, cursor = 0, ""
    while True:
        more = f"&cursor={urllib.parse.quote(cursor)}" if cursor else ""
        _, body, _ = ruler.http(base, "GET", f"/v1/gb/inferences?user_id={user}&limit=200{more}")
        rows = (body or {}).get("inferences", [])
        total += sum(int(r.get("input_tokens") or 0) for r in rows if r.get("stage") == "embed")
        cursor = (body or {}).get("next") or ""
        if not cursor:
            return total


class Speed:
    """How fast the conversations were remembered (told by locomo.measure)."""

    def __init__(self, convs: list[Conversation]) -> None:
        self.stored = sum(ruler.tokens(t.text) for c in convs for t in c.turns.values())
        self.messages = sum(len(c.turns) for c in convs)
        self.seconds = 0.0

    def __call__(self, mode: str, seconds: float) -> None:
        self.seconds = seconds

    def line(self, embedded: int) -> str:
        if not self.seconds:
            return "remembering: reused from --store (not timed)"
        per = embedded / self.stored if embedded else 0.0
        return (f"remembering: {self.messages:,} messages, {self.stored:,} stored tokens in "
                f"{self.seconds:,.0f} s = {self.stored / self.seconds:,.0f} tokens/s, "
                f"{self.seconds / self.messages:.2f} s a message; embedding tokens per stored "
                f"token {per:.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = locomo.arguments(__doc__ or "", DEFAULT_DATA, "beam.json")
    ap.add_argument("--messages", type=int, default=0,
                    help="only the first N messages of each conversation (a quick measure)")
    ruler.profile_options(ap)  # --set/--sweep: e.g. the notes off on the same --store
    args = ap.parse_args(argv)
    convs = load(args.data, args.conversations, args.messages)
    if not convs:
        ap.error("no conversation matches --conversations")
    speed = Speed(convs)
    embedded: list[int] = []

    def timed(base: str, conv: Conversation, mode: str) -> int:
        n = remember(base, conv, mode)
        embedded.append(embedded_tokens(base, locomo.user_of(conv, mode)))
        return n

    results, seconds = locomo.measure(convs, ["turns"], args, timed, speed)
    n_q = sum(len(c.questions) for c in convs)
    print(f"BEAM {args.data.name}: {len(convs)} conversation(s) "
          f"({', '.join(c.id for c in convs)}), {n_q} questions with evidence, "
          f"route {args.route}; conversation tokens "
          f"{min(c.tokens for c in convs):,}-{max(c.tokens for c in convs):,}")
    print(speed.line(sum(embedded)))
    for key in results:  # "turns", or one per profile of --sweep
        print(locomo.report(results[key], key, locomo.parse_budgets(args.budget), CATEGORIES))
    print(f"\n{seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
