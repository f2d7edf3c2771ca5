"""Which layers the functions get: the core layer always, the clients layer
(the anthropic and openai SDKs, opensearch-py) only when a parameter uses one
of them. The template's conditions are evaluated as CloudFormation would (no
AWS, no network), and the two locks checked for what each layer ships."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cfnlint")

from cfn import EvaluatedStack, load
from test_layer_lock import CLIENTS_LOCK, LOCK, parse_lock

EXTERNAL = {
    "VectorStore": "external",
    "ExternalOpenSearchUrl": "https://x.example",
    "ExternalOpenSearchArn": "arn:aws:es:us-east-1:1:domain/x/*",
}


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return load()


@pytest.mark.parametrize(
    ("params", "clients"),
    [
        ({}, False),  # Bedrock for both, vectors on DynamoDB
        ({"LlmProvider": "anthropic"}, True),
        ({"LlmProvider": "openai"}, True),
        ({"EmbeddingProvider": "openai"}, True),
        ({"VectorStore": "domain"}, True),
        ({"VectorStore": "serverless", "VectorCollectionName": "gb"}, True),
        (EXTERNAL, True),
    ],
)
def test_the_clients_layer_only_where_a_parameter_needs_it(
    raw: dict[str, Any], params: dict[str, str], clients: bool
) -> None:
    stack = EvaluatedStack(raw, **params)
    want = ["ref:CoreLayer", "ref:ClientsLayer"] if clients else ["ref:CoreLayer"]
    assert stack.globals["Function"]["Layers"] == want
    assert ("ClientsLayer" in stack.resources) is clients
    functions = stack.of_type("AWS::Serverless::Function")
    assert functions and all("Layers" not in f["Properties"] for f in functions.values())


def test_the_core_lock_has_none_of_the_clients_sdks() -> None:
    core, clients = parse_lock(LOCK.read_text()), parse_lock(CLIENTS_LOCK.read_text())
    sdks = {"anthropic", "openai", "opensearch-py"}
    assert not sdks & set(core)
    assert sdks <= set(clients)
    # A package both layers need is pinned once, to the same version (the
    # clients layer installs only what the core lock lacks).
    for name, pin in core.items():
        assert name in clients, f"{name}: the clients lock is not resolved against the core's"
        assert clients[name].version == pin.version, name
