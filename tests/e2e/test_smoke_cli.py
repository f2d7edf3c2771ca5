"""`python -m gligabao.smoke`: the deployment smoke test, run here against
the local server's real HTTP stack (AuthMode none), and its SigV4 signing."""

from __future__ import annotations

import pytest

from conftest import Harness


@pytest.fixture
def gb(gb_http: Harness) -> Harness:
    """Over a loopback socket: the smoke CLI needs a server on a port."""
    return gb_http


def test_smoke_runs_every_step_and_leaves_nothing(
    gb: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    from gligabao.smoke import main

    gb.llm.script(
        "extract",
        {
            "entities": [{"name": "Ada Lovelace", "type": "person"}],
            "edges": [],
        },
    )
    assert main(["--url", gb.client.base, "--auth", "none", "--user", "smoke-u"]) == 0
    out = capsys.readouterr().out
    for name in ("remember", "query", "list datasets", "call record", "delete dataset"):
        line = next(line for line in out.splitlines() if line.startswith(name))
        assert line.rstrip().endswith("ok"), line
    assert gb.client.get("/v1/gb/datasets?user_id=smoke-u").body["datasets"] == []


def test_smoke_reports_a_failed_step(
    gb: Harness, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gligabao import wiring
    from gligabao.smoke import main

    monkeypatch.setenv("GB_DEV_API_KEY", "k")  # the smoke test sends none: 401
    wiring.settings.cache_clear()
    try:
        assert main(["--url", gb.client.base, "--auth", "none"]) == 1
    finally:
        wiring.settings.cache_clear()
    assert "FAILED" in capsys.readouterr().out


def test_iam_mode_signs_for_execute_api_in_the_url_region(monkeypatch: pytest.MonkeyPatch) -> None:
    from gligabao.smoke import region_of, signed_headers

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    url = "https://abc123.execute-api.eu-west-3.amazonaws.com/v1/gb/query"
    assert region_of(url) == "eu-west-3"
    headers = signed_headers(
        "POST", url, b"{}", {"content-type": "application/json"}, region_of(url)
    )
    auth = headers["Authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-3/execute-api/aws4_request" in auth
    assert "X-Amz-Date" in headers
