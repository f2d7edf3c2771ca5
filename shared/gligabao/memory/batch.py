"""remember for many texts at once (``POST /v1/gb/remember/batch``, ``gligabao
ingest``): the texts in the order of their time, read in windows (one
extraction call for several texts, within a token budget), each window
applied in pieces and committed piece by piece.

Why pieces: the interval rules judge a new fact against the live facts of
the graph, not against another new fact of the same call. A window whose
later text changes what an earlier one stated (the same source and
relation, or the same two entities) is therefore applied in two pieces,
the earlier first, so the later fact supersedes or ends it as it would
have one text at a time. Each piece is one commit (all of it visible or
none) and costs at most one ``invalidate`` call.

Resumable: the ledger keeps, per batch key, which texts are committed. A
rerun with the same key and the same texts skips them; a crash loses no
committed piece (at worst the piece that was being committed runs again)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from .. import deadline
from ..errors import Busy, DeadlineExceeded, GbError, is_transient
from ..models import DatasetKey
from ..records.meter import Meter
from ..text import estimate_tokens
from .options import StageOptions
from .remember import Read, Remember, RememberInput
from .window import Said

# Stop before a window when less time than this is left (a Lambda worker's
# budget): the queue runs the batch again and the ledger skips what is done.
RESERVE_S = 120.0
WINDOW_TOKENS = 3000  # texts per extraction call, by their estimated tokens
WINDOW_TEXTS = 100  # and by count (as remember's ``messages``)
# (GB_BATCH_WINDOW_TOKENS and GB_BATCH_WINDOW_TEXTS set them)


@dataclass(frozen=True)
class Item:
    """One text of a batch."""

    text: str
    reference_time: str
    speaker: str | None = None
    session_id: str | None = None
    extract: bool = True


@dataclass
class BatchInput:
    user_id: str
    dataset: str
    items: list[Item]
    options: StageOptions
    key: str  # the batch's idempotency key (its ledger)
    call_id: str | None = None
    # The ledger's ID (else one from the key and the texts): the caller's
    # when the texts' times were filled in ("now") and would differ on a rerun.
    ledger: str | None = None
    window_tokens: int = WINDOW_TOKENS
    window_texts: int = WINDOW_TEXTS


class Unfinished(GbError):
    """The batch stopped before its time ran out; what is committed stays."""

    status = 503
    status_code = 503  # a failure that may pass (errors.is_transient): run it again


class Ledger(Protocol):
    """Which texts of a batch are committed (indices in the time order)."""

    def load(self, user_id: str, ledger_id: str) -> set[int]: ...

    def save(self, user_id: str, ledger_id: str, done: set[int]) -> None: ...


@dataclass
class Progress:
    texts: int
    done: int = 0
    skipped: int = 0  # committed by an earlier run with the same key
    failed: int = 0
    pieces: int = 0
    errors: list[str] = field(default_factory=list)

    def public(self, meter: Meter) -> dict[str, object]:
        totals = meter.call.totals()
        return {
            "texts": self.texts,
            "done": self.done,
            "skipped": self.skipped,
            "failed": self.failed,
            "pieces": self.pieces,
            "llm_calls": totals["llm_calls"],
            "input_tokens": totals["input_tokens"],
            "output_tokens": totals["output_tokens"],
            "cost_usd": totals["cost_usd"],
            "errors": self.errors[:5],
        }


def in_time_order(items: list[Item]) -> list[Item]:
    """Stable: texts of the same time keep the order they were given in."""
    return sorted(items, key=lambda it: it.reference_time)


def ledger_id(user_id: str, dataset: str, key: str, rows: list[object]) -> str:
    """The same key with other texts is another batch (nothing is skipped)."""
    digest = hashlib.sha256()
    for part in (user_id, dataset, key):
        digest.update(part.encode() + b"\0")
    for row in rows:
        digest.update(json.dumps(row, sort_keys=True).encode() + b"\n")
    return "batch-" + digest.hexdigest()[:40]


def windows(items: list[Item], todo: list[int], tokens: int, size: int) -> list[list[int]]:
    """Consecutive texts (in time order) of one ``extract``, at most ``size``
    texts and about ``tokens`` tokens each. A window may hold several
    sessions (each text keeps its own): interleaved sessions would
    otherwise cut it to a text or two."""
    out: list[list[int]] = []
    used = 0
    for i in todo:
        it, cost = items[i], estimate_tokens(items[i].text)
        last = items[out[-1][-1]] if out else None
        fits = (
            last is not None
            and last.extract == it.extract
            and len(out[-1]) < size
            and used + cost <= tokens
        )
        if fits:
            out[-1].append(i)
            used += cost
        else:
            out.append([i])
            used = cost
    return out


def pieces(read: Read) -> list[list[int]]:
    """The window's messages cut before a message whose fact touches what a
    fact of the current piece states (same source and relation, or the same
    two entities): those must meet as a live fact and a new one."""
    keys_of: dict[int, set[tuple[str, ...]]] = {}
    for f in read.stated:
        if f.chunk is not None:
            pair = tuple(sorted((f.source, f.target)))
            keys_of.setdefault(f.chunk, set()).update({("kind", f.source, f.relation), pair})
    out: list[list[int]] = []
    held: set[tuple[str, ...]] = set()
    for i in range(len(read.said)):
        keys = keys_of.get(i, set())
        if out and not keys & held:
            out[-1].append(i)
        else:
            out.append([i])
            held = set()
        held |= keys
    return out


def part_of(read: Read, part: list[int], first: bool) -> Read:
    """The read of some messages of a window: their vectors, their facts
    (renumbered), the entities those facts name (the first piece also takes
    the entities no fact names, and the facts placed in no message)."""
    local = {i: n for n, i in enumerate(part)}
    stated = [
        replace(f, chunk=None if f.chunk is None else local[f.chunk])
        for f in read.stated
        if (f.chunk in local) or (first and f.chunk is None)
    ]
    named = {n for f in read.stated for n in (f.source, f.target)}
    mine = {n for f in stated for n in (f.source, f.target)}
    extracted = [ex for ex in read.extracted if ex.norm in mine or (first and ex.norm not in named)]
    return replace(
        read,
        said=[read.said[i] for i in part],
        text_vectors=[read.text_vectors[i] for i in part],
        words=[read.words[i] for i in part] if read.words else [],
        extracted=extracted,
        stated=stated,
    )


def alone(window_input: RememberInput, said: Said) -> RememberInput:
    """One text of a window without extraction, remembered as a ``remember``
    of that text alone: a long reply stored and searched by its windows, each
    embedded once (a window of texts stores each whole, after the text
    before it and sentence by sentence: about twice the embedding tokens on
    long replies, docs/performance.md). So a conversation loaded by batch is
    stored as the same conversation remembered turn by turn."""
    return replace(
        window_input,
        text=said.text,
        speaker=said.speaker,
        session_id=said.session_id,
        reference_time=said.reference_time,
        messages=None,
    )


@dataclass
class _Run:
    """A batch run's state: what the ledger holds, the progress and whom to tell."""

    ledger: Ledger
    user_id: str
    ledger_id: str
    done: set[int]
    progress: Progress
    meter: Meter
    report: Callable[[dict[str, object]], None]

    def committed(self, texts: list[int]) -> None:
        """A piece is committed: its texts in the ledger, the progress told."""
        self.done.update(texts)
        self.ledger.save(self.user_id, self.ledger_id, self.done)
        self.progress.done += len(texts)
        self.progress.pieces += 1
        self.told()

    def told(self) -> None:
        self.report(self.progress.public(self.meter))


class RememberBatch:
    def __init__(self, remember: Remember, ledger: Ledger) -> None:
        self.remember = remember
        self.ledger = ledger

    def run(
        self,
        inp: BatchInput,
        meter: Meter,
        report: Callable[[dict[str, object]], None] = lambda progress: None,
    ) -> dict[str, object]:
        """Remember every text not yet committed under the batch's key.
        A piece that fails for good is counted and left out (a rerun tries it
        again); a failure that may pass (a 429, a 5xx, a timeout) stops the
        batch with what is committed kept, for the queue to run it again."""
        items = in_time_order(inp.items)
        lid = inp.ledger or ledger_id(
            inp.user_id,
            inp.dataset,
            inp.key,
            [[it.text, it.reference_time, it.speaker, it.session_id, it.extract] for it in items],
        )
        done = self.ledger.load(inp.user_id, lid)
        todo = [i for i in range(len(items)) if i not in done]
        progress = Progress(len(items), done=len(done), skipped=len(done))
        run = _Run(self.ledger, inp.user_id, lid, done, progress, meter, report)
        call_id = inp.call_id or meter.call.call_id
        run.told()
        for group in windows(items, todo, inp.window_tokens, inp.window_texts):
            left = deadline.remaining()
            if left is not None and left < RESERVE_S:
                raise Unfinished(
                    f"the batch stopped with {len(items) - progress.done} texts to go before "
                    "its time ran out; it runs again from there"
                )
            try:
                self._window(inp, [items[i] for i in group], group, call_id, run)
            except GbError as exc:
                # What is committed stays; the queue runs the batch again.
                if isinstance(exc, Busy):  # a lease of a concurrent call: it passes
                    raise Unfinished(
                        f"the batch stopped with {len(items) - progress.done} texts to go: "
                        f"{exc.message}"
                    ) from exc
                if isinstance(exc, DeadlineExceeded) or is_transient(exc):
                    raise
                lost = [i for i in group if i not in done]
                progress.failed += len(lost)
                progress.errors.append(
                    f"{len(lost)} texts from {items[group[0]].reference_time}: {exc.message}"
                )
                run.told()
        if self.remember.notes is not None:  # the summary job of all its pieces, once
            self.remember.notes.flush(DatasetKey(inp.user_id, inp.dataset))
        return progress.public(meter)

    def _window(
        self, inp: BatchInput, texts: list[Item], group: list[int], call_id: str, run: _Run
    ) -> None:
        """A window's texts (``group``: their indices in time order) remembered
        and committed piece by piece: read together with one extraction call,
        or, without extraction, each as its own ``remember`` (:func:`alone`)."""
        first = texts[0]
        said = [Said(t.text, t.speaker, t.reference_time, t.session_id) for t in texts]
        rin = RememberInput(
            inp.user_id,
            inp.dataset,
            "",
            first.session_id,
            max(s.reference_time for s in said),
            inp.options,
            call_id,
            messages=said,
            extract=first.extract,
            schedule_summaries=False,  # once, at the end
        )
        if not first.extract:
            for i, one in zip(group, said, strict=True):
                self.remember.run(alone(rin, one), run.meter)
                run.committed([i])
            return
        read = self.remember.read(rin, run.meter)
        for n, part in enumerate(pieces(read)):
            sub = replace(rin, messages=[said[i] for i in part])
            self.remember.apply(sub, run.meter, part_of(read, part, n == 0))
            run.committed([group[i] for i in part])
