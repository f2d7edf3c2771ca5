"""SnapStart, played in one process: import a handler (Lambda's init), run
the before-snapshot hooks, then fork copies of the initialised process (each
a new environment resumed from the one snapshot), run the after-restore
hooks in each, and have each answer one request. Prints, per copy, the
call id of its answer, a random value, and whether its SQS client is the one
opened before the snapshot.

    python tests/snapstart/probe.py MODULE COPIES [--no-hooks]
"""

from __future__ import annotations

import importlib
import json
import os
import random
import sys
from typing import Any

EVENT: dict[str, Any] = {
    "version": "2.0",
    "routeKey": "$default",
    "rawPath": "/v1/gb/no-such-route",
    "rawQueryString": "",
    "headers": {"host": "localhost"},
    "requestContext": {
        "accountId": "123456789012",
        "apiId": "api",
        "domainName": "localhost",
        "http": {
            "method": "GET",
            "path": "/v1/gb/no-such-route",
            "protocol": "HTTP/1.1",
            "sourceIp": "127.0.0.1",
            "userAgent": "probe",
        },
        "requestId": "r",
        "routeKey": "$default",
        "stage": "$default",
        "time": "06/Dec/2026:00:00:00 +0000",
        "timeEpoch": 0,
    },
    "isBase64Encoded": False,
}


def restored(handler: Any, warmed: object, hooks: bool) -> dict[str, Any]:
    from gligabao import snapstart, wiring

    if hooks:
        snapstart.run_after_restore()
    reply = handler(EVENT, None)
    return {
        "call_id": reply["headers"]["X-Gb-Call-Id"],
        "random": random.random(),
        "client_from_snapshot": wiring.remember_queue() is warmed,
    }


def main() -> None:
    module, copies, hooks = sys.argv[1], int(sys.argv[2]), "--no-hooks" not in sys.argv
    handler = importlib.import_module(module).lambda_handler  # the init
    from gligabao import snapstart, wiring

    warmed = wiring.remember_queue()  # a client opened during the init (a warm-up)
    if hooks:
        snapstart.run_before_snapshot()
    snapshot = random.getstate()
    results = []
    for _ in range(copies):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # a new environment, resumed from the snapshot
            # random.py reseeds a forked child (os.register_at_fork); a
            # snapshot restore does not: the state is the snapshot's.
            random.setstate(snapshot)
            os.close(r)
            with os.fdopen(w, "w") as out:
                json.dump(restored(handler, warmed, hooks), out)
            os._exit(0)
        os.close(w)
        with os.fdopen(r) as got:
            results.append(json.load(got))
        os.waitpid(pid, 0)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
