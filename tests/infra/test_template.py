"""template.yaml cannot drift from the code: the tables are the ones the
pynamodb models define, every route a handler serves is in the API and reaches
that handler's function, every function's handler exists, and the roles stay
least-privilege. Pure file checks: no AWS, no network."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

cfn_yaml = pytest.importorskip("cfnlint.decode.cfn_yaml")

from gligabao import secrets  # noqa: E402
from gligabao.dynamodb.admin import table_definitions  # noqa: E402
from gligabao.local import devservices  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HANDLERS = ["remember", "query", "datasets", "records", "mcp", "browse"]
# Functions not behind the API (fed by a queue).
WORKERS = ["remember_worker", "retention"]  # (retention: a schedule's)
# The CloudFormation custom resource that creates the vector indexes.
CUSTOM_RESOURCES = ["vector_indexes"]
# The functions that read or write vectors (OpenSearch).
VECTOR_FUNCTIONS = {
    "remember",
    "remember_worker",
    "query",
    "datasets",
    "mcp",
    "browse",
    "retention",
    "vector_indexes",
}
# The functions that search vectors (VectorStore=dynamodb: dynamodb:SearchVectors).
SEARCH_FUNCTIONS = {"remember", "remember_worker", "query", "mcp"}
STORES = ["dynamodb", "serverless", "domain", "external"]
# The functions that call the LLM and the embedder (API keys).
LLM_FUNCTIONS = {"remember", "remember_worker", "query", "mcp"}


def _plain(node: Any) -> Any:
    return json.loads(json.dumps(node))


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return dict(_plain(cfn_yaml.load(str(ROOT / "template.yaml"))))


def _resources(template: dict[str, Any], type_: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == type_}


def _functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Handler module name (functions/<name>/) -> (logical id, resource)."""
    out = {}
    for logical_id, res in _resources(template, "AWS::Serverless::Function").items():
        name = Path(res["Properties"]["CodeUri"]).name
        out[name] = {"id": logical_id, **res}
    return out


def _statements(res: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for policy in res["Properties"].get("Policies", []):
        for st in policy["Statement"]:
            if "Fn::If" in st:  # conditional statement: check its "true" branch
                st = st["Fn::If"][1]
            out.append(st)
    return out


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


# --------------------------------------------------------------------- tables


def _short_name(props: dict[str, Any]) -> str:
    sub = props["TableName"]["Fn::Sub"]
    m = re.fullmatch(r"\$\{AWS::StackName\}-([a-z_]+)", sub)
    assert m, f"table name {sub!r} is not ${{AWS::StackName}}-<short name>"
    return m.group(1)


def _normalized(props: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "BillingMode": props.get("BillingMode"),
        "AttributeDefinitions": sorted(
            props["AttributeDefinitions"], key=lambda a: a["AttributeName"]
        ),
        "KeySchema": sorted(props["KeySchema"], key=lambda k: k["KeyType"]),
    }
    if "GlobalSecondaryIndexes" in props:
        out["GlobalSecondaryIndexes"] = sorted(
            (
                {
                    "IndexName": g["IndexName"],
                    "KeySchema": sorted(g["KeySchema"], key=lambda k: k["KeyType"]),
                    "Projection": g["Projection"],
                }
                for g in props["GlobalSecondaryIndexes"]
            ),
            key=lambda g: g["IndexName"],
        )
    if "TimeToLiveSpecification" in props:
        out["TimeToLiveSpecification"] = props["TimeToLiveSpecification"]
    return out


def _expected_tables(dimension: Any | None) -> dict[str, dict[str, Any]]:
    """The models' tables; with a dimension, as VectorStore=dynamodb makes
    them: the vector indexes of dynamodb/vectors.py and the
    attributes their search schemas filter on."""
    from gligabao.dynamodb import vectors as schema

    expected = table_definitions()
    if dimension is None:
        return expected
    for short, specs in schema.index_specs(dimension).items():
        expected[short]["VectorIndexes"] = specs
    for short, attrs in schema.filter_definitions().items():
        expected[short]["AttributeDefinitions"] = sorted(
            expected[short]["AttributeDefinitions"] + attrs, key=lambda a: a["AttributeName"]
        )
    return expected


@pytest.mark.parametrize(
    ("params", "dimension"),
    [
        ({}, 1024),  # the default: VectorStore=dynamodb, embeddings on Bedrock
        ({"EmbeddingProvider": "openai"}, 1536),
        ({"EmbeddingDimension": "512"}, {"Ref": "EmbeddingDimension"}),
        ({"VectorStore": "serverless"}, None),
        ({"VectorStore": "domain"}, None),
        ({"VectorStore": "external"}, None),
    ],
)
def test_tables_match_the_models_exactly(
    template: dict[str, Any], params: dict[str, str], dimension: Any
) -> None:
    from cfn import Stack

    stack = Stack(template, **params)
    declared = {}
    for res in stack.resources.values():
        if res["Type"] == "AWS::DynamoDB::Table":
            props = res["Properties"]
            declared[_short_name(props)] = _normalized(props)
            if "VectorIndexes" in props:
                declared[_short_name(props)]["VectorIndexes"] = props["VectorIndexes"]
    expected = _expected_tables(dimension)
    assert sorted(declared) == sorted(expected)
    for short, props in expected.items():
        assert declared[short] == props, short


def test_default_parameters_create_no_opensearch_resource(template: dict[str, Any]) -> None:
    from cfn import Stack

    stack = Stack(template)
    assert stack.params["VectorStore"] == "dynamodb"
    types = {res["Type"] for res in stack.resources.values()}
    assert not {t for t in types if "OpenSearch" in t or t.startswith("Custom::")}, types
    assert not {k for k in stack.outputs if "OpenSearch" in k or k == "VectorRoleArns"}
    assert "vector_indexes" not in _functions({"Resources": stack.resources})
    for function in _functions({"Resources": stack.resources}).values():
        env = function["Properties"].get("Environment", {}).get("Variables", {})
        assert env.get("GB_OPENSEARCH_URL", "") == "", function["id"]
    assert stack.globals["Function"]["Environment"]["Variables"]["GB_VECTOR_STORE"] == "dynamodb"


def test_tables_are_durable(template: dict[str, Any]) -> None:
    for logical_id, res in _resources(template, "AWS::DynamoDB::Table").items():
        props = res["Properties"]
        assert props["BillingMode"] == "PAY_PER_REQUEST", logical_id
        assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
        assert props["SSESpecification"] == {"SSEEnabled": True}, logical_id
        assert "DeletionPolicy" in res, logical_id


def test_functions_get_the_table_prefix(template: dict[str, Any]) -> None:
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert env["GB_TABLE_PREFIX"] == {"Fn::Sub": "${AWS::StackName}-"}


# --------------------------------------------------------------------- routes


def _handler_routes(name: str) -> set[str]:
    """The function's resolver's routes, and HEAD beside each GET it serves
    (api/routes.py's gateway_keys: API Gateway routes HEAD only to a HEAD
    route; the handler answers it as the GET)."""
    from gligabao.api.routes import ROUTES

    module = importlib.import_module(f"gligabao.handlers.{name}")
    app = module.app
    keys = {f"{r.method} {r.openapi_path}" for r in app._static_routes + app._dynamic_routes}
    heads = {k for r in ROUTES for k in r.gateway_keys if k.startswith("HEAD ")}
    return keys | {f"HEAD {k[4:]}" for k in keys if f"HEAD {k[4:]}" in heads}


def _alias_of(node: dict[str, Any]) -> str:
    """The function whose alias ``{"Ref": "<Function>.Alias"}`` names, which it must publish."""
    name = node["Ref"]
    assert name.endswith(".Alias"), node
    return str(name.removesuffix(".Alias"))


def test_every_handler_route_is_in_the_api_and_reaches_its_function(
    template: dict[str, Any],
) -> None:
    functions = _functions(template)
    integrations = _resources(template, "AWS::ApiGatewayV2::Integration")
    api_routes: dict[str, str] = {}  # route key -> handler module name
    for logical_id, res in _resources(template, "AWS::ApiGatewayV2::Route").items():
        props = res["Properties"]
        m = re.fullmatch(r"integrations/\$\{(\w+)\}", props["Target"]["Fn::Sub"])
        assert m, logical_id
        integration = integrations[m.group(1)]["Properties"]
        assert integration["IntegrationType"] == "AWS_PROXY"
        assert integration["PayloadFormatVersion"] == "2.0"
        # the function's alias (AutoPublishAlias): a published version, SnapStart or not
        function_id = _alias_of(integration["IntegrationUri"])
        [name] = [n for n, f in functions.items() if f["id"] == function_id]
        api_routes[props["RouteKey"]] = name
    expected = {route: name for name in HANDLERS for route in _handler_routes(name)}
    assert api_routes == expected


def test_every_function_may_be_invoked_by_the_api(template: dict[str, Any]) -> None:
    functions = _functions(template)
    permitted = {
        _alias_of(res["Properties"]["FunctionName"])
        for res in _resources(template, "AWS::Lambda::Permission").values()
        if res["Properties"]["Principal"] == "apigateway.amazonaws.com"
    }
    assert permitted == {f["id"] for n, f in functions.items() if n in HANDLERS}


# --------------------------------------------------------------------- functions


def test_every_function_handler_exists(template: dict[str, Any]) -> None:
    functions = _functions(template)
    assert sorted(functions) == sorted(HANDLERS + WORKERS + CUSTOM_RESOURCES)
    default_handler = template["Globals"]["Function"].get("Handler")
    for name, res in functions.items():
        handler = res["Properties"].get("Handler", default_handler)
        module_name, attr = handler.rsplit(".", 1)
        path = ROOT / res["Properties"]["CodeUri"] / f"{module_name}.py"
        assert path.is_file(), path
        spec = importlib.util.spec_from_file_location(f"_gb_fn_{name}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        core = importlib.import_module(f"gligabao.handlers.{name}")
        assert getattr(module, attr) is core.lambda_handler, name


def _make_var(makefile: Path, name: str) -> str:
    """A Makefile's ``NAME := value``; the clients layer's reads the core
    layer's (``$(shell sed -n 's/^NAME := //p' "$(CORE)Makefile")``)."""
    m = re.search(rf"^{name} := (.+)$", makefile.read_text(), re.M)
    assert m, f"{name} not set in {makefile}"
    if m.group(1).startswith("$(shell sed"):
        return _make_var(makefile.parent.parent / "core" / "Makefile", name)
    return m.group(1).strip()


def test_layer_build_matches_runtime_and_architecture(template: dict[str, Any]) -> None:
    glob = template["Globals"]["Function"]
    layers = _resources(template, "AWS::Serverless::LayerVersion")
    assert set(layers) == {"CoreLayer", "ClientsLayer"}
    for layer in layers.values():
        makefile = ROOT / layer["Properties"]["ContentUri"] / "Makefile"
        version, platform = _make_var(makefile, "PY_VERSION"), _make_var(makefile, "PLATFORM")
        assert glob["Runtime"] == f"python{version}"
        assert layer["Properties"]["CompatibleRuntimes"] == [glob["Runtime"]]
        arch = {"arm64": "aarch64", "x86_64": "x86_64"}[glob["Architectures"][0]]
        assert platform.endswith(arch)
        assert layer["Properties"]["CompatibleArchitectures"] == glob["Architectures"]


# --------------------------------------------------------------------- IAM


@pytest.mark.parametrize("store", STORES)
def test_roles_are_least_privilege(template: dict[str, Any], store: str) -> None:
    from cfn import Stack

    stack = Stack(
        template,
        VectorStore=store,
        ExternalOpenSearchUrl="https://x.example",
        ExternalOpenSearchArn="arn:aws:es:us-east-1:1:domain/x/*",
        # the API-key providers: their secrets are what the LLM functions read
        LlmProvider="anthropic",
        EmbeddingProvider="openai",
    )
    aoss = store == "serverless"
    dynamo = store == "dynamodb"
    indexes = {
        f"getatt:{table}.Arn/index/{kind}"
        for kind, table in [
            ("entities", "EntitiesTable"),
            ("edges", "EdgesTable"),
            ("chunks", "ArtifactsTable"),
            ("summaries", "ArtifactsTable"),
        ]
    }
    functions = _functions({"Resources": stack.resources})
    assert ("vector_indexes" in functions) == (not dynamo)
    evaluated = _evaluated(template, stack.params) if dynamo else {}
    for name, res in functions.items():
        statements = _statements(res)
        actions = {a for st in statements for a in _as_list(st["Action"])}
        for st in statements:
            assert st["Effect"] == "Allow"
            assert "*" not in _as_list(st["Resource"]), (name, st)
            assert not any(a.endswith(":*") for a in _as_list(st["Action"])), (name, st)
        assert "dynamodb:Scan" not in actions, name
        vector_actions = {a for a in actions if a.startswith(("aoss:", "es:"))}
        searches = [st for st in statements if "dynamodb:SearchVectors" in _as_list(st["Action"])]
        if dynamo:
            # SearchVectors on the four vector indexes, only for the functions that search
            assert not vector_actions, name
            assert bool(searches) == (name in SEARCH_FUNCTIONS), name
            for st in _statements(evaluated[res["id"]]):
                if "dynamodb:SearchVectors" in _as_list(st["Action"]):
                    assert _as_list(st["Action"]) == ["dynamodb:SearchVectors"], name
                    assert set(_as_list(st["Resource"])) == indexes, name
        elif name not in VECTOR_FUNCTIONS:
            assert not searches and not vector_actions, name
        elif aoss:
            assert vector_actions == {"aoss:APIAccessAll"}, name
        else:
            # only the custom resource creates indexes (PUT)
            writes = {"es:ESHttpPut"} if name == "vector_indexes" else {"es:ESHttpPost"}
            assert vector_actions == {"es:ESHttpGet", "es:ESHttpHead"} | writes, name
        assert ("secretsmanager:GetSecretValue" in actions) == (name in LLM_FUNCTIONS), name
        env = res["Properties"].get("Environment", {}).get("Variables", {})
        uses_env = name in VECTOR_FUNCTIONS - set(CUSTOM_RESOURCES)
        assert ("GB_OPENSEARCH_URL" in env) == uses_env, name
        if uses_env and not dynamo:
            assert env["GB_OPENSEARCH_SERVICE"] == ("aoss" if aoss else "es")
        if name in LLM_FUNCTIONS:
            assert set(env) >= {"GB_ANTHROPIC_SECRET", "GB_OPENAI_SECRET"}
        # No plaintext keys in the environment.
        assert not {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} & set(env), name


def _evaluated(template: dict[str, Any], params: dict[str, str]) -> dict[str, Any]:
    from cfn import EvaluatedStack

    return EvaluatedStack(template, **params).resources


def test_vector_data_policy_names_exactly_the_vector_functions(template: dict[str, Any]) -> None:
    [policy] = _resources(template, "AWS::OpenSearchServerless::AccessPolicy").values()
    text = json.dumps(policy["Properties"]["Policy"])
    roles = set(re.findall(r"\$\{(\w+)Role\.Arn\}", text))
    functions = _functions(template)
    assert roles == {functions[n]["id"] for n in VECTOR_FUNCTIONS}
    # only the custom resource (and the optional admin) may create indexes
    raw, subs = policy["Properties"]["Policy"]["Fn::Sub"]
    assert re.findall(r'"Principal":\[\$\{(\w+)\}\]', raw) == ["Users", "Admins"]
    assert "VectorIndexesFunctionRole" not in json.dumps(subs["Users"])
    assert "VectorIndexesFunctionRole" in json.dumps(subs["Admins"])
    first_rule = raw.split('"Principal"')[0]
    assert "aoss:CreateIndex" not in first_rule
    [collection] = _resources(template, "AWS::OpenSearchServerless::Collection").values()
    assert collection["Properties"]["Type"] == "VECTORSEARCH"


def test_api_functions_fit_the_api_gateway_timeout(template: dict[str, Any]) -> None:
    glob = template["Globals"]["Function"]
    assert glob["Timeout"] <= 29
    for name, res in _functions(template).items():
        # remember (and MCP's remember) go on past API Gateway's 30 s: a retry
        # with the same idempotency key returns the finished result.
        if name not in ("remember", "mcp", *WORKERS, *CUSTOM_RESOURCES):
            assert res["Properties"].get("Timeout", glob["Timeout"]) <= 29, name


# --------------------------------------------------------------------- async remember


def test_remember_queue_feeds_the_worker(template: dict[str, Any]) -> None:
    from cfn import Stack

    template = {"Resources": Stack(template).resources}
    functions = _functions(template)
    worker, remember = functions["remember_worker"], functions["remember"]
    assert worker["Properties"]["Timeout"] == 900
    assert "Events" not in worker["Properties"]  # no SAM event: no managed SQS policy on "*"
    queues = _resources(template, "AWS::SQS::Queue")
    [mapping] = _resources(template, "AWS::Lambda::EventSourceMapping").values()
    props = mapping["Properties"]
    queue_id = props["EventSourceArn"]["Fn::GetAtt"][0]
    assert _alias_of(props["FunctionName"]) == worker["id"]
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    queue = queues[queue_id]["Properties"]
    assert queue["VisibilityTimeout"] >= worker["Properties"]["Timeout"]
    redrive = queue["RedrivePolicy"]
    assert redrive["maxReceiveCount"] == 3
    assert redrive["deadLetterTargetArn"]["Fn::GetAtt"][0] in queues
    env = remember["Properties"]["Environment"]["Variables"]
    assert env["GB_REMEMBER_QUEUE_URL"] == {"Ref": queue_id}
    arn = {"Fn::GetAtt": [queue_id, "Arn"]}
    for sender in (remember, functions["query"]):  # both take Prefer: respond-async
        sends = [st for st in _statements(sender) if "sqs:SendMessage" in _as_list(st["Action"])]
        assert [(_as_list(st["Action"]), st["Resource"]) for st in sends] == [
            (["sqs:SendMessage"], arn)
        ]
        assert sender["Properties"]["Environment"]["Variables"]["GB_REMEMBER_QUEUE_URL"] == {
            "Ref": queue_id
        }
    others = [f for n, f in functions.items() if n not in ("remember", "query")]
    for other in others:
        assert not any("sqs:SendMessage" in _as_list(st["Action"]) for st in _statements(other))
    sqs = {a for st in _statements(worker) for a in _as_list(st["Action"]) if a.startswith("sqs:")}
    assert sqs == {
        "sqs:ReceiveMessage",
        "sqs:DeleteMessage",
        "sqs:GetQueueAttributes",
        "sqs:ChangeMessageVisibility",  # the backoff of a transient failure
    }
    worker_env = worker["Properties"]["Environment"]["Variables"]
    assert worker_env["GB_REMEMBER_MAX_RECEIVES"] == str(redrive["maxReceiveCount"])
    assert worker_env["GB_REMEMBER_QUEUE_URL"] == {"Ref": queue_id}
    assert props["ScalingConfig"] == {"MaximumConcurrency": {"Ref": "MaximumConcurrency"}}
    assert all(
        st["Resource"] == arn
        for st in _statements(worker)
        if any(a.startswith("sqs:") for a in _as_list(st["Action"]))
    )
    # the worker writes the graph as the remember function does
    tables = {st["Sid"]: st for st in _statements(remember)}["GraphReadWrite"]
    assert {st["Sid"]: st for st in _statements(worker)}["GraphReadWrite"] == tables


# --------------------------------------------------------------------- sam local


def test_sam_local_reads_the_api_resources(template: dict[str, Any]) -> None:
    """SAM CLI takes its route reader from the first API-ish resource: with a function
    first it reads only function Events and finds no routes."""
    api_types = ("AWS::ApiGatewayV2::", "AWS::Serverless::Function", "AWS::Serverless::HttpApi")
    first = next(
        v["Type"] for v in template["Resources"].values() if v["Type"].startswith(api_types)
    )
    assert first == "AWS::ApiGatewayV2::Api"


def test_one_route_set_per_auth_mode_without_conditional_authorizer(
    template: dict[str, Any],
) -> None:
    """SAM CLI cannot read `AuthorizerId: !If [.., !Ref AWS::NoValue]`: the JWT mode
    has its own routes, whose AuthorizerId is a plain Ref."""
    expected = sorted(route for name in HANDLERS for route in _handler_routes(name))
    by_condition: dict[str, list[str]] = {}
    for logical_id, res in _resources(template, "AWS::ApiGatewayV2::Route").items():
        props = res["Properties"]
        assert "AWS::NoValue" not in json.dumps(props), logical_id
        assert res.get("Condition") in {"AuthJwt", "AuthNotJwt"}, logical_id
        by_condition.setdefault(res["Condition"], []).append(props["RouteKey"])
        if res["Condition"] == "AuthJwt":
            assert props["AuthorizationType"] == "JWT", logical_id
            assert props["AuthorizerId"] == {"Ref": "JwtAuthorizer"}, logical_id
        else:
            assert "AuthorizerId" not in props, logical_id
    assert {c: sorted(keys) for c, keys in by_condition.items()} == {
        "AuthJwt": expected,
        "AuthNotJwt": expected,
    }


def test_local_run_variables_are_declared_empty(template: dict[str, Any]) -> None:
    """`sam local --env-vars` only overrides declared variables; empty means unset."""
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    for name in ("GB_DYNAMODB_ENDPOINT", *secrets.SDK_ENV):
        assert env.get(name) == "", name
    declared = set(env)
    for res in _resources(template, "AWS::Serverless::Function").values():
        declared |= set(res["Properties"].get("Environment", {}).get("Variables", {}))
    opts = devservices.Options(host="172.17.0.1")
    written = devservices.env_vars("http://172.17.0.1:8000", "http://172.17.0.1:9200", opts)
    assert set(written) - declared == set()
    # moto has no vector indexes: under sam local the vectors go to the OpenSearch node.
    assert written["GB_VECTOR_STORE"] == "opensearch"
