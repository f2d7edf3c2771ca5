"""The events: IDs only, never text (a subscriber reads what it needs with
its own credentials). Each has an ``id`` for de-duplication: delivery is at
least once, and a redelivery carries the same ID."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import clock

SOURCE = "gligabao"  # EventBridge's ``source``; the ``type`` is its ``detail-type``

REMEMBERED = "memory.remembered"
FORGOTTEN = "memory.forgotten"
FACT_FORGOTTEN = "fact.forgotten"
FACT_CORRECTED = "fact.corrected"
DATASET_DELETED = "dataset.deleted"
USER_ERASED = "user.erased"
BATCH_FINISHED = "batch.finished"
BATCH_FAILED = "batch.failed"
TYPES = (
    REMEMBERED,
    FORGOTTEN,
    FACT_FORGOTTEN,
    FACT_CORRECTED,
    DATASET_DELETED,
    USER_ERASED,
    BATCH_FINISHED,
    BATCH_FAILED,
)


@dataclass(frozen=True)
class Event:
    type: str
    user_id: str
    data: dict[str, Any]
    dataset: str | None = None
    id: str = field(default_factory=lambda: "evt_" + uuid.uuid4().hex)
    time: str = field(default_factory=clock.now_str)

    def public(self) -> dict[str, Any]:
        """The body a subscriber receives (docs/events/*.schema.json)."""
        return asdict(self)

    @classmethod
    def of(cls, body: dict[str, Any]) -> Event:
        return cls(**body)


def _ids(values: Any) -> list[int]:
    return sorted({int(v) for v in values})


def remembered(
    user_id: str,
    dataset: str,
    call_id: str | None,
    artifacts: list[int],
    entities: list[int],
    updated_entities: list[int],
    edges: list[int],
    ended_edges: list[int],
) -> Event:
    """A remember's commit: the texts stored, the entities created and
    enriched, the facts added and those it superseded or ended."""
    return Event(
        REMEMBERED,
        user_id,
        {
            "call_id": call_id,
            "artifact_ids": _ids(artifacts),
            "entity_ids": _ids(entities),
            "updated_entity_ids": _ids(updated_entities),
            "edge_ids": _ids(edges),
            "superseded_edge_ids": _ids(ended_edges),
        },
        dataset,
    )


def forgotten(user_id: str, dataset: str, result: dict[str, Any]) -> Event:
    """A forget (``memory/forget.py``'s answer): what went, what came back."""
    removed = result.get("removed", {})
    return Event(
        FORGOTTEN,
        user_id,
        {
            "artifact_id": int(result["artifact_id"]),
            "artifact_ids": _ids(removed.get("artifacts", [])),
            "entity_ids": _ids(removed.get("entities", [])),
            "edge_ids": _ids(removed.get("edges", [])),
            "restored_edge_ids": _ids(result.get("restored", {}).get("edges", [])),
        },
        dataset,
    )


def fact_forgotten(user_id: str, dataset: str, edge_id: int, restored: list[int]) -> Event:
    """One fact forgotten (``DELETE /v1/gb/edges/{id}``): the texts that
    stated it stay; what it had superseded is live again."""
    return Event(
        FACT_FORGOTTEN,
        user_id,
        {"edge_id": int(edge_id), "restored_edge_ids": _ids(restored)},
        dataset,
    )


def fact_corrected(user_id: str, dataset: str, edge_id: int, replaced: int) -> Event:
    """A fact corrected or ended by a person (``PATCH /v1/gb/edges/{id}``):
    the new fact, and the one it replaced (superseded or ended)."""
    return Event(
        FACT_CORRECTED,
        user_id,
        {"edge_id": int(edge_id), "replaced_edge_id": int(replaced)},
        dataset,
    )


def dataset_deleted(user_id: str, dataset: str) -> Event:
    return Event(DATASET_DELETED, user_id, {}, dataset)


def user_erased(user_id: str, call_id: str) -> Event:
    """Its ID follows from the erase's call: a rerun of an unfinished erase
    (the same call) makes the same event, which its outbox keeps once."""
    return Event(USER_ERASED, user_id, {"call_id": call_id}, id=_derived(USER_ERASED, call_id))


def _derived(kind: str, call_id: str) -> str:
    return "evt_" + uuid.uuid5(uuid.NAMESPACE_URL, f"gligabao:{kind}:{call_id}").hex


def batch_ended(user_id: str, dataset: str, call_id: str, error: str | None) -> Event:
    """A batch's end: ``batch.failed`` carries the error's status, no text.
    Its ID follows from the batch's call (and the outcome): a rerun of the
    job that ends the same way makes the same event."""
    if error is None:
        return Event(
            BATCH_FINISHED,
            user_id,
            {"call_id": call_id},
            dataset,
            _derived(BATCH_FINISHED, call_id),
        )
    data = {"call_id": call_id, "status": error}
    return Event(BATCH_FAILED, user_id, data, dataset, _derived(f"{BATCH_FAILED}:{error}", call_id))
