"""gligabao ingest FILE.jsonl: bulk remember from a file of JSON lines, on the
local SQLite file (as `gligabao serve` would) or through a server (``--url``).

A line is one text, ``{"text", "speaker"?, "reference_time"?}``, or one chat
message, ``{"role", "content", "name"?, "created_at"?}``, either with
``user_id`` (else ``--user``), ``dataset``, ``session_id`` and ``extract``.
Every line is checked before anything is written. The texts of a user and
dataset go in the order of their time as batches (``remember/batch``: several
per LLM call, committed in pieces) of at most 1,000 texts (a batch's most),
one after the other; through a server, as requests of at most 60 KiB, each
awaited (its call record shows its progress) so that the order of time holds
across them.

The key (``--key``, else one from the file's bytes) names the batches'
ledgers: running the same command again skips the texts already committed,
and retries those that failed. The progress bar (rich) shows texts done, the
rate and the time left; without a terminal, a line per second."""

from __future__ import annotations

import hashlib
import json
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

from pydantic import TypeAdapter, ValidationError

from ..api.batch import MAX_BATCH_ITEMS, BatchItem

MAX_REQUEST_BYTES = 60 * 1024  # under the API's 64 KiB body limit
POLL_S = 0.3
_ITEM: TypeAdapter[Any] = TypeAdapter(BatchItem)


@dataclass
class Totals:
    texts: int = 0
    done: int = 0
    skipped: int = 0
    failed: int = 0
    pieces: int = 0
    llm_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    errors: list[str] = field(default_factory=list)

    def add(self, res: dict[str, Any]) -> None:
        self.done += int(res.get("done", 0))
        self.skipped += int(res.get("skipped", 0))
        self.failed += int(res.get("failed", 0))
        self.pieces += int(res.get("pieces", 0))
        self.llm_calls += int(res.get("llm_calls", 0))
        self.tokens += int(res.get("input_tokens", 0)) + int(res.get("output_tokens", 0))
        self.cost_usd += float(res.get("cost_usd", 0.0))
        self.errors += [str(e) for e in res.get("errors") or []]


def read_lines(fh: TextIO, user: str | None, dataset: str) -> dict[tuple[str, str], list[Any]]:
    """The lines grouped by user and dataset, each group in file order.
    Raises ValueError naming the first bad lines."""
    groups: dict[tuple[str, str], list[Any]] = {}
    bad: list[str] = []
    for n, raw in enumerate(fh, 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
            if not isinstance(obj, dict):
                raise ValueError("a line must be a JSON object")
            who = obj.pop("user_id", user)
            where = obj.pop("dataset", dataset)
            if not isinstance(who, str) or not who:
                raise ValueError("user_id: required (on the line or --user)")
            item = _ITEM.validate_python(obj)
        except (ValueError, ValidationError) as exc:
            bad.append(f"line {n}: {_reason(exc)}")
            continue
        groups.setdefault((who, where), []).append(item)
    if bad:
        raise ValueError(
            "; ".join(bad[:5]) + (f" (and {len(bad) - 5} more)" if len(bad) > 5 else "")
        )
    return groups


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"][1:]) or "line"
        return f"{loc}: {err['msg'].removeprefix('Value error, ')}"
    return str(exc)


def in_requests(items: list[Any], max_bytes: int | None = MAX_REQUEST_BYTES) -> Iterator[list[Any]]:
    """The items in the order of their time (without one: last, as "now"),
    cut into batches of at most 1,000 items and, as request bodies, of at most
    ``max_bytes`` (None: in this process, no body)."""
    ordered = sorted(items, key=lambda it: it.said_at or "~")
    part: list[Any] = []
    size = 0
    for it in ordered:
        cost = len(it.model_dump_json(exclude_none=True).encode()) + 2 if max_bytes else 0
        too_big = max_bytes is not None and size + cost > max_bytes
        if part and (too_big or len(part) >= MAX_BATCH_ITEMS):
            yield part
            part, size = [], 0
        part.append(it)
        size += cost
    if part:
        yield part


class Bar:
    """rich's progress bar on a terminal; else a plain line per second."""

    def __init__(self, total: int, out: TextIO) -> None:
        self.total, self.out = total, out
        self.t0 = self.last = time.monotonic()
        self.rich: Any = None
        if out.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self.rich = Progress(
                TextColumn("ingest"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
                console=Console(file=out),
            )
            self.task = self.rich.add_task("ingest", total=total, rate="")
            self.rich.start()

    def update(self, done: int, failed: int, final: bool = False) -> None:
        now = time.monotonic()
        rate = done / (now - self.t0) if now > self.t0 else 0.0
        shown = f"{rate:.1f} texts/s" + (f", {failed} failed" if failed else "")
        if self.rich is not None:
            self.rich.update(self.task, completed=done + failed, rate=shown)
            return
        if final or now - self.last >= 1.0:
            self.last = now
            left = (self.total - done - failed) / rate if rate else 0.0
            print(
                f"ingest: {done + failed}/{self.total} texts, {shown}, about {left:.0f} s left",
                file=self.out,
                flush=True,
            )

    def close(self) -> None:
        if self.rich is not None:
            self.rich.stop()


def file_key(path: str) -> str:
    with open(path, "rb") as fh:
        return "ingest-" + hashlib.file_digest(fh, "sha256").hexdigest()[:32]


@contextmanager
def _bar(total: int) -> Iterator[Bar]:
    bar = Bar(total, sys.stderr)
    try:
        yield bar
    finally:
        bar.close()


def run_local(groups: dict[tuple[str, str], list[Any]], key: str, totals: Totals) -> None:
    """In this process, on the local stores, as the server's worker would."""
    from .. import clock
    from ..api.app import call_id_set
    from ..api.batch import BatchRequest
    from ..handlers.batch import check_llm, run_batch

    with _bar(totals.texts) as bar:
        base = 0
        # A group of more than 1,000 texts (a batch's most) goes as several
        # batches, one after the other, in the order of their time.
        parts = [
            (u, d, part) for (u, d), items in groups.items() for part in in_requests(items, None)
        ]
        for user, dataset, items in parts:
            req = BatchRequest(user_id=user, dataset=dataset, items=items)
            check_llm(req)
            call_id = uuid.uuid4().hex
            job = {"reference_time": clock.now_str(), "key": key}
            offset = base

            def seen(p: dict[str, object], offset: int = offset) -> None:
                bar.update(offset + int(str(p["done"])), totals.failed + int(str(p["failed"])))

            with call_id_set(call_id):
                res = run_batch(req, call_id, job, on_progress=seen)
            totals.add(res)
            base += len(items)
        bar.update(totals.done, totals.failed, final=True)


def run_remote(
    client: Any, groups: dict[tuple[str, str], list[Any]], key: str, totals: Totals
) -> None:
    """Through a server: one request at a time, each polled until it ends."""
    n = 0  # the requests' keys: the same file cuts into the same requests
    with _bar(totals.texts) as bar:
        for (user, dataset), items in groups.items():
            for part in in_requests(items):
                body = [it.model_dump(exclude_none=True) for it in part]
                n += 1
                accepted = client.remember_batch(
                    body, user_id=user, dataset=dataset, idempotency_key=f"{key}-{n}"
                )
                while True:
                    call = client.call(accepted.call_id, user_id=user).model_dump()
                    res = call.get("result") or {}
                    bar.update(
                        totals.done + int(res.get("done", 0)),
                        totals.failed + int(res.get("failed", 0)),
                    )
                    if call["status"] not in ("accepted", "running") and not str(
                        call["status"]
                    ).startswith("retrying"):
                        break
                    time.sleep(POLL_S)
                if call["status"] != "ok":
                    raise RuntimeError(f"batch {accepted.call_id}: {call['status']}")
                totals.add(res)
        bar.update(totals.done, totals.failed, final=True)


def ingest(
    path: str,
    *,
    url: str | None,
    user: str | None,
    dataset: str,
    key: str | None,
    token: str | None,
) -> int:
    """The command: 0 when every text is committed, 1 when some failed (run
    it again to retry them), 2 for a bad file."""
    from ..errors import GbError

    try:
        with open(path, encoding="utf-8") as fh:
            groups = read_lines(fh, user, dataset)
    except (OSError, ValueError) as exc:
        print(f"ingest: {exc}", file=sys.stderr)
        return 2
    key = key or file_key(path)
    totals = Totals(texts=sum(len(v) for v in groups.values()))
    t0 = time.monotonic()
    try:
        if url:
            from ..client import Bearer, Client

            run_remote(Client(url, Bearer(token) if token else None), groups, key, totals)
        else:
            run_local(groups, key, totals)
    except (GbError, RuntimeError) as exc:
        message = exc.message if isinstance(exc, GbError) else str(exc)
        print(
            f"ingest stopped: {message}; what is committed stays: run the same command "
            f"again to go on (key {key})",
            file=sys.stderr,
        )
        return 1
    except Exception as exc:  # the client's ApiError and the like
        print(
            f"ingest stopped: {exc}; run the same command again to go on (key {key})",
            file=sys.stderr,
        )
        return 1
    print(
        f"ingested {totals.done} of {totals.texts} texts ({totals.skipped} skipped, "
        f"{totals.failed} failed) in {totals.pieces} pieces: {totals.llm_calls} LLM calls, "
        f"{totals.tokens} tokens, ${totals.cost_usd:.4f}, {time.monotonic() - t0:.1f} s"
    )
    for err in totals.errors[:5]:
        print(f"  failed: {err}", file=sys.stderr)
    if totals.failed:
        print(f"run the same command again to retry the failed texts (key {key})", file=sys.stderr)
        return 1
    return 0
