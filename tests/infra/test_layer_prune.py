"""The layer's prune (layers/core/Makefile `prune`): botocore's service models
are cut to layers/core/aws-services.txt, so a client of any other service
fails on Lambda with UnknownServiceError. Every service the code calls must
be on that list: found here from the code itself (each ``client("<service>"``
call, pynamodb's DynamoDB, Powertools' parameters), so that a new client
fails this test rather than the deployed function."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "core"
CODE = ROOT / "shared" / "gligabao"

# boto3.client("sqs", ...), Session().client(\n "bedrock-runtime", ...)
CLIENT = re.compile(r"""\.client\(\s*["']([a-z0-9-]+)["']""")
# What a library calls for the code: the import that implies the service.
IMPLIED = {
    re.compile(r"^\s*(from|import) pynamodb\b", re.M): "dynamodb",
    re.compile(r"\bget_secrets?\b"): "secretsmanager",  # Powertools parameters
    re.compile(r"\bget_parameters?\b"): "ssm",
    re.compile(r"\bget_app_config\b"): "appconfigdata",
}


def kept() -> set[str]:
    lines = (LAYER / "aws-services.txt").read_text().splitlines()
    return {line.split("#")[0].strip() for line in lines} - {""}


def called() -> dict[str, set[str]]:
    """service -> the files of shared/gligabao that call it."""
    found: dict[str, set[str]] = {}
    for path in CODE.rglob("*.py"):
        text = path.read_text()
        services = set(CLIENT.findall(text))
        services |= {svc for pattern, svc in IMPLIED.items() if pattern.search(text)}
        for svc in services:
            found.setdefault(svc, set()).add(str(path.relative_to(CODE)))
    return found


def test_the_search_finds_the_clients_the_code_is_known_to_build() -> None:
    """The grep itself: the services of the default stack (the tables, the
    queue, Bedrock's embeddings) are found where they are built."""
    found = called()
    assert "queue/sqs.py" in found["sqs"]
    assert "ai/bedrock_runtime.py" in found["bedrock-runtime"]
    assert "secrets.py" in found["secretsmanager"]
    assert "dynamodb/client.py" in found["dynamodb"] or len(found["dynamodb"]) > 3


def test_every_service_the_code_calls_is_kept() -> None:
    missing = {svc: sorted(files) for svc, files in called().items() if svc not in kept()}
    assert missing == {}, f"add these to layers/core/aws-services.txt: {missing}"


def test_prune_keeps_the_listed_models_and_the_shared_files(tmp_path: Path) -> None:
    """The Makefile's prune on a made-up install: the listed services and the
    files every client reads stay, the rest and the noise go."""
    py = tmp_path / "python"
    data = py / "botocore" / "data"
    for svc in [*kept(), "s3", "ec2", "kinesis"]:
        (data / svc / "2012-08-10").mkdir(parents=True)
        (data / svc / "2012-08-10" / "service-2.json.gz").write_bytes(b"x")
    for name in ["endpoints.json", "partitions.json", "_retry.json"]:
        (data / name).write_text("{}")
    for svc in ["dynamodb", "ec2"]:
        (py / "boto3" / "data" / svc).mkdir(parents=True)
    dist = py / "pkg-1.0.dist-info"
    dist.mkdir()
    for name in ["RECORD", "METADATA", "entry_points.txt"]:
        (dist / name).write_text("")
    (py / "pkg" / "tests").mkdir(parents=True)
    (py / "pkg" / "__init__.pyi").write_text("")
    (py / "pkg" / "__init__.py").write_text("")

    subprocess.run(
        ["make", "--no-print-directory", "-f", str(LAYER / "Makefile"), "prune"],
        env={"ARTIFACTS_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
        cwd=LAYER,
        check=True,
        capture_output=True,
    )
    services = {p.name for p in data.iterdir() if p.is_dir()}
    assert services == kept()
    assert {p.name for p in data.iterdir() if p.is_file()} == {
        "endpoints.json",
        "partitions.json",
        "_retry.json",
    }
    assert {p.name for p in (py / "boto3" / "data").iterdir()} == {"dynamodb"}
    assert sorted(p.name for p in dist.iterdir()) == ["METADATA", "entry_points.txt"]
    assert sorted(p.name for p in (py / "pkg").iterdir()) == ["__init__.py"]


def make_pyc(tmp_path: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    args = [f"{k}={v}" for k, v in variables.items()]
    return subprocess.run(
        ["make", "--no-print-directory", "-f", str(LAYER / "Makefile"), "pyc", *args],
        env={"ARTIFACTS_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
        cwd=LAYER,
        capture_output=True,
        text=True,
    )


def test_the_layer_ships_bytecode_the_runtime_uses_without_a_source_check(
    tmp_path: Path,
) -> None:
    """/opt is read-only on Lambda: without .pyc files every cold start
    compiles what it imports. They are compiled by the runtime's Python
    (PY_VERSION) and marked unchecked-hash (a zip keeps mtimes to 2 s only)."""
    (tmp_path / "python" / "pkg").mkdir(parents=True)
    (tmp_path / "python" / "pkg" / "__init__.py").write_text("X = 1\n")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    done = make_pyc(tmp_path, PY_VERSION=version, PYC_PYTHON=sys.executable)
    assert done.returncode == 0, done.stderr
    pyc = (
        tmp_path / "python" / "pkg" / "__pycache__" / f"__init__.{sys.implementation.cache_tag}.pyc"
    )
    data = pyc.read_bytes()
    assert data[:4] == importlib.util.MAGIC_NUMBER
    assert int.from_bytes(data[4:8], "little") == 0b01  # hash-based, source not checked


def test_without_the_runtimes_python_the_layer_ships_no_bytecode_and_says_so(
    tmp_path: Path,
) -> None:
    """A machine without python3.12 still builds a working layer (a user's
    `sam build` must not fail for a speed-up): no .pyc, and a warning."""
    (tmp_path / "python" / "pkg").mkdir(parents=True)
    (tmp_path / "python" / "pkg" / "__init__.py").write_text("X = 1\n")
    for python in (sys.executable, "/nonexistent/python3.99"):
        built = make_pyc(tmp_path, PY_VERSION="3.99", PYC_PYTHON=python)
        assert built.returncode == 0, built.stderr
        assert "WARNING: no bytecode: it needs the runtime's Python 3.99" in built.stderr
    assert not list(tmp_path.rglob("*.pyc"))
    none = make_pyc(tmp_path, PY_VERSION="3.99", PYC_PYTHON="none")
    assert none.returncode == 0
    assert "no bytecode (PYC_PYTHON=none)" in none.stdout
