"""What one `remember` costs: LLM calls and tokens, embeddings requests,
DynamoDB requests and writes, per text of a generated corpus.

    .venv/bin/python -m bench.remember_corpus [--messages 56] [--documents 4] [--seed 7]
        [--csv out.csv]

Setup, all in this process: moto's DynamoDB server on loopback
(``start_moto``), the fake Anthropic and OpenAI servers of ``tests/fakes``
(the real SDKs talk to them over HTTP), the embedded vector index. Each text
goes through the Lambda handler of ``POST /v1/gb/remember`` (an API Gateway
event, as on AWS: the call record and inferences are saved too), one after
the other into one dataset, so that later texts meet the entities and facts
of earlier ones (resolution, restated facts, invalidation).

The corpus (bench/remember_corpus_texts.py): short chat messages from sentence templates ("Alice Martin works
at Globex.", "Bob Chen moved to Lyon.", ...) and a few long documents (about
3,000 tokens, over the default chunking threshold of 2,000) made of the same
sentences among filler prose. The fake LLM plays a careful model: its
``extract`` reply is derived from the text it is sent (the same templates,
read back with regular expressions), reusing the ID of a known entity the
prompt shows; its ``invalidate`` reply supersedes a live ``works_at`` /
``lives_in`` fact of the same person that a new one replaces; ``summarize``
gives the first sentence of the chunk.

Measures, per text:
- ``llm``: Messages requests; ``in``/``out``: their input and output tokens
  (the fake's usage: a quarter of the characters).
- ``emb``: embeddings requests.
- ``ddb``: DynamoDB requests (``gligabao.dynamodb.client.REQUESTS``: every try of
  every operation, batch pages included); ``graph``: those that touch a graph
  table (the rest save the call record and its inferences); ``qry``: Queries.
- ``wr``: write requests (PutItem, UpdateItem, DeleteItem, BatchWriteItem,
  TransactWriteItems); ``items``: items they write or delete.
- ``wcu``: write capacity units, estimated from the item sizes sent
  (bench/remember_corpus_writes.py)
  (DynamoDB's rule: 1 WCU per started KB of item, a delete 1 WCU; an update
  counted on the attributes it sends). moto reports no real consumed
  capacity (a constant 1.0 per request), so it is not used. GSI writes
  (entities: 1 index; live edges: 2) are not included.
- ``vec``: vector-index round trips; ``ms``: wall time (fakes answer at once;
  moto dominates).

Then the medians (messages, documents, all) and the totals by operation.
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import os
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from gligabao.dynamodb.client import REQUESTS

from .harness.fakes import start_fakes
from .harness.servers import fakes_env, use_env
from .remember_corpus_texts import corpus, extract_reply, invalidate_reply, summarize_reply
from .remember_corpus_writes import PREFIX, WRITES, install_write_hook

USER, DATASET = "bench", "main"


# --- the run --------------------------------------------------------------------------


@dataclass
class Row:
    n: int
    kind: str
    chars: int
    status: int
    chunks: int
    entities: int
    new_entities: int
    edges: int
    invalidated: int
    llm: int
    tok_in: int
    tok_out: int
    emb: int
    ddb: int
    graph: int
    qry: int
    wr: int
    items: int
    wcu: int
    vec: int
    ms: float


COLUMNS = [
    "llm",
    "tok_in",
    "tok_out",
    "emb",
    "ddb",
    "graph",
    "qry",
    "wr",
    "items",
    "wcu",
    "vec",
    "ms",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=56)
    ap.add_argument("--documents", type=int, default=4)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--csv", help="also write the per-text rows to this CSV file")
    args = ap.parse_args()
    logging.disable(logging.INFO)

    install_write_hook()
    from gligabao.local.embedded import start_moto

    moto, moto_url = start_moto()
    llm, emb = start_fakes(
        {"extract": extract_reply, "invalidate": invalidate_reply, "summarize": summarize_reply},
        dim=256,
    )
    use_env(
        {
            **fakes_env(llm, emb),
            "GB_DYNAMODB_ENDPOINT": moto_url,
            "GB_TABLE_PREFIX": PREFIX,
            "GB_EMBEDDING_DIMENSION": "256",
            "GB_LLM_MAX_RETRIES": "0",
            "POWERTOOLS_METRICS_NAMESPACE": "gligabao-bench",
            "POWERTOOLS_METRICS_DISABLED": "true",
        }
    )
    from gligabao import wiring
    from gligabao.config import settings
    from gligabao.handlers import remember
    from gligabao.local.embedded import create_tables
    from gligabao.local.server import make_event

    create_tables()
    vectors: Any = wiring.vector_index()
    texts = corpus(args.messages, args.documents, args.seed)
    threshold = settings().chunk_threshold_tokens
    print(
        f"{len(texts)} texts ({args.messages} messages, {args.documents} documents); "
        f"chunking threshold {threshold} tokens; DynamoDB on moto, fakes for the LLM "
        "and embeddings\n"
    )

    rows: list[Row] = []
    header = (
        f"{'#':>3} {'kind':4} {'chars':>6} {'st':>3} {'chk':>3} {'ent':>3} {'new':>3} "
        f"{'edg':>3} {'inv':>3} {'llm':>3} {'in':>6} {'out':>5} {'emb':>3} {'ddb':>4} "
        f"{'graph':>5} {'qry':>4} {'wr':>3} {'items':>5} {'wcu':>4} {'vec':>3} {'ms':>6}"
    )
    print(header)
    ref = time.time() - len(texts) * 3600
    stdout = sys.stdout
    for n, (kind, text) in enumerate(texts, 1):
        body = {
            "user_id": USER,
            "dataset": DATASET,
            "text": text,
            "session_id": f"s{n % 5}",
            "reference_time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ref + n * 3600)),
        }
        event = make_event(
            "POST",
            "/v1/gb/remember",
            {"content-type": "application/json"},
            json.dumps(body).encode(),
            "127.0.0.1",
        )
        llm_before, emb_before = len(llm.requests), emb.calls()
        ddb_before = REQUESTS.total
        graph_before, wr_before, items_before, wcu_before = WRITES.snapshot()
        query_before = REQUESTS.snapshot().get("Query", 0)
        vec_before = vectors.requests
        t0 = time.perf_counter()
        sys.stdout = open(os.devnull, "w")  # the monitoring event lines  # noqa: SIM115
        try:
            result = remember.lambda_handler(event, None)
        finally:
            sys.stdout.close()
            sys.stdout = stdout
        ms = (time.perf_counter() - t0) * 1000
        out = json.loads(result["body"])
        reqs = llm.requests[llm_before:]
        graph, wr, items, wcu_now = WRITES.snapshot()
        ok = result["statusCode"] == 200
        row = Row(
            n,
            kind,
            len(text),
            result["statusCode"],
            out.get("chunks", 0) if ok else 0,
            len(out.get("entities", [])),
            sum(1 for e in out.get("entities", []) if e["created"]),
            len(out.get("edges", [])),
            len(out.get("invalidated", [])),
            len(reqs),
            sum((r.reply or {}).get("usage", {}).get("input_tokens", 0) for r in reqs),
            sum((r.reply or {}).get("usage", {}).get("output_tokens", 0) for r in reqs),
            emb.calls() - emb_before,
            REQUESTS.total - ddb_before,
            graph - graph_before,
            REQUESTS.snapshot().get("Query", 0) - query_before,
            wr - wr_before,
            items - items_before,
            wcu_now - wcu_before,
            vectors.requests - vec_before,
            ms,
        )
        rows.append(row)
        if not ok:
            print(f"    error: {out}")
        print(
            f"{row.n:>3} {row.kind:4} {row.chars:>6} {row.status:>3} {row.chunks:>3} "
            f"{row.entities:>3} {row.new_entities:>3} {row.edges:>3} {row.invalidated:>3} "
            f"{row.llm:>3} {row.tok_in:>6} {row.tok_out:>5} {row.emb:>3} {row.ddb:>4} "
            f"{row.graph:>5} {row.qry:>4} {row.wr:>3} {row.items:>5} {row.wcu:>4} {row.vec:>3} "
            f"{row.ms:>6.0f}"
        )

    print("\nmedians" + " " * 10 + "  ".join(f"{c:>7}" for c in COLUMNS))
    for label, subset in (
        ("messages", [r for r in rows if r.kind == "msg"]),
        ("documents", [r for r in rows if r.kind == "doc"]),
        ("all", rows),
    ):
        if not subset:
            continue
        meds = [statistics.median(getattr(r, c) for r in subset) for c in COLUMNS]
        print(f"  {label:<9} (n={len(subset):>2}) " + "  ".join(f"{m:>7.1f}" for m in meds))

    ops = Counter(REQUESTS.snapshot())
    print(
        "\nDynamoDB requests of the whole run, by operation: "
        + ", ".join(f"{op} {n}" for op, n in ops.most_common())
    )
    print(
        "by table (a batch counted once per table it touches): "
        + ", ".join(f"{t} {n}" for t, n in WRITES.by_table.most_common())
    )
    failed = [r.n for r in rows if r.status != 200]
    print(
        f"failed texts: {failed or 'none'}; invalidated facts: {sum(r.invalidated for r in rows)}; "
        f"entities: {sum(r.new_entities for r in rows)} created"
    )
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(Row.__dataclass_fields__)
            for r in rows:
                w.writerow(r.__dict__.values())

    llm.stop()
    emb.stop()
    moto.stop()


if __name__ == "__main__":
    main()
