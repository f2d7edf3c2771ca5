"""Who may act for which user.

On AWS the HTTP API's JWT authorizer (Cognito or any OIDC issuer) has checked
the token before the handler runs; the handler binds its principal (the
`GB_USER_CLAIM` claim, `sub` by default) to the request's `user_id`: another
user is 403. Members of the operator group (`cognito:groups` or `groups`
claim, or a `scope` naming it) may read records across users.

The local server has no authorizer: it is open on loopback, or, with
`GB_DEV_API_KEY`, wants that key as `x-api-key` or a bearer token.
"""

from __future__ import annotations

import hmac
from typing import Any

from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2

from ..config import settings
from ..errors import Forbidden, Unauthorized


def _claims(event: APIGatewayProxyEventV2) -> dict[str, Any]:
    authorizer = event.request_context.authorizer
    return authorizer.jwt_claim if authorizer is not None else {}


def _groups(claims: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for name in ("cognito:groups", "groups", "scope"):
        raw = claims.get(name)
        if isinstance(raw, list):
            out.update(str(g) for g in raw)
        elif isinstance(raw, str):
            # API Gateway flattens array claims to "[a b]"; scopes are space separated.
            out.update(raw.strip("[]").replace(",", " ").split())
    return out


def _check_dev_key(event: APIGatewayProxyEventV2) -> None:
    key = settings().dev_api_key
    if not key:
        return
    headers = event.headers or {}
    given = headers.get("x-api-key") or ""
    auth = headers.get("authorization") or ""
    if not given and auth.lower().startswith("bearer "):
        given = auth[7:].strip()
    if not hmac.compare_digest(given.encode(), key.encode()):
        raise Unauthorized("a valid API key is required (x-api-key or Authorization: Bearer)")


def authorize(event: APIGatewayProxyEventV2, user_id: str, *, operator_ok: bool = False) -> None:
    claims = _claims(event)
    cfg = settings()
    if not claims:
        if cfg.require_auth:
            raise Unauthorized("authentication required")
        _check_dev_key(event)
        return
    if str(claims.get(cfg.user_claim, "")) == user_id:
        return
    if operator_ok and cfg.operator_group in _groups(claims):
        return
    raise Forbidden("this principal may not act for that user_id")


# Never a user_id (control characters are refused), so never a principal's.
_NO_USER = "\x00"


def principal(event: APIGatewayProxyEventV2) -> str | None:
    """The user a JWT names (its ``GB_USER_CLAIM``), or None."""
    user = _claims(event).get(settings().user_claim)
    return str(user) if user else None


def authenticate(event: APIGatewayProxyEventV2) -> str | None:
    """Who calls, before any user_id is known (the MCP endpoint): refused as
    ``authorize`` refuses it; then the principal's user_id when a token names
    one, None for a trusted caller that names the user in each call."""
    user = principal(event)
    authorize(event, user if user is not None else _NO_USER)
    return user
