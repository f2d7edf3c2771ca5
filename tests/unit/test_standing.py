"""The rule that keeps a user's standing statements without extraction, and
the notes' share of the context: best first by the question's vector, never
past their share."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gligabao.memory.notes_context import Note, notes_for, render
from gligabao.memory.standing import ranked, recognise
from gligabao.models import DatasetKey, Edge
from gligabao.notes.port import Standing, Summary
from gligabao.text import estimate_tokens


@pytest.mark.parametrize(
    ("text", "speaker", "kind"),
    [
        (
            "Always include data encryption details when I ask about data privacy.",
            "user",
            "instruction",
        ),
        ("From now on, give me distances in metric units.", "user", "instruction"),
        ("I prefer a balanced approach, using AI for efficiency.", "user", "preference"),
        ("Please remember that I never eat pork.", None, "instruction"),
        ("Never suggest paid tools to me.", "user", "instruction"),
        ("I want you to make sure to list the prices.", "user", "instruction"),
        # No plan of the user's before the marker, or a request phrased as a question.
        (
            "When I ask about privacy make sure to include encryption details.",
            "user",
            "instruction",
        ),
        ("I am vegetarian so please keep in mind that I don't eat meat.", "user", "instruction"),
        ("I have a small budget so remember that when recommending.", "user", "instruction"),
        ("Will you keep in mind that I'm vegan?", "user", "instruction"),
        ("Never suggest paid tools ok?", "user", "instruction"),
        # One stated marker is enough, whatever the sentences around it.
        ("Can you help with my list? From now on, give me the page counts.", "user", "instruction"),
        ("I've never tried Allbirds. I prefer a sleek, modern look.", "user", "preference"),
        (
            "I prefer e-books for their portability, can you help me find a balance?",
            "user",
            "preference",
        ),
    ],
)
def test_standing_statements_are_recognised(text: str, speaker: str | None, kind: str) -> None:
    assert recognise(text, speaker) == kind


@pytest.mark.parametrize(
    ("text", "speaker"),
    [
        ("I will always use kilometres from now on.", "assistant"),  # not the user's
        ("We went hiking on Saturday and cooked pasta.", "user"),  # no standing marker
        ("The committee always meets on Mondays.", "user"),  # not first person, no imperative
        ("I always " + "really " * 200 + "like it.", "user"),  # a report, not a statement
        # Narrated, not stated: an experience, an option, the user's own plan or memory.
        ("I've never met Kelly at any book club event.", "user"),
        ("I have never returned any sneakers due to fit issues.", "user"),
        ("They fit my interests, and I can always look for something new later.", "user"),
        ("Thanks! I'll make sure to ask everyone about their allergies.", "user"),
        ("I'll reach out to Lily soon and make sure to ask about her diet.", "user"),
        ("And yeah, I'll keep in mind that they might not suit rough trails.", "user"),
        ("I'm returning them, but I remember that Nike offers no returns on these.", "user"),
        # A question: the marker is asked about, not stated.
        ("The stream lagged at 720p. What can I do to avoid this in the future?", "user"),
        ("In the future, what can I do to avoid this?", "user"),  # a marker of time, asked
        ("Going forward, should I use the budget sheet or the app?", "user"),
        ("I’ve never met Kelly at any book club event.", "user"),  # a curly apostrophe
        ("We should also make sure to keep an eye on the costs.", "user"),
    ],
)
def test_other_turns_are_not(text: str, speaker: str) -> None:
    assert recognise(text, speaker) == ""


class Notes:
    """A notes store with kept statements and summaries (reads only)."""

    def __init__(self, standing: list[Standing], summaries: dict[int, Summary]) -> None:
        self._standing = standing
        self._summaries = summaries

    def standing(self, key: DatasetKey, limit: int) -> list[Standing]:
        return self._standing[:limit]

    def get_summaries(self, key: DatasetKey, ids: list[int]) -> dict[int, Summary]:
        return {i: self._summaries[i] for i in ids if i in self._summaries}


class Graph:
    def __init__(self, edges: dict[int, Edge]) -> None:
        self.edges = edges

    def get_edges(self, key: DatasetKey, ids: list[int]) -> dict[int, Edge]:
        return {i: self.edges[i] for i in ids if i in self.edges}

    def get_artifacts(self, key: DatasetKey, ids: list[int]) -> dict[int, object]:
        return {i: object() for i in ids}


KEY = DatasetKey("u", "main")


def _s(i: int, vec: list[float], kind: str = "instruction") -> Standing:
    return Standing(i, "edge", kind, "", f"statement {i}", None, "", vec)


def test_the_best_matching_statement_first_and_superseded_ones_never() -> None:
    kept = [_s(1, [0.0, 1.0]), _s(2, [1.0, 0.0]), _s(3, [1.0, 0.1])]
    edges = {
        1: Edge(1, 1, 2, "r"),
        2: Edge(2, 1, 2, "r"),
        3: Edge(3, 1, 2, "r", expired_at="2024-01-01T00:00:00Z"),  # superseded
    }
    got = notes_for(Notes(kept, {}), Graph(edges), KEY, [1.0, 0.0], [], 1000, 3)  # type: ignore[arg-type]
    assert [n.ref for n in got] == ["edge 2", "edge 1"]


def test_the_notes_never_pass_their_share() -> None:
    kept = [_s(i, [1.0, 0.0]) for i in range(1, 40)]
    edges = {i: Edge(i, 1, 2, "r") for i in range(1, 40)}
    summaries = {7: Summary(7, "Alice is an engineer at Acme.")}
    got = notes_for(Notes(kept, summaries), Graph(edges), KEY, [1.0, 0.0], [(7, "Alice")], 40, 3)  # type: ignore[arg-type]
    assert 0 < len(got) < 39
    assert sum(estimate_tokens(line) + 1 for line in render(got)) <= 40  # as retrieve counts
    assert any(n.kind == "summary" for n in got)  # interleaved: the seed's summary is second
    assert got[1] == Note("summary", "Alice is an engineer at Acme.", "entity 7 Alice")


def test_ranked_gives_the_plain_cosine_to_the_bit() -> None:
    """The question's norm taken once and the products summed by map: the
    same floats as the cosine written out."""
    import math
    import random

    rng = random.Random(5)
    question = [rng.uniform(-1, 1) for _ in range(384)]
    kept = [_s(i, [rng.uniform(-1, 1) for _ in range(384)]) for i in range(1, 30)]

    def plain(a: list[float], b: list[float]) -> float:
        dot = sum(x * y for x, y in zip(a, b, strict=True))
        return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))

    want = sorted(((plain(s.vector, question), s) for s in kept), key=lambda p: -p[0])
    assert ranked(kept, question) == want
    # no vector, or one of another dimension: no similarity
    assert [c for c, _ in ranked([_s(1, []), _s(2, [1.0])], question)] == [0.0, 0.0]


def test_the_sqlite_store_gives_each_statement_its_vector(tmp_path: Path) -> None:
    """Parsed vectors are kept by their JSON: a statement replaced with
    another vector gives the new one, and a caller's change to a returned
    vector does not reach the next read."""
    from gligabao.notes.sqlite import SqliteNotesStore
    from gligabao.sqlite.db import Database

    db = Database(tmp_path / "gb.db")
    store = SqliteNotesStore(db)
    store.add_standing(KEY, [_s(1, [0.5, 0.25]), _s(2, [])])
    first = {s.id: s.vector for s in store.standing(KEY, 10)}
    assert first == {1: [0.5, 0.25], 2: []}
    first[1].append(9.0)
    assert {s.id: s.vector for s in store.standing(KEY, 10)}[1] == [0.5, 0.25]
    store.add_standing(KEY, [_s(1, [0.125, 1.0])])
    assert {s.id: s.vector for s in store.standing(KEY, 10)}[1] == [0.125, 1.0]
    db.close()


def test_the_newest_statements_are_read_by_the_index(tmp_path: Path) -> None:
    """Not every statement of the user sorted for each query."""
    from gligabao.notes.sqlite import NEWEST_STANDING
    from gligabao.sqlite.db import Database

    db = Database(tmp_path / "gb.db")
    with db.connect() as conn:
        plan = " ".join(
            str(r) for r in conn.execute(f"EXPLAIN QUERY PLAN {NEWEST_STANDING}", ("u", 50))
        )
    db.close()
    assert "standing_newest" in plan and "TEMP B-TREE" not in plan


def test_a_kept_length_gives_the_same_ranking_to_the_bit(tmp_path: Path) -> None:
    """The SQLite store measures each parsed vector once (``Standing.norm``):
    the cosines are the floats of a length taken per query."""
    import random

    from gligabao.notes.port import vector_norm
    from gligabao.notes.sqlite import SqliteNotesStore
    from gligabao.sqlite.db import Database

    rng = random.Random(7)
    question = [rng.uniform(-1, 1) for _ in range(64)]
    db = Database(tmp_path / "gb.db")
    store = SqliteNotesStore(db)
    store.add_standing(KEY, [_s(i, [rng.uniform(-1, 1) for _ in range(64)]) for i in range(1, 9)])
    read = store.standing(KEY, 10)
    assert all(s.norm == vector_norm(s.vector) for s in read)
    unmeasured = [replace(s, norm=None) for s in read]
    assert [c for c, _ in ranked(read, question)] == [c for c, _ in ranked(unmeasured, question)]
    db.close()
