"""A fork server for the crash tests' ``gligabao serve`` children.

A crash test's child is a real process that dies at a named write point
(``GB_TEST_CRASH_AT``: ``os._exit(137)``, no cleanup). Started as a fresh
interpreter, each child spent most of its life importing: about 1 s for
``serve`` to listen, then 2-3 s more on its first request, which imports the
anthropic and openai SDKs (``-X importtime``: 4,000 modules), for some 10 ms
of the test's own work. A crash test starts three to five of them.

Here one helper process (this file run as a script) imports gligabao, the
SDKs and boto3 once, then forks a child per request; each child takes the
test's environment, working folder and output pipe, and runs
``python -m gligabao.local.cli ARGS`` as a fresh interpreter would
(``runpy``, ``__main__``). What the fork shares is what SnapStart shares
(shared/gligabao/snapstart.py): an import reads no setting and builds no
client, so the parent holds no state a child could inherit; ``random`` is
seeded again in every child by CPython's own fork hook.

The test side, ``spawn``, gives a ``Popen``-like object (``pid``, ``stdout``,
``poll``, ``wait``, ``returncode``, ``communicate``): a child killed at its
point has ``returncode == 137``, one stopped by SIGTERM ``-15``, as with
``subprocess``. Each worker of a pytest run starts its own fork server on
first use; it exits when the worker does (its stdin closes)."""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
#: What a crash test's child imports before and during its requests.
PRELOAD = ("gligabao.local.cli", "gligabao.local.server", "anthropic", "openai", "boto3")
#: The environment a child does not inherit from the test process (Serve's rule).
OWN_PREFIXES = ("GB_", "ANTHROPIC_", "OPENAI_")


# ---------------------------------------------------------------- server side


def _preload() -> None:
    import importlib
    import pkgutil

    for name in PRELOAD:
        importlib.import_module(name)
    import gligabao

    # every handler and adapter module, so that a first request imports nothing
    for info in pkgutil.walk_packages(gligabao.__path__, "gligabao."):
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional backend's package absent here
            continue
    # settings and adapters are built on first use, never by an import (SnapStart's rule)
    from gligabao import config, wiring

    assert config.settings.cache_info().currsize == 0
    assert wiring.settings.cache_info().currsize == 0
    assert threading.active_count() == 1, threading.enumerate()


def _read_request(conn: socket.socket) -> tuple[dict[str, Any], int]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 1)
    while not data.endswith(b"\n"):
        more = conn.recv(1 << 16)
        if not more:
            raise EOFError("request cut short")
        data += more
    return json.loads(data), fds[0]


def _run_child(request: dict[str, Any], out: int) -> None:
    """In the child: become ``python -m MODULE ARGS`` with the test's
    environment, working folder and output, then exit with its code."""
    import runpy
    import traceback

    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.path[0] = request["cwd"]  # as for `python -m`: the working folder first
    sys.argv = [request["module"], *request["args"]]
    code = 0
    try:
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    # the interpreter's own exit: its thread pools told to stop, every thread
    # joined, then the atexit handlers (the child's and its imports')
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _watch(conn: socket.socket, request: dict[str, Any], out: int) -> None:
    """In a watcher (a fork of the server): fork the child, tell the test its
    PID, wait for it and tell its exit code (negative: the signal that ended it)."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _run_child(request, out)
    os.close(out)
    conn.sendall(f"pid {pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    conn.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
    conn.close()
    os._exit(0)


def serve(path: str) -> None:
    _preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # watchers reap themselves
    print("ready", flush=True)
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in ready:  # the test process is gone
            return
        conn, _ = listener.accept()
        request, out = _read_request(conn)
        if os.fork() == 0:
            listener.close()
            _watch(conn, request, out)
        conn.close()
        os.close(out)


# ------------------------------------------------------------------ test side


class Forked:
    """The part of ``subprocess.Popen`` the crash tests use, for a forked child."""

    def __init__(self, conn: socket.socket, stdout: IO[str]) -> None:
        self._conn = conn
        self._status = conn.makefile("r")
        self.stdout = stdout
        self.pid = int(self._status.readline().split()[1])
        self.returncode: int | None = None

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def poll(self) -> int | None:
        return self.wait(0) if self.returncode is None else self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.returncode is None:
            ready, _, _ = select.select([self._conn], [], [], timeout)
            if not ready:
                if timeout == 0:
                    return None
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
            line = self._status.readline()
            self.returncode = int(line.split()[1])
            self._status.close()
            self._conn.close()
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str, None]:
        out = self.stdout.read()  # to the end: the child (and only it) holds the pipe
        self.stdout.close()
        self.wait(timeout)
        return out, None


class ForkServer:
    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="gb-fork-")
        self.path = os.path.join(self._dir.name, "sock")
        env = {k: v for k, v in os.environ.items() if not k.startswith(OWN_PREFIXES)}
        env["PYTHONPATH"] = str(ROOT / "shared")
        env["OPENBLAS_NUM_THREADS"] = "1"  # no BLAS threads in a process that forks
        self.proc = subprocess.Popen(
            [sys.executable, __file__, self.path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=ROOT,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line == "ready\n", f"the fork server did not start: {line!r}"

    def spawn(self, module: str, args: list[str], env: dict[str, str], cwd: Path) -> Forked:
        request = {"module": module, "args": args, "env": env, "cwd": str(cwd)}
        read_end, write_end = os.pipe()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(self.path)
        try:
            socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], [write_end])
        finally:
            os.close(write_end)
        return Forked(conn, os.fdopen(read_end, "r"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        self._dir.cleanup()


_server: ForkServer | None = None


def spawn(
    module: str, args: list[str], env: dict[str, str], cwd: Path = ROOT
) -> Forked | subprocess.Popen[str]:
    """``python -m MODULE ARGS`` with exactly ``env``, its output (and
    errors) on ``.stdout``: forked from this worker's fork server (started on
    first use, stopped at exit), or with ``GB_TEST_FRESH_CHILDREN=1`` a fresh
    interpreter, as before the fork server (to compare, or to rule it out)."""
    global _server
    if os.environ.get("GB_TEST_FRESH_CHILDREN") == "1":
        return subprocess.Popen(
            [sys.executable, "-m", module, *args],
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    if _server is None:
        _server = ForkServer()
        atexit.register(_server.stop)
    return _server.spawn(module, args, env, cwd)


if __name__ == "__main__":
    serve(sys.argv[1])
