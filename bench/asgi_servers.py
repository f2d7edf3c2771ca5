"""The HTTP server under `gligabao serve`: uvicorn (h11) against hypercorn
(h11), each serving the same trivial ASGI application (a 200 with a small
JSON body) in a child process, one client on one kept-alive connection.
The figure is the server's own cost of a request: the client's wall time
per request (median) and the server process's CPU time per request.

    .venv/bin/python -m bench.asgi_servers [--requests 2000] [--rounds 3]

hypercorn is not a dependency: `pip install hypercorn` to run its rows.
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import time

from gligabao.local.embedded import free_port

CHILD = """
import sys
BODY = b'{"ok": true, "entities": [], "edges": [], "passages": []}'

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(BODY)).encode())]})
    await send({"type": "http.response.body", "body": BODY})

which, port = sys.argv[1], int(sys.argv[2])
if which == "uvicorn":
    import uvicorn
    uvicorn.run(app, host="127.0.0.1", port=port, http="h11", lifespan="off",
                log_level="warning", access_log=False)
else:
    import asyncio
    from hypercorn.asyncio import serve
    from hypercorn.config import Config
    c = Config(); c.bind = [f"127.0.0.1:{port}"]; c.accesslog = None; c.loglevel = "WARNING"
    asyncio.run(serve(app, c))
"""


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one(which: str, requests: int) -> tuple[float, float]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, which, str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                conn.request("GET", "/")
                conn.getresponse().read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        body = b'{"user_id": "u1", "query": "Where does Alice work?"}'
        walls = []
        cpu0 = cpu_s(proc.pid)
        for _ in range(requests):
            t = time.perf_counter()
            conn.request("POST", "/v1/gb/search", body, {"Content-Type": "application/json"})
            conn.getresponse().read()
            walls.append(time.perf_counter() - t)
        cpu = cpu_s(proc.pid) - cpu0
        return statistics.median(walls) * 1e6, cpu / requests * 1e6
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rows: dict[str, list[tuple[float, float]]] = {"uvicorn": [], "hypercorn": []}
    for _ in range(args.rounds):
        for which in rows:  # alternating: both at the same load
            rows[which].append(one(which, args.requests))
    print(f"{args.requests} requests x {args.rounds} rounds, one kept-alive connection")
    print(f"{'server':<10} {'wall p50 us':>12} {'server CPU us/req':>18}")
    for which, got in rows.items():
        wall = statistics.median(w for w, _ in got)
        cpu = statistics.median(c for _, c in got)
        print(f"{which:<10} {wall:>12.0f} {cpu:>18.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
