"""Entity summaries, kept current: the use case of the summarize job.

A remember that changes an entity's facts marks its summary stale (one
write, after the commit: :func:`changed`) and queues one job for the dataset
(the async worker on AWS, a background thread locally): never on the
request path, never blocking it. The job takes up to ``summary_batch`` (N)
stale entities at a time, leased so that two jobs never write the same one,
and writes their summaries with ONE ``summarize_entity`` call; at most
``summary_calls`` calls a job (what is left is queued again). So M entities
changed at once cost ceil(M / N) calls, and a remember, which changes a
bounded number of entities, a bounded number of calls.

A summary rests on the entity's live facts (the newest
:data:`FACTS_PER_ENTITY`) and the texts they were stated in (the newest
:data:`TEXTS_PER_ENTITY`, cut to :data:`TEXT_CHARS`); the model cites the IDs
it used, and only IDs it was given are kept.

A crash between the commit and the stale mark leaves the old summary
current until the entity changes again (the facts are safe; the summary is a
convenience, not the truth)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from .. import clock
from ..ai import prompts
from ..ai.jsonreply import as_id
from ..graph.port import GraphStore
from ..models import Artifact, DatasetKey, Edge, Entity
from ..notes.port import NotesStore, Summary
from ..records.meter import Meter
from .llm_json import llm_json
from .options import StageOptions

STAGE = "summarize_entity"
FACTS_PER_ENTITY = 15
TEXTS_PER_ENTITY = 3
TEXT_CHARS = 400
LEASE_S = 120.0  # a job's hold on the entities it is summarizing
MAX_TOKENS_PER_ENTITY = 200


def stamp() -> str:
    """A stale mark's instant, to the microsecond (a mark made while a job
    wrote must sort after the instant the job took the entity)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def touched(result: dict[str, Any]) -> list[int]:
    """The entities a remember's answer changed: those it named and both
    ends of every fact it wrote."""
    ids = {int(e["id"]) for e in result.get("entities", [])}
    for e in result.get("edges", []):
        ids.update((int(e["source_id"]), int(e["target_id"])))
    return sorted(ids)


def enabled(notes: NotesStore, key: DatasetKey, default: bool) -> bool:
    """Summaries on for this dataset: its setting, else the server's."""
    return bool(notes.get_options(key).get("summaries", default))


def run_batches(
    meter: Meter,
    stage: str,
    label: str,
    calls: int,
    take: Callable[[], list[Any]],
    one_call: Callable[[list[Any], str], int],
    left: Callable[[], bool],
) -> tuple[int, int, bool]:
    """The summary jobs' loop (entities here, sessions in sessions.py): up to
    ``calls`` model calls, each on the batch ``take`` leases, stamped before
    the take so a mark set again meanwhile stays due. Returns the calls made,
    what they wrote, and whether marks are left (only asked when the calls
    ran out: an empty take already says none)."""
    written = made = 0
    while made < calls:
        taken_at = stamp()
        ids = take()
        if not ids:
            break
        with meter.call.step(stage) as c:
            written += one_call(ids, taken_at)
            c[label] = len(ids)
        made += 1
    return made, written, made >= calls and left()


class Summarizer:
    def __init__(
        self, graph: GraphStore, notes: NotesStore, batch: int, calls: int, default_model: str
    ) -> None:
        self.graph = graph
        self.notes = notes
        self.batch = max(1, batch)
        self.calls = max(1, calls)
        self.opts = StageOptions(default_model)

    def run(self, key: DatasetKey, meter: Meter) -> dict[str, Any]:
        """Summarize stale entities: up to ``calls`` calls of ``batch`` each.
        ``more``: stale entities are left (the caller queues another job)."""
        calls, written, more = run_batches(
            meter,
            STAGE,
            "entities",
            self.calls,
            lambda: self.notes.take_stale(key, self.batch, time.time(), LEASE_S),
            lambda ids, taken_at: self._one_call(key, ids, meter, taken_at),
            lambda: self.notes.stale_count(key, 1) > 0,
        )
        return {"calls": calls, "summaries": written, "more": more}

    def _one_call(self, key: DatasetKey, ids: list[int], meter: Meter, taken_at: str) -> int:
        entities = self.graph.get_entities(key, ids)
        edges = self.graph.live_edges_around(key, ids, FACTS_PER_ENTITY * len(ids))
        ends = {i for e in edges for i in (e.source_id, e.target_id)} - set(entities)
        names = {i: e.name for i, e in entities.items()}
        names.update({i: e.name for i, e in self.graph.get_entities(key, sorted(ends)).items()})
        facts = {i: [e for e in edges if i in (e.source_id, e.target_id)] for i in entities}
        facts = {i: f[:FACTS_PER_ENTITY] for i, f in facts.items()}
        wanted = {
            i: [a for a in dict.fromkeys(e.artifact_id for e in f) if a][:TEXTS_PER_ENTITY]
            for i, f in facts.items()
        }
        texts = self.graph.get_artifacts(key, sorted({a for v in wanted.values() for a in v}))
        now = clock.now_str()
        out: dict[int, Summary] = {i: Summary(i, updated_at=now) for i in ids}
        if entities:
            blocks = [
                _block(entities[i], facts[i], [texts[a] for a in wanted[i] if a in texts], names)
                for i in sorted(entities)
            ]
            data = llm_json(
                meter,
                self.opts,
                STAGE,
                prompts.SUMMARIZE_ENTITY_SYSTEM,
                "\n".join(blocks),
                max_tokens=MAX_TOKENS_PER_ENTITY * len(entities) + 200,
            )
            _read(data, out, facts, wanted)
        self.notes.put_summaries(key, list(out.values()), taken_at)
        return sum(1 for s in out.values() if s.text)


def _block(ent: Entity, facts: list[Edge], texts: list[Artifact], names: dict[int, str]) -> str:
    lines = ["<entity>", prompts.entity_line(ent)]
    lines += [prompts.edge_line(e, names) for e in facts]
    lines += [f"[text {a.id}] {a.text[:TEXT_CHARS]}" for a in texts]
    lines.append("</entity>")
    return "\n".join(lines)


def _read(
    data: dict[str, Any],
    out: dict[int, Summary],
    facts: dict[int, list[Edge]],
    wanted: dict[int, list[int]],
) -> None:
    """The model's summaries into ``out``: only for entities it was given,
    citing only IDs it was given."""
    items = data.get("summaries")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        eid = as_id(item.get("id"))
        text = item.get("summary")
        if eid not in out or eid not in facts or not isinstance(text, str):
            continue
        given_edges = {e.id for e in facts[eid]}
        s = out[eid]
        s.text = text.strip()
        s.edges = _cited(item.get("edges"), given_edges)
        s.artifacts = _cited(item.get("texts"), set(wanted[eid]))


def _cited(value: Any, given: set[int]) -> list[int]:
    ids = [as_id(v) for v in value] if isinstance(value, list) else []
    return sorted({i for i in ids if i is not None and i in given})


Schedule = Callable[[DatasetKey], None]


def changed(
    notes: NotesStore, key: DatasetKey, entity_ids: list[int], schedule: Schedule | None
) -> None:
    """After a commit: mark the entities stale and, unless the caller
    schedules later (a batch, once at its end), queue the job."""
    if not entity_ids:
        return
    notes.mark_stale(key, entity_ids, stamp())
    if schedule is not None:
        schedule(key)
