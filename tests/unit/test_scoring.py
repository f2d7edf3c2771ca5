"""The words a fact shares with the question (light stemming)."""

from __future__ import annotations

from gligabao.memory.scoring import lexical_share, stem, stems


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
