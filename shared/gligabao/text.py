"""Text helpers shared by remember and query: normalization, terms, chunks."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from .text_blocks import blocks, pack

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each few
    for from further had has have having he her here hers herself him himself his how i if
    in into is it its itself just know let me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such tell
    than that the their theirs them themselves then there these they this those through to
    too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves s t don ever
    """.split()
)

MAX_QUERY_TERMS = 12
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def normalize_name(name: str) -> str:
    """Casefolded, accents and punctuation folded to single spaces."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return " ".join(_WORD.findall(folded))


def words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def query_terms(text: str, limit: int = MAX_QUERY_TERMS) -> list[str]:
    """Lowercase, split, drop terms under 2 characters, stopwords and
    duplicates; keep the first ``limit``."""
    out: list[str] = []
    for w in words(text):
        if len(w) < 2 or w in STOPWORDS or w in out:
            continue
        out.append(w)
        if len(out) == limit:
            break
    return out


def index_terms(text: str) -> set[str]:
    """The terms under which an entity's name or description is indexed: the
    same rules as query terms, without the cap."""
    return {w for w in words(text) if len(w) >= 2 and w not in STOPWORDS}


@functools.lru_cache(maxsize=2**16)
def stem(term: str) -> str:
    """A light English suffix strip, so that "works" meets "work" and
    "living" meets "live" (the entities' index terms themselves are not
    stemmed; the passages' word index is). Kept per word: a query stems the
    words of a few hundred lines, mostly the same few thousand words."""
    for suffix, keep in (("ing", 4), ("ed", 3), ("es", 4), ("s", 3)):
        if term.endswith(suffix) and len(term) - len(suffix) >= keep and not term.endswith("ss"):
            return term[: -len(suffix)]
    return term


def passage_terms(text: str) -> list[str]:
    """A passage's terms for its lexical (BM25) search, in order, repeats
    kept: the index terms' rules, stemmed."""
    return [stem(w) for w in words(text) if len(w) >= 2 and w not in STOPWORDS]


def contains_phrase(haystack_norm: str, needle_norm: str) -> bool:
    """Whole-word containment of one normalized string in another."""
    if not needle_norm:
        return False
    return f" {needle_norm} " in f" {haystack_norm} "


def estimate_tokens(text: str) -> int:
    """A cheap token estimate (about four characters a token for English)."""
    return max(1, (len(text) + 3) // 4)


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def chunk_text(text: str, target_tokens: int, overlap_tokens: int) -> list[str]:
    """Split on paragraphs, then sentences, into chunks of about
    ``target_tokens``, each starting with the last ~``overlap_tokens`` of the
    previous one so that a fact across a boundary is seen whole once."""
    units: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        if not para:
            continue
        if estimate_tokens(para) <= target_tokens:
            units.append(para)
            continue
        for sent in _SENTENCE.split(para):
            sent = sent.strip()
            while estimate_tokens(sent) > target_tokens:  # one huge sentence
                cut = target_tokens * 4
                units.append(sent[:cut])
                sent = sent[cut:]
            if sent:
                units.append(sent)
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        t = estimate_tokens(unit)
        if current and size + t > target_tokens:
            chunks.append("\n\n".join(current))
            tail: list[str] = []
            tail_size = 0
            for prev in reversed(current):
                pt = estimate_tokens(prev)
                if tail_size + pt > overlap_tokens:
                    break
                tail.insert(0, prev)
                tail_size += pt
            current, size = tail, tail_size
        current.append(unit)
        size += t
    if current:
        chunks.append("\n\n".join(current))
    return chunks


# A line said by someone: "Melanie: I painted a sunset" (a transcript's turn),
# by a capitalized name or a chat log's lower-case role ("user: hi").
_NAME = r"[A-Z][\w.'’\- ]{0,40}?|user|assistant|system|human|ai|bot|tool"
# A user name as chat clients show it, one token: after an "@" ("@sam"), or
# lowercase with a digit or an underscore ("kate_99"); a lowercase word alone
# ("note: ...") is one only after a time or an id ("[10:42] kate: ...") or in a
# header, where a time follows it.
_HANDLE = r"@[\w.\-]{1,31}|[a-z][a-z.\-]*[\d_][\w.\-]{0,28}"
_WHO = rf"{_NAME}|{_HANDLE}"
_LOWER = r"[a-z][\w.\-]{0,30}"
_HEADER_WHO = rf"{_WHO}|{_LOWER}"

# When a line was said, as clients write it, always with a clock time:
# "10:42", "10:42:13 PM", "12/29/23, 10:42 PM", "2023-05-08 10:42", "12.01.24
# 10:42", "Today at 10:42 AM" (a date alone heads dated notes as often).
_TIME = r"\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?"
_DATE = r"\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}"
_WHEN = rf"(?:(?:Today|Yesterday) at {_TIME}|{_DATE}(?:,?\s+|T){_TIME}\S*|{_TIME})"
# What a client writes before the name: a time or an id in brackets
# ("[10:42]", "[D1:3]", "[2023-05-08 10:42]"), or a date and time and a dash
# (WhatsApp's "12/29/23, 10:42 PM - ", "2023-05-08 10:42 - ").
_PREFIX = (
    rf"(?:\[(?P<bracket>[^\]\n]{{1,40}})\]\s*"
    rf"|(?P<stamp>{_WHEN})\s+(?:[-–]\s+)?)"
)
# The name, plain ("Kate: ", "kate_99: ", "Kate (10:42 AM): "), in Markdown's
# bold ("**Kate**: ", "**Kate:** ") or in IRC's angle brackets ("<Kate> "):
# the markup makes any name a name.
_CHAT = re.compile(
    rf"(?:{_PREFIX})?"
    rf"(?:\*\*(?P<bold>[^*\n]{{1,40}}?)(?::\*\*|\*\*:)\s*"
    rf"|<(?P<irc>[^<>\s][^<>\n]{{0,30}})>\s+"
    rf"|(?P<plain>{_WHO}|(?<=[\]\s]){_LOWER})(?:\s+[\[(](?P<after>{_WHEN})[\])])?:\s+)"
    rf"(?P<text>\S.*)"
)
# A header: a line of its own with the name and when it was said, the text on
# the lines below: Discord's "Kate — Today at 10:42 AM", Slack's "Kate [10:42
# AM]" or "Kate  10:42 AM", Telegram's "Kate, [12.01.24 10:42]", Teams'
# "[10:42 AM] Kate Smith". The time is what tells it from a line of prose; a
# bare one after a plain name must be a clock time ("Version 1.2.3" is none).
_HEADER = re.compile(
    rf"(?P<n1>{_HEADER_WHO})\s+[—–-]\s+(?P<t1>{_WHEN})"
    rf"|(?P<n2>{_HEADER_WHO}),?\s+\[(?P<t2>{_WHEN})\]"
    rf"|(?P<n3>{_NAME})\s+(?P<t3>{_TIME})"
    rf"|\[(?P<t4>{_WHEN})\]\s+(?P<n4>{_NAME})"
)


@dataclass(frozen=True)
class SaidLine:
    speaker: str
    text: str  # empty for a header whose text is on the lines below it
    time: str | None  # the time (or id) the line carries, as written


def parse_said(line: str) -> SaidLine | None:
    """A transcript's line in any of the shapes chat logs export: ``Kate:
    hi``, ``[10:42] Kate: hi``, ``[D1:3] Kate: hi``, ``12/29/23, 10:42 PM -
    Kate: hi`` (WhatsApp), ``Kate (10:42 AM): hi``, ``kate_99: hi``,
    ``[10:42] kate: hi``, ``**Kate**: hi`` (Markdown), ``<Kate> hi`` (IRC), or
    a header alone on its line, the text below it: ``Kate [10:42 AM]`` (Slack), ``Kate — Today
    at 10:42 AM`` (Discord), ``[10:42 AM] Kate Smith`` (Teams), ``Kate,
    [12.01.24 10:42]`` (Telegram); else None. Whether a text made of such
    lines is a transcript is for :func:`is_transcript` to say (one ``Note:``
    line is not one)."""
    line = line.strip()
    m = _CHAT.fullmatch(line)
    if m is not None:
        who = m.group("bold") or m.group("irc") or m.group("plain")
        when = m.group("bracket") or m.group("stamp") or m.group("after")
        return SaidLine(who.strip().lstrip("@"), m.group("text"), when)
    h = _HEADER.fullmatch(line)
    if h is not None:
        n = next(i for i in range(1, 5) if h.group(f"n{i}"))
        return SaidLine(h.group(f"n{n}").strip().lstrip("@"), "", h.group(f"t{n}"))
    return None


def said_line(line: str) -> tuple[str, str] | None:
    """``(speaker, what they said)`` of a transcript's line (:func:`parse_said`),
    else None."""
    said = parse_said(line)
    return (said.speaker, said.text) if said else None


def is_turn(text: str) -> bool:
    """A turn of a transcript: a line said by someone, and the lines after
    it that no one says (a shared photo's caption, a second paragraph)."""
    groups = turns(text.strip().splitlines())
    return len(groups) == 1 and said_line(groups[0][0]) is not None


def turns(lines: list[str]) -> list[list[str]]:
    """Lines grouped by turn, in order: a said line opens a turn, and a line
    no one says joins the turn above it (the lines before the first said
    one are a group of their own; the line under a header alone is the
    header's text)."""
    out: list[list[str]] = []
    header = False  # the turn so far is a header alone (Slack's "Kate [10:42 AM]")
    for line in lines:
        said = None if header else parse_said(line)
        if not out or said is not None:
            out.append([])
        out[-1].append(line)
        # The line under a header is its text, whatever it looks like
        # ("Counter-Strike: Global Offensive was ..." is not a turn).
        header = said is not None and not said.text
    return out


def is_transcript(lines: list[str]) -> bool:
    """Lines that are a conversation, by their structure rather than one
    pattern: most of them are turns (a said line, or the text under a
    header of its own), and the speakers are a small set that recurs: at
    least two, at least one speaking twice, no more names than half the turns
    (or two).
    A document's ``Note:`` lines (one name), a list of ``Key: value`` pairs
    (each name once) or a poem (no turn) stay text."""
    said = [parse_said(ln) for ln in lines]
    covered = sum(
        s is not None or (i > 0 and (prev := said[i - 1]) is not None and not prev.text)
        for i, s in enumerate(said)
    )
    names = [s.speaker.casefold() for s in said if s is not None]
    distinct = set(names)
    return (
        2 * covered > len(lines)
        and len(distinct) >= 2
        and len(names) > len(distinct)
        and len(distinct) <= max(2, len(names) // 2)
    )


def passage_windows(text: str, target_tokens: int) -> list[str]:
    """A text of several lines longer than ``target_tokens`` cut into the
    passages the query's search finds and shows, in order, without overlap:
    a transcript (most of its lines said by someone, ``Name: ...``) by its
    :func:`turns`, as the same conversation remembered turn by turn is; any
    other text by its own structure, whole sections, paragraphs, lists and
    code blocks packed into windows of about that size (text_blocks.py). A
    line is never cut
    (one longer than that is a passage of its own), so a text of one line (a
    paragraph) is not cut, nor one that fits (an empty list).

    Why a transcript goes by turns: a window of several turns is found by the
    one that answers and costs the budget for all of them. On LoCoMo
    remembered session by session, windows of 200 tokens held 0.892 of the
    evidence, multi-hop 0.68; one window per turn 0.901, multi-hop 0.77, in
    fewer tokens (docs/retrieval.md)."""
    if target_tokens <= 0 or estimate_tokens(text) <= target_tokens:
        return []
    units = [line for line in text.splitlines() if line.strip()]
    if len(units) < 2:
        return []
    if is_transcript(units):
        return ["\n".join(t) for t in turns(units)]
    return pack(blocks(text), target_tokens)


def passage_text(text: str, speaker: str | None) -> str:
    """What a passage's vector and its words (the lexical search) hold: the
    text, after its speaker's name when it has one ("Melanie: I painted a
    sunset"), so that a question naming the speaker meets the text."""
    return f"{speaker}: {text}" if speaker else text


def plain_turn(text: str) -> str:
    """A turn's lines as ``Name: what was said``, the lines under its first
    kept (a photo's caption, a second paragraph; a header's text)."""
    first, *rest = text.strip().splitlines()
    said = parse_said(first)
    if said is None:
        return text
    lines = [said.text, *rest] if said.text else rest
    return f"{said.speaker}: " + "\n".join(ln.strip() for ln in lines)


def fact_text(relation: str, description: str) -> str:
    """What an edge's vector embeds: its relation and its sentence."""
    return f"{relation}: {description}" if description else relation
