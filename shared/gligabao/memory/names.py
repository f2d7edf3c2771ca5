"""Entity resolution's name rules: whether two names can be one entity, and
why. Pure functions, no I/O (the nickname list is read once, lazily).

An embedding match only makes a candidate; a merge needs one of these
reasons, or the model's word (``MODEL``):

* ``SAME_NAME``: equal once case, accents, punctuation, whitespace, a
  possessive, a leading title ("Dr.") or article ("The") and a trailing
  corporate form ("Inc.", "Corp") are folded away.
* ``ALIAS``: one name is the other with parts left out, the first part
  kept ("Alice" / "Alice Johnson", "Umbrella" / "Umbrella Health"), or parts
  differ only by a known short form ("Bob" / "Robert", from the maintained
  list of the ``nicknames`` package) or an initial ("J. Smith" /
  "John Smith"), and no part conflicts.

Never a reason: two parts that differ (Dan / Hal, Maria / Mario, Bank /
Foods), different kinds of thing (a person and a place), different
generations (John Smith / John Smith Jr.).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Final, Literal

from ..models import Entity
from ..text import normalize_name

Reason = Literal["same name", "alias", "model"]
SAME_NAME: Final = "same name"
ALIAS: Final = "alias"
MODEL: Final = "model"

# Legal forms dropped from the end of a name: "Acme Inc." is Acme.
CORPORATE = frozenset(
    """inc incorporated corp corporation co company ltd limited llc llp lp plc gmbh ag sa
    sas srl spa bv nv pty pvt oy ab kk""".split()
)
TITLES = frozenset("mr mrs ms miss mx dr prof sir dame madam lord lady".split())
ARTICLES = frozenset({"the"})
# Generation marks: John Smith Jr. and John Smith Sr. are father and son.
GENERATIONS = frozenset("jr junior sr senior ii iii iv".split())

# Kinds of thing a type word names. Two types conflict when their kinds
# share nothing; a type word outside this table (event, concept, hobby...)
# names no kind and conflicts with none: a duplicate is cheaper than a wrong
# merge, but an unknown word is no evidence of a different thing.
_KINDS: dict[str, frozenset[str]] = {}


def _kind(kind: str, words: str) -> None:
    for w in words.split():
        _KINDS[w] = _KINDS.get(w, frozenset()) | {kind}


_kind(
    "person",
    """person people human individual man woman boy girl child kid baby adult user speaker
    friend relative family sibling brother sister mother father mom dad parent son daughter
    husband wife partner spouse fiance fiancee colleague coworker boss manager author writer
    artist musician doctor teacher student roommate neighbor neighbour character""",
)
_kind(
    "organization",
    """organization organisation org company business corporation firm employer institution
    agency startup nonprofit charity bank publisher brand team club band government ministry
    department group lab laboratory""",
)
_kind(
    "place",
    """place location city country region town village state province continent landmark
    address neighborhood neighbourhood county district island river lake mountain park
    street area suburb capital planet""",
)
_kind("animal", "animal pet dog cat bird horse fish rabbit hamster puppy kitten parrot")
# Venues are both an organization and a place: either type fits them.
for _venue in """school university college hospital clinic restaurant cafe bar pub store shop
    hotel museum library gym church office factory airport station stadium theater theatre
    venue bakery""".split():
    _KINDS[_venue] = frozenset({"organization", "place"})


def kinds(type_: str) -> frozenset[str]:
    """The kinds a type word names (empty: unknown, conflicts with none)."""
    return _KINDS.get(normalize_name(type_), frozenset())


def types_conflict(a: str, b: str) -> bool:
    ka, kb = kinds(a), kinds(b)
    return bool(ka and kb and not ka & kb)


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_POSSESSIVE = re.compile(r"(?:'|’)s\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class NameParts:
    tokens: tuple[str, ...]  # the name's words, folded, without title, article, legal form
    generation: frozenset[str]  # its generation marks (jr, sr, ii...)


def parts(name: str) -> NameParts:
    """The words that identify a name (see the module doc); never empties
    a name that is nothing but a title or a legal form."""
    tokens = normalize_name(_fold(_POSSESSIVE.sub("", name.strip()))).split()
    generation = frozenset(t for t in tokens if t in GENERATIONS)
    core = [t for t in tokens if t not in GENERATIONS] or tokens
    while len(core) > 1 and core[0] in TITLES | ARTICLES:
        core = core[1:]
    while len(core) > 1 and core[-1] in CORPORATE:
        core = core[:-1]
    return NameParts(tuple(core), generation)


@cache
def _nicknames() -> dict[str, frozenset[str]]:
    """Each given name with the names it is a short or long form of, in
    either direction, one step only: chaining steps would join Alexander and
    Alexandra through Alex."""
    from nicknames import name_triplets

    related: dict[str, set[str]] = {}
    for t in name_triplets():
        a, b = t.name1.strip().casefold(), t.name2.strip().casefold()
        if a and b and a != b:
            related.setdefault(a, set()).add(b)
            related.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in related.items()}


def nickname_forms(word: str) -> frozenset[str]:
    """The known short and long forms of a given name ("bob": robert, rob, ...)."""
    return _nicknames().get(word.casefold(), frozenset())


def _token_match(short: str, long: str, personal: bool) -> Literal["equal", "weak", "form", ""]:
    """How one word of a name stands for one of the other: the same word; an
    initial ("weak": never enough alone); a known nickname."""
    if short == long:
        return "equal"
    if not personal:
        return ""
    if len(short) == 1 and long.startswith(short):
        return "weak"
    if len(long) == 1 and short.startswith(long):
        return "weak"
    if long in nickname_forms(short):
        return "form"
    return ""


def match_reason(a_name: str, a_type: str, b_name: str, b_type: str) -> Reason | None:
    """Why two names are one entity (``SAME_NAME``, ``ALIAS``), or None."""
    found = _match(a_name, a_type, b_name, b_type)
    return found[0] if found else None


def _match(a_name: str, a_type: str, b_name: str, b_type: str) -> tuple[Reason, int] | None:
    """The reason and how many words back it (the shorter name's)."""
    if types_conflict(a_type, b_type):
        return None
    pa, pb = parts(a_name), parts(b_name)
    if not pa.tokens or not pb.tokens or pa.generation != pb.generation:
        return None
    if pa.tokens == pb.tokens:
        return SAME_NAME, len(pa.tokens)
    kind = kinds(a_type) | kinds(b_type)
    # Short forms and initials are a person's: "A. Bank" is not Acme Bank.
    personal = not kind or "person" in kind
    short, long = sorted((pa.tokens, pb.tokens), key=len)
    if len(short) < len(long) and kind and kind <= {"place"}:
        # A place's name with a part left out is another place: Mexico and
        # Mexico City, York and New York.
        return None
    # Each word of the shorter name stands for a word of the longer, in
    # order, and both start alike: "Haas" is not Dan Haas (it could be Hal).
    matches: list[str] = []
    i = 0
    for word in short:
        while i < len(long):
            m = _token_match(word, long[i], personal)
            i += 1
            if m:
                matches.append(m)
                break
            if not matches:  # the first words must match each other
                return None
        else:
            return None
    if any(m in ("equal", "form") for m in matches):
        return ALIAS, len(short)
    return None


def best_match(name: str, type_: str, candidates: Iterable[Entity]) -> tuple[Entity, Reason] | None:
    """The one stored entity the name is, by the strongest reason, then by
    the most words matched ("Alice Marie Johnson" is Alice Johnson rather
    than Alice); None when none fits, or when two fit equally well
    ("Alice" with Alice Johnson and Alice Smith stored: a guess would merge
    two people half the time)."""
    rank = {SAME_NAME: 1, ALIAS: 0}
    scored: dict[int, tuple[tuple[int, int], Entity]] = {}
    for c in candidates:
        found = _match(name, type_, c.name, c.type)
        if found is not None:
            scored[c.id] = ((rank[found[0]], found[1]), c)
    if not scored:
        return None
    best = max(s for s, _ in scored.values())
    top = [c for s, c in scored.values() if s == best]
    if len(top) > 1:
        return None
    return top[0], SAME_NAME if best[0] else ALIAS
