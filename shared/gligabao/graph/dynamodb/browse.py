"""The DynamoDB graph store's browse reads (bounded Queries on the dataset's
own partition, never a Scan) and its forget (one TransactWriteItems makes it
visible; the rows only reached through removed ones are deleted after it,
by this call or, after a crash, by the next commit's recovery)."""

from __future__ import annotations

import time

from pynamodb.exceptions import TransactWriteError
from pynamodb.transactions import TransactWrite

from ...dynamodb.batch import upstream
from ...dynamodb.tables import (
    ArtifactRow,
    DatasetRow,
    EdgeRow,
    EntityByUpdated,
    EntityRow,
    LinkRow,
    TermRow,
)
from ...errors import NotFound, UpstreamError
from ...models import (
    Artifact,
    Correction,
    DatasetKey,
    Edge,
    EdgeChange,
    Entity,
    ForgetPlan,
    Forgotten,
    Merge,
)
from ...text import normalize_name
from ..rules import claim_of, is_open, undone
from . import history as expiries
from .commit import TRANSACT_MAX, Commits, crash_point
from .history import (
    changes,
    correction_of,
    correction_sk,
    merge_sk,
    reverse_link_sk,
)
from .history import (
    merges as merges_of,
)
from .leases import COMMITTED, Leases
from .recovery import pack
from .rows import (
    artifact_from_row,
    edge_link_sk,
    edge_row,
    edge_unchanged,
    entity_from_row,
    entity_link_sk,
    fact_claim_sk,
    intent_sk,
    term_rows,
)

CHUNK_PAGE = 25  # rows per page while reading a text's chunks


class DynamoBrowse:
    """Mixed into DynamoGraphStore (which gives ``_leases`` and ``_commits``)."""

    _leases: Leases
    _commits: Commits

    @upstream("graph store entities_page")
    def entities_page(self, key: DatasetKey, limit: int, after: str | None) -> list[Entity]:
        if limit <= 0:
            return []
        cond = EntityByUpdated.updated_key < after if after is not None else None
        rows = list(EntityRow.by_updated.query(key.pk, cond, scan_index_forward=False, limit=limit))
        return [entity_from_row(r) for r in self._leases.visible(key.pk, rows)]

    @upstream("graph store texts_page")
    def texts_page(self, key: DatasetKey, limit: int, before: int | None) -> list[Artifact]:
        if limit <= 0:
            return []
        cond = ArtifactRow.id < before if before is not None else None
        rows = list(
            ArtifactRow.query(
                key.pk,
                cond,
                filter_condition=ArtifactRow.parent_id.does_not_exist(),
                scan_index_forward=False,
                limit=limit,
            )
        )
        return [artifact_from_row(r) for r in self._leases.visible(key.pk, rows)]

    @upstream("graph store session_page")
    def session_page(
        self, key: DatasetKey, session_id: str, limit: int, after: int | None
    ) -> list[Artifact]:
        if limit <= 0:
            return []
        rows = list(
            ArtifactRow.by_session.query(
                f"{key.pk}#{session_id}",
                ArtifactRow.id > (after or 0),
                scan_index_forward=True,
                limit=limit,
            )
        )
        return [artifact_from_row(r) for r in self._leases.visible(key.pk, rows)]

    @upstream("graph store chunks_of")
    def chunks_of(self, key: DatasetKey, artifact_id: int) -> list[Artifact]:
        # A text's chunks have the IDs right after it (one block per remember).
        out: list[ArtifactRow] = []
        rows = ArtifactRow.query(
            key.pk, ArtifactRow.id > int(artifact_id), consistent_read=True, page_size=CHUNK_PAGE
        )
        for r in rows:
            if r.parent_id is None or int(r.parent_id) != int(artifact_id):
                break
            out.append(r)
        return [artifact_from_row(r) for r in self._leases.visible(key.pk, out)]

    @upstream("graph store artifact_links")
    def artifact_links(self, key: DatasetKey, artifact_id: int) -> tuple[list[int], list[int]]:
        prefix = f"A#{int(artifact_id):012d}#"
        ents: list[int] = []
        edges: list[int] = []
        for r in LinkRow.query(key.pk, LinkRow.sk.startswith(prefix), consistent_read=True):
            _, _, kind, row_id = r.sk.split("#")
            (ents if kind == "E" else edges).append(int(row_id))
        return ents, edges

    @upstream("graph store edge_changes")
    def edge_changes(
        self, key: DatasetKey, edge_id: int
    ) -> tuple[list[EdgeChange], list[EdgeChange]]:
        return (
            changes(key.pk, f"B#{int(edge_id):012d}#"),
            changes(key.pk, f"H#{int(edge_id):012d}#"),
        )

    @upstream("graph store changes_by_artifact")
    def changes_by_artifact(self, key: DatasetKey, artifact_ids: list[int]) -> list[EdgeChange]:
        out = [c for a in sorted(set(artifact_ids)) for c in changes(key.pk, f"X#{a:012d}#")]
        return sorted(out, key=lambda c: (c.at, c.edge_id))

    @upstream("graph store corrections")
    def corrections(self, key: DatasetKey, edge_ids: list[int]) -> dict[int, Correction]:
        ids = sorted({int(i) for i in edge_ids})
        out: dict[int, Correction] = {}
        for start in range(0, len(ids), 100):
            keys = [(key.pk, correction_sk(i)) for i in ids[start : start + 100]]
            for row in LinkRow.batch_get(keys, consistent_read=True):
                c = correction_of(row)
                out[c.edge_id] = c
        return out

    @upstream("graph store merges")
    def merges(self, key: DatasetKey, entity_id: int) -> list[Merge]:
        return merges_of(key.pk, int(entity_id))

    @upstream("graph store due_expiries")
    def due_expiries(self, now: str, limit: int) -> list[tuple[DatasetKey, int, str]]:
        return expiries.due_expiries(now, limit)

    @upstream("graph store drop_expiry")
    def drop_expiry(self, key: DatasetKey, artifact_id: int, expires_at: str) -> None:
        expiries.drop_expiry(key, artifact_id, expires_at)

    @upstream("graph store self_superseding_relations")
    def self_superseding_relations(self, key: DatasetKey) -> set[str]:
        # Every change with a successor (one Query on the "B#" rows), then
        # both edges of each: the relations that replaced themselves.
        found = changes(key.pk, "B#")
        ids = {c.edge_id for c in found} | {c.by_edge for c in found if c.by_edge is not None}
        edges = self.get_edges(key, sorted(ids))  # type: ignore[attr-defined]
        out: set[str] = set()
        for c in found:
            old, new = edges.get(c.edge_id), edges.get(c.by_edge or 0)
            if old is not None and new is not None and old.relation == new.relation:
                out.add(old.relation)
        return out

    @upstream("graph store forget")
    def forget(self, key: DatasetKey, plan: ForgetPlan) -> Forgotten:
        self._commits.recover(key)
        crash_point("forget_planned")
        restored = list(plan.restored)
        for _ in range(3):
            owners: list[int] = []  # per item of the transaction: its restore, or -1
            try:
                return self._forget_once(key, plan, restored, owners)
            except TransactWriteError as exc:
                reasons = [
                    getattr(r, "code", None) == "ConditionalCheckFailed"
                    for r in (exc.cancellation_reasons or [])
                ]
                if not any(reasons):
                    raise
                if any(reasons[:3]):  # the text (or fact), or the dataset, is gone
                    what = "artifact" if plan.edge_id is None else "edge"
                    raise NotFound(
                        f"{what} {plan.edge_id or plan.artifact_id} does not exist"
                    ) from exc
                # a restored edge (or its fact claim) changed: left as it is
                failed = {owners[i] for i, bad in enumerate(reasons) if bad and owners[i] >= 0}
                restored = [r for i, r in enumerate(restored) if i not in failed]
        raise UpstreamError("graph store forget failed: the rows kept changing")

    def _forget_once(
        self,
        key: DatasetKey,
        plan: ForgetPlan,
        restored: list[tuple[EdgeChange, Edge]],
        owners: list[int],
    ) -> Forgotten:
        pk, txn = key.pk, plan.txn
        texts = [plan.artifact_id, *plan.chunks] if plan.edge_id is None else []
        removed = {e.id for e in plan.edges}
        drop = _secondary(pk, plan)
        done = Forgotten(
            artifacts=[plan.artifact_id] if texts else [],
            edges=sorted(e.id for e in plan.edges),
            entities=sorted(e.id for e in plan.entities),
            restored=sorted(c.edge_id for c, _ in restored),
            chunks=len(plan.chunks),
        )
        # The record is the forget's outbox too (as a remember's): its events
        # land with the transaction and are delivered by ``finish`` after it.
        finish = {"drop": drop, "events": plan.events(done) if plan.events else []}
        conn = EntityRow._get_connection().connection
        with TransactWrite(connection=conn) as tx:
            # The record first: a crash after the transaction is finished by
            # the next commit's recovery (it deletes the rows in ``drop``).
            tx.save(
                TermRow(
                    pk,
                    intent_sk(txn),
                    entity_id=0,
                    state=COMMITTED,
                    lease_until=time.time() + self._leases.lease_s,
                    keys=pack({}),
                    finish=pack(finish),
                ),
                condition=TermRow.sk.does_not_exist(),
            )
            if plan.edge_id is None:
                tx.delete(ArtifactRow(pk, plan.artifact_id), condition=ArtifactRow.id.exists())
            else:  # one fact: its row must still be there
                tx.delete(EdgeRow(pk, plan.edge_id), condition=EdgeRow.id.exists())
            tx.update(
                DatasetRow(key.user_id, key.dataset),
                actions=[
                    DatasetRow.entities.add(-len(plan.entities)),
                    DatasetRow.edges.add(-len(plan.edges)),
                    DatasetRow.artifacts.add(-len(texts)),
                ],
                condition=DatasetRow.user_id.exists() & DatasetRow.deleted_at.does_not_exist(),
            )
            owners += [-1, -1, -1]
            for chunk in plan.chunks:
                tx.delete(ArtifactRow(pk, chunk))
            for edge in plan.edges:
                if edge.id != plan.edge_id:
                    tx.delete(EdgeRow(pk, edge.id))
            for entity in plan.entities:
                tx.delete(EntityRow(pk, entity.id))
            for edge_id, artifact_id in plan.kept_edges.items():
                tx.update(
                    EdgeRow(pk, edge_id),
                    actions=[
                        EdgeRow.artifact_id.set(artifact_id)
                        if artifact_id is not None
                        else EdgeRow.artifact_id.remove()
                    ],
                    condition=EdgeRow.id.exists(),
                )
            owners += [-1] * (len(plan.chunks) + len(plan.edges) + len(plan.entities))
            if plan.edge_id is not None:
                del owners[-1]  # (the fact's own delete is the second item)
            owners += [-1] * len(plan.kept_edges)
            for i, (change, was) in enumerate(restored):
                back = undone(change, was)
                tx.save(edge_row(pk, back), condition=edge_unchanged(was))
                owners.append(i)
                if is_open(back):  # rules.undone: takes back its claim, or no restore
                    # (or the removed edge of the same triple held it: a
                    # correction's, forgotten)
                    tx.save(
                        TermRow(pk, fact_claim_sk(claim_of(back)), entity_id=was.id),
                        condition=TermRow.sk.does_not_exist()
                        | TermRow.entity_id.is_in(was.id, *removed),
                    )
                    owners.append(i)
            if len(owners) > TRANSACT_MAX:
                raise UpstreamError("graph store forget failed: too many rows for one forget")
        crash_point("forget_committed")
        self._commits.finish(pk, txn, {}, finish)
        return done


def _secondary(pk: str, plan: ForgetPlan) -> list[list[str]]:
    """The rows only reached through removed ones, as (table, range key):
    keyword rows, name and fact claims, provenance both ways, history."""
    out: list[list[str]] = []
    for entity in plan.entities:
        out += [["terms", sk] for sk in term_rows(pk, entity)]
        out.append(["names", normalize_name(entity.name)])
    back = {
        fact_claim_sk(f"{was.source_id}#{was.relation}#{was.target_id}")
        for c, was in plan.restored
        if c.prev_invalid_at is None and c.prev_expired_at is None
    }
    for edge in plan.edges:
        out.append(["links", correction_sk(edge.id)])
        sk = fact_claim_sk(claim_of(edge))
        if is_open(edge) and sk not in back:  # (a restored edge takes it back)
            out.append(["terms", sk])
    for entity_id, artifact_id in plan.entity_links:
        out.append(["links", entity_link_sk(entity_id, artifact_id)])
        out.append(["links", merge_sk(entity_id, artifact_id)])
        out.append(["links", reverse_link_sk("E", entity_id, artifact_id)])
    for edge_id, artifact_id in plan.edge_links:
        out.append(["links", edge_link_sk(edge_id, artifact_id)])
        out.append(["links", reverse_link_sk("D", edge_id, artifact_id)])
    for c in plan.changes:
        out.append(["links", f"H#{c.edge_id:012d}#{c.at}#{c.artifact_id or 0:012d}"])
        if c.by_edge is not None:
            out.append(["links", f"B#{c.by_edge:012d}#{c.edge_id:012d}"])
        if c.artifact_id is not None:
            out.append(["links", f"X#{c.artifact_id:012d}#{c.edge_id:012d}"])
    return [list(x) for x in dict.fromkeys(tuple(x) for x in out)]
