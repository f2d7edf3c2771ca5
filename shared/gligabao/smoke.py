"""A smoke test for a real deployment, run after `sam deploy`:

    python -m gligabao.smoke --url https://<api id>.execute-api.<region>.amazonaws.com

remembers a short text in a throwaway dataset, queries it, lists the
datasets, reads the call record, and deletes the dataset, printing each
status and latency. With ``--auth iam`` (the stack's default AuthMode) every
request is signed with SigV4 with the caller's AWS credentials (botocore's
usual chain); ``--auth jwt --token T`` sends a bearer token. Exit status 0
when every step answered as expected."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

TEXT = "Ada Lovelace wrote the first published algorithm for Babbage's Analytical Engine."


@dataclass
class Step:
    name: str
    status: int
    ms: float
    ok: bool
    body: Any


def region_of(url: str) -> str:
    m = re.search(r"\.execute-api\.([a-z0-9-]+)\.amazonaws\.com", urlsplit(url).netloc)
    return m.group(1) if m else "us-east-1"


def signed_headers(
    method: str, url: str, body: bytes | None, headers: dict[str, str], region: str
) -> dict[str, str]:
    """SigV4 for execute-api with the caller's credentials."""
    import boto3
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    credentials = boto3.Session().get_credentials()
    if credentials is None:
        raise SystemExit("no AWS credentials to sign with (AuthMode=iam)")
    req = AWSRequest(method=method, url=url, data=body, headers=headers)
    SigV4Auth(credentials, "execute-api", region).add_auth(req)
    return dict(req.headers.items())


class Client:
    def __init__(self, base: str, auth: str, token: str = "", region: str = "") -> None:
        self.base = base.rstrip("/")
        self.auth = auth
        self.token = token
        self.region = region or region_of(base)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any, dict[str, str]]:
        url = self.base + path
        data = json.dumps(body).encode() if body is not None else None
        headers = {"content-type": "application/json"}
        if self.auth == "iam":
            headers = signed_headers(method, url, data, headers, self.region)
        elif self.auth == "jwt":
            headers["authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                status, raw, hdrs = resp.status, resp.read(), dict(resp.headers.items())
        except urllib.error.HTTPError as err:
            status, raw, hdrs = err.code, err.read(), dict(err.headers.items())
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors="replace")
        return status, parsed, hdrs


def run(client: Client, user: str, dataset: str) -> list[Step]:
    steps: list[Step] = []

    def step(name: str, method: str, path: str, body: Any, expect: int) -> tuple[Any, dict[str, str]]:
        t0 = time.perf_counter()
        status, out, headers = client.request(method, path, body)
        ms = (time.perf_counter() - t0) * 1000
        steps.append(Step(name, status, ms, status == expect, out))
        return out, headers

    q = f"user_id={user}"
    step("remember", "POST", "/v1/gb/remember", {"user_id": user, "dataset": dataset, "text": TEXT}, 200)
    _, headers = step(
        "query",
        "POST",
        "/v1/gb/query",
        {"user_id": user, "dataset": dataset, "query": "What did Ada Lovelace write?"},
        200,
    )
    step("list datasets", "GET", f"/v1/gb/datasets?{q}", None, 200)
    call_id = {k.lower(): v for k, v in headers.items()}.get("x-gb-call-id", "")
    step("call record", "GET", f"/v1/gb/calls/{call_id}?{q}", None, 200)
    step("delete dataset", "DELETE", f"/v1/gb/datasets/{dataset}?{q}", None, 204)
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gligabao.smoke", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the stack's ApiUrl output")
    parser.add_argument("--auth", choices=("iam", "jwt", "none"), default="iam")
    parser.add_argument("--token", default="", help="--auth jwt: the bearer token")
    parser.add_argument("--region", default="", help="default: from the URL")
    parser.add_argument("--user", default="", help="default: smoke-<random>")
    args = parser.parse_args(argv)
    if args.auth == "jwt" and not args.token:
        parser.error("--auth jwt needs --token")
    user = args.user or f"smoke-{uuid.uuid4().hex[:8]}"
    dataset = f"smoke-{uuid.uuid4().hex[:8]}"
    client = Client(args.url, args.auth, args.token, args.region)
    steps = run(client, user, dataset)
    print(f"{'step':<16} {'status':>6} {'ms':>9}  user={user} dataset={dataset}")
    for s in steps:
        mark = "ok" if s.ok else f"FAILED: {json.dumps(s.body)[:300]}"
        print(f"{s.name:<16} {s.status:>6} {s.ms:>9.0f}  {mark}")
    return 0 if all(s.ok for s in steps) else 1


if __name__ == "__main__":
    sys.exit(main())
