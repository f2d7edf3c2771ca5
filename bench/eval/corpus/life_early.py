"""A life, part 1: who the user is and the people, places and things around
them (drawn once), then sessions 1 and 2 of the conversation."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from .model import Conversation, an
from .pools import (
    BOOKS,
    CITIES,
    COMPANIES,
    COWORKERS,
    FRIENDS,
    HOBBIES,
    JOBS,
    OLD_JOBS,
    PARTNERS,
    PET_NAMES,
    PETS,
    PROTAGONISTS,
    SCHOOLS,
    SIBLINGS,
    TRIP_CITIES,
)


def pick(rng: random.Random, pool: list[Any], used: set[Any]) -> Any:
    choice = rng.choice([p for p in pool if p not in used])
    used.add(choice)
    return choice


class Cast:
    """The choices of conversation ``n``, in the seed's order. Every name the
    later parts use is an attribute; the random draws happen in the order of
    the calls (``__init__``, then each part), which the corpus depends on."""

    def __init__(self, n: int, rng: random.Random, long: bool = False) -> None:
        self.n, self.rng, self.long = n, rng, long
        self.first, self.last, _pron = PROTAGONISTS[self.n]
        start = datetime(2024, 1, 8, tzinfo=UTC) + timedelta(days=5 * self.n)
        self.c = c = Conversation(
            f"c{self.n + 1:02d}", f"eval-{self.first.lower()}", rng, start, self.long
        )
        used: set[Any] = set()
        cities = [pick(rng, CITIES, used) for _ in range(7)]
        (
            self.home,
            self.old_home,
            self.new_home,
            self.sib_city,
            self.sib_city2,
            self.friend_city,
            self.hq_city,
        ) = cities
        self.trip_city = rng.choice(TRIP_CITIES)
        (
            self.employer,
            self.new_employer,
            self.sib_employer,
            self.friend_employer,
            self.friend_employer2,
        ) = (pick(rng, COMPANIES, used) for _ in range(5))
        self.job, self.sib_job = pick(rng, JOBS, used), pick(rng, JOBS, used)
        self.old_job, self.old_job_place = rng.choice(OLD_JOBS)
        self.species, self.breed = rng.choice(PETS)
        self.species2, self.breed2 = rng.choice([p for p in PETS if p[0] != self.species])
        self.pet, self.pet2, self.friend_pet = (pick(rng, PET_NAMES, used) for _ in range(3))
        self.hobby1, self.hobby2, self.hobby3 = (pick(rng, HOBBIES, used) for _ in range(3))
        self.book, self.author = BOOKS[(self.n * 5) % len(BOOKS)]
        self.sib_first, sib_pron = SIBLINGS[(self.n * 7 + 3) % len(SIBLINGS)]
        self.friend_full, self.nick, self.friend_pron = FRIENDS[(self.n * 5 + 1) % len(FRIENDS)]
        self.partner_first, self.partner_last, self.partner_pron = PARTNERS[
            (self.n * 7 + 2) % len(PARTNERS)
        ]
        self.coworker = COWORKERS[self.n % len(COWORKERS)]
        self.school = SCHOOLS[self.n % len(SCHOOLS)]
        self.sib_word = "sister" if sib_pron == "she" else "brother"
        self.sib_they = sib_pron
        self.friend_him = "her" if self.friend_pron == "she" else "him"
        self.years_together = rng.randint(2, 7)

        # Which changes this life goes through (varied per conversation).
        self.job_style = ("supersede", "ended")[self.n % 2]
        self.move_style = ("ended", "supersede")[(self.n // 2) % 2]
        self.pet_dies = self.n % 3 == 0
        self.engaged = self.n % 3 != 2
        self.sib_moves = self.n % 4 != 3
        # How the extractor describes the people around the user: by their tie to
        # the user ("Dana's brother") or by what they are ("software engineer").
        # The second leaves multi-hop questions to the similarity search.
        self.relational = self.n % 4 in (0, 3)
        self.hobby_again = self.n % 3 == 1
        self.sib_moves_back = self.n % 4 == 2

        self.me = c.ent("me", f"{self.first} {self.last}", "person", self.first)
        c.ent("employer", self.employer[0], "organization", self.employer[1])
        c.ent("new_employer", self.new_employer[0], "organization", self.new_employer[1])
        c.ent("home", self.home, "city")
        c.ent("job", self.job, "occupation")

    def early_sessions(self) -> None:
        c, rng = self.c, self.rng
        # ---------------------------------------------------------- session 1
        c.new_session((0, 0))
        opener = rng.choice(
            [
                f"Hi! I'm {self.first} {self.last}. I work as {an(self.job)} at {self.employer[0]} and I live in {self.home}.",
                f"Hello, {self.first} {self.last} here. Quick background: I'm {an(self.job)} at {self.employer[0]}, "
                f"based in {self.home}.",
                f"Hey there. My name is {self.first} {self.last}, I live in {self.home} and work at {self.employer[0]} "
                f"as {an(self.job)}.",
            ]
        )
        c.say(opener)
        c.mention(self.me, f"{self.first} {self.last}", f"the user, {an(self.job)}")
        c.mention("employer", self.employer[0], f"{self.first}'s employer")
        c.mention("home", self.home, "city")
        c.mention("job", self.job, "occupation")
        self.f_works = c.fact(
            self.me,
            "works_at",
            "employer",
            f"{self.first} {self.last} works at {self.employer[0]}.",
        )
        self.f_as = c.fact(
            self.me, "works_as", "job", f"{self.first} {self.last} works as {an(self.job)}."
        )
        self.f_home = c.fact(
            self.me, "lives_in", "home", f"{self.first} {self.last} lives in {self.home}."
        )
        c.filler()

        c.ent("pet", self.pet, "animal")
        c.say(
            rng.choice(
                [
                    f"My {self.breed} {self.pet} has been chewing on everything this week. Any tips?",
                    f"How do I get my {self.species} to stop barking at the mail carrier? {self.pet} is {an(self.breed)} "
                    "and very stubborn."
                    if self.species == "dog"
                    else f"How do I get my {self.species} to stop scratching the couch? {self.pet} is {an(self.breed)} and very "
                    "stubborn.",
                    f"{self.pet}, my {self.breed} {self.species}, refuses to eat the new food I bought. What should I try?",
                ]
            )
        )
        c.mention(self.me, self.first, "the user")
        c.mention("pet", self.pet, f"{self.first}'s {self.breed} {self.species}")
        self.f_pet = c.fact(
            self.me,
            "has_pet",
            "pet",
            f"{self.first} has {an(self.breed)} {self.species} named {self.pet}.",
        )

        c.ent("hobby1", self.hobby1, "activity")
        since = datetime(c.now.year - 1, rng.choice([3, 5, 9, 10]), 1, tzinfo=UTC)
        c.say(
            rng.choice(
                [
                    f"I've been doing {self.hobby1} twice a week since {since:%B} last year and I love it.",
                    f"Since {since:%B} last year I've been really into {self.hobby1}. Best decision ever.",
                ]
            )
        )
        c.mention(self.me, self.first, "the user")
        c.mention("hobby1", self.hobby1, "a hobby")
        self.f_hobby1 = c.fact(
            self.me, "enjoys", "hobby1", f"{self.first} does {self.hobby1} as a hobby.", since
        )

        c.ent("old_home", self.old_home, "city")
        self.y1 = c.now.year - rng.randint(8, 11)
        self.y2 = c.now.year - rng.randint(2, 5)
        c.say(
            rng.choice(
                [
                    f"Before moving to {self.home} I lived in {self.old_home} for a few years, from {self.y1} to {self.y2}.",
                    f"I lived in {self.old_home} from {self.y1} until {self.y2}, then came to {self.home}.",
                ]
            )
        )
        c.mention(self.me, self.first, "the user")
        c.mention("old_home", self.old_home, "city")
        c.mention("home", self.home, "city")
        self.f_old_home = c.fact(
            self.me,
            "lives_in",
            "old_home",
            f"{self.first} lived in {self.old_home}.",
            datetime(self.y1, 1, 1, tzinfo=UTC),
            datetime(self.y2, 1, 1, tzinfo=UTC),
        )

        c.ent("old_job_place", self.old_job_place, "organization")
        y3 = c.now.year - rng.randint(12, 16)
        c.say(
            f"Funny, in college I worked as {self.old_job} at {self.old_job_place}, from {y3} to {y3 + 2}. "
            "Completely different world."
        )
        c.mention(self.me, self.first, "the user")
        c.mention("old_job_place", self.old_job_place, f"where {self.first} worked in college")
        self.f_old_job = c.fact(
            self.me,
            "works_at",
            "old_job_place",
            f"{self.first} worked as {self.old_job} at {self.old_job_place} during college.",
            datetime(y3, 1, 1, tzinfo=UTC),
            datetime(y3 + 2, 1, 1, tzinfo=UTC),
        )
        c.filler()

        # ---------------------------------------------------------- session 2
        c.new_session((5, 12))
        self.sib_full = f"{self.sib_first} {self.last}"
        c.ent("sib", self.sib_full, "person", self.sib_first)
        c.ent("sib_city", self.sib_city, "city")
        c.ent("sib_employer", self.sib_employer[0], "organization", self.sib_employer[1])
        c.say(
            rng.choice(
                [
                    f"My {self.sib_word} {self.sib_full} is visiting this weekend from {self.sib_city}. "
                    f"{self.sib_they.capitalize()} works as {an(self.sib_job)} at {self.sib_employer[0]}.",
                    f"{self.sib_full}, my {self.sib_word}, flies in from {self.sib_city} on Friday. {self.sib_they.capitalize()}'s "
                    f"{an(self.sib_job)} at {self.sib_employer[0]} and never gets time off, so this is a big deal.",
                ]
            )
        )
        c.mention(self.me, self.first, "the user")
        c.mention(
            "sib",
            self.sib_full,
            f"{self.first}'s {self.sib_word}, {an(self.sib_job)}"
            if self.relational
            else self.sib_job,
        )
        c.mention("sib_city", self.sib_city, "city")
        c.mention("sib_employer", self.sib_employer[0], "company")
        self.f_sib = c.fact(
            self.me, "sibling_of", "sib", f"{self.sib_full} is {self.first}'s {self.sib_word}."
        )
        self.f_sib_city = c.fact(
            "sib", "lives_in", "sib_city", f"{self.sib_full} lives in {self.sib_city}."
        )
        self.f_sib_work = c.fact(
            "sib", "works_at", "sib_employer", f"{self.sib_full} works at {self.sib_employer[0]}."
        )
        c.say(f"What are some fun things to do with a visiting {self.sib_word} on a rainy weekend?")

        c.ent("friend", self.friend_full, "person", self.nick)
        c.ent("friend_city", self.friend_city, "city")
        c.ent("friend_employer", self.friend_employer[0], "organization", self.friend_employer[1])
        c.say(
            rng.choice(
                [
                    f"Had dinner with {self.friend_full} tonight, my old college roommate. Everyone calls "
                    f"{self.friend_him} {self.nick}. {self.friend_pron.capitalize()} lives in {self.friend_city} now and works at "
                    f"{self.friend_employer[0]}.",
                    f"Caught up with my college roommate {self.friend_full} (everyone calls {self.friend_him} {self.nick}). "
                    f"{self.friend_pron.capitalize()}'s living in {self.friend_city} and working for "
                    f"{self.friend_employer[0]}.",
                ]
            )
        )
        c.mention(self.me, self.first, "the user")
        c.mention(
            "friend",
            self.friend_full,
            f"{self.first}'s college roommate, known as {self.nick}"
            if self.relational
            else f"known as {self.nick}",
        )
        c.mention("friend_city", self.friend_city, "city")
        c.mention("friend_employer", self.friend_employer[0], "company")
        self.f_friend = c.fact(
            self.me,
            "friend_of",
            "friend",
            f"{self.friend_full} is {self.first}'s friend and former college roommate.",
        )
        self.f_friend_city = c.fact(
            "friend", "lives_in", "friend_city", f"{self.friend_full} lives in {self.friend_city}."
        )
        self.f_friend_work = c.fact(
            "friend",
            "works_at",
            "friend_employer",
            f"{self.friend_full} works at {self.friend_employer[0]}.",
        )

        c.ent("hq_city", self.hq_city, "city")
        c.say(
            rng.choice(
                [
                    f"{self.employer[1]} announced a reorg today. The headquarters in {self.hq_city} is making all "
                    "the decisions, as usual.",
                    f"Work news: {self.employer[1]} is flying everyone to the head office in {self.hq_city} for a "
                    "planning week.",
                ]
            )
        )
        c.mention(self.me, self.first, "the user")
        c.mention("employer", self.employer[1], "company")
        c.mention("hq_city", self.hq_city, "city")
        self.f_hq = c.fact(
            "employer",
            "headquartered_in",
            "hq_city",
            f"{self.employer[0]} is headquartered in {self.hq_city}.",
        )

        c.ent("book", self.book, "book")
        c.ent("author", self.author, "person")
        c.say(
            rng.choice(
                [
                    f"I'm halfway through {self.book} by {self.author} and I can't put it down.",
                    f"Just started reading {self.book}, the one by {self.author}. So far so good.",
                ]
            )
        )
        c.mention(self.me, self.first, "the user")
        c.mention("book", self.book, "a book")
        c.mention("author", self.author, "author")
        self.f_reading = c.fact(
            self.me, "is_reading", "book", f"{self.first} is reading {self.book}."
        )
        self.f_author = c.fact(
            "book", "written_by", "author", f"{self.book} was written by {self.author}."
        )
        c.filler()
