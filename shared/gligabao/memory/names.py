"""Entity resolution's name rules: whether two names can be one entity, and
why. Pure functions, no I/O (the nickname list is read once, lazily).

An embedding match only makes a candidate; a merge needs one of these
reasons, or the model's word (``MODEL``):

* ``SAME_NAME``: equal once case, accents, punctuation, whitespace, a
  possessive, a leading title ("Dr.") or article ("The") and a trailing
  corporate form ("Inc.", "Corp") are folded away.
* ``ALIAS``: the new name is the stored one with parts left out, the
  first part kept ("Alice" after "Alice Johnson", "Umbrella" after
  "Umbrella Health"), or with a part in a known short or long form ("Bob"
  for "Robert", from the maintained list of the ``nicknames`` package) or
  as an initial ("J. Smith" for "John Smith"), and no part conflicts.

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
_kind("food", "food fruit vegetable dish meal drink beverage ingredient")
_kind("work", "book novel film movie song album show series podcast painting artwork poem play")
_kind("event", "event meeting party wedding conference holiday festival concert trip")
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


def _token_match(new: str, stored: str, personal: bool) -> Literal["equal", "weak", "form", ""]:
    """How a word of the new name stands for a word of the stored one: the
    same word; its initial ("weak": never enough alone); a known short or
    long form of it. Never the other way round for an initial: a stored
    "J." is no more John than Jane."""
    if new == stored:
        return "equal"
    if not personal:
        return ""
    if len(new) == 1 and stored.startswith(new):
        return "weak"
    if stored in nickname_forms(new):
        return "form"
    return ""


def match_reason(new_name: str, new_type: str, stored_name: str, stored_type: str) -> Reason | None:
    """Why a new name is a stored entity (``SAME_NAME``, ``ALIAS``), or None.

    Not symmetric: the stored name must say at least as much as the new one.
    The stored entity keeps its name, so a stored "Dan" that took in "Dan
    Haas" would take in "Dan Brown" next; "Dan Haas" stored takes in "Dan"
    and nothing that conflicts with Haas."""
    if types_conflict(new_type, stored_type):
        return None
    new, stored = parts(new_name), parts(stored_name)
    if not new.tokens or not stored.tokens or new.generation != stored.generation:
        return None
    if new.tokens == stored.tokens:
        return SAME_NAME
    if len(new.tokens) > len(stored.tokens):
        return None
    kind = kinds(new_type) | kinds(stored_type)
    if len(new.tokens) < len(stored.tokens) and kind and kind <= {"place"}:
        # A place's name with a part left out is another place: Mexico and
        # Mexico City, York and New York.
        return None
    # Short forms and initials are a person's: "A. Bank" is not Acme Bank.
    personal = not kind or "person" in kind
    # Each word of the new name stands for a word of the stored one, in
    # order, and both start alike: "Haas" is not Dan Haas (it could be Hal).
    matches: list[str] = []
    i = 0
    for word in new.tokens:
        while i < len(stored.tokens):
            m = _token_match(word, stored.tokens[i], personal)
            i += 1
            if m:
                matches.append(m)
                break
            if not matches:  # the first words must match each other
                return None
        else:
            return None
    return ALIAS if any(m in ("equal", "form") for m in matches) else None


def best_match(name: str, type_: str, candidates: Iterable[Entity]) -> tuple[Entity, Reason] | None:
    """The one stored entity a new name is, by the strongest reason (the
    same name before an alias); None when none fits, or when two fit
    equally well ("Alice" with Alice Johnson and Alice Smith stored: a guess
    would merge two people half the time)."""
    found: dict[Reason, dict[int, Entity]] = {}
    for c in candidates:
        reason = match_reason(name, type_, c.name, c.type)
        if reason is not None:
            found.setdefault(reason, {})[c.id] = c
    strongest: tuple[Reason, ...] = (SAME_NAME, ALIAS)
    for why in strongest:
        fits = found.get(why, {})
        if len(fits) == 1:
            return next(iter(fits.values())), why
        if fits:
            return None
    return None
