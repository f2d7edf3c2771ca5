"""Deployment package size and cold import time of the Lambda handlers.

    .venv/bin/python -m bench.package_size [--fresh] [--runs N] [--no-pyc] [--against DIR]

``--against DIR`` (another tree's shared/ folder, e.g. from
``git archive main shared | tar -x -C /tmp/main``): only the imports, each
handler of both trees in turn, run by run, and the ratio of their CPU times;
with ``--no-pyc``, the other tree without bytecode (as Lambda ran the layer
before it shipped any) against this one compiled.

1. The size of each layer, unzipped and zipped, with its largest packages:
   the core layer (the Lambda dependency set of layers/core/requirements.txt
   plus shared/gligabao), which every function loads and the default stack
   loads alone, and the clients layer (layers/clients: the anthropic and
   openai SDKs, opensearch-py), attached only when a parameter uses one of
   them. It measures .aws-sam/build/<Layer> when `sam build` left one, else
   (or with --fresh) builds the layer into a temporary folder with the same
   Makefile `sam build` runs (pip downloads the Lambda platform's wheels:
   needs PyPI).
2. The cold import time of each handler module in a fresh interpreter
   (this machine's Python and .venv, not Lambda's: compare the figures with
   each other and over time), best and median of N runs, with the modules
   that `python -X importtime` shows as the costliest. shared/gligabao is
   compiled first, as the layer ships it (.pyc files, layers/core/Makefile);
   ``--no-pyc`` measures instead what a layer without bytecode costs on
   Lambda, where /opt is read-only: every module but the stdlib's compiled
   by every cold start.
3. That importing a handler imports nothing on
   gligabao.handlers.COLD_START_DENIED (the X-Ray SDK, the MCP SDK's models,
   the LLM SDKs, numpy, sqlite3, ...): they load on first use only.
   Exits 1 if one does.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from gligabao.handlers import COLD_START_DENIED, COLD_START_DENIED_IN, FUNCTIONS

from .harness import ROOT

# Each layer: its Makefile's folder, and what it is for.
LAYERS = {
    "CoreLayer": (ROOT / "layers" / "core", "every function; the default stack's only layer"),
    "ClientsLayer": (ROOT / "layers" / "clients", "only with anthropic, openai or OpenSearch"),
}
TEMPLATE = ROOT / "template.yaml"
HANDLERS = FUNCTIONS
ALSO_SHOW = ["boto3", "botocore", "pynamodb", "opensearchpy", "pydantic", "httpx"]
LAMBDA_UNZIPPED_LIMIT = 250 * 2**20
MiB = 2**20


def build_layer(name: str, target: Path) -> None:
    src = LAYERS[name][0]
    subprocess.run(
        ["make", "--no-print-directory", "-f", str(src / "Makefile"), f"build-{name}"],
        env={**os.environ, "ARTIFACTS_DIR": str(target)},
        cwd=src,
        check=True,
    )


def tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def zipped_size(path: Path) -> int:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(path.rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(path))
    return buf.tell()


def top_level(python_dir: Path, n: int = 12) -> list[tuple[str, int]]:
    sizes: dict[str, int] = {}
    for entry in python_dir.iterdir():
        key = "(dist-info metadata)" if entry.name.endswith(".dist-info") else entry.name
        size = tree_size(entry) if entry.is_dir() else entry.stat().st_size
        sizes[key] = sizes.get(key, 0) + size
    return sorted(sizes.items(), key=lambda kv: -kv[1])[:n]


def report_layer(name: str, layer: Path, source: str) -> int:
    """Prints the layer's sizes; returns its unzipped size."""
    python_dir = layer / "python"
    unzipped = tree_size(layer)
    print(f"{name} ({LAYERS[name][1]}; {source}): {layer}")
    print(f"  unzipped {unzipped / MiB:7.1f} MiB   (Lambda limit, all layers + code: 250 MiB)")
    print(f"  zipped   {zipped_size(layer) / MiB:7.1f} MiB")
    own = tree_size(python_dir / "gligabao") if (python_dir / "gligabao").exists() else 0
    print(f"  of which gligabao itself {own / 2**10:.0f} KiB")
    pyc = sum(p.stat().st_size for p in python_dir.rglob("*.pyc"))
    print(f"  of which bytecode (.pyc) {pyc / MiB:.1f} MiB")
    print("  largest:")
    for name, size in top_level(python_dir):
        print(f"    {name:<28} {size / MiB:6.1f} MiB")
    if unzipped > LAMBDA_UNZIPPED_LIMIT:
        print("  FAIL: over the Lambda unzipped limit")
    return unzipped


_PROBE = """
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
import importlib
importlib.import_module(sys.argv[1])
t1, c1 = time.perf_counter(), time.process_time()
print(json.dumps({"ms": (t1 - t0) * 1000, "cpu_ms": (c1 - c0) * 1000, "modules": sorted(sys.modules)}))
"""


def stdlib_only_bytecode() -> dict[str, str]:
    """The environment of an interpreter that finds bytecode for the stdlib
    only (as on Lambda with a layer that ships none): a PYTHONPYCACHEPREFIX
    holding the stdlib's .pyc files, compiled once, and nothing written."""
    import sysconfig

    prefix = Path(tempfile.gettempdir()) / f"gb-stdlib-pyc-{sys.implementation.cache_tag}"
    env = {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": "1"}
    if not prefix.exists():
        stdlib = sysconfig.get_paths()["stdlib"]
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", stdlib],
                       env={**os.environ, **env}, capture_output=True, check=False)  # fmt: skip
    return env


def import_once(
    module: str, shared: Path | None = None, extra_env: dict[str, str] | None = None
) -> tuple[float, float, set[str]]:
    """(wall ms, CPU ms, the modules loaded) of one import in a fresh
    interpreter (from ``shared``, another tree's package folder, when given).
    The CPU time leaves out the waits for a core: on a shared, loaded machine
    it is the steadier figure (the wall one is what Lambda's init phase bills)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GB_", "PYTHONPROFILE"))}
    env.update(extra_env or {})
    if shared is not None:
        env["PYTHONPATH"] = str(shared)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, module],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=ROOT,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return float(result["ms"]), float(result["cpu_ms"]), set(result["modules"])


def importtime_top(module: str, n: int = 6) -> list[tuple[str, int]]:
    """The costliest third-party packages (cumulative us of their root
    package's import, which nests the others it pulls in) from -X importtime."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    rows: dict[str, int] = {}
    for line in out.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or "cumulative" in parts[1]:
            continue
        name = parts[2].strip()
        if "." in name or name in sys.stdlib_module_names or name.startswith("_"):
            continue
        if name == "gligabao":
            continue
        try:
            rows[name] = max(rows.get(name, 0), int(parts[1]))
        except ValueError:
            continue
    return sorted(rows.items(), key=lambda r: -r[1])[:n]


def compare(other: Path, runs: int, other_env: dict[str, str], this_env: dict[str, str]) -> None:
    """Each handler of this checkout and of ``other`` (a tree's shared/ folder,
    e.g. ``git archive main shared | tar -x -C /tmp/main``), interleaved run
    by run so that both see the same load: medians and the CPU ratio. Both
    trees are compiled; ``other_env`` (e.g. stdlib-only bytecode: the layer
    before it shipped any) and ``this_env`` (template.yaml's variables) apply
    to each."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(other), str(ROOT / "shared")],
                   check=True, capture_output=True)  # fmt: skip
    print(f"this checkout against {other}, median of {runs}, interleaved "
          f"(load {os.getloadavg()[0]:.1f}): wall / CPU ms")  # fmt: skip
    for name in HANDLERS:
        module = f"gligabao.handlers.{name}"
        if not (other / "gligabao" / "handlers" / f"{name}.py").exists():
            continue
        ours, theirs = [], []
        for _ in range(runs):
            theirs.append(import_once(module, other, other_env))
            ours.append(import_once(module, ROOT / "shared", this_env))
        (tw, tc), (ow, oc) = [
            (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
            for rs in (theirs, ours)
        ]
        print(f"  {name:<16} other {tw:7.0f} / {tc:5.0f}   this {ow:7.0f} / {oc:5.0f}   "
              f"CPU this/other {oc / tc:.2f}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fresh", action="store_true", help="build the layer into a temp dir")
    parser.add_argument("--runs", type=int, default=5, help="fresh interpreters per handler")
    parser.add_argument("--no-layer", action="store_true", help="only the import figures")
    parser.add_argument("--against", type=Path, help="another tree's shared/: interleaved imports")
    parser.add_argument("--no-pyc", action="store_true", help="only the stdlib's bytecode")
    args = parser.parse_args()
    # The functions' environment as far as imports see it (template.yaml's Globals).
    globals_env = dict(
        re.findall(r"^\s+(PYDANTIC_DISABLE_PLUGINS): (\S+)$", TEMPLATE.read_text(), re.M)
    )
    if args.against:
        # --no-pyc with --against: the other tree as Lambda ran a layer without
        # bytecode, this one as the layer ships now.
        other_env = stdlib_only_bytecode() if args.no_pyc else {}
        compare(args.against.resolve(), args.runs, other_env, globals_env)
        return 0

    if not args.no_layer:
        sizes: dict[str, int] = {}
        for name, (src, _) in LAYERS.items():
            built = ROOT / ".aws-sam" / "build" / name
            if built.exists() and not args.fresh:
                sizes[name] = report_layer(name, built, "sam build output")
            else:
                with tempfile.TemporaryDirectory(prefix="gb-layer-") as tmp:
                    build_layer(name, Path(tmp))
                    rel = src.relative_to(ROOT)
                    sizes[name] = report_layer(name, Path(tmp), f"built by {rel}/Makefile")
            print()
        core, both = sizes["CoreLayer"], sum(sizes.values())
        print(f"a function's layers, unzipped: {core / MiB:.1f} MiB on the default stack "
              f"(core), {both / MiB:.1f} MiB with the clients layer")  # fmt: skip
        print()

    if args.no_pyc:
        extra_env = {**globals_env, **stdlib_only_bytecode()}
        compiled = "no bytecode but the stdlib's (a layer without .pyc on Lambda)"
    else:
        extra_env = dict(globals_env)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "shared")],
                       check=True, capture_output=True)  # fmt: skip
        compiled = "gligabao and its dependencies compiled (.pyc, as the layer ships them)"
    print(f"cold import of each handler ({sys.executable}, Python {sys.version.split()[0]},")
    print(f"{compiled}; {' '.join(f'{k}={v}' for k, v in globals_env.items()) or 'no env'};")
    print(f"best / median of {args.runs} fresh interpreters, wall and CPU time; the interpreter's")
    print(f"own start excluded; {os.getloadavg()[0]:.1f} load average)")
    failed = False
    for name in HANDLERS:
        module = f"gligabao.handlers.{name}"
        runs = [import_once(module, extra_env=extra_env) for _ in range(args.runs)]
        times = [ms for ms, _, _ in runs]
        cpu = [c for _, c, _ in runs]
        loaded = runs[-1][2]
        denied = [*COLD_START_DENIED, *COLD_START_DENIED_IN.get(name, ())]
        bad = [d for d in denied if any(m == d or m.startswith(d + ".") for m in loaded)]
        shown = [m for m in ALSO_SHOW if m in loaded]
        failed |= bool(bad)
        print(
            f"  {module:<34} {min(times):7.1f} / {statistics.median(times):7.1f} ms wall, "
            f"{min(cpu):6.1f} / {statistics.median(cpu):6.1f} ms CPU   "
            f"{'FAIL imports ' + ', '.join(bad) if bad else 'ok: nothing denied'}"
        )
        print(f"      loads: {', '.join(shown) or '-'}")
        top = ", ".join(f"{m} {us / 1000:.0f} ms" for m, us in importtime_top(module))
        print(f"      costliest imports: {top}")
    print(f"(load average at the end: {os.getloadavg()[0]:.1f})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
