"""Least privilege, verified: every AWS action (service:operation, and the
table or index it touches) that a function's code paths make in this suite
is granted to that function's role in template.yaml, and the role grants no
write that its function never makes.

The actions are recorded by moto's own request recorder on the moto server
the handlers talk to (DynamoDB, SQS, Secrets Manager over HTTP), and by the
fake Amazon Location place index (the geo resolver deployed), while each
function's handler runs its paths: remember (sync with an idempotency key,
async through SQS, geo on), the remember worker (from the SQS message), query
(with the nearby search, which stores the places of the question), browse
(every read, then a forget), datasets (list, schema, settings, delete, erase a
user) and records (inferences, a call). The API keys come from Secrets
Manager, as deployed."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from conftest import Harness
from fakes.location_server import FakeLocation
from gligabao.local.server import make_event

pytestmark = pytest.mark.timeout(180)

WRITES = {
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "sqs:SendMessage",
    "events:PutEvents",
}
# Made by Lambda's SQS event source mapping with the worker's role, not by its code.
EVENT_SOURCE_ACTIONS = {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}
# Granted for compensation only: the undo of a write that failed half-way
# (test_remember_faults provokes those failures; here every write succeeds).
COMPENSATION = {("query", "dynamodb:DeleteItem")}
# TransactWriteItems / TransactGetItems are authorized as their parts.
TRANSACT_PARTS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}


@pytest.fixture
def gb_env() -> dict[str, str]:
    return {"GB_GEO": "on"}


@pytest.fixture
def gb_store() -> str:
    # the stack's default, VectorStore=dynamodb: SearchVectors on the tables
    return "dynamodb"


class Recording:
    """moto's recorder, around one function's paths."""

    def __init__(self, path: Path, prefix: str) -> None:
        self.path = path
        self.prefix = prefix

    def __enter__(self) -> Recording:
        from moto.moto_api import recorder

        recorder._location = str(self.path)
        recorder.reset_recording()
        recorder.start_recording()
        if self.vectors is not None:
            self.vectors.searches.clear()
        return self

    def __exit__(self, *exc: object) -> None:
        from moto.moto_api import recorder

        recorder.stop_recording()

    location: Any = None
    vectors: Any = None  # the DynamoDB vector fake (it answers SearchVectors itself)

    def actions(self) -> set[tuple[str, str]]:
        """(service:operation, resource) pairs; resource is the table's short
        name (with "/index" for a GSI), "queue" or "secret"."""
        out: set[tuple[str, str]] = set()
        for line in self.path.read_text().splitlines():
            entry = json.loads(line)
            headers = {k.lower(): v for k, v in entry["headers"].items()}
            if "x-gb-fake-internal" in headers:
                continue  # the vector fake's own reads of moto, not the function's
            body = entry.get("body") or ""
            if entry.get("body_encoded"):
                body = base64.b64decode(body).decode()
            target = headers.get("x-amz-target", "")
            service, _, op = target.partition(".")
            data = json.loads(body) if body.startswith("{") else {}
            if service.startswith("DynamoDB"):
                out |= self._dynamodb(op, data)
            elif service == "AmazonSQS":
                out.add((f"sqs:{op}", "queue"))
            elif service == "secretsmanager":
                out.add((f"secretsmanager:{op}", "secret"))
            elif service == "AWSEvents":
                out.add((f"events:{op}", "EventBus"))
            else:
                raise AssertionError(f"unexpected AWS request: {entry['method']} {entry['url']}")
        if self.location is not None:
            out |= {(op, "GeoPlaceIndex") for op in self.location.operations()}
        if self.vectors is not None:
            out |= {
                ("dynamodb:SearchVectors", f"{self._table(t)}/index/{ix}")
                for t, ix in self.vectors.searches
            }
        return out

    def _table(self, name: str, index: str | None = None) -> str:
        assert name.startswith(self.prefix), name
        short = name[len(self.prefix) :]
        return f"{short}/index" if index else short

    def _dynamodb(self, op: str, data: dict[str, Any]) -> set[tuple[str, str]]:
        if op in ("TransactWriteItems", "TransactGetItems"):
            return {
                (f"dynamodb:{TRANSACT_PARTS[kind]}", self._table(spec["TableName"]))
                for item in data["TransactItems"]
                for kind, spec in item.items()
            }
        if "RequestItems" in data:
            return {(f"dynamodb:{op}", self._table(t)) for t in data["RequestItems"]}
        return {(f"dynamodb:{op}", self._table(data["TableName"], data.get("IndexName")))}


def _granted(function: str) -> set[tuple[str, str]]:
    """(action, resource) pairs the template grants the function's role, with
    Geo on (every path)."""
    from cfn import Stack, load

    stack = Stack(load(), Geo="on", LlmProvider="anthropic", EmbeddingProvider="openai")
    tables = {
        logical: res["Properties"]["TableName"]["Fn::Sub"].split("}-", 1)[1]
        for logical, res in stack.of_type("AWS::DynamoDB::Table").items()
    }
    [res] = [
        r
        for r in stack.of_type("AWS::Serverless::Function").values()
        if Path(r["Properties"]["CodeUri"]).name == function
    ]

    def resource(node: Any) -> str:
        if "Fn::GetAtt" in node:
            logical = node["Fn::GetAtt"][0]
        elif "Ref" in node:
            logical = node["Ref"]
        else:
            logical, _, rest = node["Fn::Sub"].removeprefix("${").partition(".Arn}")
            assert rest.startswith("/index/"), node
            # every GSI ("/index/*"), or one vector index by name
            return f"{tables[logical]}/index" + ("" if rest == "/index/*" else rest[6:])
        if logical in tables:
            return tables[logical]
        kind = stack.resources[logical]["Type"]
        return {"AWS::SQS::Queue": "queue", "AWS::SecretsManager::Secret": "secret"}.get(
            kind, logical
        )

    out: set[tuple[str, str]] = set()
    for policy in res["Properties"].get("Policies", []):
        for st in policy["Statement"]:
            actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
            resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
            out |= {(a, resource(r)) for a in actions for r in resources}
    return out


def _check(function: str, used: set[tuple[str, str]]) -> None:
    """Every (action, resource) used is granted; every write action granted
    is used somewhere. (Writes are checked per action, not per table: a
    path this suite does not reach must not lose its grant on one table.)"""
    granted = _granted(function)
    missing = used - granted
    assert not missing, f"{function}: the role lacks {sorted(missing)}"
    unused_writes = {a for a, _ in granted if a in WRITES} - {a for a, _ in used}
    unused_writes -= {a for f, a in COMPENSATION if f == function}
    assert not unused_writes, (
        f"{function}: the role grants writes never made: {sorted(unused_writes)}"
    )


def _call(
    handler: Any, method: str, target: str, body: Any = None, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    raw = json.dumps(body).encode() if body is not None else b""
    event = make_event(
        method, target, {"content-type": "application/json", **(headers or {})}, raw, "127.0.0.1"
    )
    out = handler(event, None)
    assert out["statusCode"] < 300, (target, out["body"])
    return json.loads(out["body"]) if out.get("body") else {}


@pytest.fixture
def deployed_like(
    monkeypatch: pytest.MonkeyPatch, gb: Harness, moto_url: str
) -> Iterator[dict[str, str]]:
    """The API keys in Secrets Manager and an SQS queue, both on moto."""
    from gligabao import wiring

    for service in ("SQS", "SECRETS_MANAGER", "EVENTBRIDGE"):
        monkeypatch.setenv(f"AWS_ENDPOINT_URL_{service}", moto_url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    region = "us-east-1"
    sm = boto3.client("secretsmanager", region_name=region, endpoint_url=moto_url)
    ids = {}
    for var, value in (
        ("GB_ANTHROPIC_SECRET", "test-anthropic-key"),
        ("GB_OPENAI_SECRET", "test-openai-key"),
    ):
        ids[var] = sm.create_secret(Name=f"{gb.prefix}{var}", SecretString=value)["ARN"]
    sqs = boto3.client("sqs", region_name=region, endpoint_url=moto_url)
    ids["GB_REMEMBER_QUEUE_URL"] = sqs.create_queue(QueueName=f"{gb.prefix}remember")["QueueUrl"]
    ids["GB_GEO_PLACE_INDEX"] = f"{gb.prefix}places"
    events = boto3.client("events", region_name=region, endpoint_url=moto_url)
    events.create_event_bus(Name=f"{gb.prefix}events")
    ids["GB_EVENT_BUS_NAME"] = f"{gb.prefix}events"
    with FakeLocation() as location:
        monkeypatch.setenv("AWS_ENDPOINT_URL_LOCATION", location.url)
        # botocore would call places.<endpoint host>: keep the loopback host
        monkeypatch.setenv("AWS_DISABLE_HOST_PREFIX_INJECTION", "true")
        ids["location"] = location  # type: ignore[assignment]
        yield ids
    wiring.reset()


AWS_ENV = (
    "GB_ANTHROPIC_SECRET",
    "GB_OPENAI_SECRET",
    "GB_REMEMBER_QUEUE_URL",
    "GB_GEO_PLACE_INDEX",
    "GB_EVENT_BUS_NAME",
)


def _fresh_container(
    monkeypatch: pytest.MonkeyPatch, function: str, values: dict[str, str]
) -> None:
    """A new Lambda container of this function: the AWS resources its
    template environment names (and no others), no keys, nothing cached."""
    from aws_lambda_powertools.utilities import parameters
    from cfn import Stack, load

    from gligabao import wiring

    [res] = [
        r
        for r in Stack(load(), Geo="on", LlmProvider="anthropic", EmbeddingProvider="openai")
        .of_type("AWS::Serverless::Function")
        .values()
        if Path(r["Properties"]["CodeUri"]).name == function
    ]
    env = res["Properties"].get("Environment", {}).get("Variables", {})
    for var in AWS_ENV:
        if var in env:
            monkeypatch.setenv(var, values[var])
        else:
            monkeypatch.delenv(var, raising=False)
    parameters.clear_caches()
    values["location"].reset()  # type: ignore[attr-defined]
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    wiring.reset()


def test_every_role_grants_what_its_code_does_and_no_unused_write(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    gb: Harness,
    deployed_like: dict[str, str],
    tmp_path: Path,
) -> None:
    from gligabao.handlers import browse, datasets, query, records, remember, remember_worker

    rec = Recording(tmp_path / "moto-recording", gb.prefix)
    rec.location = deployed_like["location"]
    rec.vectors = request.getfixturevalue("dynamo_vectors_fake")
    used: dict[str, set[tuple[str, str]]] = {}

    # remember: sync (with a key, geo on), then async (to the queue)
    _fresh_container(monkeypatch, "remember", deployed_like)
    gb.llm.script(
        "extract",
        {
            "entities": [{"name": "Alice", "type": "person"}, {"name": "Paris", "type": "city"}],
            "edges": [
                {
                    "source": "Alice",
                    "target": "Paris",
                    "relation": "lives_in",
                    "description": "Alice lives in Paris.",
                }
            ],
        },
    )
    with rec:
        _call(
            remember.lambda_handler,
            "POST",
            "/v1/gb/remember",
            {"user_id": "u1", "text": "Alice lives in Paris."},
            {"idempotency-key": "k1"},
        )
        # a new home: the old lives_in fact is invalidated (its claim released)
        gb.llm.script(
            "extract",
            {
                "entities": [
                    {"name": "Alice", "type": "person"},
                    {"name": "Versailles", "type": "city"},
                ],
                "edges": [
                    {
                        "source": "Alice",
                        "target": "Versailles",
                        "relation": "lives_in",
                        "description": "Alice moved to Versailles.",
                    }
                ],
            },
        )
        gb.llm.script("invalidate", {"invalidated": [{"edge_id": 1, "by": 0}]})
        moved = _call(
            remember.lambda_handler,
            "POST",
            "/v1/gb/remember",
            {"user_id": "u1", "text": "Alice moved to Versailles."},
        )
        assert [e["id"] for e in moved["invalidated"]] == [1]
        accepted = _call(
            remember.lambda_handler,
            "POST",
            "/v1/gb/remember",
            {"user_id": "u1", "text": "Alice moved to Lyon."},
            {"prefer": "respond-async"},
        )
    used["remember"] = rec.actions()

    # the worker, from the message the remember function queued
    message = boto3.client("sqs", region_name="us-east-1").receive_message(
        QueueUrl=deployed_like["GB_REMEMBER_QUEUE_URL"], MaxNumberOfMessages=1
    )["Messages"][0]
    _fresh_container(monkeypatch, "remember_worker", deployed_like)
    gb.llm.script(
        "extract",
        {
            "entities": [{"name": "Alice", "type": "person"}, {"name": "Lyon", "type": "city"}],
            "edges": [
                {
                    "source": "Alice",
                    "target": "Lyon",
                    "relation": "lives_in",
                    "description": "Alice moved to Lyon.",
                }
            ],
        },
    )
    gb.llm.script("invalidate", {"invalidated": [{"edge_id": 2, "by": 0}]})
    sqs_event = {
        "Records": [
            {
                "messageId": message["MessageId"],
                "receiptHandle": message["ReceiptHandle"],
                "body": message["Body"],
                "attributes": {},
                "messageAttributes": {},
                "md5OfBody": message["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q",
                "awsRegion": "us-east-1",
            }
        ]
    }
    with rec:
        assert remember_worker.lambda_handler(sqs_event, None) == {"batchItemFailures": []}
    used["remember_worker"] = rec.actions()
    assert gb.llm.calls("invalidate") == 2

    # query: the nearby search stores the places of the question (Versailles)
    _fresh_container(monkeypatch, "query", deployed_like)
    gb.llm.script("detect_geo", {"places": ["Marseille"]})
    with rec:
        out = _call(
            query.lambda_handler,
            "POST",
            "/v1/gb/query",
            {"user_id": "u1", "query": "Who lives near Marseille?", "geo_radius_km": 800},
        )
        queued = _call(
            query.lambda_handler,
            "POST",
            "/v1/gb/query",
            {"user_id": "u1", "query": "Where does Alice live?", "reasoning": "high"},
            {"prefer": "respond-async"},
        )
    used["query"] = rec.actions()
    assert out["nearby"]["anchors"][0]["name"] == "Marseille"
    assert queued["status"] == "accepted"

    _fresh_container(monkeypatch, "records", deployed_like)
    with rec:
        _call(records.lambda_handler, "GET", "/v1/gb/inferences?user_id=u1")
        _call(records.lambda_handler, "GET", f"/v1/gb/calls/{accepted['call_id']}?user_id=u1")
    used["records"] = rec.actions()

    # browse, then forget the move to Versailles (vectors, rows, the restore)
    _fresh_container(monkeypatch, "browse", deployed_like)
    with rec:
        listed = _call(browse.lambda_handler, "GET", "/v1/gb/entities?user_id=u1&q=alice")
        assert [e["name"] for e in listed["entities"]] == ["Alice"]
        _call(
            browse.lambda_handler,
            "GET",
            f"/v1/gb/entities/{listed['entities'][0]['id']}?user_id=u1",
        )
        _call(browse.lambda_handler, "GET", "/v1/gb/edges/1?user_id=u1")
        texts = _call(browse.lambda_handler, "GET", "/v1/gb/artifacts?user_id=u1")["artifacts"]
        [moved_text] = [t for t in texts if t["text"] == "Alice moved to Versailles."]
        _call(browse.lambda_handler, "GET", f"/v1/gb/artifacts/{moved_text['id']}?user_id=u1")
        forgot = _call(
            browse.lambda_handler, "DELETE", f"/v1/gb/artifacts/{moved_text['id']}?user_id=u1"
        )
    used["browse"] = rec.actions()
    assert forgot["removed"]["vectors"] > 0 and forgot["restored"]["edges"]

    _fresh_container(monkeypatch, "datasets", deployed_like)
    with rec:
        _call(datasets.lambda_handler, "GET", "/v1/gb/datasets?user_id=u1")
        schema = {"entity_types": {"Customer": {"attributes": {"tier": {"enum": ["gold"]}}}}}
        _call(datasets.lambda_handler, "PUT", "/v1/gb/datasets/main/schema?user_id=u1", schema)
        _call(datasets.lambda_handler, "GET", "/v1/gb/datasets/main/schema?user_id=u1")
        settings = {"summaries": False, "text_ttl_days": 30}
        _call(datasets.lambda_handler, "PUT", "/v1/gb/datasets/main/settings?user_id=u1", settings)
        _call(datasets.lambda_handler, "GET", "/v1/gb/datasets/main/settings?user_id=u1")
        _call(datasets.lambda_handler, "DELETE", "/v1/gb/datasets/main?user_id=u1")
        # the erase of the user: what is left (records, the idempotency record)
        erased = _call(datasets.lambda_handler, "DELETE", "/v1/gb/users/u1")
    used["datasets"] = rec.actions()
    assert erased["removed"]["idempotency"] == 1

    # the recording saw the paths (not an empty file that passes anything)
    for function in ("remember", "remember_worker", "browse", "datasets"):  # their events
        assert ("events:PutEvents", "EventBus") in used[function], function
    assert not any(a.startswith("events:") for a, _ in used["query"] | used["records"])
    assert ("sqs:SendMessage", "queue") in used["remember"]
    assert ("secretsmanager:GetSecretValue", "secret") in used["query"]
    assert any(a in WRITES for a, _ in used["query"])  # the stored place
    assert ("geo:SearchPlaceIndexForText", "GeoPlaceIndex") in used["remember"]
    assert ("geo:SearchPlaceIndexForText", "GeoPlaceIndex") in used["query"]
    for function in ("remember", "remember_worker", "query"):
        assert ("dynamodb:SearchVectors", "edges/index/edges") in used[function], function
    assert not any(
        a == "dynamodb:SearchVectors"
        for a, _ in used["datasets"] | used["records"] | used["browse"]
    )
    for function, actions in used.items():
        _check(function, actions)
