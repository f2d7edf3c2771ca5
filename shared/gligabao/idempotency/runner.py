"""Idempotency on Powertools' idempotency utility, over any of its
persistence layers (``dynamodb.py``, ``sqlite.py``). A store whose items are
bounded in size passes ``Responses`` that pack a response before it is saved
and unpack it when it is replayed."""

from __future__ import annotations

import warnings
from typing import Any, Protocol

from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer

from ..errors import Conflict, KeyReused, UpstreamError
from ..oneway import idempotency_owner
from .port import Work


class Responses(Protocol):
    """How a store keeps a response it could not hold as it is."""

    def pack(self, response: dict[str, Any]) -> dict[str, Any]: ...

    def unpack(self, stored: dict[str, Any]) -> dict[str, Any]: ...


class OwnedKeys:
    """Mixed into a persistence layer (before it): a record's key says whose
    it is, ``<function>#<owner>#<hash>`` (``oneway.idempotency_owner``), so
    that an erase finds the user's records; ``forget_owner`` removes them."""

    function_name: str

    def _get_hashed_idempotency_key(self, data: dict[str, Any]) -> str | None:
        key: str | None = super()._get_hashed_idempotency_key(data)  # type: ignore[misc]
        if key is None or not isinstance(data, dict) or "user_id" not in data:
            return key
        owner = idempotency_owner(str(data["user_id"]))
        return f"{self.function_name}#{owner}#{key[len(self.function_name) + 1 :]}"

    def forget_owner(self, owner: str) -> int:
        raise NotImplementedError


class PowertoolsIdempotency:
    """The Idempotency port on a Powertools persistence layer."""

    def __init__(
        self, store: BasePersistenceLayer, ttl_s: int, responses: Responses | None = None
    ) -> None:
        # The key is the user's and the client's key; the request's fingerprint
        # (its body's hash) is stored beside it, and a repeat with another
        # fingerprint is refused (the IETF Idempotency-Key draft, section 2.6).
        self.config = IdempotencyConfig(
            event_key_jmespath="[user_id, key]",
            payload_validation_jmespath="fingerprint",
            expires_after_seconds=ttl_s,
            use_local_cache=False,
        )
        self.store = store
        self.responses = responses

        @idempotent_function(
            data_keyword_argument="request_key", persistence_store=store, config=self.config
        )
        def remember_once(request_key: dict[str, str], work: Work) -> dict[str, Any]:
            response = work()
            return response if responses is None else responses.pack(response)

        self._remember_once = remember_once

    def _run(self, request_key: dict[str, str], work: Work) -> dict[str, Any]:
        fresh: list[dict[str, Any]] = []

        def keep() -> dict[str, Any]:
            fresh.append(work())
            return fresh[0]

        stored: dict[str, Any] = self._remember_once(request_key=request_key, work=keep)
        # this call did the work: its response as it is; a replay: unpacked
        if fresh:
            return fresh[0]
        return stored if self.responses is None else self.responses.unpack(stored)

    def once(
        self,
        user_id: str,
        key: str,
        work: Work,
        lambda_context: Any = None,
        fingerprint: str = "",
    ) -> dict[str, Any]:
        try:
            with warnings.catch_warnings():
                if lambda_context is None:
                    # The local server has no Lambda context: no remaining time to
                    # record, which is what Powertools warns about.
                    warnings.simplefilter("ignore", UserWarning)
                else:
                    self.config.register_lambda_context(lambda_context)
                request = {"user_id": user_id, "key": key, "fingerprint": fingerprint}
                return self._run(request, work)
        except IdempotencyValidationError as exc:
            raise KeyReused(
                "this Idempotency-Key was used with another request body: a key names one "
                "request (nothing was written; use a new key for a new request)"
            ) from exc
        except IdempotencyAlreadyInProgressError as exc:
            raise Conflict("a remember with this Idempotency-Key is still in progress") from exc
        except IdempotencyPersistenceLayerError as exc:
            raise UpstreamError("the idempotency store failed") from exc

    def forget_user(self, user_id: str) -> int:
        if not isinstance(self.store, OwnedKeys):
            raise TypeError("the persistence layer does not know whose its records are")
        try:
            return self.store.forget_owner(idempotency_owner(user_id))
        except IdempotencyPersistenceLayerError as exc:
            raise UpstreamError("the idempotency store failed") from exc
