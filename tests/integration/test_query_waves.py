"""query on DynamoDB (issue 18): the dataset check and the keyword reads run
while the question is embedded, and at most two sequential waves of graph
reads follow the embedding. Before it, only the session's last messages
(with a session: they are embedded with the question). The waves in the
embedding's shadow (the keyword seeds, then the edges around them) add
nothing to the query's time while the embedding takes longer than they do;
they are bounded too (two).

Counted by structure, not by time. Every DynamoDB request goes through the
latency proxy of tests/fakes/latency.py, held ``HOLD_S``, so requests sent one
after another never overlap and requests sent together do (``waves``, as
bench/query_waves.py counts them). The overlap with the embedding is a
rendezvous: the dataset check and the keyword reads wait at the proxy until
the embeddings request has arrived, and the embeddings fake does not answer
until the proxy has seen both. Code that reads first and embeds after never
meets it: the proxy gives up after ``RENDEZVOUS_S`` and the test fails.

The call's record (the calls and inferences tables, written once at the end)
is not a read and is not counted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from query_helpers import GraphBuilder, question_vector, ts

from conftest import EMBED_DIM, Harness, Reply
from fakes.latency import Gate, HeldOpenAI, Interval, LatencyProxy, is_record, split
from gligabao.models import Artifact

# Each DynamoDB request: far above a thread's start, even on a loaded machine
# (at 0.1 s, two reads sent together were seen one after the other at load 8+),
# so "together" overlaps.
HOLD_S = 0.25
EMBED_S = 1.0  # the embeddings request, once the reads it waits for have arrived: > two waves
RENDEZVOUS_S = 10.0  # generous: met at once by code that sends both together
QUESTION = "Where does Alice work?"
SESSION = "chat-1"
SAID = "Alice told me about her new job."


@pytest.fixture
def proxy(moto_url: str) -> Iterator[LatencyProxy]:
    p = LatencyProxy(moto_url, hold_s=0).start()  # no hold while the graph is written
    yield p
    p.stop()


@pytest.fixture
def held() -> Iterator[HeldOpenAI]:
    with HeldOpenAI(dim=EMBED_DIM) as fake:
        yield fake


@pytest.fixture
def gb_env(proxy: LatencyProxy, held: HeldOpenAI) -> dict[str, str]:
    return {"GB_DYNAMODB_ENDPOINT": proxy.url, "OPENAI_BASE_URL": held.base_url}


def dataset_check(op: str, tables: tuple[str, ...]) -> bool:
    return op == "GetItem" and any(t.endswith("datasets") for t in tables)


def keyword_read(op: str, tables: tuple[str, ...]) -> bool:
    return op == "Query" and any(t.endswith("terms") for t in tables)


def build(gb: Harness) -> None:
    """Every kind of read a query makes: a keyword seed (Alice), a similar
    entity and a similar fact (Dana), two hops (Alice -> Acme -> Paris), a
    matched passage, the text a fact was stated in, a session's message."""
    g = GraphBuilder(gb)
    stated = g.text("Alice works at Acme.")
    alice, acme = g.entity("Alice", "person"), g.entity("Acme", "organization")
    paris, bob = g.entity("Paris", "city"), g.entity("Bob", "person")
    dana, lyon = g.entity("Dana", "person", sim=0.9), g.entity("Lyon", "city")
    g.edge(alice, acme, "works_at", "Alice works at Acme.", artifact_id=stated.id)
    g.edge(acme, paris, "located_in", "Acme is in Paris.")
    g.edge(bob, acme, "works_at", "Bob works at Acme.")
    g.edge(dana, lyon, "lives_in", "Dana lives in Lyon.", sim=0.9)
    moved = g.text("Dana moved to Lyon last spring.")
    g.chunk_vector(moved.id, "moved", 0.9)
    said = Artifact(g.next_artifact, SAID, ts(g.minute), ts(g.minute), session_id=SESSION)
    g.next_artifact += 1
    g.write.artifacts.append(said)
    g.save()


def ask(gb: Harness, proxy: LatencyProxy, held: HeldOpenAI, session: bool) -> list[Interval]:
    """Ask with the rendezvous in place; the embedding's interval first, then
    the graph reads of the query."""
    # Once unmeasured, as a warm Lambda would have: the first embeddings
    # request of a process builds its client (hundreds of ms).
    assert gb.client.post("/v1/gb/query", {"user_id": "u1", "query": "warm up"}).status == 200
    held.reset()
    embedded = f"{SAID}\n{QUESTION}" if session else QUESTION
    held.set_vector(embedded, question_vector())
    proxy.reset()
    proxy.hold_s, held.hold_s = HOLD_S, EMBED_S
    reads_seen = threading.Event()
    held.gate, held.gate_timeout_s = reads_seen, 3 * RENDEZVOUS_S
    gate = Gate(
        lambda op, t: dataset_check(op, t) or keyword_read(op, t), held.arrived, RENDEZVOUS_S
    )
    proxy.gate = gate
    body = {"user_id": "u1", "query": QUESTION, **({"session_id": SESSION} if session else {})}
    sent = time.monotonic()
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(gb.client.post, "/v1/gb/query", body)
        try:
            proxy.wait_until(
                lambda seen: (
                    any(dataset_check(op, t) for op, t, _ in seen)
                    and any(keyword_read(op, t) for op, t, _ in seen)
                ),
                3 * RENDEZVOUS_S,
            )
        finally:
            reads_seen.set()  # whatever happened: the query must end
        reply: Reply = future.result(timeout=120)
    assert reply.status == 200, reply.body
    assert proxy.wait_idle(30)
    assert not gate.timed_out, (
        "the dataset check or a keyword read waited for an embeddings request "
        "that never came while it was in flight: they run before the embedding"
    )
    [embed] = held.intervals
    return [embed, *[i for i in proxy.intervals if i.start >= sent and not is_record(i)]]


@pytest.mark.parametrize("session", [False, True], ids=["no-session", "session"])
def test_reads_hidden_behind_the_embedding(
    gb: Harness, proxy: LatencyProxy, held: HeldOpenAI, session: bool
) -> None:
    build(gb)
    embed, *reads = ask(gb, proxy, held, session)

    checks = [i for i in reads if dataset_check(i.op, i.tables)]
    keywords = [i for i in reads if keyword_read(i.op, i.tables)]
    assert len(checks) == 1 and keywords, [(i.op, i.tables) for i in reads]
    for i in [*checks, *keywords]:
        assert i.overlaps(embed.start, embed.end), (i, embed)

    waves = split(reads, embed)
    # After the embedding: the graph's waves (two), then the notes' two reads (the
    # user's standing statements, the seeds' summaries: memory/notes_context.py),
    # which need the seeds and are not yet hidden behind anything.
    assert waves.after <= 4, waves
    assert waves.before == (1 if session else 0), waves
    assert waves.during <= 2, waves
    # Exposed (not hidden behind the embedding): at most five with a
    # session, four without.
    assert waves.before + waves.after <= 5, waves
