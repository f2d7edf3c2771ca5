"""What one `remember` costs: LLM calls and tokens, embeddings requests,
DynamoDB requests and writes, per text of a generated corpus.

    .venv/bin/python bench/remember_corpus.py [--messages 56] [--documents 4] [--seed 7]
        [--csv out.csv]

Setup, all in this process: moto's DynamoDB server on loopback
(``start_moto``), the fake Anthropic and OpenAI servers of ``tests/fakes``
(the real SDKs talk to them over HTTP), the embedded vector index. Each text
goes through the Lambda handler of ``POST /v1/gb/remember`` (an API Gateway
event, as on AWS: the call record and inferences are saved too), one after
the other into one dataset, so that later texts meet the entities and facts
of earlier ones (resolution, restated facts, invalidation).

The corpus: short chat messages from sentence templates ("Alice Martin works
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
import math
import os
import random
import re
import statistics
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "shared"))
sys.path.insert(0, str(ROOT / "tests"))

from fakes.anthropic_server import FakeAnthropic  # noqa: E402
from fakes.openai_server import FakeOpenAI  # noqa: E402
from gligabao.dynamodb.client import REQUESTS  # noqa: E402

USER, DATASET = "bench", "main"
RECORD_TABLES = ("calls", "inferences", "idempotency")
WRITE_OPS = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")

# --- the corpus -----------------------------------------------------------------

FIRST = [
    "Alice",
    "Bob",
    "Chloe",
    "David",
    "Emma",
    "Farid",
    "Grace",
    "Hugo",
    "Ines",
    "Jonas",
    "Karin",
    "Liam",
    "Maya",
    "Noah",
    "Olga",
    "Paulo",
]
LAST = ["Martin", "Chen", "Dubois", "Okafor", "Rossi", "Tanaka", "Nowak", "Silva"]
ORGS = [
    "Globex",
    "Acme",
    "Initech",
    "Umbrella",
    "Hooli",
    "Stark",
    "Wayne",
    "Tyrell",
    "Soylent",
    "Cyberdyne",
]
CITIES = [
    "Paris",
    "Lyon",
    "Berlin",
    "Madrid",
    "Lisbon",
    "Oslo",
    "Vienna",
    "Prague",
    "Dublin",
    "Milan",
]
HOBBIES = ["chess", "climbing", "jazz", "sailing", "pottery", "tennis", "baking", "astronomy"]
ROLES = ["engineer", "designer", "manager", "researcher", "nurse", "teacher", "lawyer", "chef"]
FILLER = [
    "The weather was mild for the season and the trains ran on time.",
    "Several meetings were moved to the afternoon because of the holidays.",
    "The quarterly report was discussed at length without any decision.",
    "Coffee in the new office turned out to be better than expected.",
    "Most of the week went into planning and small fixes to old documents.",
    "There was a long debate about the budget, the timeline and the risks.",
]

NAME = r"([A-Z][a-z]+(?: [A-Z][a-z]+)?)"
# (regex, relation, source type, target type, ended)
PATTERNS: list[tuple[re.Pattern[str], str, str, str, bool]] = [
    (re.compile(rf"{NAME} works at {NAME}\."), "works_at", "person", "organization", False),
    (
        re.compile(rf"{NAME} joined {NAME} last month\."),
        "works_at",
        "person",
        "organization",
        False,
    ),
    (re.compile(rf"{NAME} left {NAME}\."), "works_at", "person", "organization", True),
    (re.compile(rf"{NAME} lives in {NAME}\."), "lives_in", "person", "city", False),
    (re.compile(rf"{NAME} moved to {NAME}\."), "lives_in", "person", "city", False),
    (re.compile(rf"{NAME} met {NAME} at a conference\."), "met", "person", "person", False),
    (re.compile(rf"{NAME} likes ([a-z]+)\."), "likes", "person", "concept", False),
    (
        re.compile(rf"{NAME} is headquartered in {NAME}\."),
        "headquartered_in",
        "organization",
        "city",
        False,
    ),
]
ROLE = re.compile(rf"{NAME} is an? ([a-z]+)\.")


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def sentence(rng: random.Random) -> str:
    p = person(rng)
    kind = rng.randrange(9)
    if kind == 0:
        return f"{p} works at {rng.choice(ORGS)}."
    if kind == 1:
        return f"{p} joined {rng.choice(ORGS)} last month."
    if kind == 2:
        return f"{p} lives in {rng.choice(CITIES)}."
    if kind == 3:
        return f"{p} moved to {rng.choice(CITIES)}."
    if kind == 4:
        return f"{p} met {person(rng)} at a conference."
    if kind == 5:
        return f"{p} likes {rng.choice(HOBBIES)}."
    if kind == 6:
        return f"{rng.choice(ORGS)} is headquartered in {rng.choice(CITIES)}."
    if kind == 7:
        return f"{p} left {rng.choice(ORGS)}."
    return f"{p} is a {rng.choice(ROLES)}."


def message(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(1, 3)))


def document(rng: random.Random, target_chars: int = 12_000) -> str:
    paras: list[str] = []
    size = 0
    while size < target_chars:
        sents = [sentence(rng) for _ in range(rng.randint(2, 4))]
        sents += rng.sample(FILLER, rng.randint(2, 4))
        rng.shuffle(sents)
        para = " ".join(sents)
        paras.append(para)
        size += len(para) + 2
    return "\n\n".join(paras)


def corpus(messages: int, documents: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    texts = [("msg", message(rng)) for _ in range(messages)]
    every = max(1, messages // max(1, documents))
    for i in range(documents):  # spread the documents through the stream
        texts.insert(min(len(texts), (i + 1) * every + i), ("doc", document(rng)))
    return texts


# --- the fake LLM's replies ---------------------------------------------------------


def _user_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def extract_reply(body: dict[str, Any]) -> dict[str, Any]:
    prompt = _user_text(body)
    ref = re.search(r"<reference_time>(.*?)</reference_time>", prompt)
    ref_time = ref.group(1) if ref else None
    known = {
        m.group(2): int(m.group(1))
        for m in re.finditer(r"\[entity (\d+)\] ([^(\n:]+?)(?: \(|:|\n|$)", prompt)
    }
    m = re.search(r"<text>\n(.*)\n</text>", prompt, re.S)
    text = m.group(1) if m else ""
    entities: dict[str, dict[str, Any]] = {}
    edges: list[dict[str, Any]] = []

    def add(name: str, type_: str, description: str = "") -> None:
        if name not in entities:
            entities[name] = {"name": name, "type": type_, "description": description}
            if name in known:
                entities[name]["id"] = known[name]
        elif description and not entities[name]["description"]:
            entities[name]["description"] = description

    for pattern, relation, stype, ttype, ended in PATTERNS:
        for hit in pattern.finditer(text):
            src, dst = hit.group(1), hit.group(2)
            add(src, stype)
            add(dst, ttype)
            edges.append(
                {
                    "source": src,
                    "target": dst,
                    "relation": relation,
                    "description": hit.group(0),
                    "valid_at": None,
                    "invalid_at": ref_time if ended else None,
                }
            )
    for hit in ROLE.finditer(text):
        add(hit.group(1), "person", hit.group(2))
    return {"entities": list(entities.values()), "edges": edges}


NEW_FACT = re.compile(r"^\[new (\d+)\] (.+?) --(\w+)--> (.+?)(?::| \[)", re.M)
OLD_FACT = re.compile(r"^\[edge (\d+)\] (.+?)\(\d+\) --(\w+)--> (.+?)\(\d+\)", re.M)
EXCLUSIVE = {"works_at", "lives_in"}


def invalidate_reply(body: dict[str, Any]) -> dict[str, Any]:
    prompt = _user_text(body)
    new = [(int(m.group(1)), m.group(2), m.group(3), m.group(4)) for m in NEW_FACT.finditer(prompt)]
    out = []
    for m in OLD_FACT.finditer(prompt):
        edge_id, src, rel, dst = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        for i, nsrc, nrel, ndst in new:
            if rel in EXCLUSIVE and (nsrc, nrel) == (src, rel) and ndst != dst:
                out.append({"edge_id": edge_id, "by": i})
                break
    return {"invalidated": out}


def summarize_reply(body: dict[str, Any]) -> dict[str, Any]:
    m = re.search(r"<chunk[^>]*>\n(.*?[.!?])", _user_text(body), re.S)
    return {"summary": m.group(1) if m else "A part of a longer text."}


# --- DynamoDB write accounting ------------------------------------------------------


def _value_size(v: dict[str, Any]) -> int:
    ((kind, val),) = v.items()
    if kind == "S":
        return len(val.encode())
    if kind == "N":
        return math.ceil(len(str(val).lstrip("-").replace(".", "")) / 2) + 1
    if kind == "B":
        return len(val)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(_value_size({kind[0]: x}) for x in val)
    if kind == "L":
        return 3 + sum(_value_size(x) + 1 for x in val)
    if kind == "M":
        return 3 + sum(len(k.encode()) + _value_size(x) + 1 for k, x in val.items())
    return 0


def item_size(item: dict[str, Any]) -> int:
    return sum(len(k.encode()) + _value_size(v) for k, v in item.items())


def wcu(size: int) -> int:
    return max(1, math.ceil(size / 1024))


@dataclass
class WriteMeter:
    lock: threading.Lock = field(default_factory=threading.Lock)
    by_table: Counter[str] = field(default_factory=Counter)  # requests, per table touched
    graph_requests: int = 0  # requests that touch a graph table
    write_requests: int = 0
    items: int = 0
    wcu: int = 0

    def record(self, op: str, body: dict[str, Any]) -> None:
        with self.lock:
            tables_of = list(body.get("RequestItems", {})) or [body.get("TableName", "?")]
            for t in tables_of:
                self.by_table[_short(t)] += 1
            if any(_short(t) not in RECORD_TABLES for t in tables_of):
                self.graph_requests += 1
            if op not in WRITE_OPS:
                return
            self.write_requests += 1
            if op == "PutItem":
                self.items += 1
                self.wcu += wcu(item_size(body.get("Item", {})))
            elif op == "UpdateItem":
                sent = item_size(body.get("Key", {})) + sum(
                    _value_size(v) for v in body.get("ExpressionAttributeValues", {}).values()
                )
                self.items += 1
                self.wcu += wcu(sent)
            elif op == "DeleteItem":
                self.items += 1
                self.wcu += 1
            elif op == "BatchWriteItem":
                for reqs in body.get("RequestItems", {}).values():
                    for req in reqs:
                        self.items += 1
                        put = req.get("PutRequest")
                        self.wcu += wcu(item_size(put["Item"])) if put else 1
            elif op == "TransactWriteItems":
                for entry in body.get("TransactItems", []):
                    self.items += 1
                    inner = next(iter(entry.values()))
                    self.wcu += 2 * wcu(item_size(inner.get("Item", inner.get("Key", {}))))

    def snapshot(self) -> tuple[int, int, int, int]:
        with self.lock:
            return self.graph_requests, self.write_requests, self.items, self.wcu


PREFIX = f"bench{uuid.uuid4().hex[:6]}_"


def _short(table: str) -> str:
    return table.removeprefix(PREFIX)


WRITES = WriteMeter()


def install_write_hook() -> None:
    """Wrap the request counter's botocore hook (registered on every client
    pynamodb creates) so that each request's body is seen too."""
    counter = REQUESTS
    original = counter._hook

    def hook(model: Any = None, params: Any = None, **kwargs: Any) -> None:
        original(model=model, params=params, **kwargs)
        try:
            raw = (params or {}).get("body") or b"{}"
            body = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
        except ValueError:
            body = {}
        WRITES.record(getattr(model, "name", "unknown"), body)

    counter._hook = hook  # type: ignore[method-assign]


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
    llm, emb = FakeAnthropic().start(), FakeOpenAI(dim=256).start()
    llm.default("extract", extract_reply)
    llm.default("invalidate", invalidate_reply)
    llm.default("summarize", summarize_reply)
    os.environ.update(
        {
            "GB_DYNAMODB_ENDPOINT": moto_url,
            "GB_TABLE_PREFIX": PREFIX,
            "ANTHROPIC_API_KEY": "bench-key",
            "ANTHROPIC_BASE_URL": llm.url,
            "OPENAI_API_KEY": "bench-key",
            "OPENAI_BASE_URL": emb.base_url,
            "GB_EMBEDDING_DIMENSION": "256",
            "GB_LLM_MAX_RETRIES": "0",
            "POWERTOOLS_METRICS_NAMESPACE": "gligabao-bench",
            "POWERTOOLS_METRICS_DISABLED": "true",
        }
    )
    os.environ.pop("GB_OPENSEARCH_URL", None)
    from gligabao import wiring
    from gligabao.config import settings
    from gligabao.handlers import remember
    from gligabao.local.embedded import create_tables
    from gligabao.local.server import make_event

    wiring.reset()
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
