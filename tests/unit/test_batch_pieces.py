"""remember/batch's pure parts: the time order, the windows, the pieces a
window is applied in, and the ledger's ranges."""

from __future__ import annotations

from gligabao.memory.batch import Item, in_time_order, part_of, pieces, windows
from gligabao.memory.extract import Extracted, Fact
from gligabao.memory.remember import Read
from gligabao.memory.window import Said
from gligabao.records.ledger import from_ranges, to_ranges


def item(text: str, t: str, **kw: object) -> Item:
    return Item(text, f"2025-01-01T00:00:{t}Z", **kw)  # type: ignore[arg-type]


def fact(src: str, rel: str, dst: str, msg: int | None) -> Fact:
    return Fact(src, dst, rel, "", None, None, msg)


def ent(name: str) -> Extracted:
    return Extracted(name, name, "", "", None, None)


def read_of(n: int, stated: list[Fact], names: list[str]) -> Read:
    said = [Said(f"t{i}", None, f"2025-01-01T00:00:{i:02d}Z") for i in range(n)]
    return Read(
        said, True, [], [[float(i)] for i in range(n)], [], [], [ent(x) for x in names], stated
    )


def test_the_time_order_is_stable() -> None:
    items = [item("b", "02"), item("a1", "01"), item("a2", "01")]
    assert [i.text for i in in_time_order(items)] == ["a1", "a2", "b"]


def test_windows_keep_extract_apart_and_hold_their_budget() -> None:
    items = [item("x" * 40, f"{i:02d}", extract=i != 3) for i in range(6)]  # 10 tokens each
    assert windows(items, list(range(6)), tokens=25, size=100) == [[0, 1], [2], [3], [4, 5]]
    assert windows(items, [0, 1, 2], tokens=1000, size=2) == [[0, 1], [2]]
    assert windows(items, [1, 2], tokens=1000, size=10) == [[1, 2]]  # only what is to do


def test_a_piece_ends_before_a_fact_that_meets_one_of_the_piece() -> None:
    stated = [
        fact("dana", "lives_in", "lyon", 0),
        fact("dana", "works_at", "acme", 2),  # another relation: same piece
        fact("dana", "lives_in", "paris", 3),  # same source and relation: a new piece
        fact("sam", "knows", "dana", 4),
        fact("dana", "likes", "sam", 5),  # the same two entities: a new piece
    ]
    read = read_of(7, stated, ["dana", "lyon", "acme", "paris", "sam"])
    assert pieces(read) == [[0, 1, 2], [3, 4], [5, 6]]


def test_a_part_has_its_messages_facts_and_entities() -> None:
    stated = [
        fact("dana", "lives_in", "lyon", 0),
        fact("dana", "lives_in", "paris", 2),
        fact("dana", "knows", "sam", None),
    ]
    read = read_of(3, stated, ["dana", "lyon", "paris", "sam", "cat"])
    first, second = part_of(read, [0, 1], True), part_of(read, [2], False)
    assert [s.text for s in first.said] == ["t0", "t1"] and second.text_vectors == [[2.0]]
    assert [(f.target, f.chunk) for f in first.stated] == [("lyon", 0), ("sam", None)]
    assert [(f.target, f.chunk) for f in second.stated] == [("paris", 0)]
    # the first part also takes the entities no fact names ("cat")
    assert {e.norm for e in first.extracted} == {"dana", "lyon", "sam", "cat"}
    assert {e.norm for e in second.extracted} == {"dana", "paris"}


def test_the_ledger_keeps_ranges() -> None:
    done = {0, 1, 2, 5, 7, 8}
    assert to_ranges(done) == [[0, 3], [5, 6], [7, 9]]
    assert from_ranges(to_ranges(done)) == done
    assert from_ranges("junk") == set() and from_ranges([[1, "x"], [2, 3]]) == {2}
