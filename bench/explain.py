"""Why is this in the context? One LoCoMo dev question's ``search`` with
``"explain": true``, printed: each context item's score and the parts that
made it, and the best candidates left out with the reason.

    .venv/bin/python -m bench.explain [--data PATH] [--conversation conv-26]
        [--mode turns] [--question 0] [--store DIR] [--set NAME=VALUE ...]
        [--budget N] [--json]

The conversation is remembered through `gligabao serve` as bench.locomo does
(the fake LLM, whose extraction returns nothing: passages alone; the bundled
local embedder); ``--store DIR`` reuses bench.locomo's file (its
``--store``). ``--set``: retrieval profile fields sent with the search. The
example in docs/retrieval.md is this script's output (``--store`` of a
LoCoMo run, the defaults).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from . import locomo, ruler


def _line(kind: str, item: dict[str, Any]) -> str:
    why = item["explain"]
    parts = ", ".join(f"{k} {v:.3f}" for k, v in why["parts"].items() if v)
    figures = {k: v for k, v in why.items() if k not in ("score", "parts")}
    shown = ", ".join(f"{k}={_fmt(v)}" for k, v in figures.items())
    head = f"{kind} {item.get('id', item.get('artifact_id'))}"
    return f"  {head}: score {why['score']:.3f} = {parts or '0'}  [{shown}]"


def _fmt(v: Any) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _text(item: dict[str, Any]) -> str:
    body = item.get("text") or item.get("summary") or item.get("description") or ""
    return body.replace("\n", " ")[:90]


def render(question: str, body: dict[str, Any]) -> str:
    """The explained context as text: what is in, and the best left out."""
    out = [f"Q: {question}", f"context: {body['context_tokens']} tokens"]
    for kind, items in (("entity", "entities"), ("edge", "edges"), ("passage", "passages")):
        ranked = sorted(body[items], key=lambda i: -i["explain"]["score"])
        for item in ranked:
            out.append(_line(kind, item))
            out.append(f"      {_text(item)}")
    out.append("left out (best first):")
    for left in body["left_out"]:
        out.append(_line(left["kind"], {**left, "id": left["id"]}) + f" -> {left['reason']}")
        out.append(f"      {left['label'][:90]}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    ap.add_argument("--conversation", default="1", help="an ID (conv-26) or the first N")
    ap.add_argument("--mode", default="turns", choices=("turns", "sessions"))
    ap.add_argument("--question", type=int, default=0, help="its index in the conversation")
    ap.add_argument("--store", default="", help="bench.locomo's --store (reused)")
    ap.add_argument("--budget", type=int, default=0, help="max_context_tokens (else the server's)")
    ap.add_argument("--json", action="store_true", help="the response as it is")
    ruler.profile_options(ap)
    args = ap.parse_args(argv)
    conv = locomo.load(args.data, args.conversation)[0]
    q = conv.questions[args.question]
    [(_, profile)] = ruler.profiles(args)[:1]
    from .harness.fakes import FakeAnthropic

    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as fake:
        fake.default("summarize", ruler.lead_summary)
        path = Path(args.store or tmp) / "locomo.db"
        with ruler.Server(path, ruler.fake_llm_env(fake.url)) as srv:
            done = locomo.remembered(path)
            if locomo.user_of(conv, args.mode) not in done:
                locomo.remember(srv.url, conv, args.mode)
                locomo.mark(path, done | {locomo.user_of(conv, args.mode)})
            body: dict[str, Any] = {"user_id": locomo.user_of(conv, args.mode),
                                    "query": q.text, "explain": True}
            if args.budget:
                body["max_context_tokens"] = args.budget
            if profile:
                body["profile"] = profile
            out, _ = ruler.call(srv.url, "/v1/gb/search", body)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"{conv.id} ({args.mode}), evidence {', '.join(q.evidence)}")
        print(render(q.text, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
