"""A life, part 2: sessions 3 to 5, where jobs change, people move, a pet
may die and an engagement may happen."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from .life_early import Cast
from .model import an, day


class Later(Cast):
    def later_sessions(self) -> None:
        c, rng = self.c, self.rng
        # ---------------------------------------------------------- session 3
        c.new_session((7, 16))
        self.partner_full = f"{self.partner_first} {self.partner_last}"
        c.ent("partner", self.partner_full, "person", self.partner_first)
        c.ent("school", self.school, "organization")
        together_since = datetime(c.now.year - self.years_together, c.now.month, 1, tzinfo=UTC)
        c.say(
            rng.choice(
                [
                    f"{self.partner_full} and I celebrated {self.years_together} years together this weekend! "
                    f"{self.partner_pron.capitalize()} teaches at {self.school}, so we went out after the school "
                    "concert.",
                    f"Anniversary dinner tonight: {self.years_together} years with {self.partner_full}. "
                    f"{self.partner_pron.capitalize()} finally got a night off from grading at {self.school}.",
                ]
            )
        )
        c.mention(self.me, self.first, "the user")
        c.mention(
            "partner",
            self.partner_full,
            f"{self.first}'s partner, a teacher"
            if self.relational
            else f"teacher at {self.school}",
        )
        c.mention("school", self.school, "school")
        self.f_partner = c.fact(
            self.me,
            "in_relationship_with",
            "partner",
            f"{self.first} and {self.partner_full} are a couple.",
            together_since,
        )
        self.f_partner_work = c.fact(
            "partner", "works_at", "school", f"{self.partner_full} teaches at {self.school}."
        )

        c.ent("coworker", self.coworker, "person")
        c.ent("trip_city", self.trip_city, "city")
        c.say(
            f"My coworker {self.coworker} just got back from a conference in {self.trip_city} and "
            "won't stop talking about the food."
        )
        c.mention(self.me, self.first, "the user")
        c.mention("coworker", self.coworker, f"{self.first}'s coworker")
        c.mention("trip_city", self.trip_city, "city")
        self.f_cowork = c.fact(
            self.me, "works_with", "coworker", f"{self.coworker} is {self.first}'s coworker."
        )
        c.fact(
            "coworker",
            "visited",
            "trip_city",
            f"{self.coworker} went to a conference in {self.trip_city}.",
            day(c.now) - timedelta(days=3),
        )

        c.ent("hobby2", self.hobby2, "activity")
        c.say(
            rng.choice(
                [
                    f"Signed up for {an(self.hobby2)} class on Thursday evenings. First one was tonight!",
                    f"I finally tried {self.hobby2} this week and I'm hooked, I signed up for a weekly class.",
                ]
            )
        )
        c.mention(self.me, self.first, "the user")
        c.mention("hobby2", self.hobby2, "a hobby")
        self.f_hobby2 = c.fact(
            self.me, "enjoys", "hobby2", f"{self.first} takes a weekly {self.hobby2} class."
        )
        c.filler()

        c.ent("friend_pet", self.friend_pet, "animal")
        c.say(
            rng.choice(
                [
                    f"{self.nick} finally adopted {an(self.species2)}! {self.friend_pron.capitalize()} named it {self.friend_pet}.",
                    f"Guess who has {an(self.breed2)} {self.species2} now? {self.nick}! Its name is {self.friend_pet}.",
                ]
            )
        )
        c.mention("friend", self.nick, f"{self.first}'s friend" if self.relational else "")
        c.mention("friend_pet", self.friend_pet, f"{self.nick}'s {self.species2}")
        self.f_friend_pet = c.fact(
            "friend",
            "has_pet",
            "friend_pet",
            f"{self.nick} adopted {an(self.species2)} named {self.friend_pet}.",
        )
        c.say(f"What's a good housewarming gift for someone who just got {an(self.species2)}?")

        # ---------------------------------------------------------- session 4
        c.new_session((10, 20))
        self.f_new_works: str
        if self.job_style == "supersede":
            monday = day(c.now) + timedelta(days=7 - c.now.weekday())
            c.say(
                rng.choice(
                    [
                        f"Big news: I accepted an offer from {self.new_employer[0]}! I start there on Monday.",
                        f"I said yes to {self.new_employer[0]}! Starting Monday, wish me luck.",
                    ]
                )
            )
            c.mention(self.me, self.first, "the user")
            c.mention("new_employer", self.new_employer[0], f"{self.first}'s new employer")
            self.f_new_works = c.fact(
                self.me,
                "works_at",
                "new_employer",
                f"{self.first} works at {self.new_employer[0]}.",
                monday,
            )
            c.supersede(self.f_works, self.f_new_works)
        else:
            c.say(
                rng.choice(
                    [
                        f"Today was my last day at {self.employer[1]}. Bittersweet, I'll miss the team.",
                        f"Handed in my badge at {self.employer[1]} today, that chapter is over.",
                    ]
                )
            )
            c.mention(self.me, self.first, "the user")
            c.mention("employer", self.employer[1], f"{self.first}'s former employer")
            c.end(self.f_works, c.now, f"{self.first} no longer works at {self.employer[0]}.")
            c.filler()
            c.say(
                rng.choice(
                    [
                        f"Starting at {self.new_employer[0]} next week, I'm nervous but excited.",
                        f"Signed the contract with {self.new_employer[0]}. First day is next Monday!",
                    ]
                )
            )
            monday = day(c.now) + timedelta(days=7 - c.now.weekday())
            c.mention(self.me, self.first, "the user")
            c.mention("new_employer", self.new_employer[0], f"{self.first}'s new employer")
            self.f_new_works = c.fact(
                self.me,
                "works_at",
                "new_employer",
                f"{self.first} works at {self.new_employer[0]}.",
                monday,
            )

        c.say(
            rng.choice(
                [
                    f"I gave up {self.hobby1}, my shoulder can't take it anymore.",
                    f"I quit {self.hobby1} last month. No time for it with everything going on.",
                ]
            )
        )
        c.mention(self.me, self.first, "the user")
        c.mention("hobby1", self.hobby1, "a hobby")
        ended_hobby = (
            day(c.now)
            if "shoulder" in c.messages[-1].text
            else (day(c.now).replace(day=1) - timedelta(days=1)).replace(day=1)
        )
        c.end(self.f_hobby1, ended_hobby, f"{self.first} stopped doing {self.hobby1}.")

        self.f_sib_city2: str | None = None
        if self.sib_moves:
            c.ent("sib_city2", self.sib_city2, "city")
            moved = day(c.now) - timedelta(days=7)
            c.say(
                rng.choice(
                    [
                        f"{self.sib_first} moved to {self.sib_city2} last week. Now I have an excuse to visit!",
                        f"{self.sib_first} just relocated to {self.sib_city2}, the move was last week.",
                    ]
                )
            )
            c.mention(
                "sib", self.sib_first, f"{self.first}'s {self.sib_word}" if self.relational else ""
            )
            c.mention("sib_city2", self.sib_city2, "city")
            self.f_sib_city2 = c.fact(
                "sib", "lives_in", "sib_city2", f"{self.sib_full} lives in {self.sib_city2}.", moved
            )
            c.supersede(self.f_sib_city, self.f_sib_city2)
        c.filler()

        self.f_pet2: str | None = None
        if self.pet_dies:
            c.say(f"We had to say goodbye to {self.pet} yesterday. The house feels so empty.")
            c.mention(self.me, self.first, "the user")
            c.mention("pet", self.pet, f"{self.first}'s {self.species}")
            c.end(
                self.f_pet,
                day(c.now) - timedelta(days=1),
                f"{self.first}'s {self.species} {self.pet} died.",
            )
        else:
            c.ent("pet2", self.pet2, "animal")
            c.say(
                f"We adopted a second pet! A little {self.breed2} {self.species2} called {self.pet2}. {self.pet} is "
                "not sure about it yet."
            )
            c.mention(self.me, self.first, "the user")
            c.mention("pet2", self.pet2, f"{self.first}'s {self.breed2} {self.species2}")
            c.mention("pet", self.pet, f"{self.first}'s {self.species}")
            self.f_pet2 = c.fact(
                self.me,
                "has_pet",
                "pet2",
                f"{self.first} has {an(self.breed2)} {self.species2} named {self.pet2}.",
            )

        # ---------------------------------------------------------- session 5
        c.new_session((14, 30))
        c.ent("new_home", self.new_home, "city")
        moved_at = day(c.now) - timedelta(days=c.now.day - 1)  # the 1st of this month
        if self.move_style == "supersede":
            c.say(
                rng.choice(
                    [
                        f"We're finally all unpacked in {self.new_home}! The new neighborhood is lovely.",
                        f"Living in {self.new_home} now and honestly the commute is so much better.",
                    ]
                )
            )
            c.mention(self.me, self.first, "the user")
            c.mention("new_home", self.new_home, "city")
            self.f_new_home = c.fact(
                self.me, "lives_in", "new_home", f"{self.first} lives in {self.new_home}."
            )
            c.supersede(self.f_home, self.f_new_home)
        else:
            c.say(
                f"I moved out of {self.home} at the start of the month, I live in {self.new_home} now."
            )
            c.mention(self.me, self.first, "the user")
            c.mention("home", self.home, "city")
            c.mention("new_home", self.new_home, "city")
            c.end(self.f_home, moved_at, f"{self.first} moved out of {self.home}.")
            self.f_new_home = c.fact(
                self.me, "lives_in", "new_home", f"{self.first} lives in {self.new_home}.", moved_at
            )

        c.ent(
            "friend_employer2", self.friend_employer2[0], "organization", self.friend_employer2[1]
        )
        c.say(
            rng.choice(
                [
                    f"{self.nick} just started a new job at {self.friend_employer2[0]}, so proud of {self.friend_him}.",
                    f"Quick update on {self.nick}: {self.friend_pron}'s working at {self.friend_employer2[0]} now.",
                ]
            )
        )
        c.mention("friend", self.nick, f"{self.first}'s friend" if self.relational else "")
        c.mention("friend_employer2", self.friend_employer2[0], "company")
        self.f_friend_work2 = c.fact(
            "friend",
            "works_at",
            "friend_employer2",
            f"{self.nick} works at {self.friend_employer2[0]}.",
        )
        c.supersede(self.f_friend_work, self.f_friend_work2)
        c.say(
            f"{self.nick} is still in {self.friend_city} though, {self.friend_pron} says the new job is remote."
        )
        c.mention("friend", self.nick, f"{self.first}'s friend" if self.relational else "")
        c.mention("friend_city", self.friend_city, "city")
        c.restate(self.f_friend_city, f"{self.nick} lives in {self.friend_city}.")
        c.filler()

        # A hobby given up and picked up again: a new fact, not the old one restated.
        self.f_hobby1_again: str | None = None
        if self.hobby_again:
            c.say(
                rng.choice(
                    [
                        f"I'm back to {self.hobby1}! Took a break, but I missed it too much.",
                        f"Started {self.hobby1} again this week, it feels great to be back.",
                    ]
                )
            )
            c.mention(self.me, self.first, "the user")
            c.mention("hobby1", self.hobby1, "a hobby")
            self.f_hobby1_again = c.fact(
                self.me, "enjoys", "hobby1", f"{self.first} does {self.hobby1} again."
            )

        # The sibling moves back to the first city: the old fact was superseded.
        self.f_sib_city3: str | None = None
        if self.sib_moves_back:
            assert self.f_sib_city2
            back = day(c.now) - timedelta(days=4)
            c.say(
                f"{self.sib_first} didn't like {self.sib_city2} and moved back to {self.sib_city} a few days ago."
            )
            c.mention(
                "sib", self.sib_first, f"{self.first}'s {self.sib_word}" if self.relational else ""
            )
            c.mention("sib_city2", self.sib_city2, "city")
            c.mention("sib_city", self.sib_city, "city")
            self.f_sib_city3 = c.fact(
                "sib",
                "lives_in",
                "sib_city",
                f"{self.sib_full} lives in {self.sib_city} again.",
                back,
            )
            c.supersede(self.f_sib_city2, self.f_sib_city3)

        self.f_engaged: str | None = None
        if self.engaged:
            c.say(
                rng.choice(
                    [
                        f"{self.partner_first} proposed last night and I said yes!! We're engaged!",
                        f"Big personal news: {self.partner_first} and I got engaged over the weekend.",
                    ]
                )
            )
            c.mention(self.me, self.first, "the user")
            c.mention(
                "partner", self.partner_first, f"{self.first}'s fiance" if self.relational else ""
            )
            self.f_engaged = c.fact(
                self.me,
                "engaged_to",
                "partner",
                f"{self.first} is engaged to {self.partner_full}.",
                day(c.now) - timedelta(days=1),
            )
            c.supersede(self.f_partner, self.f_engaged)

        c.ent("hobby3", self.hobby3, "activity")
        c.say(f"{self.partner_first} got me into {self.hobby3}, we go every Sunday morning now.")
        c.mention(self.me, self.first, "the user")
        c.mention(
            "partner", self.partner_first, f"{self.first}'s partner" if self.relational else ""
        )
        c.mention("hobby3", self.hobby3, "a hobby")
        self.f_hobby3 = c.fact(
            self.me, "enjoys", "hobby3", f"{self.first} does {self.hobby3} every Sunday."
        )
        c.fact("partner", "enjoys", "hobby3", f"{self.partner_full} does {self.hobby3}.")
        c.say(
            f"Also, {self.sib_first} and {self.partner_first} are planning a surprise for my birthday, "
            "I'm not supposed to know. Act natural if I ask about it."
        )
        c.mention(
            "sib", self.sib_first, f"{self.first}'s {self.sib_word}" if self.relational else ""
        )
        c.mention(
            "partner", self.partner_first, f"{self.first}'s partner" if self.relational else ""
        )
        c.fact(
            "sib",
            "plans_surprise_with",
            "partner",
            f"{self.sib_first} and {self.partner_first} are planning a surprise party for "
            f"{self.first}'s birthday.",
        )
        c.filler()
