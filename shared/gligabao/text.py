"""Text helpers shared by remember and query: normalization, terms, chunks."""

from __future__ import annotations

import functools
import re
import unicodedata

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
_SAID = re.compile(r"([A-Z][\w.'’\- ]{0,40}?|user|assistant|system|human|ai|bot|tool):\s+(\S.*)")


def said_line(line: str) -> tuple[str, str] | None:
    """``(speaker, what they said)`` of a ``Name: ...`` line, else None."""
    m = _SAID.fullmatch(line.strip())
    return (m.group(1), m.group(2)) if m else None


def is_turn(text: str) -> bool:
    """A turn of a transcript: a line said by someone, and the lines after
    it that no one says (a shared photo's caption, a second paragraph)."""
    groups = turns(text.strip().splitlines())
    return len(groups) == 1 and said_line(groups[0][0]) is not None


def turns(lines: list[str]) -> list[list[str]]:
    """Lines grouped by turn, in order: a said line opens a turn, and a line
    no one says joins the turn above it (the lines before the first said
    one are a group of their own)."""
    out: list[list[str]] = []
    for line in lines:
        if not out or said_line(line) is not None:
            out.append([])
        out[-1].append(line)
    return out


def passage_windows(text: str, target_tokens: int) -> list[str]:
    """A text of several lines longer than ``target_tokens`` cut into the
    passages the query's search finds and shows, in order, without overlap:
    a transcript (most of its lines said by someone, ``Name: ...``) by its
    :func:`turns`, as the same conversation remembered turn by turn is; any
    other text by runs of its lines of about that size. A line is never cut
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
    if 2 * sum(said_line(u) is not None for u in units) > len(units):
        return ["\n".join(t) for t in turns(units)]
    windows: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        t = estimate_tokens(unit) + 1
        if current and size + t > target_tokens:
            windows.append("\n".join(current))
            current, size = [], 0
        current.append(unit)
        size += t
    if current:
        windows.append("\n".join(current))
    return windows


def passage_text(text: str, speaker: str | None) -> str:
    """What a passage's vector and its words (the lexical search) hold: the
    text, after its speaker's name when it has one ("Melanie: I painted a
    sunset"), so that a question naming the speaker meets the text."""
    return f"{speaker}: {text}" if speaker else text


def fact_text(relation: str, description: str) -> str:
    """What an edge's vector embeds: its relation and its sentence."""
    return f"{relation}: {description}" if description else relation
