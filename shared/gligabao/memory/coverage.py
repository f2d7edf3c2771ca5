"""What the context covers, not only how well each candidate matches: rules
over the scored passages, applied before the fill, so that a budget holds
more of the messages a question needs (BEAM: a user talking with an
assistant whose replies are 300-700 words, docs/retrieval.md).

* **A message is one candidate.** A long reply is searched by its windows;
  when several of them match, the best keeps its score and the others keep
  ``w_same_text`` of theirs: a second window of the reply already in the
  context says less than another message does. (A transcript's window is a
  turn of its own, and a long document's chunks are distinct parts: neither
  is folded.)
* **A question in the first person asks about the user** ("What did I
  decide about my budget?", "Which movies did I plan?"): the assistant's
  passages keep ``w_not_user`` of their score, unless the question asks
  what the assistant did ("the films you recommended"), what both said
  ("the options we've talked about") or for a summary (BEAM dev: 85 of the
  112 evidence messages of its summaries are replies). A question about
  what the user said ("the order in which I brought up", "the titles I
  mentioned") leaves them ``w_user_said``: 141 of 150 such evidence
  messages are the user's.
* **A question over many messages covers sessions** (a summary, an order of
  events, how something developed): the n-th passage of one session (by
  score) keeps ``session_share ** n`` of its score, so that the context
  reaches the other sessions rather than repeating the best one.

* **A reply means what it answers.** A matched window of the assistant's
  reply brings the user's turn the reply answers (the row before the
  reply, same session) with ``w_prompt`` of the window's score: in a
  conversation with an assistant, what the user said is most of the
  evidence, and the reply is found by the question's words.

Each rule adds a part to the candidate's :class:`~.scoring.Score` (its
explanation shows it); facts and entities are left as they are.
"""

from __future__ import annotations

import re

from ..models import Artifact
from ..retrieval_profile import RetrievalProfile
from ..text import is_turn
from .context import Passage, Scored
from .scoring import Score
from .standing import NOT_USER

# "I", "my", "me": the question is the user's about themselves. "I" is
# matched capitalized only.
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself)\b")
# "you recommended", "you've said", "did you suggest": about the assistant's words;
# "we've talked about", "we discussed": about both sides' words.
_ASKS_ASSISTANT = re.compile(
    r"\b(?:did you|you(?:'ve| have| had)?\s+(?:\w+ed|said|told|gave|made|wrote|taught|did|"
    r"thought|meant|came up with|brought up)|we(?:'ve| have| had)?\s+(?:talked|discussed|"
    r"covered|went over|gone over|looked at|explored|chatted))\b",
    re.IGNORECASE,
)
# "the order in which I brought up", "the titles I mentioned", "when did I first mention": the
# user's own words are the answer, the assistant's replies only repeat them.
_USER_SAID = re.compile(
    r"\b(?:i(?:['’]ve| have| had)?\s+(?:first |just |ever |already |previously |originally )?"
    r"(?:brought(?: \w+){0,3} up|mentioned|said|told you|asked(?: you)?(?: about)?|shared|"
    r"raised|noted|talked about)|did i (?:first |ever |already |originally )?(?:bring up|"
    r"mention|say|tell you|share|note|raise))\b",
    re.IGNORECASE,
)
# A summary or a recap asks what was discussed, the replies as much as the user's turns.
_SUMMARY = re.compile(r"\b(?:summar\w*|recap\w*|overview)\b", re.IGNORECASE)
# A summary, an order of events, a development over time: many messages.
_MANY = re.compile(
    r"\b(?:summar\w*|overview|recap|in (?:what|which) order|the order|order in which|"
    r"sequence|chronolog\w*|timeline|walk me through|over time|progress(?:ed|ion)?|"
    r"evolv\w*|throughout|across (?:our|my|the|all)|so far|over the (?:past|last|course))\b",
    re.IGNORECASE,
)


def first_person(question: str) -> bool:
    """The question asks about what its asker (the user) said or did."""
    return bool(_FIRST_PERSON.search(question)) and not _ASKS_ASSISTANT.search(question)


def user_said(question: str) -> bool:
    """The question asks what the user said ("the order in which I brought
    up ...", "the titles I mentioned")."""
    return bool(_USER_SAID.search(question))


def summary(question: str) -> bool:
    """The question asks for a summary of what was discussed."""
    return bool(_SUMMARY.search(question))


def many_messages(question: str) -> bool:
    """The question's answer rests on many messages across sessions."""
    return bool(_MANY.search(question))


def _scale(c: Scored, share: float, part: str) -> None:
    """``c`` keeps ``share`` of its score (a part that says so)."""
    if share >= 1.0:
        return
    cut = c.score * (1.0 - share)
    c.score -= cut
    if c.why is not None:
        c.why.parts.append((part, -cut))


def _message(c: Scored) -> int | None:
    """The message a passage candidate is part of: a window's text (not a
    transcript's turn, not a summarized chunk), else the row itself."""
    if c.passage is None:
        return None
    a = c.passage.chunk
    return a.parent_id if a.parent_id is not None and _window(a) else a.id


def one_per_message(candidates: list[Scored], p: RetrievalProfile) -> None:
    """The best window of each message keeps its score; the others keep
    ``w_same_text`` of it."""
    seen: set[int] = set()
    for c in sorted(candidates, key=lambda c: -c.score):
        m = _message(c)
        if m is None:
            continue
        if m in seen:
            _scale(c, p.w_same_text, "same_text")
        seen.add(m)


def _window(a: Artifact) -> bool:
    """A window of a longer text (not a transcript's turn, not a chunk)."""
    return a.parent_id is not None and a.summary is None and not is_turn(a.text)


def prompt_ids(candidates: list[Scored], limit: int) -> dict[int, tuple[float, Artifact]]:
    """The rows a matched assistant reply answers (the ID before the reply),
    from the best ``limit`` such windows: ID -> (the window's score, it)."""
    out: dict[int, tuple[float, Artifact]] = {}
    for c in sorted(candidates, key=lambda c: -c.score):
        if len(out) >= limit:
            break
        a = c.passage.chunk if c.passage is not None else None
        if a is None or a.parent_id is None or not _window(a):
            continue
        if (a.speaker or "").lower() in NOT_USER and a.parent_id - 1 not in out:
            out[a.parent_id - 1] = (c.score, a)
    return out


def prompts_of(
    candidates: list[Scored],
    wanted: dict[int, tuple[float, Artifact]],
    rows: dict[int, Artifact],
    p: RetrievalProfile,
) -> list[Scored]:
    """The user's turns the windows of ``wanted`` answer (``rows``: those
    read): a candidate already raised to ``w_prompt`` of the window's score
    when that is more, else a new one."""
    have = {c.passage.chunk.id: c for c in candidates if c.passage is not None}
    out: list[Scored] = []
    for i, (score, window) in wanted.items():
        row = rows.get(i)
        if (
            row is None
            or row.parent_id is not None
            or (row.speaker or "").lower() in NOT_USER
            or row.session_id != window.session_id
        ):
            continue
        got = p.w_prompt * score
        c = have.get(i)
        if c is None:
            why = Score([("prompt", got)], {"pool": "prompt", "prompt_of": window.id})
            out.append(Scored(got, passage=Passage(row, None, row.text), why=why))
        elif got > c.score:
            if c.why is not None:
                c.why.parts.append(("prompt", got - c.score))
            c.score = got
    return out


def users_words(candidates: list[Scored], share: float) -> None:
    """A first-person question: the assistant's passages keep ``share``."""
    for c in candidates:
        if c.passage is not None and (c.passage.chunk.speaker or "").lower() in NOT_USER:
            _scale(c, share, "not_user")


def not_user_share(question: str, p: RetrievalProfile) -> float:
    """What an assistant's passage keeps for this question: all of it when
    the question asks about the assistant's words ("what did you recommend
    after I mentioned my budget?"); ``w_user_said`` when it asks what the
    user said (a summary of it too); ``w_not_user`` for another first-person
    question; all of it for another summary (what was discussed, the replies
    as much as the user's turns) and for any other question."""
    if _ASKS_ASSISTANT.search(question):
        return 1.0
    if user_said(question):
        return p.w_user_said
    if first_person(question) and not summary(question):
        return p.w_not_user
    return 1.0


def cover_sessions(candidates: list[Scored], p: RetrievalProfile) -> None:
    """The n-th passage of a session (best first) keeps ``session_share ** n``."""
    count: dict[str, int] = {}
    for c in sorted(candidates, key=lambda c: -c.score):
        if c.passage is None or c.passage.chunk.session_id is None:
            continue
        sid = c.passage.chunk.session_id
        n = count.get(sid, 0)
        count[sid] = n + 1
        if n:
            _scale(c, p.session_share**n, "session_cover")


def fill_profile(question: str, p: RetrievalProfile) -> RetrievalProfile:
    """The profile the fill uses: a many-message question's floors are at
    most ``many_floor`` (the scores above order the budget; the floor would
    cut the other sessions' passages that the session rule lowered)."""
    if not many_messages(question) or (
        p.relevance_floor <= p.many_floor and p.passages_only_floor <= p.many_floor
    ):
        return p
    return p.model_copy(
        update={
            "relevance_floor": min(p.relevance_floor, p.many_floor),
            "passages_only_floor": min(p.passages_only_floor, p.many_floor),
        }
    )


def cover(question: str, candidates: list[Scored], p: RetrievalProfile) -> list[Scored]:
    """The rules above, in order (each sees the scores the one before left)."""
    users_words(candidates, not_user_share(question, p))
    one_per_message(candidates, p)
    if many_messages(question):
        cover_sessions(candidates, p)
    return candidates
