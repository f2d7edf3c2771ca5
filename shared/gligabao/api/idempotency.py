"""Idempotent remember, on Powertools' idempotency utility: the same user and
key return the first call's response and write nothing new; a failed attempt
leaves no record, so its retry does the work.

Responses of any size: DynamoDB refuses an item past 400 KB, and a record
that fails to save after the graph was written would make the retry write
everything again. A response past ``INLINE_MAX`` is stored zlib-compressed;
one still too large once compressed is stored by reference, in parts (items
of the same table, with the record's expiry), and the record keeps the
reference."""

from __future__ import annotations

import base64
import json
import time
import uuid
import warnings
import zlib
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ..errors import Conflict, UpstreamError

STORED = "__gb_stored__"  # the envelope key (no remember response has it)
INLINE_MAX = 64 * 1024  # bytes of JSON stored as they are
PART_BYTES = 256 * 1024  # compressed bytes per part item (items stop at 400 KB)


def pack(response: dict[str, Any], client: Any, table: str, ttl_s: int) -> dict[str, Any]:
    """What the record stores for ``response`` (see the module's doc)."""
    raw = json.dumps(response, separators=(",", ":")).encode()
    if len(raw) <= INLINE_MAX:
        return response
    packed = zlib.compress(raw, 6)
    if len(packed) <= PART_BYTES:
        return {STORED: {"z": base64.b64encode(packed).decode()}}
    ref = uuid.uuid4().hex
    expires = int(time.time()) + ttl_s
    parts = [packed[i : i + PART_BYTES] for i in range(0, len(packed), PART_BYTES)]
    for i, part in enumerate(parts):
        client.put_item(
            TableName=table,
            Item={
                "id": {"S": f"gb-part#{ref}#{i}"},
                "data": {"B": part},
                "expiration": {"N": str(expires)},
            },
        )
    return {STORED: {"ref": ref, "parts": len(parts)}}


def unpack(stored: dict[str, Any], client: Any, table: str) -> dict[str, Any]:
    envelope = stored.get(STORED)
    if not isinstance(envelope, dict):
        return stored
    if "z" in envelope:
        packed = base64.b64decode(envelope["z"])
    else:
        chunks = []
        for i in range(int(envelope["parts"])):
            item = client.get_item(
                TableName=table,
                Key={"id": {"S": f"gb-part#{envelope['ref']}#{i}"}},
                ConsistentRead=True,
            ).get("Item")
            if item is None:
                raise UpstreamError("the idempotency store lost part of a stored response")
            chunks.append(item["data"]["B"])
        packed = b"".join(chunks)
    result: dict[str, Any] = json.loads(zlib.decompress(packed))
    return result


@lru_cache(maxsize=1)
def _config() -> Any:
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

    from ..config import settings

    return IdempotencyConfig(
        expires_after_seconds=settings().idempotency_ttl_s, use_local_cache=False
    )


@lru_cache(maxsize=1)
def _runner() -> Callable[..., dict[str, Any]]:
    from aws_lambda_powertools.utilities.idempotency import idempotent_function

    from ..config import settings

    cfg = settings()
    store: Any
    client: Any = None  # DynamoDB only: its items stop at 400 KB
    table = cfg.table("idempotency")
    if cfg.store == "sqlite":
        from ..sqlite_db import Database
        from .idempotency_sqlite import SqlitePersistenceLayer

        store = SqlitePersistenceLayer(Database(cfg.data_path))
    else:
        import boto3
        from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

        client = boto3.client(
            "dynamodb", endpoint_url=cfg.dynamodb_endpoint or None, region_name=cfg.region
        )
        store = DynamoDBPersistenceLayer(table_name=table, boto3_client=client)

    @idempotent_function(
        data_keyword_argument="request_key", persistence_store=store, config=_config()
    )
    def remember_once(
        request_key: dict[str, str], work: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        response = work()
        return response if client is None else pack(response, client, table, cfg.idempotency_ttl_s)

    def run(request_key: dict[str, str], work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        fresh: list[dict[str, Any]] = []

        def keep() -> dict[str, Any]:
            fresh.append(work())
            return fresh[0]

        stored = remember_once(request_key=request_key, work=keep)
        # this call did the work: its response as it is; a replay: unpacked
        if fresh:
            return fresh[0]
        return stored if client is None else unpack(stored, client, table)

    return run


def once(
    user_id: str, key: str, work: Callable[[], dict[str, Any]], lambda_context: Any = None
) -> dict[str, Any]:
    from aws_lambda_powertools.utilities.idempotency.exceptions import (
        IdempotencyAlreadyInProgressError,
        IdempotencyPersistenceLayerError,
    )

    runner = _runner()
    try:
        with warnings.catch_warnings():
            if lambda_context is None:
                # The local server has no Lambda context: no remaining time to
                # record, which is what Powertools warns about.
                warnings.simplefilter("ignore", UserWarning)
            else:
                _config().register_lambda_context(lambda_context)
            return runner(request_key={"user_id": user_id, "key": key}, work=work)
    except IdempotencyAlreadyInProgressError as exc:
        raise Conflict("a remember with this Idempotency-Key is still in progress") from exc
    except IdempotencyPersistenceLayerError as exc:
        raise UpstreamError("the idempotency store failed") from exc
