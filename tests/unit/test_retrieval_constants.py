"""Every tunable of a query's retrieval lives in the retrieval profile
(gligabao/retrieval_profile.py), not as a module constant of memory/: a
numeric module-level constant there must be on this allow-list, which says
why it is not a retrieval tunable. A new weight or pool size written as a
module constant fails here: make it a profile field."""

from __future__ import annotations

import ast
from pathlib import Path

MEMORY = Path(__file__).resolve().parents[2] / "shared" / "gligabao" / "memory"

# Remember's side (extraction, resolution, invalidation, batches): not the
# query's retrieval. facts.SIMILAR_EDGES (10) is invalidate's candidates per
# new fact, distinct from the profile's similar_edges (20, the query's pool).
REMEMBER = {
    "batch.py": {"RESERVE_S", "WINDOW_TOKENS", "WINDOW_TEXTS"},
    "extract.py": {
        "MIN_SPLIT_CHARS",
        "AROUND_CAP",
        "KNOWN_RELATIONS",
        "PREVIOUS_TEXTS",
        "PREVIOUS_CHARS",
        "FACTS_PER_KNOWN",
        "FACT_CHARS",
    },
    "facts.py": {"AROUND_CAP", "SIMILAR_EDGES"},
    "resolve.py": {
        "KNOWN_BY_KEYWORD",
        "KNOWN_BY_SIMILARITY",
        "KNOWN_MAX",
        "MAX_TEXT_TERMS",
        "RESOLVE_CANDIDATES",
        "MAX_NAME_FORMS",
    },
    "timeline.py": {"PER_FACT", "MAX_CANDIDATES"},
    "passage_vectors.py": {"BEFORE_CHARS", "MAX_SENTENCES"},  # what a passage's vector embeds
    "split.py": {"MAX_MOVED"},
    "reindex.py": {"BATCH"},
    "transfer.py": {"FORMAT", "BATCH"},
    # the retention sweep's reads; a dataset schema's limits (API limits)
    "retention.py": {"BATCH", "MAX_ROUNDS"},
    "schema.py": {
        "MAX_ENTITY_TYPES",
        "MAX_EDGE_TYPES",
        "MAX_ATTRIBUTES",
        "MAX_ENUM_VALUES",
        "MAX_DESCRIPTION",
        "MAX_ENUM_VALUE",
        "MAX_SCHEMA_BYTES",
    },
    # what the summarize_entity call is given and how long a job holds its entities
    "summaries.py": {
        "FACTS_PER_ENTITY",
        "TEXTS_PER_ENTITY",
        "TEXT_CHARS",
        "LEASE_S",
        "MAX_TOKENS_PER_ENTITY",
    },
    # what the summarize_session call is given; the open sessions read at once
    "sessions.py": {"TEXTS_PER_SESSION", "TEXT_CHARS", "MAX_TOKENS_PER_SESSION", "OPEN_READ"},
    # the rule's longest standing statement; the newest statements read (browse too)
    "standing.py": {"RULE_MAX_CHARS", "KEPT"},
    # a dataset setting's bound; a stored attribute's longest string (API limits)
    "dataset_settings.py": {"MAX_TTL_DAYS"},
    "attributes.py": {"MAX_STRING"},
}
# Not tunables of the ranking: API limits, formats, the process's pool, a
# provider's document size, the answer call's size, a float tie-break.
NOT_TUNABLE = {
    "browse.py": {
        "ENTITY_CURSOR_CHARS",
        "ARTIFACT_CURSOR_CHARS",
        "MAX_LIMIT",
        "DEFAULT_LIMIT",
        "FACTS_PER_ENTITY",
        "MATCHES_PER_TERM",
        "TYPE_BATCH",
        "TYPE_SCAN",
    },
    "explain.py": {"LABEL_CHARS"},
    # the names table's lookups: the longest name looked up whole, one BatchGetItem
    "keywords.py": {"MAX_NAME_WORDS", "MAX_NAME_LOOKUPS"},
    "parallel.py": {"WORKERS"},
    "query.py": {"QUERY_MAX_TOKENS"},
    "rerank.py": {"DOC_MAX_CHARS", "TIE_STEP"},
}


def _numeric_constants(path: Path) -> set[str]:
    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        numbers = [
            c
            for c in ast.walk(value)
            if isinstance(c, ast.Constant)
            and isinstance(c.value, int | float)
            and not isinstance(c.value, bool)
        ]
        if numbers:
            out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def test_memory_has_no_numeric_constant_outside_the_profile_and_the_allow_list() -> None:
    found = {p.name: _numeric_constants(p) for p in sorted(MEMORY.glob("*.py"))}
    unexpected = {
        name: sorted(consts - REMEMBER.get(name, set()) - NOT_TUNABLE.get(name, set()))
        for name, consts in found.items()
    }
    assert {k: v for k, v in unexpected.items() if v} == {}, (
        "a retrieval tunable belongs in gligabao/retrieval_profile.py (or, if it is not "
        "one, on this test's allow-list with the reason)"
    )


def test_the_allow_list_names_only_constants_that_exist() -> None:
    found = {p.name: _numeric_constants(p) for p in sorted(MEMORY.glob("*.py"))}
    for listed in (REMEMBER, NOT_TUNABLE):
        for name, consts in listed.items():
            assert consts <= found.get(name, set()), (name, consts - found.get(name, set()))
