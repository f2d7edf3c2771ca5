"""bench/harness/moto.py's speed-ups change how long moto takes, not what it
answers: the same transactions, with and without them, leave the same items
(a cancelled one: none of its writes). In a child process each, as the
patches are moto's for good."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, sys
import boto3
from botocore.exceptions import ClientError
from gligabao.local.embedded import start_moto
if sys.argv[1] == "fast":
    from bench.harness.moto import speed_up_moto
    speed_up_moto()
server, url = start_moto()
c = boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                 aws_access_key_id="x", aws_secret_access_key="x")
c.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
               KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "sk", "KeyType": "RANGE"}],
               AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                     {"AttributeName": "sk", "AttributeType": "S"}])
key = lambda sk: {"pk": {"S": "p"}, "sk": {"S": sk}}
for sk in "ab":
    c.put_item(TableName="t", Item={**key(sk), "n": {"N": "1"}})
add = {"UpdateExpression": "ADD n :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}
def query():
    q = c.query(TableName="t", KeyConditionExpression="pk = :p",
                ExpressionAttributeValues={":p": {"S": "p"}})
    return [(i["sk"]["S"], i.get("n", {}).get("N")) for i in q["Items"]]
seen = []
for condition in ({"ConditionExpression": "attribute_not_exists(pk)"}, {}):
    try:
        c.transact_write_items(TransactItems=[
            {"Update": {"TableName": "t", "Key": key("a"), **add}},
            {"Put": {"TableName": "t", "Item": key("c")}},
            {"Delete": {"TableName": "t", "Key": key("b"), **condition}},
        ])
        seen.append("written")
    except ClientError as exc:
        seen.append(exc.response["Error"]["Code"])
    seen.append(query())
server.stop()
print(json.dumps(seen))
"""


def run(mode: str) -> str:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'shared'}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


@pytest.mark.timeout(300)
def test_a_cancelled_transaction_leaves_the_items_as_moto_does() -> None:
    plain, fast = run("plain"), run("fast")
    assert fast == plain
    assert fast == (
        '["TransactionCanceledException", [["a", "1"], ["b", "1"]], '
        '"written", [["a", "2"], ["c", null]]]'
    )
