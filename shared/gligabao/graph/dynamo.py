"""The graph store on DynamoDB (pynamodb models in ``tables``).

Layout (see ``tables`` for the keys): every graph table is partitioned by the
dataset key, so each method is a bounded number of GetItem / Query /
BatchGetItem / BatchWriteItem calls on the caller's own partition.

Every botocore / pynamodb failure leaves this module as ``UpstreamError``
(``_upstream``); "not found" is None or empty, never an error.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

from botocore.exceptions import BotoCoreError, ClientError
from pynamodb.exceptions import PynamoDBException
from pynamodb.expressions.condition import Condition
from pynamodb.models import Model

from .. import clock
from ..errors import GbError, NotFound, UpstreamError
from ..models import (
    Artifact,
    Dataset,
    DatasetKey,
    Edge,
    Entity,
    GraphWrite,
    KeywordHit,
)
from ..text import index_terms, normalize_name
from . import tables
from .port import fact_triple
from .tables import (
    DATASET_PARTITIONED,
    ArtifactRow,
    DatasetRow,
    EdgeRow,
    EntityRow,
    LinkRow,
    NameRow,
    TermRow,
)

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

BATCH_WRITE_MAX = 25
BATCH_RETRIES = 8  # resends of unprocessed items, with exponential backoff
ID_BASE = 10**12  # IDs stay below this (12 digits in sort keys)
MAX_KEY_BYTES = 1024  # DynamoDB's limit for a sort key
FACT_CLAIM_PREFIX = "F#"  # fact claims share the terms table (see TermRow)
FACT_CLAIM_STALE_S = 1800  # a claim this old whose edge never landed is taken over

_STORE_ERRORS = (PynamoDBException, BotoCoreError, ClientError)


# --- error mapping ---------------------------------------------------------------


def _describe(exc: BaseException) -> str:
    code = getattr(exc, "cause_response_code", None)
    if code is None and isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code")
    return f"{type(exc).__name__}{f' ({code})' if code else ''}: {exc}"


def upstream(what: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Map any DynamoDB / pynamodb failure of the wrapped method to
    UpstreamError (domain errors pass through)."""

    def deco(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(*args, **kwargs)
            except GbError:
                raise
            except _STORE_ERRORS as exc:
                raise UpstreamError(f"{what} failed: {_describe(exc)}") from exc

        return wrapper

    return deco


def upstream_iter(what: str) -> Callable[[Callable[P, Iterator[R]]], Callable[P, Iterator[R]]]:
    """``upstream`` for generators: errors raised while iterating are mapped."""

    def deco(fn: Callable[P, Iterator[R]]) -> Callable[P, Iterator[R]]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> Iterator[R]:
            try:
                yield from fn(*args, **kwargs)
            except GbError:
                raise
            except _STORE_ERRORS as exc:
                raise UpstreamError(f"{what} failed: {_describe(exc)}") from exc

        return wrapper

    return deco


def is_condition_failure(exc: BaseException) -> bool:
    return getattr(exc, "cause_response_code", None) == "ConditionalCheckFailedException"


# --- batch helpers ---------------------------------------------------------------


def row_key(row: Model) -> dict[str, Any]:
    """The serialized primary key of a row (for DeleteRequest)."""
    data = row.serialize(null_check=False)
    names = [n for n in (row._hash_keyname, row._range_keyname) if n]
    return {n: data[n] for n in names}


def batch_write(puts: Sequence[Model] = (), deletes: Sequence[Model] = ()) -> None:
    """BatchWriteItem in pages of 25 requests (rows of any tables mixed),
    resending unprocessed items with exponential backoff. Deletes go before
    puts; a key given twice goes to a later page (DynamoDB refuses a page that
    touches an item twice)."""
    reqs: list[tuple[str, str, dict[str, Any]]] = []
    for row in deletes:
        key, table = row_key(row), type(row).Meta.table_name
        reqs.append((table, _key_id(table, key), {"DeleteRequest": {"Key": key}}))
    for row in puts:
        key, table = row_key(row), type(row).Meta.table_name
        reqs.append((table, _key_id(table, key), {"PutRequest": {"Item": row.serialize()}}))
    if not reqs:
        return
    first = (list(deletes) + list(puts))[0]
    conn = type(first)._get_connection().connection
    for page in _pages(reqs):
        pending: dict[str, list[dict[str, Any]]] = {}
        for table, _, req in page:
            pending.setdefault(table, []).append(req)
        attempt = 0
        while pending:
            data = conn.dispatch("BatchWriteItem", {"RequestItems": pending})
            pending = {t: r for t, r in ((data or {}).get("UnprocessedItems") or {}).items() if r}
            if pending:
                attempt += 1
                if attempt > BATCH_RETRIES:
                    left = sum(len(r) for r in pending.values())
                    raise UpstreamError(
                        f"batch write: {left} items still unprocessed after {BATCH_RETRIES} retries"
                    )
                time.sleep(min(1.0, 0.02 * 2**attempt))


def _key_id(table: str, key: dict[str, Any]) -> str:
    # moto (tests, `gligabao serve`) compares keys across tables (see _pages);
    # DynamoDB only within one table, so there a page can hold (pk, 1) of
    # entities, edges and artifacts at once.
    scope = "" if "moto" in sys.modules else table
    return scope + "\x1f" + json.dumps(key, sort_keys=True)


def _pages(
    reqs: list[tuple[str, str, dict[str, Any]]],
) -> Iterator[list[tuple[str, str, dict[str, Any]]]]:
    """Pages of at most 25 requests in which no key value occurs twice, even
    in different tables: moto (the local server, the tests) rejects a page in
    which an entity and an edge share (pk, id), which DynamoDB allows. A
    colliding request goes to a later page (the order of a batch is moot)."""
    queue = deque(reqs)
    deferred: deque[tuple[str, str, dict[str, Any]]] = deque()
    # Each request is looked at once, plus once per page it had to wait for:
    # linear in the batch, not quadratic (a dataset delete sends every row).
    while queue or deferred:
        page: list[tuple[str, str, dict[str, Any]]] = []
        skipped: list[tuple[str, str, dict[str, Any]]] = []
        seen: set[str] = set()
        while len(page) < BATCH_WRITE_MAX and (deferred or queue):
            req = deferred.popleft() if deferred else queue.popleft()
            if req[1] in seen:
                skipped.append(req)
            else:
                page.append(req)
                seen.add(req[1])
        deferred.extendleft(reversed(skipped))
        yield page


def _unique(values: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def _batch_get(
    model: Any, convert: Callable[[Any], R], key: DatasetKey, ids: list[int]
) -> dict[int, R]:
    """Rows of one dataset by ID (BatchGetItem, 100 keys a request)."""
    wanted = _unique(int(i) for i in ids)
    if not wanted:
        return {}
    return {int(r.id): convert(r) for r in model.batch_get([(key.pk, i) for i in wanted])}


# --- keys and conversions --------------------------------------------------------


def inverted_id(entity_id: int) -> str:
    return f"{ID_BASE - entity_id:012d}"


def term_sk(term: str, entity_id: int) -> str:
    return f"{term}#{inverted_id(entity_id)}"


def entity_link_sk(entity_id: int, artifact_id: int) -> str:
    return f"E#{entity_id:012d}#{artifact_id:012d}"


def edge_link_sk(edge_id: int, artifact_id: int) -> str:
    return f"D#{edge_id:012d}#{artifact_id:012d}"


def fact_claim_sk(triple: str) -> str:
    return FACT_CLAIM_PREFIX + triple


def _open(e: Edge) -> bool:
    """Live and not ended: the edge that holds its triple's fact claim."""
    return e.expired_at is None and e.invalid_at is None


def _claim_is_stale(claimed_at: str | None) -> bool:
    if not claimed_at:
        return True
    try:
        age = (clock.now() - clock.parse(claimed_at)).total_seconds()
    except ValueError:
        return True
    return age > FACT_CLAIM_STALE_S


def _release_fact_claim(pk: str, edge: Edge) -> None:
    """Delete the edge's fact claim, unless another edge owns the triple."""
    sk = fact_claim_sk(fact_triple(edge.source_id, edge.relation, edge.target_id))
    if len(sk.encode()) > MAX_KEY_BYTES:
        return
    try:
        TermRow(pk, sk).delete(condition=TermRow.entity_id == edge.id)
    except PynamoDBException as exc:
        if not is_condition_failure(exc):
            raise


def _restore_fact_claim(pk: str, edge: Edge) -> None:
    """Undo ``_release_fact_claim`` (unless the triple was claimed since)."""
    sk = fact_claim_sk(fact_triple(edge.source_id, edge.relation, edge.target_id))
    if len(sk.encode()) > MAX_KEY_BYTES:
        return
    try:
        TermRow(pk, sk, entity_id=edge.id, updated_at=clock.now_str()).save(
            condition=TermRow.sk.does_not_exist()
        )
    except PynamoDBException as exc:
        if not is_condition_failure(exc):
            raise
        log.warning("fact claim %s of %s: taken while the write was undone", sk, pk)


def updated_key(updated_at: str, entity_id: int) -> str:
    return f"{updated_at}#{entity_id:012d}"


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def dataset_from_row(row: DatasetRow) -> Dataset:
    return Dataset(
        name=row.name,
        created_at=row.created_at,
        entities=int(row.entities or 0),
        edges=int(row.edges or 0),
        artifacts=int(row.artifacts or 0),
    )


def entity_row(pk: str, e: Entity) -> EntityRow:
    return EntityRow(
        pk,
        e.id,
        name=e.name,
        norm_name=normalize_name(e.name),
        type=e.type,
        description=e.description,
        created_at=e.created_at,
        updated_at=e.updated_at,
        updated_key=updated_key(e.updated_at, e.id),
        lat=e.lat,
        lon=e.lon,
    )


def entity_from_row(row: EntityRow) -> Entity:
    return Entity(
        id=int(row.id),
        name=row.name,
        type=row.type or "",
        description=row.description or "",
        created_at=row.created_at or "",
        updated_at=row.updated_at or "",
        lat=_opt_float(row.lat),
        lon=_opt_float(row.lon),
    )


def term_rows(pk: str, e: Entity) -> dict[str, TermRow]:
    """The keyword index rows of an entity, by sort key."""
    in_name = index_terms(e.name)
    in_desc = index_terms(e.description)
    norm = normalize_name(e.name)
    out: dict[str, TermRow] = {}
    for term in in_name | in_desc:
        sk = term_sk(term, e.id)
        if len(sk.encode()) > MAX_KEY_BYTES:  # a pathological "word": not indexable
            continue
        out[sk] = TermRow(
            pk,
            sk,
            entity_id=e.id,
            in_name=term in in_name,
            in_description=term in in_desc,
            norm_name=norm,
            updated_at=e.updated_at,
        )
    return out


def edge_row(pk: str, e: Edge) -> EdgeRow:
    live = e.expired_at is None
    return EdgeRow(
        pk,
        e.id,
        source_id=e.source_id,
        target_id=e.target_id,
        relation=e.relation,
        description=e.description,
        artifact_id=e.artifact_id,
        valid_at=e.valid_at,
        invalid_at=e.invalid_at,
        created_at=e.created_at,
        expired_at=e.expired_at,
        live_src=f"{pk}#{e.source_id}" if live else None,
        live_dst=f"{pk}#{e.target_id}" if live else None,
        gone_src=None if live else f"{pk}#{e.source_id}",
        gone_dst=None if live else f"{pk}#{e.target_id}",
    )


def edge_from_row(row: EdgeRow) -> Edge:
    return Edge(
        id=int(row.id),
        source_id=int(row.source_id),
        target_id=int(row.target_id),
        relation=row.relation,
        description=row.description or "",
        artifact_id=_opt_int(row.artifact_id),
        valid_at=row.valid_at,
        invalid_at=row.invalid_at,
        created_at=row.created_at or "",
        expired_at=row.expired_at,
    )


def artifact_row(pk: str, a: Artifact) -> ArtifactRow:
    return ArtifactRow(
        pk,
        a.id,
        text=a.text,
        created_at=a.created_at,
        reference_time=a.reference_time,
        session_id=a.session_id,
        parent_id=a.parent_id,
        index=a.index,
        call_id=a.call_id,
        summary=a.summary,
        session_key=(
            f"{pk}#{a.session_id}" if a.session_id is not None and a.parent_id is None else None
        ),
    )


def artifact_from_row(row: ArtifactRow) -> Artifact:
    return Artifact(
        id=int(row.id),
        text=row.text or "",
        created_at=row.created_at or "",
        reference_time=row.reference_time or "",
        session_id=row.session_id,
        parent_id=_opt_int(row.parent_id),
        index=_opt_int(row.index),
        call_id=row.call_id,
        summary=row.summary,
    )


def _same(attr: Any, value: Any) -> Condition:
    """attr == value, or attr absent when value is None."""
    return attr.does_not_exist() if value is None else attr == value


def _edge_unchanged(old: Edge) -> Condition:
    return (
        EdgeRow.id.exists()
        & _same(EdgeRow.expired_at, old.expired_at)
        & _same(EdgeRow.invalid_at, old.invalid_at)
    )


def _entity_unchanged(old: Entity) -> Condition:
    # updated_at has second precision: two updates within one second would
    # both pass a check on it alone, and the second would erase the first.
    return (
        (EntityRow.updated_at == old.updated_at)
        & (EntityRow.description == old.description)
        & (EntityRow.type == old.type)
    )


def _restore_edge(pk: str, old: Edge, new: Edge) -> None:
    """Undo an edge update, unless someone changed the row since."""
    edge_row(pk, old).save(condition=_edge_unchanged(new))


# --- the store -------------------------------------------------------------------


class DynamoGraphStore:
    """GraphStore on DynamoDB. Point the tables at the right place first
    (``tables.configure_tables``); ``max_workers`` bounds the per-call
    parallel queries (keyword terms, edges around entities, name claims)."""

    def __init__(self, max_workers: int = 8) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="gb-dynamo")

    @property
    def requests(self) -> int:
        """DynamoDB requests sent so far by this process (all stores)."""
        return tables.REQUESTS.total

    def close(self) -> None:
        self._pool.shutdown(wait=False)

    def _map(self, fn: Callable[[Any], R], items: Sequence[Any]) -> list[R]:
        if len(items) <= 1:
            return [fn(i) for i in items]
        return list(self._pool.map(fn, items))

    # --- datasets ----------------------------------------------------------------

    @upstream("graph store get_dataset")
    def get_dataset(self, key: DatasetKey) -> Dataset | None:
        try:
            row = DatasetRow.get(key.user_id, key.dataset, consistent_read=True)
        except DatasetRow.DoesNotExist:
            return None
        return dataset_from_row(row)

    @upstream("graph store ensure_dataset")
    def ensure_dataset(self, key: DatasetKey) -> Dataset:
        existing = self.get_dataset(key)
        if existing is not None:
            return existing
        row = DatasetRow(key.user_id, key.dataset, created_at=clock.now_str())
        try:
            row.save(condition=DatasetRow.user_id.does_not_exist())
        except PynamoDBException as exc:
            if not is_condition_failure(exc):
                raise
            found = self.get_dataset(key)  # created concurrently
            if found is None:
                raise UpstreamError("graph store ensure_dataset failed: dataset vanished") from exc
            return found
        return dataset_from_row(row)

    @upstream("graph store list_datasets")
    def list_datasets(self, user_id: str) -> list[Dataset]:
        rows = DatasetRow.query(user_id, consistent_read=True)
        return sorted((dataset_from_row(r) for r in rows), key=lambda d: d.name)

    @upstream("graph store delete_dataset")
    def delete_dataset(self, key: DatasetKey) -> bool:
        # Every partitioned table first (a retry after a crash finishes the
        # job: the datasets row, deleted last, still exists), then the row.
        def rows_of(model: type[Model]) -> list[Model]:
            keys = [h for h in (model._hash_keyname, model._range_keyname) if h]
            return list(model.query(key.pk, attributes_to_get=keys, consistent_read=True))

        batch_write(deletes=[r for rows in self._map(rows_of, DATASET_PARTITIONED) for r in rows])
        data = DatasetRow._get_connection().delete_item(
            key.user_id, range_key=key.dataset, return_values="ALL_OLD"
        )
        return bool((data or {}).get("Attributes"))

    @upstream("graph store allocate_ids")
    def allocate_ids(
        self, key: DatasetKey, entities: int, edges: int, artifacts: int
    ) -> tuple[int, int, int]:
        if min(entities, edges, artifacts) < 0:
            raise ValueError("allocate_ids: negative block size")
        row = DatasetRow(key.user_id, key.dataset)
        try:
            row.update(
                actions=[
                    DatasetRow.next_entity.add(entities),
                    DatasetRow.next_edge.add(edges),
                    DatasetRow.next_artifact.add(artifacts),
                ],
                condition=DatasetRow.user_id.exists(),
            )
        except PynamoDBException as exc:
            if is_condition_failure(exc):
                raise NotFound(f"dataset {key.dataset!r} does not exist") from exc
            raise
        return (
            int(row.next_entity) - entities + 1,
            int(row.next_edge) - edges + 1,
            int(row.next_artifact) - artifacts + 1,
        )

    # --- reads -------------------------------------------------------------------

    @upstream("graph store get_entities")
    def get_entities(self, key: DatasetKey, ids: list[int]) -> dict[int, Entity]:
        return _batch_get(EntityRow, entity_from_row, key, ids)

    @upstream("graph store get_edges")
    def get_edges(self, key: DatasetKey, ids: list[int]) -> dict[int, Edge]:
        return _batch_get(EdgeRow, edge_from_row, key, ids)

    @upstream("graph store get_artifacts")
    def get_artifacts(self, key: DatasetKey, ids: list[int]) -> dict[int, Artifact]:
        return _batch_get(ArtifactRow, artifact_from_row, key, ids)

    @upstream("graph store keyword_hits")
    def keyword_hits(self, key: DatasetKey, terms: list[str], per_term: int) -> list[KeywordHit]:
        wanted = [t for t in _unique(terms) if t and "#" not in t]
        if not wanted or per_term <= 0:
            return []

        def one(term: str) -> list[KeywordHit]:
            rows = TermRow.query(key.pk, TermRow.sk.startswith(f"{term}#"), limit=per_term)
            return [
                KeywordHit(
                    entity_id=int(r.entity_id),
                    term=term,
                    in_name=bool(r.in_name),
                    in_description=bool(r.in_description),
                    norm_name=r.norm_name or "",
                    updated_at=r.updated_at or "",
                )
                for r in rows
            ]

        return [hit for hits in self._map(one, wanted) for hit in hits]

    @upstream("graph store recent_entities")
    def recent_entities(self, key: DatasetKey, limit: int) -> list[Entity]:
        if limit <= 0:
            return []
        rows = EntityRow.by_updated.query(key.pk, scan_index_forward=False, limit=limit)
        return [entity_from_row(r) for r in rows]

    @upstream("graph store recent_artifacts")
    def recent_artifacts(self, key: DatasetKey, limit: int) -> list[Artifact]:
        if limit <= 0:
            return []
        rows = ArtifactRow.query(key.pk, scan_index_forward=False, limit=limit)
        return [artifact_from_row(r) for r in rows]

    @upstream("graph store live_edges_around")
    def live_edges_around(self, key: DatasetKey, entity_ids: list[int], limit: int) -> list[Edge]:
        return self._edges_around(
            key, entity_ids, limit, EdgeRow.live_by_source, EdgeRow.live_by_target, live=True
        )

    @upstream("graph store expired_edges_around")
    def expired_edges_around(
        self, key: DatasetKey, entity_ids: list[int], limit: int
    ) -> list[Edge]:
        return self._edges_around(
            key, entity_ids, limit, EdgeRow.expired_by_source, EdgeRow.expired_by_target, live=False
        )

    def _edges_around(
        self,
        key: DatasetKey,
        entity_ids: list[int],
        limit: int,
        by_source: Any,
        by_target: Any,
        *,
        live: bool,
    ) -> list[Edge]:
        ids = _unique(int(i) for i in entity_ids)
        if not ids or limit <= 0:
            return []
        jobs: list[tuple[Any, int]] = [(by_source, i) for i in ids]
        jobs += [(by_target, i) for i in ids]

        def one(job: tuple[Any, int]) -> list[EdgeRow]:
            index, entity_id = job
            return list(index.query(f"{key.pk}#{entity_id}", scan_index_forward=False, limit=limit))

        found: dict[int, Edge] = {}
        for rows in self._map(one, jobs):
            for r in rows:
                edge = edge_from_row(r)
                if edge.live == live:  # the GSIs are sparse, but eventually consistent
                    found[edge.id] = edge
        return sorted(found.values(), key=lambda e: e.id, reverse=True)[:limit]

    @upstream("graph store session_texts")
    def session_texts(
        self, key: DatasetKey, session_id: str, limit: int, before: int | None = None
    ) -> list[Artifact]:
        if limit <= 0:
            return []
        cond = ArtifactRow.id < before if before is not None else None
        rows = ArtifactRow.by_session.query(
            f"{key.pk}#{session_id}", cond, scan_index_forward=False, limit=limit
        )
        return [artifact_from_row(r) for r in rows]

    @upstream("graph store entity_ids_by_names")
    def entity_ids_by_names(self, key: DatasetKey, norm_names: list[str]) -> dict[str, int]:
        names = [n for n in _unique(norm_names) if n and len(n.encode()) <= MAX_KEY_BYTES]
        if not names:
            return {}
        rows = NameRow.batch_get([(key.pk, n) for n in names])
        return {r.norm_name: int(r.entity_id) for r in rows}

    @upstream("graph store claim_names")
    def claim_names(self, key: DatasetKey, claims: dict[str, int]) -> dict[str, int]:
        def one(item: tuple[str, int]) -> tuple[str, int]:
            name, entity_id = item
            if not name or len(name.encode()) > MAX_KEY_BYTES:
                return name, entity_id  # not claimable: nothing to collide with
            for _ in range(5):
                try:
                    NameRow(key.pk, name, entity_id=entity_id).save(
                        condition=NameRow.norm_name.does_not_exist()
                    )
                    return name, entity_id
                except PynamoDBException as exc:
                    if not is_condition_failure(exc):
                        raise
                try:
                    owner = NameRow.get(key.pk, name, consistent_read=True)
                    return name, int(owner.entity_id)
                except NameRow.DoesNotExist:
                    continue  # released between our put and our read: try again
            raise UpstreamError(f"graph store claim_names failed: {name!r} kept changing owner")

        return dict(self._map(one, list(claims.items())))

    @upstream("graph store release_names")
    def release_names(self, key: DatasetKey, claims: dict[str, int]) -> None:
        def one(item: tuple[str, int]) -> None:
            name, entity_id = item
            if not name or len(name.encode()) > MAX_KEY_BYTES:
                return
            try:
                NameRow(key.pk, name).delete(condition=NameRow.entity_id == entity_id)
            except PynamoDBException as exc:
                if not is_condition_failure(exc):
                    raise

        self._map(one, list(claims.items()))

    @upstream("graph store claim_facts")
    def claim_facts(self, key: DatasetKey, claims: dict[str, int]) -> dict[str, int]:
        def one(item: tuple[str, int]) -> tuple[str, int]:
            triple, edge_id = item
            sk = fact_claim_sk(triple)
            if len(sk.encode()) > MAX_KEY_BYTES:
                return triple, edge_id  # not claimable: nothing to collide with
            condition: Condition = TermRow.sk.does_not_exist()
            for _ in range(5):
                try:
                    TermRow(key.pk, sk, entity_id=edge_id, updated_at=clock.now_str()).save(
                        condition=condition
                    )
                    return triple, edge_id
                except PynamoDBException as exc:
                    if not is_condition_failure(exc):
                        raise
                try:
                    owner = TermRow.get(key.pk, sk, consistent_read=True)
                except TermRow.DoesNotExist:
                    condition = TermRow.sk.does_not_exist()
                    continue  # released between our put and our read: try again
                owner_id = int(owner.entity_id)
                if owner_id == edge_id:
                    return triple, edge_id
                if _claim_is_stale(owner.updated_at) and not self.get_edges(key, [owner_id]):
                    # left by a call that died before its write: take it over
                    condition = TermRow.entity_id == owner_id
                    continue
                return triple, owner_id
            raise UpstreamError(f"graph store claim_facts failed: {triple!r} kept changing owner")

        return dict(self._map(one, list(claims.items())))

    @upstream("graph store release_facts")
    def release_facts(self, key: DatasetKey, claims: dict[str, int]) -> None:
        def one(item: tuple[str, int]) -> None:
            triple, edge_id = item
            sk = fact_claim_sk(triple)
            if len(sk.encode()) > MAX_KEY_BYTES:
                return
            try:
                TermRow(key.pk, sk).delete(condition=TermRow.entity_id == edge_id)
            except PynamoDBException as exc:
                if not is_condition_failure(exc):
                    raise

        self._map(one, list(claims.items()))

    def _links(self, key: DatasetKey, prefix: str) -> list[int]:
        rows = LinkRow.query(key.pk, LinkRow.sk.startswith(prefix))
        return [int(r.sk.rsplit("#", 1)[1]) for r in rows]

    @upstream("graph store entity_artifacts")
    def entity_artifacts(self, key: DatasetKey, entity_id: int) -> list[int]:
        return self._links(key, f"E#{int(entity_id):012d}#")

    @upstream("graph store edge_artifacts")
    def edge_artifacts(self, key: DatasetKey, edge_id: int) -> list[int]:
        return self._links(key, f"D#{int(edge_id):012d}#")

    @upstream_iter("graph store iter_entities")
    def iter_entities(self, key: DatasetKey) -> Iterator[Entity]:
        for r in EntityRow.query(key.pk):
            yield entity_from_row(r)

    @upstream_iter("graph store iter_edges")
    def iter_edges(self, key: DatasetKey) -> Iterator[Edge]:
        for r in EdgeRow.query(key.pk):
            yield edge_from_row(r)

    @upstream_iter("graph store iter_artifacts")
    def iter_artifacts(self, key: DatasetKey) -> Iterator[Artifact]:
        for r in ArtifactRow.query(key.pk):
            yield artifact_from_row(r)

    # --- writes ------------------------------------------------------------------

    def apply(self, key: DatasetKey, write: GraphWrite) -> None:
        undo: list[Callable[[], object]] = []
        try:
            self._apply(key, write, undo)
        except Exception as exc:
            self._rollback(undo)
            if isinstance(exc, UpstreamError) and exc.message.startswith("graph store write"):
                raise
            detail = exc.message if isinstance(exc, GbError) else _describe(exc)
            raise UpstreamError(f"graph store write failed: {detail}") from exc

    @staticmethod
    def _rollback(undo: list[Callable[[], object]]) -> None:
        for action in reversed(undo):
            try:
                action()
            except Exception:  # best effort: keep undoing the rest
                log.exception("graph store rollback step failed")

    def _apply(self, key: DatasetKey, write: GraphWrite, undo: list[Callable[[], object]]) -> None:
        pk = key.pk

        # 1-3 and 6: every new row (artifacts, entities and their keyword
        # terms, edges, provenance links) in as few BatchWriteItem calls as
        # possible. The undo is registered before the write: a batch that
        # fails half-way is undone whole (deleting an absent row is a no-op).
        links = _unique(
            [entity_link_sk(e, a) for e, a in write.entity_links]
            + [edge_link_sk(e, a) for e, a in write.edge_links]
        )
        new_rows: list[Model] = [artifact_row(pk, a) for a in write.artifacts]
        for entity in write.new_entities:
            new_rows.append(entity_row(pk, entity))
            new_rows.extend(term_rows(pk, entity).values())
        new_rows += [edge_row(pk, e) for e in write.new_edges]
        new_rows += [LinkRow(pk, sk) for sk in links]
        if new_rows:
            undo.append(functools.partial(batch_write, deletes=new_rows))
            batch_write(puts=new_rows)
        # 4. updated entities: conditional on the row being the one read
        for old, new in write.updated_entities:
            self._update_entity(pk, old, new, undo)
        # 5. updated edges: conditional on expired_at / invalid_at unchanged;
        # an edge superseded or ended gives up its fact claim
        for old_edge, new_edge in write.updated_edges:
            edge_row(pk, new_edge).save(condition=_edge_unchanged(old_edge))
            undo.append(functools.partial(_restore_edge, pk, old_edge, new_edge))
            if _open(old_edge) and not _open(new_edge):
                undo.append(functools.partial(_restore_fact_claim, pk, old_edge))
                _release_fact_claim(pk, old_edge)
        # 7. the dataset's counts (fails if the dataset was deleted meanwhile)
        n_ent, n_edge, n_art = len(write.new_entities), len(write.new_edges), len(write.artifacts)
        if n_ent or n_edge or n_art:
            DatasetRow(key.user_id, key.dataset).update(
                actions=[
                    DatasetRow.entities.add(n_ent),
                    DatasetRow.edges.add(n_edge),
                    DatasetRow.artifacts.add(n_art),
                ],
                condition=DatasetRow.user_id.exists(),
            )

    def _update_entity(
        self, pk: str, old: Entity, new: Entity, undo: list[Callable[[], object]]
    ) -> None:
        entity_row(pk, new).save(condition=_entity_unchanged(old))
        undo.append(lambda: entity_row(pk, old).save(condition=_entity_unchanged(new)))
        old_terms = term_rows(pk, old)
        new_terms = term_rows(pk, new)
        gone = [row for sk, row in old_terms.items() if sk not in new_terms]
        added = [row for sk, row in new_terms.items() if sk not in old_terms]

        def restore_terms() -> None:
            batch_write(deletes=added)
            batch_write(puts=list(old_terms.values()))

        undo.append(restore_terms)
        batch_write(puts=list(new_terms.values()), deletes=gone)
