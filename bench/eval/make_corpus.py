"""Generate the retrieval-evaluation corpus: bench/eval/corpus.json.

Deterministic (a fixed seed): run it again and the JSON is byte for byte the
same. Each conversation is one user's chat history over several sessions and
weeks: the user introduces themselves, their job, home, pets, hobbies, family,
friends (some with nicknames), and later changes jobs, moves, loses a pet or
gets engaged. Every message carries its gold extraction (the entities and
facts a careful LLM would extract, with their validity) and the facts it
supersedes; every question carries the gold facts it needs, by source,
relation, target and time (never by a row ID).

    .venv/bin/python bench/eval/make_corpus.py            # writes corpus.json
    .venv/bin/python bench/eval/make_corpus.py --check    # fails if it is stale
    .venv/bin/python bench/eval/make_corpus.py --long     # writes corpus_long.json

``--long`` makes the same conversations about ten times longer and ten times
slower: before every message the user also chats about other things (6 to 12
messages that state no fact, drawn from a separate random stream), and the
sessions are five times further apart (about ten months in all). The facts
and the questions are those of the short corpus; what grows is the history
that retrieval must see through, as with an agent that remembers every
message.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

SEED = 20240108
OUT = Path(__file__).with_name("corpus.json")
OUT_LONG = Path(__file__).with_name("corpus_long.json")
NOISE_PER_MESSAGE = (6, 12)  # --long: messages without a fact before each message
GAP_FACTOR_LONG = 5  # --long: sessions this many times further apart
CATEGORIES = ("single", "multi_hop", "temporal", "changed", "past", "alias", "unanswerable")

# ------------------------------------------------------------------ pools
PROTAGONISTS = [
    ("Dana", "Whitfield", "she"),
    ("Marcus", "Chen", "he"),
    ("Priya", "Raman", "she"),
    ("Tomas", "Alvarez", "he"),
    ("Leah", "Goldberg", "she"),
    ("Kenji", "Watanabe", "he"),
    ("Sofia", "Rossi", "she"),
    ("Olumide", "Adeyemi", "he"),
    ("Hannah", "Novak", "she"),
    ("Diego", "Morales", "he"),
    ("Grace", "Liu", "she"),
    ("Felix", "Brennan", "he"),
]
SIBLINGS = [("Maya", "she"), ("Ethan", "he"), ("Nora", "she"), ("Jonah", "he"), ("Clara", "she"),
            ("Omar", "he"), ("Ines", "she"), ("Theo", "he"), ("Ruth", "she"), ("Caleb", "he"),
            ("Vera", "she"), ("Isaac", "he")]
# Friends who go by a nickname that is not a part of their name.
FRIENDS = [("Robert Smith", "Bob", "he"), ("Elizabeth Moore", "Liz", "she"),
           ("William Hart", "Billy", "he"), ("Katherine Price", "Kit", "she"),
           ("Richard Doyle", "Rick", "he"), ("Margaret Kelly", "Maggie", "she"),
           ("Jonathan Reyes", "Jack", "he"), ("Patricia Quinn", "Trish", "she"),
           ("Alexander Brandt", "Sandy", "he"), ("Rebecca Stone", "Becky", "she"),
           ("Edward Walsh", "Ned", "he"), ("Susannah Cole", "Sukie", "she")]
PARTNERS = [("Sam", "Ortiz", "he"), ("Jordan", "Blake", "she"), ("Riley", "Park", "he"),
            ("Casey", "Morgan", "she"), ("Jamie", "Flores", "he"), ("Morgan", "Ellis", "she"),
            ("Taylor", "Brooks", "he"), ("Avery", "Kim", "she"), ("Quinn", "Harper", "he"),
            ("Drew", "Castillo", "she"), ("Rowan", "Hayes", "he"), ("Elliot", "Vance", "she")]
COWORKERS = ["Anika", "Lars", "Mateo", "Yusuf", "Bea", "Idris", "Wen", "Carmen", "Ravi", "Tova",
             "Hugo", "Lena"]
CITIES = ["Portland", "Denver", "Austin", "Boston", "Seattle", "Chicago", "Minneapolis",
          "Atlanta", "San Diego", "Pittsburgh", "Nashville", "Raleigh", "Phoenix", "Baltimore",
          "Sacramento", "Madison", "Tucson", "Richmond", "Columbus", "Salt Lake City",
          "Albuquerque", "Milwaukee", "Cincinnati", "Providence"]
TRIP_CITIES = ["Lisbon", "Toronto", "Dublin", "Berlin", "Montreal", "Copenhagen", "Kyoto",
               "Mexico City", "Edinburgh", "Vienna", "Oslo", "Prague"]
# (full name, the short name people use for it)
COMPANIES = [("Acme Corporation", "Acme"), ("Globex Industries", "Globex"),
             ("Northwind Traders", "Northwind"), ("Vandelay Industries", "Vandelay"),
             ("Initech Software", "Initech"), ("Umbrella Health", "Umbrella"),
             ("Cyberdyne Systems", "Cyberdyne"), ("Tyrell Robotics", "Tyrell"),
             ("Soylent Foods", "Soylent"), ("Wonka Confections", "Wonka"),
             ("Massive Dynamic", "Massive Dynamic"), ("Oceanic Airlines", "Oceanic"),
             ("Stark Logistics", "Stark"), ("Hooli Labs", "Hooli"), ("Monarch Bank", "Monarch"),
             ("Bluth Construction", "Bluth"), ("Pendant Publishing", "Pendant"),
             ("Dunder Paper", "Dunder"), ("Gekko Capital", "Gekko"), ("Nakatomi Trading", "Nakatomi"),
             ("Prestige Worldwide", "Prestige"), ("Sterling Cooper", "Sterling Cooper"),
             ("Wayne Biotech", "Wayne Biotech"), ("Rekall Travel", "Rekall")]
SCHOOLS = ["Lincoln High School", "Riverside Elementary", "Oakwood Middle School",
           "Jefferson Community College", "Maple Grove Academy", "Westfield High School",
           "Hillcrest Elementary", "Brookside Montessori", "Cedar Valley College",
           "Eastlake High School", "Harbor View Elementary", "Summit Charter School"]
JOBS = ["nurse", "software engineer", "accountant", "graphic designer", "data analyst",
        "pharmacist", "architect", "product manager", "paralegal", "physical therapist",
        "marketing manager", "electrician", "veterinarian", "civil engineer", "librarian",
        "financial analyst"]
OLD_JOBS = [("a barista", "Blue Bottle Cafe"), ("a lifeguard", "the Westside Aquatic Center"),
            ("a bookstore clerk", "Powell's Books"), ("a line cook", "Luigi's Trattoria"),
            ("a camp counselor", "Camp Tall Pines"), ("a bike courier", "Zoom Couriers"),
            ("a tutor", "Kumon"), ("a cashier", "Trader Joe's")]
PETS = [("dog", "golden retriever"), ("dog", "beagle"), ("dog", "border collie"),
        ("dog", "corgi"), ("cat", "tabby"), ("cat", "Maine Coon"), ("dog", "labrador"),
        ("cat", "Siamese"), ("rabbit", "lop-eared"), ("dog", "greyhound"), ("cat", "ginger"),
        ("dog", "dachshund")]
PET_NAMES = ["Biscuit", "Pepper", "Miso", "Juniper", "Waffles", "Luna", "Rocket", "Mochi",
             "Pickles", "Ziggy", "Olive", "Bruno", "Nacho", "Clementine", "Hazel", "Bandit",
             "Sprout", "Tofu", "Maple", "Gizmo", "Noodle", "Pixel", "Scout", "Fig", "Turnip",
             "Dumpling", "Pretzel", "Cosmo", "Marble", "Basil", "Ginger Snap", "Toast"]
HOBBIES = ["rock climbing", "pottery", "trail running", "chess", "salsa dancing", "birdwatching",
           "woodworking", "sourdough baking", "watercolor painting", "road cycling", "knitting",
           "film photography", "vegetable gardening", "kayaking", "jazz piano", "bouldering",
           "open water swimming", "calligraphy", "beekeeping", "fencing"]
BOOKS = [("The Overstory", "Richard Powers"), ("Piranesi", "Susanna Clarke"),
         ("Educated", "Tara Westover"), ("Project Hail Mary", "Andy Weir"),
         ("Circe", "Madeline Miller"), ("The Remains of the Day", "Kazuo Ishiguro"),
         ("Station Eleven", "Emily St. John Mandel"), ("Braiding Sweetgrass", "Robin Wall Kimmerer"),
         ("The Name of the Wind", "Patrick Rothfuss"), ("Middlemarch", "George Eliot"),
         ("The Left Hand of Darkness", "Ursula K. Le Guin"), ("Pachinko", "Min Jin Lee")]
FILLERS = [
    "Can you suggest something quick for dinner tonight? I have chickpeas, spinach and rice.",
    "What's a good way to stay focused when working from home?",
    "Thanks, that's really helpful!",
    "Any tips for falling asleep faster? I've been staring at the ceiling until 1am.",
    "Can you explain the difference between a Roth IRA and a traditional IRA?",
    "I need a gift idea for a coworker's farewell, something under thirty dollars.",
    "How long should I boil an egg if I want the yolk a little runny?",
    "Write me a short, polite email declining a meeting invite.",
    "What's the best way to get wine stains out of a cotton shirt?",
    "Ok, that makes sense. Let's pick this up tomorrow.",
    "Can you recommend a podcast for a long drive? Something about history maybe.",
    "How many cups are in a liter? I'm converting a recipe.",
    "Give me a 20 minute bodyweight workout I can do in a small apartment.",
    "What should I pack for a weekend camping trip in early spring?",
    "Haha, fair enough.",
    "Can you help me plan a budget for the month? Rent is the big one.",
    "What are some good questions to ask at the end of a job interview?",
    "Is it normal for a sourdough starter to smell like nail polish?",
    "Summarize the plot of Hamlet in three sentences, I forgot how it ends.",
    "How do I politely tell a neighbor their music is too loud?",
    "Good morning! Rough night, the storm kept me up.",
    "What's a good stretch for a stiff lower back?",
    "Remind me, what's the rule of thumb for tipping at a restaurant?",
    "I'm bored. Tell me a fun fact about octopuses.",
]

NOISE_TEMPLATES = [
    "Can you help me think through {t}?",
    "Quick question about {t}: where do I even start?",
    "I keep putting off {t}. Any motivation tips?",
    "What would you do about {t} if you were me?",
    "Give me a short checklist for {t}.",
    "Make a three-step plan for {t}, nothing fancy.",
    "Is it silly to spend a whole weekend on {t}?",
    "What's the most common mistake people make with {t}?",
    "Explain {t} to me like I'm twelve.",
    "I read an article about {t} today, it was surprisingly interesting.",
    "Can you write a haiku about {t}?",
    "How much time should I budget for {t}?",
    "Pros and cons of doing {t} this month?",
    "Any good beginner resources on {t}?",
    "Ok, back to {t}. What did we decide?",
    "Be honest: is {t} worth the effort?",
]
NOISE_TOPICS = [
    "tax forms", "a birthday party", "spring cleaning", "a road trip playlist", "meal prep",
    "a wedding toast", "learning Spanish", "a home office setup", "a retirement account",
    "fixing a leaky faucet", "a chess opening", "a history podcast", "composting",
    "a standing desk", "a car rental", "a houseplant that keeps dying", "a cover letter",
    "a board game night", "a budget spreadsheet", "winter tires", "a marathon training plan",
    "a phone upgrade", "a dentist appointment", "a photo album", "a noisy fridge",
    "a vegetarian lasagna", "a news summary", "a password manager", "a jigsaw puzzle",
    "a thank-you card",
]


# --------------------------------------------------------------- the model


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


# ------------------------------------------------------------------- plots


def pick(rng: random.Random, pool: list[Any], used: set[Any]) -> Any:
    choice = rng.choice([p for p in pool if p not in used])
    used.add(choice)
    return choice


def build(n: int, rng: random.Random, long: bool = False) -> Conversation:
    first, last, _pron = PROTAGONISTS[n]
    start = datetime(2024, 1, 8, tzinfo=UTC) + timedelta(days=5 * n)
    c = Conversation(f"c{n + 1:02d}", f"eval-{first.lower()}", rng, start, long)
    used: set[Any] = set()
    cities = [pick(rng, CITIES, used) for _ in range(7)]
    home, old_home, new_home, sib_city, sib_city2, friend_city, hq_city = cities
    trip_city = rng.choice(TRIP_CITIES)
    employer, new_employer, sib_employer, friend_employer, friend_employer2 = (
        pick(rng, COMPANIES, used) for _ in range(5))
    job, sib_job = pick(rng, JOBS, used), pick(rng, JOBS, used)
    old_job, old_job_place = rng.choice(OLD_JOBS)
    species, breed = rng.choice(PETS)
    species2, breed2 = rng.choice([p for p in PETS if p[0] != species])
    pet, pet2, friend_pet = (pick(rng, PET_NAMES, used) for _ in range(3))
    hobby1, hobby2, hobby3 = (pick(rng, HOBBIES, used) for _ in range(3))
    book, author = BOOKS[(n * 5) % len(BOOKS)]
    sib_first, sib_pron = SIBLINGS[(n * 7 + 3) % len(SIBLINGS)]
    friend_full, nick, friend_pron = FRIENDS[(n * 5 + 1) % len(FRIENDS)]
    partner_first, partner_last, partner_pron = PARTNERS[(n * 7 + 2) % len(PARTNERS)]
    coworker = COWORKERS[n % len(COWORKERS)]
    school = SCHOOLS[n % len(SCHOOLS)]
    sib_word = "sister" if sib_pron == "she" else "brother"
    sib_they = sib_pron
    friend_him = "her" if friend_pron == "she" else "him"
    years_together = rng.randint(2, 7)

    # Which changes this life goes through (varied per conversation).
    job_style = ("supersede", "ended")[n % 2]
    move_style = ("ended", "supersede")[(n // 2) % 2]
    pet_dies = n % 3 == 0
    engaged = n % 3 != 2
    sib_moves = n % 4 != 3
    # How the extractor describes the people around the user: by their tie to
    # the user ("Dana's brother") or by what they are ("software engineer").
    # The second leaves multi-hop questions to the similarity search.
    relational = n % 4 in (0, 3)
    hobby_again = n % 3 == 1
    sib_moves_back = n % 4 == 2

    me = c.ent("me", f"{first} {last}", "person", first)
    c.ent("employer", employer[0], "organization", employer[1])
    c.ent("new_employer", new_employer[0], "organization", new_employer[1])
    c.ent("home", home, "city")
    c.ent("job", job, "occupation")

    # ---------------------------------------------------------- session 1
    c.new_session((0, 0))
    opener = rng.choice([
        f"Hi! I'm {first} {last}. I work as {an(job)} at {employer[0]} and I live in {home}.",
        f"Hello, {first} {last} here. Quick background: I'm {an(job)} at {employer[0]}, "
        f"based in {home}.",
        f"Hey there. My name is {first} {last}, I live in {home} and work at {employer[0]} "
        f"as {an(job)}.",
    ])
    c.say(opener)
    c.mention(me, f"{first} {last}", f"the user, {an(job)}")
    c.mention("employer", employer[0], f"{first}'s employer")
    c.mention("home", home, "city")
    c.mention("job", job, "occupation")
    f_works = c.fact(me, "works_at", "employer", f"{first} {last} works at {employer[0]}.")
    f_as = c.fact(me, "works_as", "job", f"{first} {last} works as {an(job)}.")
    f_home = c.fact(me, "lives_in", "home", f"{first} {last} lives in {home}.")
    c.filler()

    c.ent("pet", pet, "animal")
    c.say(rng.choice([
        f"My {breed} {pet} has been chewing on everything this week. Any tips?",
        f"How do I get my {species} to stop barking at the mail carrier? {pet} is {an(breed)} "
        "and very stubborn." if species == "dog" else
        f"How do I get my {species} to stop scratching the couch? {pet} is {an(breed)} and very "
        "stubborn.",
        f"{pet}, my {breed} {species}, refuses to eat the new food I bought. What should I try?",
    ]))
    c.mention(me, first, "the user")
    c.mention("pet", pet, f"{first}'s {breed} {species}")
    f_pet = c.fact(me, "has_pet", "pet", f"{first} has {an(breed)} {species} named {pet}.")

    c.ent("hobby1", hobby1, "activity")
    since = datetime(c.now.year - 1, rng.choice([3, 5, 9, 10]), 1, tzinfo=UTC)
    c.say(rng.choice([
        f"I've been doing {hobby1} twice a week since {since:%B} last year and I love it.",
        f"Since {since:%B} last year I've been really into {hobby1}. Best decision ever.",
    ]))
    c.mention(me, first, "the user")
    c.mention("hobby1", hobby1, "a hobby")
    f_hobby1 = c.fact(me, "enjoys", "hobby1", f"{first} does {hobby1} as a hobby.", since)

    c.ent("old_home", old_home, "city")
    y1 = c.now.year - rng.randint(8, 11)
    y2 = c.now.year - rng.randint(2, 5)
    c.say(rng.choice([
        f"Before moving to {home} I lived in {old_home} for a few years, from {y1} to {y2}.",
        f"I lived in {old_home} from {y1} until {y2}, then came to {home}.",
    ]))
    c.mention(me, first, "the user")
    c.mention("old_home", old_home, "city")
    c.mention("home", home, "city")
    f_old_home = c.fact(me, "lives_in", "old_home", f"{first} lived in {old_home}.",
                        datetime(y1, 1, 1, tzinfo=UTC), datetime(y2, 1, 1, tzinfo=UTC))

    c.ent("old_job_place", old_job_place, "organization")
    y3 = c.now.year - rng.randint(12, 16)
    c.say(f"Funny, in college I worked as {old_job} at {old_job_place}, from {y3} to {y3 + 2}. "
          "Completely different world.")
    c.mention(me, first, "the user")
    c.mention("old_job_place", old_job_place, f"where {first} worked in college")
    f_old_job = c.fact(me, "works_at", "old_job_place",
                       f"{first} worked as {old_job} at {old_job_place} during college.",
                       datetime(y3, 1, 1, tzinfo=UTC), datetime(y3 + 2, 1, 1, tzinfo=UTC))
    c.filler()

    # ---------------------------------------------------------- session 2
    c.new_session((5, 12))
    sib_full = f"{sib_first} {last}"
    c.ent("sib", sib_full, "person", sib_first)
    c.ent("sib_city", sib_city, "city")
    c.ent("sib_employer", sib_employer[0], "organization", sib_employer[1])
    c.say(rng.choice([
        f"My {sib_word} {sib_full} is visiting this weekend from {sib_city}. "
        f"{sib_they.capitalize()} works as {an(sib_job)} at {sib_employer[0]}.",
        f"{sib_full}, my {sib_word}, flies in from {sib_city} on Friday. {sib_they.capitalize()}'s "
        f"{an(sib_job)} at {sib_employer[0]} and never gets time off, so this is a big deal.",
    ]))
    c.mention(me, first, "the user")
    c.mention("sib", sib_full, f"{first}'s {sib_word}, {an(sib_job)}" if relational else sib_job)
    c.mention("sib_city", sib_city, "city")
    c.mention("sib_employer", sib_employer[0], "company")
    f_sib = c.fact(me, "sibling_of", "sib", f"{sib_full} is {first}'s {sib_word}.")
    f_sib_city = c.fact("sib", "lives_in", "sib_city", f"{sib_full} lives in {sib_city}.")
    f_sib_work = c.fact("sib", "works_at", "sib_employer",
                        f"{sib_full} works at {sib_employer[0]}.")
    c.say(f"What are some fun things to do with a visiting {sib_word} on a rainy weekend?")

    c.ent("friend", friend_full, "person", nick)
    c.ent("friend_city", friend_city, "city")
    c.ent("friend_employer", friend_employer[0], "organization", friend_employer[1])
    c.say(rng.choice([
        f"Had dinner with {friend_full} tonight, my old college roommate. Everyone calls "
        f"{friend_him} {nick}. {friend_pron.capitalize()} lives in {friend_city} now and works at "
        f"{friend_employer[0]}.",
        f"Caught up with my college roommate {friend_full} (everyone calls {friend_him} {nick}). "
        f"{friend_pron.capitalize()}'s living in {friend_city} and working for "
        f"{friend_employer[0]}.",
    ]))
    c.mention(me, first, "the user")
    c.mention("friend", friend_full, f"{first}'s college roommate, known as {nick}" if relational
              else f"known as {nick}")
    c.mention("friend_city", friend_city, "city")
    c.mention("friend_employer", friend_employer[0], "company")
    f_friend = c.fact(me, "friend_of", "friend",
                      f"{friend_full} is {first}'s friend and former college roommate.")
    f_friend_city = c.fact("friend", "lives_in", "friend_city",
                           f"{friend_full} lives in {friend_city}.")
    f_friend_work = c.fact("friend", "works_at", "friend_employer",
                           f"{friend_full} works at {friend_employer[0]}.")

    c.ent("hq_city", hq_city, "city")
    c.say(rng.choice([
        f"{employer[1]} announced a reorg today. The headquarters in {hq_city} is making all "
        "the decisions, as usual.",
        f"Work news: {employer[1]} is flying everyone to the head office in {hq_city} for a "
        "planning week.",
    ]))
    c.mention(me, first, "the user")
    c.mention("employer", employer[1], "company")
    c.mention("hq_city", hq_city, "city")
    f_hq = c.fact("employer", "headquartered_in", "hq_city",
                  f"{employer[0]} is headquartered in {hq_city}.")

    c.ent("book", book, "book")
    c.ent("author", author, "person")
    c.say(rng.choice([
        f"I'm halfway through {book} by {author} and I can't put it down.",
        f"Just started reading {book}, the one by {author}. So far so good.",
    ]))
    c.mention(me, first, "the user")
    c.mention("book", book, "a book")
    c.mention("author", author, "author")
    f_reading = c.fact(me, "is_reading", "book", f"{first} is reading {book}.")
    f_author = c.fact("book", "written_by", "author", f"{book} was written by {author}.")
    c.filler()

    # ---------------------------------------------------------- session 3
    c.new_session((7, 16))
    partner_full = f"{partner_first} {partner_last}"
    c.ent("partner", partner_full, "person", partner_first)
    c.ent("school", school, "organization")
    together_since = datetime(c.now.year - years_together, c.now.month, 1, tzinfo=UTC)
    c.say(rng.choice([
        f"{partner_full} and I celebrated {years_together} years together this weekend! "
        f"{partner_pron.capitalize()} teaches at {school}, so we went out after the school "
        "concert.",
        f"Anniversary dinner tonight: {years_together} years with {partner_full}. "
        f"{partner_pron.capitalize()} finally got a night off from grading at {school}.",
    ]))
    c.mention(me, first, "the user")
    c.mention("partner", partner_full, f"{first}'s partner, a teacher" if relational
              else f"teacher at {school}")
    c.mention("school", school, "school")
    f_partner = c.fact(me, "in_relationship_with", "partner",
                       f"{first} and {partner_full} are a couple.", together_since)
    f_partner_work = c.fact("partner", "works_at", "school", f"{partner_full} teaches at {school}.")

    c.ent("coworker", coworker, "person")
    c.ent("trip_city", trip_city, "city")
    c.say(f"My coworker {coworker} just got back from a conference in {trip_city} and "
          "won't stop talking about the food.")
    c.mention(me, first, "the user")
    c.mention("coworker", coworker, f"{first}'s coworker")
    c.mention("trip_city", trip_city, "city")
    f_cowork = c.fact(me, "works_with", "coworker", f"{coworker} is {first}'s coworker.")
    c.fact("coworker", "visited", "trip_city",
                    f"{coworker} went to a conference in {trip_city}.",
                    day(c.now) - timedelta(days=3))

    c.ent("hobby2", hobby2, "activity")
    c.say(rng.choice([
        f"Signed up for {an(hobby2)} class on Thursday evenings. First one was tonight!",
        f"I finally tried {hobby2} this week and I'm hooked, I signed up for a weekly class.",
    ]))
    c.mention(me, first, "the user")
    c.mention("hobby2", hobby2, "a hobby")
    f_hobby2 = c.fact(me, "enjoys", "hobby2", f"{first} takes a weekly {hobby2} class.")
    c.filler()

    c.ent("friend_pet", friend_pet, "animal")
    c.say(rng.choice([
        f"{nick} finally adopted {an(species2)}! {friend_pron.capitalize()} named it {friend_pet}.",
        f"Guess who has {an(breed2)} {species2} now? {nick}! Its name is {friend_pet}.",
    ]))
    c.mention("friend", nick, f"{first}'s friend" if relational else "")
    c.mention("friend_pet", friend_pet, f"{nick}'s {species2}")
    f_friend_pet = c.fact("friend", "has_pet", "friend_pet",
                          f"{nick} adopted {an(species2)} named {friend_pet}.")
    c.say(f"What's a good housewarming gift for someone who just got {an(species2)}?")

    # ---------------------------------------------------------- session 4
    c.new_session((10, 20))
    f_new_works: str
    if job_style == "supersede":
        monday = day(c.now) + timedelta(days=7 - c.now.weekday())
        c.say(rng.choice([
            f"Big news: I accepted an offer from {new_employer[0]}! I start there on Monday.",
            f"I said yes to {new_employer[0]}! Starting Monday, wish me luck.",
        ]))
        c.mention(me, first, "the user")
        c.mention("new_employer", new_employer[0], f"{first}'s new employer")
        f_new_works = c.fact(me, "works_at", "new_employer",
                             f"{first} works at {new_employer[0]}.", monday)
        c.supersede(f_works, f_new_works)
    else:
        c.say(rng.choice([
            f"Today was my last day at {employer[1]}. Bittersweet, I'll miss the team.",
            f"Handed in my badge at {employer[1]} today, that chapter is over.",
        ]))
        c.mention(me, first, "the user")
        c.mention("employer", employer[1], f"{first}'s former employer")
        c.end(f_works, c.now, f"{first} no longer works at {employer[0]}.")
        c.filler()
        c.say(rng.choice([
            f"Starting at {new_employer[0]} next week, I'm nervous but excited.",
            f"Signed the contract with {new_employer[0]}. First day is next Monday!",
        ]))
        monday = day(c.now) + timedelta(days=7 - c.now.weekday())
        c.mention(me, first, "the user")
        c.mention("new_employer", new_employer[0], f"{first}'s new employer")
        f_new_works = c.fact(me, "works_at", "new_employer",
                             f"{first} works at {new_employer[0]}.", monday)

    c.say(rng.choice([
        f"I gave up {hobby1}, my shoulder can't take it anymore.",
        f"I quit {hobby1} last month. No time for it with everything going on.",
    ]))
    c.mention(me, first, "the user")
    c.mention("hobby1", hobby1, "a hobby")
    ended_hobby = day(c.now) if "shoulder" in c.messages[-1].text else (
        day(c.now).replace(day=1) - timedelta(days=1)).replace(day=1)
    c.end(f_hobby1, ended_hobby, f"{first} stopped doing {hobby1}.")

    f_sib_city2: str | None = None
    if sib_moves:
        c.ent("sib_city2", sib_city2, "city")
        moved = day(c.now) - timedelta(days=7)
        c.say(rng.choice([
            f"{sib_first} moved to {sib_city2} last week. Now I have an excuse to visit!",
            f"{sib_first} just relocated to {sib_city2}, the move was last week.",
        ]))
        c.mention("sib", sib_first, f"{first}'s {sib_word}" if relational else "")
        c.mention("sib_city2", sib_city2, "city")
        f_sib_city2 = c.fact("sib", "lives_in", "sib_city2",
                             f"{sib_full} lives in {sib_city2}.", moved)
        c.supersede(f_sib_city, f_sib_city2)
    c.filler()

    f_pet2: str | None = None
    if pet_dies:
        c.say(f"We had to say goodbye to {pet} yesterday. The house feels so empty.")
        c.mention(me, first, "the user")
        c.mention("pet", pet, f"{first}'s {species}")
        c.end(f_pet, day(c.now) - timedelta(days=1), f"{first}'s {species} {pet} died.")
    else:
        c.ent("pet2", pet2, "animal")
        c.say(f"We adopted a second pet! A little {breed2} {species2} called {pet2}. {pet} is "
              "not sure about it yet.")
        c.mention(me, first, "the user")
        c.mention("pet2", pet2, f"{first}'s {breed2} {species2}")
        c.mention("pet", pet, f"{first}'s {species}")
        f_pet2 = c.fact(me, "has_pet", "pet2", f"{first} has {an(breed2)} {species2} named {pet2}.")

    # ---------------------------------------------------------- session 5
    c.new_session((14, 30))
    c.ent("new_home", new_home, "city")
    moved_at = day(c.now) - timedelta(days=c.now.day - 1)  # the 1st of this month
    if move_style == "supersede":
        c.say(rng.choice([
            f"We're finally all unpacked in {new_home}! The new neighborhood is lovely.",
            f"Living in {new_home} now and honestly the commute is so much better.",
        ]))
        c.mention(me, first, "the user")
        c.mention("new_home", new_home, "city")
        f_new_home = c.fact(me, "lives_in", "new_home", f"{first} lives in {new_home}.")
        c.supersede(f_home, f_new_home)
    else:
        c.say(f"I moved out of {home} at the start of the month, I live in {new_home} now.")
        c.mention(me, first, "the user")
        c.mention("home", home, "city")
        c.mention("new_home", new_home, "city")
        c.end(f_home, moved_at, f"{first} moved out of {home}.")
        f_new_home = c.fact(me, "lives_in", "new_home", f"{first} lives in {new_home}.",
                            moved_at)

    c.ent("friend_employer2", friend_employer2[0], "organization", friend_employer2[1])
    c.say(rng.choice([
        f"{nick} just started a new job at {friend_employer2[0]}, so proud of {friend_him}.",
        f"Quick update on {nick}: {friend_pron}'s working at {friend_employer2[0]} now.",
    ]))
    c.mention("friend", nick, f"{first}'s friend" if relational else "")
    c.mention("friend_employer2", friend_employer2[0], "company")
    f_friend_work2 = c.fact("friend", "works_at", "friend_employer2",
                            f"{nick} works at {friend_employer2[0]}.")
    c.supersede(f_friend_work, f_friend_work2)
    c.say(f"{nick} is still in {friend_city} though, {friend_pron} says the new job is remote.")
    c.mention("friend", nick, f"{first}'s friend" if relational else "")
    c.mention("friend_city", friend_city, "city")
    c.restate(f_friend_city, f"{nick} lives in {friend_city}.")
    c.filler()

    # A hobby given up and picked up again: a new fact, not the old one restated.
    f_hobby1_again: str | None = None
    if hobby_again:
        c.say(rng.choice([
            f"I'm back to {hobby1}! Took a break, but I missed it too much.",
            f"Started {hobby1} again this week, it feels great to be back.",
        ]))
        c.mention(me, first, "the user")
        c.mention("hobby1", hobby1, "a hobby")
        f_hobby1_again = c.fact(me, "enjoys", "hobby1", f"{first} does {hobby1} again.")

    # The sibling moves back to the first city: the old fact was superseded.
    f_sib_city3: str | None = None
    if sib_moves_back:
        assert f_sib_city2
        back = day(c.now) - timedelta(days=4)
        c.say(f"{sib_first} didn't like {sib_city2} and moved back to {sib_city} a few days ago.")
        c.mention("sib", sib_first, f"{first}'s {sib_word}" if relational else "")
        c.mention("sib_city2", sib_city2, "city")
        c.mention("sib_city", sib_city, "city")
        f_sib_city3 = c.fact("sib", "lives_in", "sib_city", f"{sib_full} lives in {sib_city} again.",
                             back)
        c.supersede(f_sib_city2, f_sib_city3)

    f_engaged: str | None = None
    if engaged:
        c.say(rng.choice([
            f"{partner_first} proposed last night and I said yes!! We're engaged!",
            f"Big personal news: {partner_first} and I got engaged over the weekend.",
        ]))
        c.mention(me, first, "the user")
        c.mention("partner", partner_first, f"{first}'s fiance" if relational else "")
        f_engaged = c.fact(me, "engaged_to", "partner",
                           f"{first} is engaged to {partner_full}.", day(c.now) - timedelta(days=1))
        c.supersede(f_partner, f_engaged)

    c.ent("hobby3", hobby3, "activity")
    c.say(f"{partner_first} got me into {hobby3}, we go every Sunday morning now.")
    c.mention(me, first, "the user")
    c.mention("partner", partner_first, f"{first}'s partner" if relational else "")
    c.mention("hobby3", hobby3, "a hobby")
    f_hobby3 = c.fact(me, "enjoys", "hobby3", f"{first} does {hobby3} every Sunday.")
    c.fact("partner", "enjoys", "hobby3", f"{partner_full} does {hobby3}.")
    c.say(f"Also, {sib_first} and {partner_first} are planning a surprise for my birthday, "
          "I'm not supposed to know. Act natural if I ask about it.")
    c.mention("sib", sib_first, f"{first}'s {sib_word}" if relational else "")
    c.mention("partner", partner_first, f"{first}'s partner" if relational else "")
    c.fact("sib", "plans_surprise_with", "partner",
                        f"{sib_first} and {partner_first} are planning a surprise party for "
                        f"{first}'s birthday.")
    c.filler()

    # --------------------------------------------------------- questions
    P, S, F, Pa = first, sib_first, nick, partner_first
    full = f"{first} {last}"
    cur_sib_city = f_sib_city3 or f_sib_city2 or f_sib_city
    old_sib_cities = [f for f in (f_sib_city, f_sib_city2) if f and f != cur_sib_city]
    hobbies_now = [f for f in (f_hobby1_again, f_hobby2, f_hobby3) if f]
    cur_partner = f_engaged or f_partner
    pets_now = [f for f in (f_pet, f_pet2) if f and c.facts[f].invalid_at is None]

    # single fact
    c.ask("single", f"What does {full} do for work?", [f_as])
    c.ask("single", f"Who is {P}'s {sib_word}?", [f_sib])
    c.ask("single", f"What book is {P} reading at the moment?", [f_reading])
    c.ask("single", f"Where does {partner_full} teach?", [f_partner_work])
    c.ask("single", f"What is the name of {friend_full}'s {species2}?", [f_friend_pet])
    if f_pet2:
        c.ask("single", f"What is the name of {P}'s {species2}?", [f_pet2])
    else:
        c.ask("single", f"Who is {P}'s coworker?", [f_cowork])

    # multi-hop (two hops)
    c.ask("multi_hop", f"In which city does {P}'s {sib_word} live?", [f_sib, cur_sib_city])
    c.ask("multi_hop", f"Where does {P}'s partner work?", [cur_partner, f_partner_work])
    c.ask("multi_hop", f"Who wrote the book {P} is currently reading?", [f_reading, f_author])
    c.ask("multi_hop", f"Which company does {P}'s {sib_word} work for?", [f_sib, f_sib_work])
    if job_style == "supersede":
        c.ask("multi_hop", f"What is the name of the {species2} that belongs to {P}'s college "
              "roommate?", [f_friend, f_friend_pet])
    else:
        c.ask("multi_hop", f"Which city is the headquarters of {P}'s former employer in?",
              [f_works, f_hq])

    # temporal: the past (ended facts) and the present next to it
    c.ask("temporal", f"Where did {P} live between {y1} and {y2}?", [f_old_home])
    c.ask("temporal", f"Where did {P} work while in college?", [f_old_job])
    c.ask("temporal", f"Which hobby did {P} give up?", [f_hobby1])
    c.ask("temporal", f"When did {P} start at {new_employer[0]}?", [f_new_works])
    if job_style == "ended":
        c.ask("temporal", f"Where did {P} work before {new_employer[1]}?", [f_works])
    if move_style == "ended":
        c.ask("temporal", f"Where did {P} live before moving to {new_home}?", [f_home])
        c.ask("temporal", f"Where does {P} live now?", [f_new_home],
              tags=["current_next_to_ended"])
    if pet_dies:
        c.ask("temporal", f"What was the name of {P}'s {species} that died?", [f_pet])
    elif f_engaged:
        c.ask("temporal", f"When did {P} and {Pa} get engaged?", [f_engaged])
    else:
        c.ask("temporal", f"Since when have {P} and {Pa} been together?", [f_partner])

    # changed facts: the old value superseded
    if job_style == "supersede":
        c.ask("changed", f"Where does {P} work now?", [f_new_works], superseded=[f_works])
    else:
        c.ask("changed", f"Who employs {full} these days?", [f_new_works])
    c.ask("changed", f"Where does {friend_full} work now?", [f_friend_work2],
          superseded=[f_friend_work])
    if move_style == "supersede":
        c.ask("changed", f"Which city does {P} live in now?", [f_new_home], superseded=[f_home])
    if sib_moves:
        c.ask("changed", f"Where is {S} living these days?", [cur_sib_city],
              superseded=old_sib_cities, tags=["moved_back"] if f_sib_city3 else [])
    if f_hobby1_again:
        c.ask("temporal", f"Is {P} doing {hobby1} again?", [f_hobby1_again], tags=["resumed"])
        c.ask("changed", f"Which hobbies does {full} have now?", hobbies_now, tags=["resumed"])
    if engaged:
        assert f_engaged
        c.ask("changed", f"What is the current relationship status of {P} and {Pa}?",
              [f_engaged], superseded=[f_partner])

    # the past: questions about a date (query's as_of), before and after a change
    def on(t: datetime) -> str:
        return f"{t:%B} {t.day}, {t.year}"

    t = c.between(f_works, f_new_works)
    c.ask("past", f"Where did {P} work on {on(t)}?", [f_works], superseded=[f_new_works],
          as_of=t, tags=[f"job_{job_style}"])
    t = c.after(f_new_works)
    c.ask("past", f"Who was {P}'s employer on {on(t)}?", [f_new_works], superseded=[f_works],
          as_of=t, tags=[f"job_{job_style}"])
    t = c.between(f_friend_work, f_friend_work2)
    c.ask("past", f"Where was {F} working on {on(t)}?", [f_friend_work],
          superseded=[f_friend_work2], as_of=t, tags=["nickname"])
    if move_style == "supersede":
        t = c.between(f_home, f_new_home)
        c.ask("past", f"Which city did {P} live in on {on(t)}?", [f_home],
              superseded=[f_new_home], as_of=t)
    if engaged:
        assert f_engaged
        t = c.between(f_partner, f_engaged)
        c.ask("past", f"What was the relationship of {P} and {Pa} on {on(t)}?", [f_partner],
              superseded=[f_engaged], as_of=t)

    # aliases and paraphrase
    c.ask("alias", f"Where does {F} live?", [f_friend_city], tags=["nickname"])
    c.ask("alias", f"Who is {F}'s employer now?", [f_friend_work2], tags=["nickname"])
    c.ask("alias", f"What does {P} do for fun these days?",
          hobbies_now, tags=["paraphrase"])
    if pets_now:
        c.ask("alias", f"What animals does {full} have at home?", pets_now, tags=["paraphrase"])
    else:
        c.ask("alias", f"Which city is {full} based in these days?", [f_new_home],
              tags=["paraphrase"])
    c.ask("alias", f"Where is {employer[1]} based?", [f_hq], tags=["short_name"])
    c.ask("alias", f"Who is {Pa} dating?" if not engaged else f"Who is {Pa} going to marry?",
          [cur_partner], tags=["first_name"])
    c.ask("alias", "What's my current job title?", [f_as], tags=["first_person"])

    # unanswerable: the memory has nothing on it
    c.ask("unanswerable", f"What is {P}'s favorite food?", [])
    c.ask("unanswerable", f"What car does {P} drive?", [])
    c.ask("unanswerable", f"Where did {S} go to university?", [])
    spouse = "wife" if friend_pron == "he" else "husband"
    c.ask("unanswerable", f"What is the name of {F}'s {spouse}?", [])

    # temporal, by date (appended last, so that the questions above keep their IDs):
    # "what did ... in <month>" and "when did ..."
    started = c.facts[f_hobby3].valid_at
    month = datetime.fromisoformat(started.replace("Z", "+00:00"))
    took_up = [f for f in hobbies_now if c.facts[f].valid_at[:7] == started[:7]]
    c.ask("temporal", f"What did {P} take up in {month:%B %Y}?", took_up, tags=["in_month"])
    c.ask("temporal", f"When did {P} move to {new_home}?", [f_new_home], tags=["when"])
    return c


def generate(long: bool = False) -> dict[str, Any]:
    rng = random.Random(SEED)
    convs = [build(n, rng, long) for n in range(len(PROTAGONISTS))]
    texts = [m.text for c in convs for m in c.messages]
    assert len(texts) == len(set(texts)), "message texts must be unique (the fake matches them)"
    data = [c.export() for c in convs]
    return {
        "description": "Retrieval-evaluation corpus for gligabao, generated by "
                       "bench/eval/make_corpus.py (do not edit by hand).",
        "seed": SEED,
        "conversations": data,
    }


def render(corpus: dict[str, Any]) -> str:
    return json.dumps(corpus, indent=1, ensure_ascii=False) + "\n"


def summary(corpus: dict[str, Any]) -> str:
    convs = corpus["conversations"]
    msgs = [len(c["messages"]) for c in convs]
    qs = [q for c in convs for q in c["questions"]]
    by_cat = {cat: sum(1 for q in qs if q["category"] == cat) for cat in CATEGORIES}
    facts = sum(len(c["facts"]) for c in convs)
    sup = sum(1 for c in convs for f in c["facts"] if f["superseded_by"])
    return (f"{len(convs)} conversations, {sum(msgs)} messages ({min(msgs)}-{max(msgs)} each), "
            f"{facts} facts ({sup} superseded), {len(qs)} questions: "
            + ", ".join(f"{k} {v}" for k, v in by_cat.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the corpus is stale")
    parser.add_argument("--long", action="store_true", help="the long corpus (corpus_long.json)")
    args = parser.parse_args()
    corpus = generate(args.long)
    out = OUT_LONG if args.long else OUT
    text = render(corpus)
    if args.check:
        if not out.exists() or out.read_text() != text:
            print(f"{out} is stale: run bench/eval/make_corpus.py", file=sys.stderr)
            return 1
        print(f"{out.name} is up to date:", summary(corpus))
        return 0
    out.write_text(text)
    print(f"wrote {out}:", summary(corpus))
    return 0


if __name__ == "__main__":
    sys.exit(main())
