"""The words a fact shares with the question (light stemming)."""

from __future__ import annotations

from gligabao.memory.scoring import (
    above,
    lexical_share,
    passage_score,
    question_periods,
    stem,
    stems,
    within,
)
from gligabao.retrieval_profile import DEFAULT


def test_stem_strips_common_suffixes_only() -> None:
    assert stem("works") == "work"
    assert stem("working") == "work"
    assert stem("worked") == "work"
    assert stem("lives") == "live"
    assert stem("boss") == "boss"  # not a plural
    assert stem("is") == "is"  # too short to strip
    assert stem("sing") == "sing"


def test_lexical_share_counts_the_question_terms_held() -> None:
    question = stems("Which company does Sam work for?")
    assert lexical_share(question, "Sam works_at Initech: Sam works at Initech.") == 2 / len(
        question
    )
    assert lexical_share(question, "the weather") == 0.0
    assert lexical_share(set(), "anything") == 0.0


def test_question_periods_are_the_dates_a_question_names() -> None:
    assert question_periods("What did Dana take up in March 2024?") == [("2024", "03", None)]
    assert question_periods("Where did Dana work on April 18, 2024?") == [("2024", "04", "18")]
    assert question_periods("Where did Dana live between 2015 and 2019?") == [
        ("2015", None, None),
        ("2019", None, None),
    ]
    assert question_periods("What did Dana do in March?") == [(None, "03", None)]
    # The day first, as British English (and LoCoMo's questions) write it.
    assert question_periods("What did Dana cook on 7 July, 2023?") == [("2023", "07", "07")]
    assert question_periods("Who called on the 3rd of June 2023?") == [("2023", "06", "03")]
    assert question_periods("What happened on 7 May?") == [(None, "05", "07")]
    assert question_periods("May I ask where Dana works?") == []  # not the month
    assert question_periods("When did Dana move to Portland?") == []


def test_within_a_period_by_year_month_and_day() -> None:
    march_2024 = question_periods("in March 2024")
    assert within(march_2024, None, "2024-03-05T10:00:00Z")
    assert not within(march_2024, "2023-03-05T10:00:00Z", None)
    assert within(question_periods("in March"), "2021-03-05T10:00:00Z")
    assert within(question_periods("on April 18, 2024"), "2024-04-18T23:59:59Z")
    assert not within(question_periods("on April 18, 2024"), "2024-04-19T00:00:00Z")
    assert not within([], "2024-04-18T00:00:00Z")


def test_a_passage_scores_by_rank_and_by_the_question_words_it_holds() -> None:
    question = stems("job title")
    relevant = passage_score(3, question, "My job title is architect.", DEFAULT).total
    assert relevant > passage_score(0, question, "Any tips for winter tires?", DEFAULT).total
    assert (
        passage_score(0, question, "x", DEFAULT).total
        > passage_score(1, question, "x", DEFAULT).total
    )


def test_above_is_the_share_of_the_way_from_the_threshold_to_one() -> None:
    assert above(0.82, 0.82) == 0.0
    assert above(0.70, 0.82) == 0.0  # never negative
    assert abs(above(0.91, 0.82) - 0.5) < 1e-9
    assert above(1.0, 0.82) == 1.0
    assert above(0.99, 1.0) == 0.0
