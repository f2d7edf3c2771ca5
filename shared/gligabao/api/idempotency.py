"""Idempotent remember, on Powertools' idempotency utility: the same user and
key return the first call's response and write nothing new; a failed attempt
leaves no record, so its retry does the work."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ..errors import Conflict, UpstreamError


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
        store = DynamoDBPersistenceLayer(table_name=cfg.table("idempotency"), boto3_client=client)

    @idempotent_function(
        data_keyword_argument="request_key", persistence_store=store, config=_config()
    )
    def remember_once(
        request_key: dict[str, str], work: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        return work()

    return remember_once


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
