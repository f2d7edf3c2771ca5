"""`GET /local/users` on `gligabao serve` only (not part of the API, not
deployed): the users that have a dataset in this server's SQLite file, for
the page's user picker. Answered only where any caller may act for any user
anyway: the SQLite store without authentication (`GB_AUTH_MODE` none) and
without `GB_DEV_API_KEY`; elsewhere 404, so no stack and no authenticated
server lists its users (the route takes no key: a keyed server, which may
listen beyond loopback, would otherwise list them to anyone)."""

from __future__ import annotations

import json

from .. import wiring
from ..config import settings

MAX_USERS = 1000  # the picker's longest list


def users_route() -> tuple[int, str, bytes]:
    cfg = settings()
    if cfg.store != "sqlite" or cfg.auth_mode != "none" or cfg.dev_api_key:
        return 404, "application/json", b'{"error": "no such route"}'
    with wiring.database().connect() as conn:
        rows = conn.execute(
            "SELECT DISTINCT user_id FROM datasets WHERE deleted_at IS NULL "
            "ORDER BY user_id LIMIT ?",
            (MAX_USERS,),
        ).fetchall()
    body = {"users": [r[0] for r in rows]}
    return 200, "application/json", json.dumps(body).encode()
