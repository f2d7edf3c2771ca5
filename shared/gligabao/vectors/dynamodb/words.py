"""The word index of the passages, in the dataset's partition of the terms
table: the lexical half of hybrid search on DynamoDB (BM25).

Rows (sort keys; terms are casefolded stems, so no row of the entities'
keyword index, whose keys are lowercase words, begins like these):

* ``W#<term>#<inverted passage id>``: a posting, newest passage first;
  ``entity_id`` is the passage's artifact ID, ``tf`` how often the term
  occurs in it, ``dl`` the passage's length in terms. Written with the
  passage's row in the same commit (untagged, like the keyword rows: they
  only lead to artifacts, which are read back through the graph store).
* ``WN#<term>``: ``n``, the number of passages holding the term (its
  document frequency), and ``WS``: ``n`` passages, ``dl`` their total length.
  Counted after the commit point, once per passage: each counting is one
  transaction that also adds a marker to the passage's row (``wc``), so a
  roll-forward that runs twice counts once.

A search reads, in one wave, the postings of the question's terms (at most
``POSTINGS`` a term, newest first) and the counts, and scores by BM25.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from pynamodb.exceptions import DeleteError, TransactWriteError
from pynamodb.transactions import TransactWrite

from ...dynamodb.tables import ArtifactRow, EntityRow, TermRow
from ...text import passage_terms

POSTING = "W#"
COUNT = "WN#"
STATS = "WS"
POSTINGS = 200  # postings read per question term (newest passages first)
COUNTS_PER_TXN = 97  # count rows per transaction (+ the marker and the stats: 99)
MAX_TERM_BYTES = 200  # a longer "word" is not indexed (sort keys are 1 KB at most)
K1, B = 1.2, 0.75  # BM25's usual constants (SQLite FTS5's too)
ID_BASE = 10**12


def posting_sk(term: str, passage_id: int) -> str:
    return f"{POSTING}{term}#{ID_BASE - passage_id:012d}"


def posting_prefix(term: str) -> str:
    return f"{POSTING}{term}#"


def count_sk(term: str) -> str:
    return f"{COUNT}{term}"


def indexable(terms: Iterable[str]) -> list[str]:
    return [t for t in terms if len(t.encode()) <= MAX_TERM_BYTES]


def term_counts(text: str) -> tuple[Counter[str], int]:
    """A passage's terms with their counts, and its length in terms."""
    terms = indexable(passage_terms(text))
    return Counter(terms), len(terms)


def posting_rows(pk: str, passage_id: int, text: str) -> list[TermRow]:
    tf, length = term_counts(text)
    return [
        TermRow(pk, posting_sk(t, passage_id), entity_id=passage_id, tf=c, dl=length)
        for t, c in tf.items()
    ]


def count_parts(terms: list[str]) -> list[list[str]]:
    """The distinct terms of a passage, in the groups counted by one
    transaction each (part ``i`` is marker ``i``)."""
    ordered = sorted(terms)
    return [ordered[i : i + COUNTS_PER_TXN] for i in range(0, len(ordered), COUNTS_PER_TXN)] or [[]]


def query_terms_of(text: str) -> list[str]:
    """The question's distinct terms, as the passages were indexed (at most 12)."""
    out: list[str] = []
    for t in indexable(passage_terms(text)):
        if t not in out:
            out.append(t)
        if len(out) == 12:
            break
    return out


def bm25(
    postings: dict[str, list[tuple[int, int, int]]],
    df: dict[str, int],
    docs: int,
    total_len: int,
    k: int,
) -> list[int]:
    """Passage IDs by BM25 score, best first (ties by ID), at most ``k``.
    ``postings``: term -> (passage, tf, dl). Counts not yet made (a passage
    whose commit is still rolling forward) are made up from the postings."""
    seen = {p for rows in postings.values() for p, _, _ in rows}
    n = max(docs, len(seen))
    lengths = {p: dl for rows in postings.values() for p, _, dl in rows}
    avgdl = (
        (total_len / docs)
        if docs and total_len
        else (sum(lengths.values()) / len(lengths) if lengths else 1.0)
    )
    avgdl = max(avgdl, 1.0)
    score: dict[int, float] = {}
    for term, rows in postings.items():
        d = max(df.get(term, 0), len(rows))
        idf = math.log(1.0 + (n - d + 0.5) / (d + 0.5))
        for passage, tf, dl in rows:
            norm = tf + K1 * (1.0 - B + B * dl / avgdl)
            score[passage] = score.get(passage, 0.0) + idf * tf * (K1 + 1.0) / norm
    order = sorted((p for p, s in score.items() if s > 0), key=lambda p: (-score[p], p))
    return order[:k]


def count_words(pk: str, passages: dict[int, ArtifactRow]) -> None:
    """Add each passage's terms to the document frequencies and the totals,
    once: each part is one transaction with its marker in the passage's row
    (``wc``), so a roll-forward that runs again counts nothing twice."""
    conn = EntityRow._get_connection().connection
    for pid, row in passages.items():
        tf, length = term_counts(row.text or "")
        done = set(row.wc or ())
        for part, terms in enumerate(count_parts(list(tf))):
            if part in done:
                continue
            try:
                with TransactWrite(connection=conn) as tx:
                    tx.update(
                        ArtifactRow(pk, pid),
                        actions=[ArtifactRow.wc.add({part})],
                        condition=~ArtifactRow.wc.contains(part),
                    )
                    if part == 0:
                        tx.update(
                            TermRow(pk, STATS),
                            actions=[
                                TermRow.n.add(1),
                                TermRow.dl.add(length),
                                TermRow.entity_id.set(0),
                            ],
                        )
                    for t in terms:
                        tx.update(
                            TermRow(pk, count_sk(t)),
                            actions=[TermRow.n.add(1), TermRow.entity_id.set(0)],
                        )
            except TransactWriteError as exc:
                reasons = exc.cancellation_reasons or []
                if not (reasons and getattr(reasons[0], "code", None) == "ConditionalCheckFailed"):
                    raise


def uncount_words(pk: str, passages: dict[int, ArtifactRow]) -> None:
    """Take forgotten passages out of the word index: their postings go, their
    terms' document frequencies and the totals drop by what they added, and a
    term no passage holds any more loses its count row (a removed text leaves
    no word of it behind). Not one transaction: a crash half way leaves the
    frequencies a little high, which BM25 tolerates; the postings, which name
    the passage, are deleted first."""
    for pid, row in passages.items():
        tf, length = term_counts(row.text or "")
        for posting in posting_rows(pk, pid, row.text or ""):
            posting.delete()
        if not row.wc:  # never counted
            continue
        TermRow(pk, STATS).update(actions=[TermRow.n.add(-1), TermRow.dl.add(-length)])
        for t in tf:
            counted = TermRow(pk, count_sk(t))
            counted.update(actions=[TermRow.n.add(-1)])
            with contextlib.suppress(DeleteError):  # other passages still hold the term
                counted.delete(condition=TermRow.n <= 0)


def search(
    call: Callable[..., Any],
    map_: Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]],
    table: str,
    pk: str,
    text: str,
    k: int,
) -> list[int]:
    """Passage IDs of the dataset by BM25 for ``text``, best first: in one
    wave, a Query of each term's postings and a BatchGetItem of the counts
    (``call(operation, **request)``, ``map_`` runs them at once)."""
    terms = query_terms_of(text)
    if not terms:
        return []

    def postings(term: str) -> list[tuple[int, int, int]]:
        out = call(
            "Query",
            TableName=table,
            KeyConditionExpression="#k = :k AND begins_with(#s, :p)",
            ExpressionAttributeNames={"#k": "pk", "#s": "sk"},
            ExpressionAttributeValues={
                ":k": {"S": pk},
                ":p": {"S": posting_prefix(term)},
            },
            ProjectionExpression="entity_id, tf, dl",
            Limit=POSTINGS,
        )
        return [
            (int(i["entity_id"]["N"]), int(i["tf"]["N"]), int(i["dl"]["N"]))
            for i in out.get("Items", [])
            if "tf" in i and "dl" in i
        ]

    def counts(_: None) -> dict[str, dict[str, Any]]:
        keys = [{"pk": {"S": pk}, "sk": {"S": sk}} for sk in [STATS, *(count_sk(t) for t in terms)]]
        got: dict[str, dict[str, Any]] = {}
        req: dict[str, Any] = {table: {"Keys": keys, "ProjectionExpression": "sk, n, dl"}}
        for _attempt in range(5):
            out = call("BatchGetItem", RequestItems=req)
            for item in out.get("Responses", {}).get(table, []):
                got[item["sk"]["S"]] = item
            req = out.get("UnprocessedKeys") or {}
            if not req:
                break
        return got

    jobs: list[Callable[[], Any]] = [partial(postings, t) for t in terms]
    jobs.append(partial(counts, None))
    done = map_(lambda job: job(), jobs)
    got: dict[str, dict[str, Any]] = done[-1]
    stats = got.get(STATS, {})
    df = {t: int(got.get(count_sk(t), {}).get("n", {}).get("N", 0)) for t in terms}
    return bm25(
        dict(zip(terms, done[:-1], strict=True)),
        df,
        int(stats.get("n", {}).get("N", 0)),
        int(stats.get("dl", {}).get("N", 0)),
        k,
    )
