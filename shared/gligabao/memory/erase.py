"""Erase a user: every dataset (its rows, links, claims, vectors in every
index), every call record and inference row, every idempotency record; the
user's queued jobs find their call record gone and are dropped (see
handlers/remember_worker.py).

Crash-safe by being resumable: the erase first leaves a mark in the graph
store (``begin_erase``), each step is idempotent, and the mark goes last
(``end_erase``). A crash anywhere leaves the mark: the next erase of the
user, or the next start of ``gligabao serve`` (``resume_all``), runs it
again under the same call ID and finishes it.

The erase's own call record must outlive the user: it is kept under a
one-way hash of the user ID (``oneway.erased_user``) and holds no text of
the user, only when it finished and how many rows of each kind went.
"""

from __future__ import annotations

from typing import Any, Protocol

from .. import clock
from ..crash import crash_point
from ..events.model import user_erased
from ..graph.port import GraphStore
from ..models import DatasetKey
from ..oneway import erased_user
from ..records.model import CallRecord, new_call
from ..records.port import RecordStore
from ..vectors.port import VectorIndex

COUNTS = ("datasets", "entities", "edges", "artifacts", "calls", "inferences", "idempotency")


class IdempotencyRecords(Protocol):
    def forget_user(self, user_id: str) -> int: ...


class Erase:
    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorIndex,
        records: RecordStore,
        idempotency: IdempotencyRecords,
    ) -> None:
        self.graph = graph
        self.vectors = vectors
        self.records = records
        self.idempotency = idempotency

    def run(self, user_id: str, call_id: str) -> dict[str, Any]:
        """Erase the user (or finish an erase begun earlier, under its call
        ID). A user with nothing stored is erased all the same: zero counts."""
        call_id = self.graph.begin_erase(user_id, call_id)
        call = self._call(user_id, call_id)
        removed: dict[str, int] = call.result["removed"]  # type: ignore[index]
        crash_point("erase_begun")
        with call.step("datasets"):
            for name in self.graph.dataset_names(user_id):
                self._dataset(DatasetKey(user_id, name), removed)
                self._save(call)  # what went so far (a rerun adds to it)
                crash_point("erase_dataset")
        with call.step("records"):
            calls, inferences = self.records.delete_user(user_id)
            removed["calls"] += calls
            removed["inferences"] += inferences
            removed["idempotency"] += self.idempotency.forget_user(user_id)
        self._save(call)
        crash_point("erase_records")
        with call.step("end"):
            # its event goes with the last step, through the store's outbox
            self.graph.end_erase(user_id, [user_erased(user_id, call_id).public()])
        call.result = {"finished_at": clock.now_str(), "removed": removed}
        call.finish("ok")
        self._save(call)
        return {"call_id": call_id, "status": call.status, **call.result}

    def resume_all(self) -> list[str]:
        """Finish every erase a crash left unfinished; their call IDs."""
        return [self.run(user_id, call_id)["call_id"] for user_id, call_id in self.pending()]

    def pending(self) -> list[tuple[str, str]]:
        return self.graph.pending_erasures()

    def _dataset(self, key: DatasetKey, removed: dict[str, int]) -> None:
        found = self.graph.get_dataset(key)
        if found is not None:
            removed["datasets"] += 1
            removed["entities"] += found.entities
            removed["edges"] += found.edges
            removed["artifacts"] += found.artifacts
        # Vectors first (as a dataset delete does): rows gone first would
        # leave vectors with nothing to find them by. A deleted dataset's
        # row is purged again: a crashed delete may have left some.
        # (Its records go with all the user's, counted, in the next step.)
        if not self.vectors.inline:
            self.vectors.delete_dataset(key)
        self.graph.delete_dataset(key)

    def _call(self, user_id: str, call_id: str) -> CallRecord:
        """The erase's record, ``running``: the one a crashed run left (its
        counts go on), or a new one."""
        owner = erased_user(user_id)
        call = new_call(call_id, "erase", owner, "", None)
        earlier = self.records.get_call(owner, call_id)
        done = earlier.result.get("removed", {}) if earlier and earlier.result else {}
        call.result = {"removed": {k: int(done.get(k, 0)) for k in COUNTS}}
        call.status = "running"
        self._save(call)
        return call

    def _save(self, call: CallRecord) -> None:
        self.records.save_call(call)
