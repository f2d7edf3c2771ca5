"""The round trips of a query on DynamoDB: how many sequential waves of
requests it waits for, and how much of them the embeddings request hides.

    .venv/bin/python -m bench.query_waves [--hold-ms 20] [--embed-ms 100]
        [--questions 20] [--texts 36] [--trace] [--store memory|dynamodb]

``--store dynamodb``: the vectors on the rows and DynamoDB's vector indexes;
the vector fake of tests/fakes/dynamodb_vectors.py sits between the proxy and
moto, so each SearchVectors is a DynamoDB request held and counted like the
others, and the fake reports the VectorSearchRequestBytes and
VectorWriteRequestBytes it metered (with its assumed formulas).

Setup, all on 127.0.0.1: a standalone moto server (``python -m moto.server``,
a subprocess); in front of it the latency proxy of tests/fakes/latency.py,
which holds every DynamoDB request ``--hold-ms`` before forwarding it and
records its operation (``X-Amz-Target``), tables, arrival and answer; the fake
OpenAI embeddings server, answering ``--embed-ms`` late and recording when;
the fake Anthropic server (extraction read off the text, a fixed answer).
Then `gligabao serve` as a subprocess, ``GB_DYNAMODB_ENDPOINT`` at the proxy
(its vectors: the in-process index). ``--texts`` short texts ("Person07 works
at Org3. ...") are remembered over HTTP, half of them in one session, with no
hold; then ``--questions`` questions are asked over ``POST /v1/gb/query``, one
at a time, each once without and once with ``session_id`` (after one warm-up
query of each kind, not counted). A question names a person, an organization
or a city (keyword reads find it), and its vector is scripted at cosine 0.85
to a remembered fact (the vector search finds facts whose rows are read).

Per query, from the recorded intervals (times of this process):

* ``reqs``: graph reads (DynamoDB requests from the query's arrival to its
  answer, but for ``rec``, the call's record written at its end);
* ``waves``: the longest chain of graph reads, each starting after the
  previous one ended (the round trips waited for one after another), and the
  same among the reads that ended before the embeddings request started
  (``bef``), that overlapped it (``dur``) and that started after it ended
  (``aft``);
* ``ds`` / ``kw``: where the dataset check (GetItem on ``datasets``) and the
  keyword reads (Query on ``terms``) ran: ``emb`` overlapping the embeddings
  request, ``bef`` before it, ``aft`` after it, ``mix`` (with ``session_id``,
  ``bef`` is as good as ``emb`` when they ran beside the session's read,
  which the embedding has to wait for: ``bef`` is then 1);
* ``to-emb``: ms from the query's arrival to the embeddings request;
  ``dyn-aft``: ms during which a DynamoDB request was in flight after the
  embedding ended (the union of their intervals);
* ``wall``: ms from sending the query to its answer.

Then per kind (with and without ``session_id``): the medians, the most waves
(``max``), how many queries ran ``ds`` and ``kw`` where, wall p50 and p95.
``--trace`` also prints the requests of the first two queries, one a line.

Each hold being fixed, requests sent together overlap and requests sent
after another's answer do not, so the wave counts do not depend on this
machine's speed, the milliseconds do (on a loaded machine a thread may start
a request more than a hold late and split a wave now and then: a larger
``--hold-ms`` makes that rarer). Nothing is asserted: it prints.
tests/integration/test_query_waves.py checks the counts. Every process started
here is stopped by PID.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gligabao.text import fact_text
from tests.fakes.latency import Interval, Split, is_record, split

from .harness import HOST
from .harness.fakes import ANSWER, EMBED_DIM, FakeAnthropic, HeldOpenAI, LatencyProxy
from .harness.http import post
from .harness.servers import Child, fakes_env, free_port, start_moto_process, start_serve
from .harness.timing import pct
from .harness.workload import CITIES as ALL_CITIES
from .harness.workload import ORGS as ALL_ORGS
from .harness.workload import PEOPLE as ALL_PEOPLE
from .harness.workload import extract_reply

USER, DATASET, SESSION = "waves-u1", "main", "chat-1"
PEOPLE, ORGS, CITIES = ALL_PEOPLE[:12], ALL_ORGS[:4], ALL_CITIES[:4]
QUESTIONS = (
    "Where does {p} work?",
    "Where does {p} live?",
    "Who works at {o}?",
    "Who lives in {c}?",
)
SIMILAR = 0.85  # the question's cosine with a fact: above the query threshold (0.75)


def texts(n: int) -> list[tuple[str, str | None]]:
    """(text, session) of a small conversation: every person works somewhere
    and lives somewhere; every other text is in the session."""
    out: list[tuple[str, str | None]] = []
    for i in range(n):
        p = PEOPLE[i % len(PEOPLE)]
        if (i // len(PEOPLE)) % 2 == 0:
            text = f"{p} works at {ORGS[i % len(ORGS)]}."
        else:
            text = f"{p} lives in {CITIES[i % len(CITIES)]}."
        out.append((text, SESSION if i % 2 else None))
    return out


def question(i: int) -> str:
    q = QUESTIONS[i % len(QUESTIONS)]
    return q.format(p=PEOPLE[i % len(PEOPLE)], o=ORGS[i % len(ORGS)], c=CITIES[i % len(CITIES)])


def near_fact(i: int) -> str:
    """What question ``i``'s vector is near: the embedded text of a fact
    remembered (its person's workplace), so that the similar entities and
    facts of the vector search are read too, as a real embedder would find."""
    k = i % len(PEOPLE)
    return fact_text("works_at", f"{PEOPLE[k]} works at {ORGS[k % len(ORGS)]}.")


@dataclass
class Row:
    session: bool
    waves: Split  # of the graph reads
    records: int  # requests writing the call's record
    dataset: str  # where the dataset check ran: bef / emb / aft (of the embedding), mix, -
    keywords: str  # where the keyword reads ran
    to_embed_ms: float
    dynamo_after_ms: float
    wall_ms: float
    trace: list[str]


def union_ms(intervals: list[Interval], since: float) -> float:
    """ms covered by the intervals after ``since``."""
    total, covered = 0.0, since
    for s, e in sorted((max(i.start, since), i.end) for i in intervals if i.end > since):
        if e > covered:
            total += e - max(s, covered)
            covered = e
    return total * 1000


def ask(
    base: str, proxy: LatencyProxy, emb: HeldOpenAI, i: int, session: bool, said: list[str]
) -> Row:
    """Question ``i``; with the session, its last messages (``said``) are
    embedded with it."""
    q = question(i)
    proxy.reset()
    emb.reset()
    emb.alias("\n".join([*said, q]) if session else q, near_fact(i), SIMILAR)
    body: dict[str, Any] = {"user_id": USER, "dataset": DATASET, "query": q}
    if session:
        body["session_id"] = SESSION
    t0 = time.monotonic()
    status, reply = post(base, "/v1/gb/query", body)
    t1 = time.monotonic()
    if status != 200:
        raise SystemExit(f"query {q!r}: {status} {reply}")
    proxy.wait_idle(10)
    # The query's requests: those answered before its answer (a record
    # written after the answer is not waited for).
    answered = [i for i in proxy.intervals if i.start >= t0 and i.end <= t1]
    mine = [i for i in answered if not is_record(i)]
    embeds = emb.intervals
    if len(embeds) != 1:
        raise SystemExit(f"query {q!r}: {len(embeds)} embeddings requests, expected 1")
    [e] = embeds
    ds = [i for i in mine if i.op == "GetItem" and i.on("datasets")]
    kw = [i for i in mine if i.op == "Query" and i.on("terms")]
    return Row(
        session,
        split(mine, e),
        len(answered) - len(mine),
        where(ds, e),
        where(kw, e),
        (e.start - t0) * 1000,
        union_ms(mine, e.end),
        (t1 - t0) * 1000,
        trace(answered, e, t0),
    )


def where(reqs: list[Interval], embed: Interval) -> str:
    """bef: all ended before the embedding started; emb: all overlapped it;
    aft: all started after it ended; mix: some of each; -: none."""
    kinds = {
        "emb" if i.overlaps(embed.start, embed.end) else "bef" if i.end <= embed.start else "aft"
        for i in reqs
    }
    return kinds.pop() if len(kinds) == 1 else ("mix" if kinds else "-")


def trace(mine: list[Interval], embed: Interval, t0: float) -> list[str]:
    """One line a request, the embedding among them, times in ms from the arrival."""
    lines = []
    for i in sorted([*mine, embed], key=lambda i: i.start):
        tables = ",".join(t.rsplit("_", 1)[-1] for t in i.tables)
        lines.append(f"{(i.start - t0) * 1000:7.0f} {(i.end - t0) * 1000:7.0f}  {i.op} {tables}")
    return lines


def report(rows: list[Row], say: Any) -> None:
    head = (
        f"{'#':>3} {'sess':>4} {'reqs':>4} {'rec':>3} {'waves':>5} {'bef':>3} {'dur':>3} "
        f"{'aft':>3} {'ds':>3} {'kw':>3} {'to-emb':>7} {'dyn-aft':>8} {'wall':>7}"
    )
    say(head)
    for n, r in enumerate(rows, start=1):
        w = r.waves
        say(
            f"{n:>3} {'yes' if r.session else 'no':>4} {w.requests:>4} {r.records:>3} "
            f"{w.total:>5} {w.before:>3} {w.during:>3} {w.after:>3} {r.dataset:>3} "
            f"{r.keywords:>3} {r.to_embed_ms:>7.0f} {r.dynamo_after_ms:>8.0f} {r.wall_ms:>7.0f}"
        )
    say("")
    say(
        f"{'session':>8} {'n':>3} {'reqs':>5} {'waves':>5} {'max':>4} {'bef':>4} {'dur':>4} "
        f"{'aft':>4} {'ds':>14} {'kw':>14} {'to-emb':>7} {'dyn-aft':>8} {'p50':>6} {'p95':>6}"
    )
    for session in (False, True):
        part = [r for r in rows if r.session == session]
        if not part:
            continue

        def med(f: Any, part: list[Row] = part) -> float:
            return statistics.median(f(r) for r in part)

        def tally(f: Any, part: list[Row] = part) -> str:
            return " ".join(f"{k} {n}" for k, n in sorted(Counter(f(r) for r in part).items()))

        walls = [r.wall_ms for r in part]
        say(
            f"{'yes' if session else 'no':>8} {len(part):>3} {med(lambda r: r.waves.requests):>5.0f} "
            f"{med(lambda r: r.waves.total):>5.0f} {max(r.waves.total for r in part):>4} "
            f"{med(lambda r: r.waves.before):>4.0f} {med(lambda r: r.waves.during):>4.0f} "
            f"{med(lambda r: r.waves.after):>4.0f} {tally(lambda r: r.dataset):>14} "
            f"{tally(lambda r: r.keywords):>14} {med(lambda r: r.to_embed_ms):>7.0f} "
            f"{med(lambda r: r.dynamo_after_ms):>8.0f} {pct(walls, 50):>6.0f} {pct(walls, 95):>6.0f}"
        )
    say(
        "(medians per query but max (waves) and p50/p95 (wall); ms; the waves and dyn-aft count "
        "the graph reads,\n not the call's record (rec); ds, kw: how many queries ran their "
        "dataset check / keyword reads\n bef(ore), (overlapping the) emb(edding), aft(er) it, "
        "or a mix)"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hold-ms", type=float, default=20.0, help="each DynamoDB request (20)")
    ap.add_argument("--embed-ms", type=float, default=100.0, help="each embeddings request (100)")
    ap.add_argument("--questions", type=int, default=20, help="asked with and without session (20)")
    ap.add_argument("--texts", type=int, default=36, help="texts remembered first (36)")
    ap.add_argument(
        "--trace", action="store_true", help="also print the first two queries' requests"
    )
    ap.add_argument(
        "--store", choices=["memory", "dynamodb"], default="memory", help="the vectors' store"
    )
    args = ap.parse_args(argv)
    if args.texts < len(PEOPLE):
        ap.error(f"--texts: at least {len(PEOPLE)} (each person's workplace)")

    def say(text: str = "") -> None:
        print(text, flush=True)

    logs = Path(tempfile.mkdtemp(prefix="gb-query-waves-"))
    children: list[Child] = []
    llm = FakeAnthropic().start()
    emb = HeldOpenAI(dim=EMBED_DIM).start()
    proxy: LatencyProxy | None = None
    vectors: Any = None
    try:
        llm.default("extract", extract_reply)
        llm.default("query", ANSWER)
        moto_port = free_port()
        children.append(start_moto_process(logs, moto_port, one_at_a_time=False))
        upstream = f"http://{HOST}:{moto_port}"
        extra: dict[str, str] = {}
        if args.store == "dynamodb":
            from tests.fakes.dynamodb_vectors import FakeDynamoVectors

            vectors = FakeDynamoVectors(upstream).start()
            upstream, extra["GB_VECTOR_STORE"] = vectors.url, "dynamodb"
        proxy = LatencyProxy(upstream, hold_s=0).start()
        port = free_port()
        env = {
            **fakes_env(llm, emb),
            **extra,
            "GB_DYNAMODB_ENDPOINT": proxy.url,
            "GB_TABLE_PREFIX": f"waves{uuid.uuid4().hex[:8]}_",
            "GB_EMBEDDING_DIMENSION": str(EMBED_DIM),
            "POWERTOOLS_LOG_LEVEL": "WARNING",
        }
        children.append(start_serve(logs / "serve.log", port, env))
        base = f"http://{HOST}:{port}"
        say(f"logs: {logs}")

        t0 = time.monotonic()
        for text, sid in texts(args.texts):
            body = {"user_id": USER, "dataset": DATASET, "text": text}
            if sid:
                body["session_id"] = sid
            status, reply = post(base, "/v1/gb/remember", body)
            if status != 200:
                raise SystemExit(f"remember {text!r}: {status} {json.dumps(reply)[:300]}")
        say(f"remembered {args.texts} texts in {time.monotonic() - t0:.1f} s (no hold)")
        if vectors is not None:
            say(
                f"vector write bytes per remember: {vectors.write_bytes / args.texts:,.0f} "
                f"(VectorWriteRequestBytes, the fake's metering)"
            )
            vectors.reset_meters()

        said = [t for t, sid in texts(args.texts) if sid][-2:]  # what the session said last
        proxy.hold_s, emb.hold_s = args.hold_ms / 1000, args.embed_ms / 1000
        say(
            f"each DynamoDB request held {args.hold_ms:g} ms, each embeddings request "
            f"{args.embed_ms:g} ms; {args.questions} questions, each without and with session_id"
        )
        for session in (False, True):  # warm-up: connections, first imports
            ask(base, proxy, emb, 0, session, said)
        rows = []
        for i in range(args.questions):
            for session in (False, True):
                rows.append(ask(base, proxy, emb, i, session, said))
        say("")
        report(rows, say)
        if vectors is not None:
            asked = len(rows) + 2  # and the warm-up
            say(
                f"\nper query: {vectors.ops['SearchVectors'] / asked:.1f} SearchVectors, "
                f"{vectors.search_bytes / asked:,.0f} VectorSearchRequestBytes (the fake's metering)"
            )
        if args.trace:
            for r in rows[:2]:
                say(
                    f"\nrequests of the first query {'with' if r.session else 'without'} session_id"
                )
                say("  start     end  (ms from its arrival)")
                for line in r.trace:
                    say(line)
        return 0
    finally:
        for child in reversed(children):
            child.stop()
        if proxy is not None:
            proxy.stop()
        if vectors is not None:
            vectors.stop()
        llm.stop()
        emb.stop()


if __name__ == "__main__":
    sys.exit(main())
