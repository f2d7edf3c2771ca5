"""Who may act for which user, by the stack's auth mode (``GB_AUTH_MODE``,
the template's ``AuthMode`` parameter).

``iam`` (the deployed default): API Gateway has checked the request's SigV4
signature against IAM before the handler runs. The caller is a trusted
service and may name any ``user_id``; which routes it may call at all is its
IAM policy (the stack outputs a client policy and a separate operator policy
for the records routes). A request without an IAM identity is 401.

``jwt``: API Gateway's JWT authorizer has checked the token; the handler binds
its principal (the ``GB_USER_CLAIM`` claim, ``sub`` by default) to the
request's ``user_id``: another user is 403. Members of the operator group
(the ``cognito:groups`` or ``groups`` claim, never an OAuth ``scope``: a scope
is granted to a client app, not to a person) may read records across users.
A request without claims is 401.

``none``: nobody is checked (only when asked for by name; the stack's outputs
say it is open). The local server runs this way, open on loopback, or, with
``GB_DEV_API_KEY``, wanting that key as ``x-api-key`` or a bearer token.
"""

from __future__ import annotations

import hmac
from typing import Any

from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2

from ..config import settings
from ..errors import Forbidden, Unauthorized

GROUP_CLAIMS = ("cognito:groups", "groups")


def _claims(event: APIGatewayProxyEventV2) -> dict[str, Any]:
    authorizer = event.request_context.authorizer
    return authorizer.jwt_claim if authorizer is not None else {}


def _iam_caller(event: APIGatewayProxyEventV2) -> str:
    authorizer = event.request_context.authorizer
    if authorizer is None:
        return ""
    iam = authorizer.iam
    return iam.user_arn or iam.caller_id


def _groups(claims: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for name in GROUP_CLAIMS:
        raw = claims.get(name)
        if isinstance(raw, list):
            out.update(str(g) for g in raw)
        elif isinstance(raw, str):
            # API Gateway flattens array claims to "[a b]".
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


def _bind_claims(
    claims: dict[str, Any], user_id: str, operator_ok: bool, operator_only: bool = False
) -> None:
    cfg = settings()
    operator = cfg.operator_group in _groups(claims)
    if operator_only and not operator:
        raise Forbidden("only an operator may do this")
    if str(claims.get(cfg.user_claim, "")) == user_id:
        return
    if (operator_ok or operator_only) and operator:
        return
    raise Forbidden("this principal may not act for that user_id")


def authorize(
    event: APIGatewayProxyEventV2,
    user_id: str,
    *,
    operator_ok: bool = False,
    operator_only: bool = False,
) -> None:
    """``operator_ok``: an operator may act for any user; ``operator_only``:
    only an operator may (with IAM, the ApiOperatorPolicy grants the route)."""
    mode = settings().auth_mode
    if mode == "iam":
        if not _iam_caller(event):
            raise Unauthorized("a SigV4-signed request is required")
        return
    claims = _claims(event)
    if mode == "jwt":
        if not claims:
            raise Unauthorized("authentication required")
        _bind_claims(claims, user_id, operator_ok, operator_only)
        return
    # none: open (or the local dev key); claims, if any, still bind.
    if claims:
        _bind_claims(claims, user_id, operator_ok, operator_only)
        return
    _check_dev_key(event)


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
