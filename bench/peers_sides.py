"""The peers' side of bench.peers_compare: Graphiti (embedded Kuzu) and Mem0
(its default local store, Qdrant in local mode), each run in a venv of its own
as a child process:

    .bench-venv-graphiti/bin/python -m bench.peers_sides graphiti SPEC
    .bench-venv-mem0/bin/python -m bench.peers_sides mem0 SPEC

It imports nothing of ours but bench/harness/vectors.py (numpy only). The spec
(JSON, written by the driver) holds the graph (entities, edges with their fact
texts), the questions, the embedding dimension and the base URL of the fake
OpenAI embeddings server that both peers and our server embed the questions
with. The graph's vectors are ``vec_of`` of each text, as on our side. Prints
one JSON line: build time, per-question latency, the part of it spent in the
embeddings request, and hits (the target edge in the top 10; a hub question:
an edge of the place). No LLM is called: both searches are retrieval only.

With ``--worker``, the questions come one at a time on stdin (``worker``),
for a driver that asks every side in turn. With a PORT, the same search is served over HTTP instead (``shim``: the
graph built at startup, then POST /search on 127.0.0.1:PORT), for the
driver to time the round trips as it times ours through `gligabao serve`:
neither peer ships a server for its embedded store, so each gets the same
minimal one (Starlette on uvicorn's h11, the stack of `gligabao serve`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from .harness.vectors import vec_of

GROUP = "bench"


def ts(value: str | None) -> Any:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def hit(q: dict[str, Any], edges: list[tuple[str, str]]) -> bool:
    """``edges``: (edge id, target entity id) of the results, as ``d<id>``, ``e<id>``."""
    if q["edge"] is not None:
        return any(e == f"d{q['edge']}" for e, _ in edges)
    return any(t == f"e{q['place']}" for _, t in edges)


class Timed:
    """Adds up the time spent in a wrapped (sync or async) embed callable."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap_async(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        async def timed(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return await fn(*a, **kw)
            finally:
                self.seconds += time.perf_counter() - t0

        return timed

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                self.seconds += time.perf_counter() - t0

        return timed


Search = Callable[[str], Any]  # a question -> its (edge id, target id) pairs, awaitable


async def graphiti_build(spec: dict[str, Any], timer: Timed) -> tuple[Search, float]:
    """Graphiti on embedded Kuzu, the graph written: (its search, build s)."""
    from graphiti_core import Graphiti
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.edges import EntityEdge
    from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
    from graphiti_core.nodes import EntityNode
    from graphiti_core.utils.bulk_utils import add_nodes_and_edges_bulk

    dim = spec["dim"]
    t0 = time.perf_counter()
    driver = KuzuDriver(db=spec["kuzu"])
    embedder = OpenAIEmbedder(
        OpenAIEmbedderConfig(api_key="x", base_url=spec["openai"], embedding_dim=dim)
    )
    g = Graphiti(graph_driver=driver, embedder=embedder)
    nodes = [
        EntityNode(
            uuid=f"e{e['id']}",
            name=e["name"],
            group_id=GROUP,
            labels=[e["type"]],
            summary=e["description"],
            created_at=ts(e["created_at"]),
            name_embedding=vec_of(e["name"], dim).tolist(),
        )
        for e in spec["entities"]
    ]
    edges = [
        EntityEdge(
            uuid=f"d{d['id']}", group_id=GROUP, source_node_uuid=f"e{d['source_id']}",
            target_node_uuid=f"e{d['target_id']}", name=d["relation"], fact=d["description"],
            fact_embedding=vec_of(d["fact_text"], dim).tolist(), episodes=[],
            created_at=ts(d["created_at"]), valid_at=ts(d["valid_at"]),
            invalid_at=ts(d["invalid_at"]), expired_at=ts(d["expired_at"]),
        )
        for d in spec["edges"]
    ]  # fmt: skip
    await add_nodes_and_edges_bulk(driver, [], [], nodes, edges, embedder)
    # Graphiti.build_indices_and_constraints is a no-op on Kuzu; its graph
    # operations create the full-text indexes (over the rows now present).
    await driver.graph_ops.build_indices_and_constraints(driver)
    build_s = time.perf_counter() - t0
    embedder.create = timer.wrap_async(embedder.create)  # type: ignore[method-assign]

    async def search(text: str) -> list[tuple[str, str]]:
        found = await g.search(text, group_ids=[GROUP], num_results=10)
        return [(e.uuid, e.target_node_uuid) for e in found]

    return search, build_s


def mem0_build(spec: dict[str, Any], timer: Timed) -> tuple[Search, float]:
    """Mem0 on its default local store, one memory per fact: (its search, build s)."""
    from mem0 import Memory

    dim = spec["dim"]
    t0 = time.perf_counter()
    m = Memory.from_config(
        {
            "vector_store": {
                "provider": "qdrant",
                "config": {"collection_name": GROUP, "embedding_model_dims": dim,
                           "path": spec["qdrant"], "on_disk": False},
            },
            "embedder": {
                "provider": "openai",
                "config": {"model": "text-embedding-3-small", "api_key": "x",
                           "openai_base_url": spec["openai"], "embedding_dims": dim},
            },
            # Never called by search; set so that nothing reaches for a real API.
            "llm": {"provider": "openai",
                    "config": {"model": "gpt-4o-mini", "api_key": "x",
                               "openai_base_url": spec["openai"]}},
            "history_db_path": spec["history"],
        }
    )  # fmt: skip
    # One memory per fact, as `add(infer=False)` stores a message, written
    # straight into the store with the shared vectors (no request per fact).
    now = datetime.now().astimezone().isoformat()
    edges = spec["edges"]
    for i in range(0, len(edges), 1000):
        part = edges[i : i + 1000]
        m.vector_store.insert(
            vectors=[vec_of(d["fact_text"], dim).tolist() for d in part],
            payloads=[
                {"data": d["fact_text"], "hash": hashlib.md5(d["fact_text"].encode()).hexdigest(),
                 "created_at": now, "user_id": GROUP, "edge": f"d{d['id']}",
                 "target": f"e{d['target_id']}"}
                for d in part
            ],
            ids=[str(uuid.uuid5(uuid.NAMESPACE_URL, f"d{d['id']}")) for d in part],
        )  # fmt: skip
    build_s = time.perf_counter() - t0
    m.embedding_model.embed = timer.wrap(m.embedding_model.embed)  # type: ignore[method-assign]

    async def search(text: str) -> list[tuple[str, str]]:
        # Called in the event loop's thread, as it is called without one.
        found = m.search(text, filters={"user_id": GROUP}, top_k=10)["results"]
        meta = [r.get("metadata") or {} for r in found]
        return [(x.get("edge", ""), x.get("target", "")) for x in meta]

    return search, build_s


async def built(side: str, spec: dict[str, Any], timer: Timed) -> tuple[Search, float]:
    if side == "graphiti":
        return await graphiti_build(spec, timer)
    return mem0_build(spec, timer)


async def in_process(side: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Each question once, through the peer's own call, after a warm-up."""
    timer = Timed()
    search, build_s = await built(side, spec, timer)
    await search("warm up")
    lat, emb, hits = [], [], []
    for q in spec["questions"]:
        timer.seconds = 0.0
        t1 = time.perf_counter()
        found = await search(q["text"])
        lat.append((time.perf_counter() - t1) * 1000)
        emb.append(timer.seconds * 1000)
        hits.append(hit(q, found))
    return {"build_s": build_s, "lat": lat, "embed": emb, "hits": hits}


async def worker(side: str, spec: dict[str, Any]) -> None:
    """The peer's search for a driver that asks every side in turn: built,
    it prints ``@@ {"ready": build s}``, then answers each question read from
    stdin (one JSON line, ``{"text"}``) with one ``@@`` line: the call's wall
    and CPU milliseconds (this process's, every thread), the embedding's,
    and the (edge id, target id) pairs found."""
    timer = Timed()
    search, build_s = await built(side, spec, timer)
    await search("warm up")
    print("@@ " + json.dumps({"ready": build_s}), flush=True)
    for line in sys.stdin:
        text = json.loads(line)["text"]
        timer.seconds = 0.0
        t0, c0 = time.perf_counter(), time.process_time()
        found = await search(text)
        ms, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
        print("@@ " + json.dumps({"ms": ms, "cpu_ms": cpu, "embed_ms": timer.seconds * 1000,
                                 "found": found}), flush=True)  # fmt: skip


def shim(side: str, spec: dict[str, Any], port: int) -> None:
    """The peer's search behind a minimal HTTP server (Starlette on uvicorn,
    as `gligabao serve` is): POST /search {"query"} answers {"found": [[edge
    id, target id], ...], "embed_ms"}. The graph is built at startup; the
    port answers once it is."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    timer = Timed()
    state: dict[str, Any] = {}

    async def search(request: Request) -> JSONResponse:
        body = await request.json()
        timer.seconds = 0.0
        found = await state["search"](body["query"])
        return JSONResponse({"found": found, "embed_ms": timer.seconds * 1000})

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        state["search"], build_s = await built(side, spec, timer)
        print(json.dumps({"build_s": build_s}), flush=True)
        yield

    app = Starlette(routes=[Route("/search", search, methods=["POST"])], lifespan=lifespan)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", http="h11")


def main() -> int:
    side, spec_path = sys.argv[1], sys.argv[2]
    spec = json.loads(Path(spec_path).read_text())
    if len(sys.argv) > 3 and sys.argv[3] == "--worker":
        asyncio.run(worker(side, spec))
        return 0
    if len(sys.argv) > 3:  # a port: serve it over HTTP
        shim(side, spec, int(sys.argv[3]))
        return 0
    print(json.dumps(asyncio.run(in_process(side, spec))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
