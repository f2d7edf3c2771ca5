"""The idempotency port: run a remember once per user and key. The same user
and key return the first call's response and write nothing new; a failed
attempt leaves no record, so its retry does the work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

Work = Callable[[], dict[str, Any]]


class Idempotency(Protocol):
    def once(
        self,
        user_id: str,
        key: str,
        work: Work,
        lambda_context: Any = None,
        fingerprint: str = "",
    ) -> dict[str, Any]:
        """``work()``'s response, or the stored response of the first call
        with this user and key. Conflict while that call is still running;
        KeyReused (422) when that call's ``fingerprint`` (the request's
        hash) is not this one's."""

    def forget_user(self, user_id: str) -> int:
        """Remove every idempotency record of the user (an erase: a record
        holds the response, names and all); how many there were."""
