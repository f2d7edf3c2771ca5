"""A life, part 3: the questions about it, each with the gold facts it needs;
and ``build``, which draws one whole conversation."""

from __future__ import annotations

import random
from datetime import datetime

from .life_later import Later
from .model import Conversation


class Life(Later):
    def questions(self) -> None:
        c = self.c
        # --------------------------------------------------------- questions
        P, S, F, Pa = self.first, self.sib_first, self.nick, self.partner_first
        full = f"{self.first} {self.last}"
        cur_sib_city = self.f_sib_city3 or self.f_sib_city2 or self.f_sib_city
        old_sib_cities = [f for f in (self.f_sib_city, self.f_sib_city2) if f and f != cur_sib_city]
        hobbies_now = [f for f in (self.f_hobby1_again, self.f_hobby2, self.f_hobby3) if f]
        cur_partner = self.f_engaged or self.f_partner
        pets_now = [f for f in (self.f_pet, self.f_pet2) if f and c.facts[f].invalid_at is None]

        # single fact
        c.ask("single", f"What does {full} do for work?", [self.f_as])
        c.ask("single", f"Who is {P}'s {self.sib_word}?", [self.f_sib])
        c.ask("single", f"What book is {P} reading at the moment?", [self.f_reading])
        c.ask("single", f"Where does {self.partner_full} teach?", [self.f_partner_work])
        c.ask(
            "single",
            f"What is the name of {self.friend_full}'s {self.species2}?",
            [self.f_friend_pet],
        )
        if self.f_pet2:
            c.ask("single", f"What is the name of {P}'s {self.species2}?", [self.f_pet2])
        else:
            c.ask("single", f"Who is {P}'s coworker?", [self.f_cowork])

        # multi-hop (two hops)
        c.ask(
            "multi_hop",
            f"In which city does {P}'s {self.sib_word} live?",
            [self.f_sib, cur_sib_city],
        )
        c.ask("multi_hop", f"Where does {P}'s partner work?", [cur_partner, self.f_partner_work])
        c.ask(
            "multi_hop",
            f"Who wrote the book {P} is currently reading?",
            [self.f_reading, self.f_author],
        )
        c.ask(
            "multi_hop",
            f"Which company does {P}'s {self.sib_word} work for?",
            [self.f_sib, self.f_sib_work],
        )
        if self.job_style == "supersede":
            c.ask(
                "multi_hop",
                f"What is the name of the {self.species2} that belongs to {P}'s college roommate?",
                [self.f_friend, self.f_friend_pet],
            )
        else:
            c.ask(
                "multi_hop",
                f"Which city is the headquarters of {P}'s former employer in?",
                [self.f_works, self.f_hq],
            )

        # temporal: the past (ended facts) and the present next to it
        c.ask("temporal", f"Where did {P} live between {self.y1} and {self.y2}?", [self.f_old_home])
        c.ask("temporal", f"Where did {P} work while in college?", [self.f_old_job])
        c.ask("temporal", f"Which hobby did {P} give up?", [self.f_hobby1])
        c.ask("temporal", f"When did {P} start at {self.new_employer[0]}?", [self.f_new_works])
        if self.job_style == "ended":
            c.ask("temporal", f"Where did {P} work before {self.new_employer[1]}?", [self.f_works])
        if self.move_style == "ended":
            c.ask(
                "temporal", f"Where did {P} live before moving to {self.new_home}?", [self.f_home]
            )
            c.ask(
                "temporal",
                f"Where does {P} live now?",
                [self.f_new_home],
                tags=["current_next_to_ended"],
            )
        if self.pet_dies:
            c.ask("temporal", f"What was the name of {P}'s {self.species} that died?", [self.f_pet])
        elif self.f_engaged:
            c.ask("temporal", f"When did {P} and {Pa} get engaged?", [self.f_engaged])
        else:
            c.ask("temporal", f"Since when have {P} and {Pa} been together?", [self.f_partner])

        # changed facts: the old value superseded
        if self.job_style == "supersede":
            c.ask(
                "changed",
                f"Where does {P} work now?",
                [self.f_new_works],
                superseded=[self.f_works],
            )
        else:
            c.ask("changed", f"Who employs {full} these days?", [self.f_new_works])
        c.ask(
            "changed",
            f"Where does {self.friend_full} work now?",
            [self.f_friend_work2],
            superseded=[self.f_friend_work],
        )
        if self.move_style == "supersede":
            c.ask(
                "changed",
                f"Which city does {P} live in now?",
                [self.f_new_home],
                superseded=[self.f_home],
            )
        if self.sib_moves:
            c.ask(
                "changed",
                f"Where is {S} living these days?",
                [cur_sib_city],
                superseded=old_sib_cities,
                tags=["moved_back"] if self.f_sib_city3 else [],
            )
        if self.f_hobby1_again:
            c.ask(
                "temporal",
                f"Is {P} doing {self.hobby1} again?",
                [self.f_hobby1_again],
                tags=["resumed"],
            )
            c.ask("changed", f"Which hobbies does {full} have now?", hobbies_now, tags=["resumed"])
        if self.engaged:
            assert self.f_engaged
            c.ask(
                "changed",
                f"What is the current relationship status of {P} and {Pa}?",
                [self.f_engaged],
                superseded=[self.f_partner],
            )

        # the past: questions about a date (query's as_of), before and after a change
        def on(t: datetime) -> str:
            return f"{t:%B} {t.day}, {t.year}"

        t = c.between(self.f_works, self.f_new_works)
        c.ask(
            "past",
            f"Where did {P} work on {on(t)}?",
            [self.f_works],
            superseded=[self.f_new_works],
            as_of=t,
            tags=[f"job_{self.job_style}"],
        )
        t = c.after(self.f_new_works)
        c.ask(
            "past",
            f"Who was {P}'s employer on {on(t)}?",
            [self.f_new_works],
            superseded=[self.f_works],
            as_of=t,
            tags=[f"job_{self.job_style}"],
        )
        t = c.between(self.f_friend_work, self.f_friend_work2)
        c.ask(
            "past",
            f"Where was {F} working on {on(t)}?",
            [self.f_friend_work],
            superseded=[self.f_friend_work2],
            as_of=t,
            tags=["nickname"],
        )
        if self.move_style == "supersede":
            t = c.between(self.f_home, self.f_new_home)
            c.ask(
                "past",
                f"Which city did {P} live in on {on(t)}?",
                [self.f_home],
                superseded=[self.f_new_home],
                as_of=t,
            )
        if self.engaged:
            assert self.f_engaged
            t = c.between(self.f_partner, self.f_engaged)
            c.ask(
                "past",
                f"What was the relationship of {P} and {Pa} on {on(t)}?",
                [self.f_partner],
                superseded=[self.f_engaged],
                as_of=t,
            )

        # aliases and paraphrase
        c.ask("alias", f"Where does {F} live?", [self.f_friend_city], tags=["nickname"])
        c.ask("alias", f"Who is {F}'s employer now?", [self.f_friend_work2], tags=["nickname"])
        c.ask("alias", f"What does {P} do for fun these days?", hobbies_now, tags=["paraphrase"])
        if pets_now:
            c.ask("alias", f"What animals does {full} have at home?", pets_now, tags=["paraphrase"])
        else:
            c.ask(
                "alias",
                f"Which city is {full} based in these days?",
                [self.f_new_home],
                tags=["paraphrase"],
            )
        c.ask("alias", f"Where is {self.employer[1]} based?", [self.f_hq], tags=["short_name"])
        c.ask(
            "alias",
            f"Who is {Pa} dating?" if not self.engaged else f"Who is {Pa} going to marry?",
            [cur_partner],
            tags=["first_name"],
        )
        c.ask("alias", "What's my current job title?", [self.f_as], tags=["first_person"])

        # unanswerable: the memory has nothing on it
        c.ask("unanswerable", f"What is {P}'s favorite food?", [])
        c.ask("unanswerable", f"What car does {P} drive?", [])
        c.ask("unanswerable", f"Where did {S} go to university?", [])
        spouse = "wife" if self.friend_pron == "he" else "husband"
        c.ask("unanswerable", f"What is the name of {F}'s {spouse}?", [])

        # temporal, by date (appended last, so that the questions above keep their IDs):
        # "what did ... in <month>" and "when did ..."
        started = c.facts[self.f_hobby3].valid_at
        month = datetime.fromisoformat(started.replace("Z", "+00:00"))
        took_up = [f for f in hobbies_now if c.facts[f].valid_at[:7] == started[:7]]
        c.ask("temporal", f"What did {P} take up in {month:%B %Y}?", took_up, tags=["in_month"])
        c.ask(
            "temporal", f"When did {P} move to {self.new_home}?", [self.f_new_home], tags=["when"]
        )


def build(n: int, rng: random.Random, long: bool = False) -> Conversation:
    life = Life(n, rng, long)
    life.early_sessions()
    life.later_sessions()
    life.questions()
    return life.c
