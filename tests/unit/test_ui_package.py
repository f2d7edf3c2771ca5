"""The web page's files: each one the page loads is there and served with
its type, the vendored library is the version its note says, they ship in
the wheel, and never in the Lambda layer nor in a handler's import."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gligabao.ui import STATIC, static_file

ROOT = Path(__file__).resolve().parents[2]


def referenced() -> set[str]:
    """Every file the page loads: index.html's src/href, and the ES module
    imports of its scripts, followed from app.js."""
    index = (STATIC / "index.html").read_text()
    found = {m for m in re.findall(r'(?:src|href)="([^":]+)"', index) if not m.startswith("#")}
    todo = [f for f in found if f.endswith((".js", ".mjs"))]
    while todo:
        path = todo.pop()
        text = (STATIC / path).read_text()
        for rel in re.findall(r"from '(\.[^']+)'", text):
            target = os.path.normpath(os.path.join(os.path.dirname(path), rel))
            if target not in found:
                found.add(target)
                todo.append(target)
    return found


def test_every_file_the_page_loads_is_served_with_its_type() -> None:
    files = referenced()
    assert {"style.css", "js/app.js", "vendor/cytoscape.esm.min.mjs", "js/graph.js"} <= files
    for rel in files:
        found = static_file(f"/ui/{rel}")
        assert found is not None, rel
        status, headers, body = found
        assert status == 200 and body == (STATIC / rel).read_bytes()
        ctype = headers["Content-Type"]
        assert ctype.startswith("text/javascript" if rel.endswith(("js", "mjs")) else "text/css"), (
            rel
        )
        assert headers["X-Content-Type-Options"] == "nosniff"


def test_index_and_its_security_headers() -> None:
    found = static_file("/ui/")
    assert found is not None
    status, headers, body = found
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    csp = headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert b"https://" not in body  # nothing from a CDN
    assert static_file("/ui") == (308, {"Location": "/ui/"}, b"")


@pytest.mark.parametrize(
    "path",
    [
        "/ui/../__init__.py",
        "/ui/js/../../__init__.py",
        "/ui/%2e%2e/__init__.py",
        "/ui/js/nothing.js",
        "/ui/js",
        "/ui/vendor/../../../../etc/passwd",
        "/ui/.hidden.js",
    ],
)
def test_nothing_outside_the_files_is_served(path: str) -> None:
    assert static_file(path) is None


def test_no_script_reaches_the_network_by_itself() -> None:
    """No CDN or remote URL in the page's own scripts (the vendored file is
    checked by its hash in vendor/README.md)."""
    for path in (STATIC / "js").glob("*.js"):
        text = path.read_text().replace("http://www.w3.org/2000/svg", "")  # a name, not a URL
        assert not re.search(r"https?://", text), path.name


def test_the_vendored_cytoscape_is_the_version_and_hash_its_note_says() -> None:
    import hashlib

    note = (STATIC / "vendor" / "README.md").read_text()
    lib = (STATIC / "vendor" / "cytoscape.esm.min.mjs").read_bytes()
    version = re.search(rb'version="([0-9.]+)"', lib)
    assert version and f"| {version.group(1).decode()} |" in note
    assert hashlib.sha256(lib).hexdigest() in note
    assert (STATIC / "vendor" / "LICENSE.cytoscape.txt").read_text().startswith("Copyright")


def test_the_lambda_layer_leaves_the_page_out(tmp_path: Path) -> None:
    subprocess.run(
        ["make", "--no-print-directory", "-f", str(ROOT / "layers/core/Makefile"), "core-package"],
        env={**os.environ, "ARTIFACTS_DIR": str(tmp_path)},
        check=True,
        capture_output=True,
    )
    shipped = tmp_path / "python" / "gligabao"
    assert (shipped / "handlers" / "query.py").is_file()
    assert (shipped / "local" / "server.py").is_file()
    assert not (shipped / "ui").exists()


HANDLERS = sorted(
    p.stem for p in (ROOT / "shared/gligabao/handlers").glob("*.py") if p.stem != "__init__"
)


@pytest.mark.parametrize("handler", HANDLERS)
def test_a_handler_does_not_import_the_page(handler: str) -> None:
    code = f"import sys, gligabao.handlers.{handler}; print(' '.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "gligabao.ui" not in out and "gligabao.local.server" not in out


def test_the_package_build_carries_the_page(tmp_path: Path) -> None:
    """setuptools' build_py, the step of a wheel that copies package data
    (pyproject's package-data), into a temporary folder."""
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from setuptools import setup; setup()",
            "-q",
            "build_py",
            "--build-lib",
            str(tmp_path / "lib"),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    built = tmp_path / "lib" / "gligabao" / "ui" / "static"
    for rel in referenced():
        assert (built / rel).read_bytes() == (STATIC / rel).read_bytes(), rel
    assert (built / "vendor" / "LICENSE.cytoscape.txt").is_file()
