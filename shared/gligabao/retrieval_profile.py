"""The retrieval profile: every weight, cap, floor and pool size of a query's
retrieval, in one frozen object passed to the retriever (never read as a
module constant deep inside it).

Each default says, in its comment, the ruler figure that chose it (the rulers
and how to compare two profiles: docs/retrieval.md). ``bench/eval`` is the
long synthetic corpus (facts extracted); LoCoMo and HotpotQA are the real
conversations and paragraphs remembered without extraction (passages alone).

A deployment sets its own with ``GB_RETRIEVAL_PROFILE`` (JSON of the fields
to change); the local server also takes a request's ``"profile"`` (the same
JSON), for experiments. A deployed API does not: a profile's pools are the
query's cost bounds (round trips, rows read), which a caller must not raise.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import BadRequest


class RetrievalProfile(BaseModel):
    """The retrieval's tunables (see the module's docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    # -- candidate pools (what may compete for the budget, not what is sent) --------
    # Keyword seeds: 10 with at most 12 terms (bench/eval: recall 0.99 at 8% tokens).
    keyword_seeds: int = Field(default=10, ge=0, le=1000)
    # Index entries read per term: bounds the cost of a common word (names looked up whole).
    keyword_per_term: int = Field(default=50, ge=1, le=1000)
    # The spec's keyword points: a whole name in the question, a term of a name, a
    # description term. A seed with at least name-term points is named by the question:
    # its name's words are left out of the lexical share ("Dana" is in all of Dana's facts).
    keyword_whole_name: int = Field(default=5, ge=0, le=1000)
    keyword_name_term: int = Field(default=3, ge=0, le=1000)
    keyword_description: int = Field(default=1, ge=0, le=1000)
    similar_entities: int = Field(default=10, ge=0, le=1000)  # nearest entities to the question
    # Similar facts: 20 (bench/eval; remember's invalidate reads its own 10).
    similar_edges: int = Field(default=20, ge=0, le=1000)
    # Passages of the hybrid search: a wide pool cut by the floor. LoCoMo passages alone:
    # 60 ran out before the budget (turns 0.867 in 2,300 tokens), 80: 0.874 in 2,400.
    # A long reply is ~3 windows, so 80 held ~30 BEAM messages: 160 raised BEAM 100K/14-15
    # from 0.619 to 0.662 (held-out 100K/13 0.556 to 0.612; LoCoMo conv 1 turns 0.906 to
    # 0.909; HotpotQA chain 0.93 to 0.92) for +1 ms of CPU a search at 100K tokens, +2 at 1M
    # (bench.beam_scale); 240 the same on BEAM; a pool counted in messages, no better.
    similar_passages: int = Field(default=160, ge=0, le=1000)
    similar_summaries: int = Field(default=5, ge=0, le=1000)  # passages found by their summaries
    fallback_seeds: int = Field(
        default=25, ge=0, le=1000
    )  # nothing matched: the newest entities are seeds
    edge_cap: int = Field(default=100, ge=1, le=1000)  # one-hop facts read around the seeds
    hop2_cap: int = Field(
        default=50, ge=1, le=1000
    )  # two-hop facts read around the best neighbours
    hop2_from: int = Field(
        default=8, ge=0, le=1000
    )  # one-hop neighbours whose edges are read (two hops)
    source_reads: int = Field(
        default=20, ge=0, le=1000
    )  # texts of the best facts read (before their ends)
    session_messages: int = Field(
        default=2, ge=0, le=1000
    )  # the session's last messages embedded with it
    session_lookback: int = Field(default=20, ge=0, le=1000)  # newest artifacts read to find them
    session_chars: int = Field(default=1000, ge=1, le=100_000)  # of each message, its end
    # -- passages' neighbours and the second round (HotpotQA bridge questions) --------
    # Best matched passages whose neighbours (one ID off) are read: 10 (LoCoMo turns
    # 0.898 with neighbours at 0.4 to 0.6 of their match).
    neighbours_of: int = Field(default=10, ge=0, le=1000)
    second_round_from: int = Field(
        default=1, ge=0, le=1000
    )  # best passages whose names seed round two
    # Names' terms sent (the lexical search's own cap).
    second_round_terms: int = Field(default=12, ge=0, le=1000)
    second_round_passages: int = Field(default=20, ge=0, le=1000)  # what the second search returns
    # 1: a document's passage the first round ranked deeper than the second does takes
    # the second's rank (HotpotQA chain 0.92 to 0.94; a conversation's turns have a
    # speaker and are left as they were); 0: only what the first round missed.
    second_round_lift: int = Field(default=1, ge=0, le=1)
    second_round_rank: int = Field(
        default=10, ge=0, le=1000
    )  # its first new passage's rank: after ten best
    # -- weights (one scale for entities, facts and passages; bench/eval) -------------
    w_keyword: float = Field(default=0.1, ge=0, le=100.0)  # a seed's strength per keyword point
    w_entity_sim: float = Field(default=1.0, ge=0, le=100.0)  # a seed's strength: times its cosine
    hop1: float = Field(
        default=0.5, ge=0, le=100.0
    )  # a fact touching a seed: times the seed's strength
    # A fact's score lent to the entity it leads to, which passes hop1 of it to its own
    # facts: a two-hop fact gets hop1 x hop2 of the leading fact's (bench/eval: hop2 0.6
    # and 0.9 same recall, 0.9 more tokens).
    hop2: float = Field(default=0.6, ge=0, le=100.0)
    hub_degree: int = Field(
        default=5, ge=1, le=1000
    )  # a seed with more facts passes sqrt(5/degree) to each
    # Times the fact's cosine share above the query threshold (bench/eval: 1.5, 2.5,
    # 3.5, 5 tried; 5 loses recall).
    w_edge_sim: float = Field(default=3.5, ge=0, le=100.0)
    w_lexical: float = Field(
        default=2.0, ge=0, le=100.0
    )  # times the share of the question's terms it holds
    w_recency: float = Field(
        default=0.2, ge=0, le=100.0
    )  # the newest fact of the pool; the oldest near 0
    w_provenance: float = Field(default=0.5, ge=0, le=100.0)  # a fact stated in a matched passage
    w_when: float = Field(
        default=1.0, ge=0, le=100.0
    )  # began, ended or was said in a period it names
    w_passage: float = Field(
        default=1.5, ge=0, le=100.0
    )  # the best-ranked passage, before its words
    # The decay down the hybrid search's ranks, slow so that the pool is cut by the floor
    # rather than by its size (LoCoMo, a pool of 80: 0.25 drops evidence ranked 10th to 40th).
    passage_decay: float = Field(default=0.1, ge=0, le=100.0)
    # A passage's rank score times this plus its share of the question's terms
    # (bench/eval: 0.1 to 0.4 same recall, 0.25 the fewest tokens).
    passage_base: float = Field(default=0.25, ge=0, le=100.0)
    w_beside: float = Field(default=0.5, ge=0, le=100.0)  # next to a match: this share of its score
    w_source: float = Field(
        default=0.5, ge=0, le=100.0
    )  # a fact's source text: times the fact's score
    provenance_from: int = Field(default=10, ge=0, le=1000)  # best facts whose source text may join
    w_seed_line: float = Field(default=0.5, ge=0, le=100.0)  # a seed's own line: times its strength
    # -- coverage (memory/coverage.py). BEAM dev 100K/14 and 100K/15 turn by turn, 36
    # questions, default budget (docs/retrieval.md, "Coverage"): all off 0.478, all on 0.619.
    # A window of a long reply whose better window is a candidate keeps this share
    # (1, off: 0.567 with preference following 0.38; 0.3 and 0: 0.614).
    w_same_text: float = Field(default=0.3, ge=0, le=1)
    # A first-person question: an assistant's passage keeps this share of its score
    # (1, off: 0.603; 0.5 and 0.3: 0.614, 0.3 in fewer tokens on 100K/14-15 alone).
    w_not_user: float = Field(default=0.5, ge=0, le=1)
    # A question about what the user said ("the order in which I brought up"): the share
    # an assistant's passage keeps (BEAM dev, all ten: 141 of 150 evidence messages of such
    # questions are the user's). Event ordering 0.37 to 0.50 on 100K/14-15, 0.57 to 0.68
    # held out (100K/13); 0.05 the same; 0.5 is w_not_user's.
    w_user_said: float = Field(default=0.2, ge=0, le=1)
    # A many-message question: the n-th passage of one session keeps this to the n
    # (1, off: 0.616; 0.85: 0.619; 0.7 and 0.5: 0.614: within one question's evidence).
    session_share: float = Field(default=0.85, ge=0, le=1)
    # A many-message question: the fill's floors (shares of the best score) are at most
    # this, so its budget is filled across sessions (1, off: 0.606 in 2,356 tokens; 0.1:
    # 0.606; 0: 0.614 in 2,693).
    many_floor: float = Field(default=0.0, ge=0, le=1)
    # A matched window of the assistant's reply: the user's turn it answers gets this share
    # of the window's score (0, off: 0.558; 0.5 and 0.8: 0.606-0.614).
    w_prompt: float = Field(default=0.5, ge=0, le=1)
    # -- the fill ---------------------------------------------------------------------
    # Under this share of the best score a fact or passage is left out, room or not
    # (bench/eval long corpus: 0.25 recall 0.99 in 8% of the history; 0.15, 0.2 same
    # recall in more tokens; 0.3 and up drop second hops and paraphrases).
    relevance_floor: float = Field(default=0.25, ge=0, le=1)
    # The floor when no fact is a candidate (passages alone). LoCoMo turns: 0.25 holds
    # 0.80 of the evidence in 4.6% of the conversation, 0.1 0.85 in 9.3%; HotpotQA's
    # chains 0.88 and 0.92.
    passages_only_floor: float = Field(default=0.1, ge=0, le=1)
    # -- notes (summaries, preferences, instructions) -----------------------------------
    # The strongest seeds whose entity summaries compete for the notes' share of the
    # budget (GB_STANDING_SHARE); the BEAM subset's preference and instruction figures
    # (docs/retrieval.md, "Entity summaries") were measured with 3.
    notes_summaries: int = Field(default=3, ge=0, le=100)
    # The user's newest preferences and instructions weighed for the notes (0: none
    # given, the BEAM "without notes" measure, docs/retrieval.md); 50 as the notes store
    # reads them (memory/standing.py KEPT).
    notes_standing: int = Field(default=50, ge=0, le=1000)
    # -- explain ----------------------------------------------------------------------
    left_out_shown: int = Field(
        default=5, ge=0, le=1000
    )  # best left-out candidates an explain lists

    def with_overrides(self, overrides: dict[str, Any], where: str = "profile") -> RetrievalProfile:
        """This profile with some fields changed (validated; BadRequest naming
        the field on an unknown one or a bad value)."""
        if not overrides:
            return self
        try:
            return RetrievalProfile.model_validate({**self.model_dump(), **overrides})
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "body"
            msg = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
            raise BadRequest(f"{where}.{field}: {msg}") from None


DEFAULT = RetrievalProfile()

__all__ = ["DEFAULT", "RetrievalProfile"]
