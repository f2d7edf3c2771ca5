"""`GET /local/users` of `gligabao serve` (the page's user picker): the users
with a dataset in the SQLite file; 404 where a caller may not act for any
user (an authenticated server), so no user list leaks; no write allowed."""

from __future__ import annotations

import pytest
from test_sqlite_server import db_path, gb_sqlite  # noqa: F401  (the SQLite fixture)

from conftest import Harness


def test_the_users_present_are_listed(gb_sqlite: Harness) -> None:  # noqa: F811
    gb = gb_sqlite
    assert gb.client.get("/local/users").body == {"users": []}
    for user in ("zoe", "adam"):
        gb.remember("A note.", user=user, extract=False)
    gb.remember("Another.", user="adam", dataset="work", extract=False)
    r = gb.client.get("/local/users")
    assert r.status == 200, r.body
    assert r.body == {"users": ["adam", "zoe"]}
    # A deleted dataset's user is not present when it was their last one.
    assert gb.client.delete("/v1/gb/datasets/main?user_id=zoe").status in (200, 204)
    assert gb.client.get("/local/users").body == {"users": ["adam"]}
    # Read only.
    w = gb.client.post("/local/users", {"user_id": "eve"})
    assert w.status == 405
    assert gb.client.get("/local/users").body == {"users": ["adam"]}


@pytest.mark.parametrize(("var", "value"), [("GB_AUTH_MODE", "jwt"), ("GB_DEV_API_KEY", "k-123")])
def test_an_authenticated_server_lists_no_user(
    gb_sqlite: Harness,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    var: str,
    value: str,
) -> None:
    """A keyed server may listen beyond loopback: the route takes no key, so
    it is not there (with the key sent or not)."""
    from gligabao.config import settings

    gb_sqlite.remember("A note.", user="zoe", extract=False)
    monkeypatch.setenv(var, value)
    settings.cache_clear()
    try:
        assert gb_sqlite.client.get("/local/users").status == 404
        keyed = gb_sqlite.client.get("/local/users", headers={"x-api-key": value})
        assert keyed.status == 404
    finally:
        monkeypatch.delenv(var)
        settings.cache_clear()
