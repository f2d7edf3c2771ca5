"""`gligabao serve` runs the code it started with: its package's files changed
on disk while it runs (a work tree edited under a long bench run, an editable
install updated) do not reach its requests.

The defect this guards: the route modules and the use cases were imported at
a route's first request, so a server that had been remembering for half an
hour answered its first searches 500 (``AttributeError: 'RetrievalProfile'
object has no attribute 'w_prompt'``: the profile's class from the start, the
retrieval code from the edited tree), and a fresh server on the same file
answered every one (local/preload.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.openai_server import FakeOpenAI
from served import ROOT, Served

BROKEN = '\nraise RuntimeError("this file changed after the server started")\n'


def _spoil(package: Path) -> None:
    """Every module of the copy now fails when imported: an edit no running
    server may pick up."""
    for f in package.rglob("*.py"):
        with f.open("a") as out:
            out.write(BROKEN)


def _imports(pythonpath: Path, module: str) -> bool:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"], env=env, capture_output=True, cwd=ROOT
    )
    return done.returncode == 0


@pytest.fixture
def copied(tmp_path: Path) -> Iterator[tuple[Served, Path]]:
    """A server started from a copy of the package (on PYTHONPATH, ahead of
    the installed one)."""
    site = tmp_path / "site"
    shutil.copytree(
        ROOT / "shared" / "gligabao",
        site / "gligabao",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    with FakeOpenAI() as emb:
        s = Served({**emb.env(), "GB_EMBEDDING_DIMENSION": "64", "PYTHONPATH": str(site)})
        try:
            yield s, site
        finally:
            if s.proc.poll() is None:
                s.stop()


def test_a_running_server_ignores_its_package_changed_on_disk(
    copied: tuple[Served, Path],
) -> None:
    s, site = copied
    _spoil(site / "gligabao")
    # The copy is what `python -m gligabao...` imports with this PYTHONPATH:
    # a new process fails on it now.
    assert not _imports(site, "gligabao.memory.retrieve")

    r = s.client.post(
        "/v1/gb/remember", {"user_id": "u1", "text": "Bob moved to Lisbon.", "extract": False}
    )
    assert r.status == 200, r.body
    r = s.client.post("/v1/gb/search", {"user_id": "u1", "query": "Where did Bob move?"})
    assert r.status == 200, r.body
    assert [p["text"] for p in r.body["passages"]] == ["Bob moved to Lisbon."]
    r = s.client.post("/v1/gb/search", {"user_id": "u1", "query": "Bob", "explain": True})
    assert r.status == 200, r.body
    _, log = s.stop()
    assert "Traceback" not in log, log
