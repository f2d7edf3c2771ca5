"""The coverage rules over the scored passages (memory/coverage.py): a long
reply's windows count as one message, a first-person question weighs the
user's turns over the assistant's, a many-message question reaches other
sessions. Pure functions over candidates; the figures: docs/retrieval.md."""

from __future__ import annotations

import pytest

from gligabao.memory.context import Passage, Scored, fill
from gligabao.memory.coverage import cover, first_person, many_messages, not_user_share, user_said
from gligabao.memory.scoring import Score
from gligabao.models import Artifact
from gligabao.retrieval_profile import DEFAULT

T = "2024-03-15T00:00:00Z"


def cand(
    i: int,
    score: float,
    *,
    parent: int | None = None,
    speaker: str = "user",
    session: str = "s1",
    text: str = "",
    summary: str | None = None,
) -> Scored:
    a = Artifact(
        i,
        text or f"message {i} about the budget",
        T,
        T,
        session,
        parent,
        None,
        None,
        summary,
        speaker,
    )
    return Scored(score, passage=Passage(a, None, a.text), why=Score([("match", score)]))


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did I say about my snack budget?", True),
        ("How many cupcakes did I order?", True),
        ("Can you suggest some movies for me?", True),
        ("Which movies did you recommend for my parents?", False),  # about the assistant's words
        ("Give me a summary of the sneaker advice we've talked about for my runs.", False),
        ("What did Melanie paint?", False),
        ("When did Caroline go to the LGBTQ support group?", False),
    ],
)
def test_first_person(question: str, expected: bool) -> None:
    assert first_person(question) is expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Can you give me a summary of how I planned my movie events?", True),
        ("In what order did I bring up the sneaker stores?", True),
        ("Walk me through how my budget evolved across our conversations.", True),
        ("How far away do my parents live?", False),
        ("What did Melanie paint?", False),
    ],
)
def test_many_messages(question: str, expected: bool) -> None:
    assert many_messages(question) is expected


def test_a_long_replys_windows_count_as_one_message() -> None:
    best, second, other = cand(11, 1.0, parent=10), cand(12, 0.9, parent=10), cand(20, 0.5)
    cover("What is the plan?", [second, best, other], DEFAULT)
    assert best.score == 1.0 and other.score == 0.5
    assert second.score == pytest.approx(0.9 * DEFAULT.w_same_text)
    assert second.why is not None and second.why.total == pytest.approx(second.score)
    assert dict(second.why.parts)["same_text"] < 0  # the explanation says so


def test_transcript_turns_and_document_chunks_are_not_folded() -> None:
    turn_a = cand(11, 1.0, parent=10, text="Caroline: I went to the support group.")
    turn_b = cand(12, 0.9, parent=10, text="Melanie: That sounds great, Caroline!")
    chunk_a = cand(31, 0.8, parent=30, summary="part one")
    chunk_b = cand(32, 0.7, parent=30, summary="part two")
    cover("What is the plan?", [turn_a, turn_b, chunk_a, chunk_b], DEFAULT)
    assert [c.score for c in (turn_a, turn_b, chunk_a, chunk_b)] == [1.0, 0.9, 0.8, 0.7]


def test_a_first_person_question_weighs_the_users_turns() -> None:
    mine, reply = cand(1, 0.6), cand(2, 1.0, speaker="assistant")
    cover("What did I decide about my budget?", [mine, reply], DEFAULT)
    assert mine.score == 0.6
    assert reply.score == pytest.approx(DEFAULT.w_not_user)
    # Third person, or about the assistant's words: both as they were.
    for q in ("What did Melanie say about the budget?", "What budget did you suggest to me?"):
        mine, reply = cand(1, 0.6), cand(2, 1.0, speaker="assistant")
        cover(q, [mine, reply], DEFAULT)
        assert (mine.score, reply.score) == (0.6, 1.0)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Can you walk me through the order in which I brought up my movie plans?", True),
        ("How many different shoe sizes have I mentioned across my messages?", True),
        ("What did I tell you about my sister?", True),
        ("When did I first mention the trip?", True),
        ("What have I told you about my sister?", True),
        ("Which films did I ask you about last week?", False),  # "did I ask": not a statement
        ("Which films have I asked you about?", True),
        ("Did I mention my sister's name?", True),
        ("did i mention the trip to you", True),
        ("Which titles I’ve already mentioned?", True),  # a curly apostrophe, an adverb
        ("the order in which I brought these topics up", True),
        ("What did Melanie say she mentioned to Caroline?", False),
        ("Can you summarize how my budget developed?", False),
    ],
)
def test_user_said(question: str, expected: bool) -> None:
    assert user_said(question) is expected


def test_the_share_an_assistants_passage_keeps() -> None:
    p = DEFAULT.with_overrides({"w_user_said": 0.1, "w_not_user": 0.4})
    cases = {
        "In what order did I bring up the stores? Mention the ones I brought up.": 0.1,
        "Can you summarize how my sneaker choices developed?": 1.0,  # a summary: both sides
        "What did I decide about my budget?": 0.4,  # first person
        "Summarize what you recommended for the trip.": 1.0,  # the assistant's own words
        # The assistant's words, though the user's are named too: the replies are the answer.
        "What did you recommend after I mentioned my budget?": 1.0,
        "Summarize what I've said about the trip.": 0.1,  # what the user said, summarized
        "What did Melanie paint?": 1.0,  # third person
    }
    for question, share in cases.items():
        assert not_user_share(question, p) == share, question
    reply = cand(2, 1.0, speaker="assistant")
    cover("Which titles have I mentioned so far?", [reply], p)
    assert reply.score == pytest.approx(0.1)
    assert reply.why is not None and dict(reply.why.parts)["not_user"] == pytest.approx(-0.9)


def test_a_many_message_question_reaches_other_sessions() -> None:
    s1 = [cand(i, 1.0 - i / 100, session="s1") for i in range(1, 5)]
    s2 = cand(50, 0.8, session="s2")
    q = "Can you give me a summary of how I planned the budget?"
    p = DEFAULT.with_overrides({"session_share": 0.7})
    cover(q, [*s1, s2], p)
    share = p.session_share
    assert [c.score for c in s1] == pytest.approx(
        [0.99, 0.98 * share, 0.97 * share**2, 0.96 * share**3]
    )
    assert s2.score == 0.8
    # The second session's is the second taken: with room for about two
    # passages, the context holds both sessions.
    ctx = fill([*s1, s2], {}, q, T, 90)
    assert len(ctx.passages) == 2 and set(ctx.passages) == {1, 50}


def test_the_rules_off_leave_the_scores() -> None:
    off = DEFAULT.with_overrides(
        {
            "w_same_text": 1.0,
            "w_not_user": 1.0,
            "w_user_said": 1.0,
            "session_share": 1.0,
        }
    )
    cs = [cand(11, 1.0, parent=10), cand(12, 0.9, parent=10), cand(2, 0.8, speaker="assistant")]
    cover("Can you give me a summary of what I said?", cs, off)
    assert [c.score for c in cs] == [1.0, 0.9, 0.8]


def test_a_matched_reply_brings_the_turn_it_answers() -> None:
    from gligabao.memory.coverage import prompt_ids, prompts_of

    window = cand(12, 1.0, parent=11, speaker="assistant")  # reply 11, answering turn 10
    mine = cand(30, 0.2)
    mine_reply = cand(32, 0.9, parent=31, speaker="assistant")  # answers 30, already a candidate
    user_window = cand(41, 0.8, parent=40)  # a user's own long text: no prompt read
    cs = [window, mine, mine_reply, user_window]
    wanted = prompt_ids(cs, DEFAULT.neighbours_of)
    assert set(wanted) == {10, 30}
    asked = Artifact(10, "Which films suit my parents?", T, T, "s1", speaker="user")
    mine_row = Artifact(30, mine.passage.chunk.text, T, T, "s1", speaker="user")
    new = prompts_of(cs, wanted, {10: asked, 30: mine_row}, DEFAULT)
    assert [c.passage.chunk.id for c in new if c.passage] == [10]
    assert new[0].score == pytest.approx(DEFAULT.w_prompt * 1.0)
    assert mine.score == pytest.approx(DEFAULT.w_prompt * 0.9)  # raised, not added twice
    # Another session's row, or the assistant's own, is not a prompt.
    wrong = Artifact(10, "text", T, T, "s2", speaker="user")
    said = Artifact(10, "text", T, T, "s1", speaker="assistant")
    for row in (wrong, said):
        assert prompts_of([window], prompt_ids([window], 10), {10: row}, DEFAULT) == []


def test_a_many_message_question_fills_its_budget() -> None:
    from gligabao.memory.coverage import fill_profile

    at = fill_profile("Can you give me a summary of my plans?", DEFAULT)
    assert at.relevance_floor == at.passages_only_floor == DEFAULT.many_floor
    assert fill_profile("How far away do my parents live?", DEFAULT) is DEFAULT
    # A passage at a twentieth of the best: under the floor, unless the question asks for breadth.
    cs = [cand(1, 1.0), cand(50, 0.05, session="s2")]
    q = "What did I say about the budget?"
    assert set(fill(cs, {}, q, T, 500, p=fill_profile(q, DEFAULT)).passages) == {1}
    q = "Can you give me a summary of the budget?"
    assert set(fill(cs, {}, q, T, 500, p=fill_profile(q, DEFAULT)).passages) == {1, 50}
