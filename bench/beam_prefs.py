"""BEAM dev split, preference-following and instruction-following only: does
what the user told the memory to keep reach the context of the questions it
governs? (issue 44; the full BEAM ruler is another bench's.)

Each turn remembered on its own, as the BEAM measure does (speaker, session,
date; the product's local embedder), into two users of one `gligabao serve`:

* ``rule``: every turn with ``"extract": false``; the rule of
  memory/standing.py keeps the user's standing statements.
* ``model``: the same, except the turns a scripted model marks (the gold turns
  of the two categories' questions, what a model that marks preferences and
  instructions would find) are remembered with extraction, and the fake's
  ``extract`` reply states each as one fact with ``kind`` and ``topic``.

Each user is then asked every question of the two categories by ``search``,
with the notes (``GB_STANDING_SHARE``, the default) and without them (a
second server on the same file with ``GB_STANDING_SHARE=0``): evidence recall
is the share of a question's gold turns whose text is in the context's
passages or notes.

    nice -n 10 python -m bench.beam_prefs --conversations 1
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import ruler

DEFAULT_DATA = ruler.DATA / "beam" / "beam_100k_dev.jsonl"
CATEGORIES = ("preference_following", "instruction_following")


def load(path: Path, n: int) -> list[dict[str, Any]]:
    convs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return convs[:n]


def marked(conv: dict[str, Any]) -> dict[str, str]:
    """Turn text -> kind, for the gold turns of the two categories."""
    turns = {t["id"]: t for t in conv["turns"]}
    out: dict[str, str] = {}
    for q in conv["questions"]:
        if q["category"] in CATEGORIES:
            kind = "preference" if q["category"] == "preference_following" else "instruction"
            for i in q["gold_turn_ids"]:
                if i in turns and turns[i]["speaker"] == "user":
                    out[turns[i]["text"].strip()] = kind
    return out


def scripted_extract(kinds: dict[str, str]) -> Any:
    """The fake's extract: a marked turn as one fact of its kind, else nothing."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        text = ruler.prompt_text(body)
        m = re.search(r"<text>\n(.*)\n</text>", text, re.S)
        said = (m.group(1) if m else "").strip()
        kind = kinds.get(said)
        if kind is None:
            return {"entities": [], "edges": []}
        topic = " ".join(said.split()[:6])
        return {
            "entities": [{"name": "user", "type": "person"}, {"name": topic, "type": "concept"}],
            "edges": [{"source": "user", "target": topic, "relation": f"has_{kind}",
                       "description": said, "kind": kind, "topic": topic}],
        }

    return reply


def remember(base: str, conv: dict[str, Any], variant: str, kinds: dict[str, str]) -> int:
    user = f"{conv['conv_id']}-{variant}"
    n = 0
    for t in conv["turns"]:
        extract = variant == "model" and t["text"].strip() in kinds
        ruler.call(base, "/v1/gb/remember", {
            "user_id": user, "text": t["text"], "speaker": t["speaker"],
            "session_id": f"session_{t['session']}", "reference_time": date_of(t["date"]),
            "extract": extract})
        n += 1
    return n


def date_of(raw: str) -> str:
    return time.strftime("%Y-%m-%dT00:00:00Z", time.strptime(raw, "%B-%d-%Y"))


def ask(base: str, conv: dict[str, Any], variant: str) -> list[dict[str, Any]]:
    turns = {t["id"]: t for t in conv["turns"]}
    rows = []
    for q in conv["questions"]:
        if q["category"] not in CATEGORIES or not q["gold_turn_ids"]:
            continue
        out, _ = ruler.call(base, "/v1/gb/search",
                            {"user_id": f"{conv['conv_id']}-{variant}", "query": q["question"]})
        parts = {(p.get("text") or "").strip() for p in out["passages"]}
        parts |= {(n.get("text") or "").strip() for n in out.get("notes", [])}
        gold = [i for i in q["gold_turn_ids"] if i in turns]
        found = [i for i in gold if turns[i]["text"].strip() in parts]
        rows.append({"category": q["category"], "found": len(found), "gold": len(gold),
                     "tokens": out["context_tokens"], "notes": len(out.get("notes", []))})
    return rows


def table(results: dict[str, list[dict[str, Any]]]) -> str:
    lines = ["| variant | category | n | evidence recall | notes | tokens |", "|-|-|-|-|-|-|"]
    for name, rows in results.items():
        for cat in CATEGORIES:
            rs = [r for r in rows if r["category"] == cat]
            if rs:
                rec = ruler.mean([r["found"] / r["gold"] for r in rs])
                lines.append(f"| {name} | {cat} | {len(rs)} | {ruler.fmt(rec)} | "
                             f"{ruler.mean([r['notes'] for r in rs]):.1f} | "
                             f"{ruler.mean([r['tokens'] for r in rs]):,.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--conversations", type=int, default=1)
    ap.add_argument("--variants", default="rule,model")
    ap.add_argument("--store", default="", help="keep (and reuse) the remembered file here")
    ap.add_argument("--out", type=Path, default=ruler.OUT / "beam_prefs.json")
    args = ap.parse_args(argv)
    from .harness.fakes import FakeAnthropic

    convs = load(args.data, args.conversations)
    variants = [v for v in args.variants.split(",") if v]
    kinds = {k: v for c in convs for k, v in marked(c).items()}
    results: dict[str, list[dict[str, Any]]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as fake:
        fake.default("extract", scripted_extract(kinds))
        path = Path(args.store) if args.store else Path(tmp) / "beam.db"
        done_mark = path.with_suffix(".done")
        done = set(done_mark.read_text().split()) if done_mark.exists() else set()
        env = {**ruler.fake_llm_env(fake.url), "GB_SUMMARIES": "off"}
        with ruler.Server(path, env) as srv:
            todo = [(c, v) for c in convs for v in variants if f"{c['conv_id']}-{v}" not in done]
            t0 = time.perf_counter()
            ruler.run_pool(todo, lambda cv: remember(srv.url, cv[0], cv[1], kinds), 2)
            done |= {f"{c['conv_id']}-{v}" for c, v in todo}
            done_mark.write_text("\n".join(sorted(done)))
            ruler.say(f"remembered {len(todo)} loads in {time.perf_counter() - t0:.0f} s")
            for v in variants:
                results[f"{v}, with notes"] = [r for c in convs for r in ask(srv.url, c, v)]
        with ruler.Server(path, {**env, "GB_STANDING_SHARE": "0"}) as srv:
            for v in variants:
                results[f"{v}, without"] = [r for c in convs for r in ask(srv.url, c, v)]
    print(f"BEAM dev, {len(convs)} conversation(s) ({', '.join(c['conv_id'] for c in convs)}), "
          f"search's context at the default budget")
    print(table(results))
    print(f"\n{time.perf_counter() - started:.0f} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
