"""DynamoDB plumbing shared by the stores: error mapping (every botocore /
pynamodb failure leaves as ``UpstreamError``) and batch writes / gets."""

from __future__ import annotations

import functools
import json
import logging
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ParamSpec, TypeVar

from botocore.exceptions import BotoCoreError, ClientError
from pynamodb.exceptions import PynamoDBException
from pynamodb.models import Model
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from ..errors import GbError, UpstreamError, mapped_to_upstream

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

BATCH_WRITE_MAX = 25
BATCH_RETRIES = 8  # resends of unprocessed items, with exponential backoff

_STORE_ERRORS = (PynamoDBException, BotoCoreError, ClientError)

# --- error mapping ---------------------------------------------------------------


def describe(exc: BaseException) -> str:
    """Everything about a failure, for the log only (names tables, request
    IDs, exception classes)."""
    code = error_code(exc)
    return f"{type(exc).__name__}{f' ({code})' if code else ''}: {exc}"


def error_code(exc: BaseException) -> str | None:
    code = getattr(exc, "cause_response_code", None)
    if code is None and isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code")
    return str(code) if code else None


_KINDS = {
    "ConditionalCheckFailedException": "a concurrent change",
    "TransactionCanceledException": "a concurrent change",
    "ProvisionedThroughputExceededException": "throttled",
    "ThrottlingException": "throttled",
    "RequestLimitExceeded": "throttled",
    "ResourceNotFoundException": "a missing table",
    "AccessDeniedException": "access denied",
    "ValidationException": "a rejected request",
    "ItemCollectionSizeLimitExceededException": "a size limit",
    "InternalServerError": "a server error",
    "ServiceUnavailable": "unavailable",
}


def failure_kind(exc: BaseException) -> str:
    """What kind of failure, in words a client may see."""
    code = error_code(exc)
    if code in _KINDS:
        return _KINDS[code]
    if isinstance(exc, BotoCoreError) or "connect" in type(exc).__name__.lower():
        return "unreachable"
    return "an error"


def store_error(what: str, exc: BaseException) -> UpstreamError:
    return UpstreamError(f"{what} failed: {failure_kind(exc)}", detail=describe(exc))


def upstream(what: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Map any DynamoDB / pynamodb failure of the wrapped method to
    UpstreamError (domain errors pass through)."""
    return mapped_to_upstream(_STORE_ERRORS, lambda exc: store_error(what, exc))


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
                raise store_error(what, exc) from exc

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
        reqs.append((table, _key_id(key), {"DeleteRequest": {"Key": key}}))
    for row in puts:
        key, table = row_key(row), type(row).Meta.table_name
        reqs.append((table, _key_id(key), {"PutRequest": {"Item": row.serialize()}}))
    if not reqs:
        return
    first = (list(deletes) + list(puts))[0]
    conn = type(first)._get_connection().connection
    for page in _pages(reqs):
        pending: dict[str, list[dict[str, Any]]] = {}
        for table, _, req in page:
            pending.setdefault(table, []).append(req)
        for attempt in Retrying(
            retry=retry_if_exception_type(_Unprocessed),
            stop=stop_after_attempt(BATCH_RETRIES + 1),
            wait=wait_exponential(multiplier=0.04, max=1.0),  # 0.04 s, 0.08 s ... 1 s
            retry_error_callback=lambda state: None,
        ):
            with attempt:
                data = conn.dispatch("BatchWriteItem", {"RequestItems": pending})
                unprocessed = (data or {}).get("UnprocessedItems") or {}
                pending = {t: r for t, r in unprocessed.items() if r}
                if pending:
                    raise _Unprocessed
        if pending:
            left = sum(len(r) for r in pending.values())
            raise UpstreamError(
                f"batch write: {left} items still unprocessed after {BATCH_RETRIES} retries"
            )


class _Unprocessed(Exception):
    """DynamoDB left some items of the page unwritten: send them again."""


def _key_id(key: dict[str, Any]) -> str:
    # Without the table on purpose: moto compares keys across tables (see
    # _pages), and whether moto answers cannot be told from this process (a
    # moto server in another process under `sam local`, or a custom endpoint).
    # DynamoDB compares within a table only: there this merely splits a few
    # pages more.
    return json.dumps(key, sort_keys=True)


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
