"""The servers the TypeScript client's tests talk to, in a process the node
test spawns and stops (SIGTERM, or its stdin closing when node dies):

    python harness.py [--serve]

* a fake of the gligabao API (tests/fakes/gligabao_api.py) that answers
  what it is told and records what it got, SigV4 signatures checked with
  botocore;
* with ``--serve``, a real ``gligabao serve`` on its SQLite file, behind the
  fake Anthropic and OpenAI servers of tests/fakes, wanting ``GB_DEV_API_KEY``;
* a control server, JSON over loopback, through which a test scripts the
  fake LLM and the fake API and reads what they saw.

Prints one JSON line with the URLs once all answer."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT / "shared"), str(ROOT / "tests")]
# `gligabao serve` (a child) imports this checkout's code too.
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(ROOT / "shared"), os.environ.get("PYTHONPATH")) if p
)

from fakes.anthropic_server import FakeAnthropic  # noqa: E402
from fakes.gligabao_api import FakeGligabao, sigv4_valid  # noqa: E402
from fakes.openai_server import FakeOpenAI  # noqa: E402

DEV_KEY = "ts-client-dev-key"


class Harness:
    def __init__(self, serve: bool) -> None:
        self.api = FakeGligabao().start()
        self.llm = FakeAnthropic()
        self.emb = FakeOpenAI(dim=64)
        self.served: Any = None
        if serve:
            from served import ServedCounting

            self.llm.start()
            self.emb.start()
            env = {**self.llm.env(), **self.emb.env(), "GB_DEV_API_KEY": DEV_KEY}
            self.served = ServedCounting(env)

    def stop(self) -> None:
        if self.served is not None:
            self.served.stop()
        for fake in (self.api, self.llm, self.emb):
            fake.stop()

    # ------------------------------------------------------------ control

    def handle(self, method: str, path: str, query: dict[str, str], body: Any) -> Any:
        route = (method, path)
        if route == ("POST", "/llm/script"):
            self.llm.script(body["stage"], body["reply"], times=body.get("times", 1))
        elif route == ("POST", "/llm/delay"):
            self.llm.delay_next(float(body["seconds"]), body.get("stage"))
        elif route == ("GET", "/llm/calls"):
            return {"calls": self.llm.calls(query.get("stage"))}
        elif route == ("GET", "/served/rows"):
            return self.served.row_counts()
        elif route == ("POST", "/api/reply"):
            self.api.reply_next(
                body["status"], body.get("body"), body.get("headers"), times=body.get("times", 1)
            )
        elif route == ("POST", "/api/reset"):
            self.api.reset()
        elif route == ("GET", "/api/requests"):
            secret, region = query.get("secret"), query.get("region", "")
            return [
                {
                    "method": r.method,
                    "path": r.path,
                    "query": r.query,
                    "headers": r.headers,
                    "body": r.raw.decode(),
                    "received_at": r.received_at,
                    "sigv4_valid": sigv4_valid(r, self.api.url, secret, region) if secret else None,
                }
                for r in self.api.requests
            ]
        else:
            raise KeyError(f"{method} {path}")
        return {}


def control_server(harness: Harness) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            url = urlsplit(self.path)
            size = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(size)) if size else None
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            try:
                status, out = 200, harness.handle(self.command, url.path, query, body)
            except KeyError as exc:
                status, out = 404, {"error": str(exc)}
            data = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(serve: bool) -> None:
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    # The node test died without stopping us: its end of our stdin is closed.
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    harness = Harness(serve)
    control = control_server(harness)
    try:
        ready = {
            "control": f"http://127.0.0.1:{control.server_address[1]}",
            "fake_api": harness.api.url,
            "served": harness.served.url if harness.served else None,
            "dev_key": DEV_KEY,
        }
        print(json.dumps(ready), flush=True)
        done.wait()
    finally:
        control.shutdown()
        harness.stop()


if __name__ == "__main__":
    main("--serve" in sys.argv[1:])
