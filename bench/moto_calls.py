"""What a DynamoDB call to moto costs the test suite, two ways: through moto's
server on loopback (what a child process, `sam local` or the DynamoDB vector
fake reach) and through moto's ``mock_aws`` in this process (what the `gb`
harness of tests/conftest.py uses for its default store). The same PutItem and
GetItem pairs on one table, after a warm-up; milliseconds a call, wall and CPU.

    .venv/bin/python -m bench.moto_calls [--calls 400]
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from gligabao.local.embedded import start_moto

ITEM = {"pk": {"S": "a"}, "text": {"S": "x" * 200}, "n": {"N": "3"}, "l": {"L": [{"S": "q"}] * 10}}


def measure(client: Any, calls: int) -> tuple[float, float]:
    """(wall ms, CPU ms) per call over ``calls`` calls, half puts, half gets."""
    client.create_table(
        TableName="bench",
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    )
    for _ in range(20):  # warm-up: botocore's and moto's first-call loading
        client.put_item(TableName="bench", Item=ITEM)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(calls // 2):
        client.put_item(TableName="bench", Item=ITEM)
        client.get_item(TableName="bench", Key={"pk": {"S": "a"}})
    n = 2 * (calls // 2)
    return (time.perf_counter() - t0) * 1000 / n, (time.process_time() - c0) * 1000 / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    args = parser.parse_args()
    import boto3
    from moto import mock_aws

    server, url = start_moto()  # sets moto's local credentials and region
    try:
        rows = [
            (
                "moto's server on loopback",
                measure(boto3.client("dynamodb", endpoint_url=url), args.calls),
            )
        ]
    finally:
        server.stop()
    with mock_aws():
        region = os.environ.get("AWS_DEFAULT_REGION", "us-east-1")
        rows.append(
            (
                "mock_aws in process",
                measure(boto3.client("dynamodb", region_name=region), args.calls),
            )
        )
    print(f"{'way':<28}{'wall ms/call':>14}{'CPU ms/call':>13}")
    for label, (wall, cpu) in rows:
        print(f"{label:<28}{wall:>14.2f}{cpu:>13.2f}")


if __name__ == "__main__":
    main()
