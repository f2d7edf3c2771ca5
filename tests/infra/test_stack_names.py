"""Every named resource is unique to its stack, so a second stack in the same
account and region does not collide: the names of two stacks rendered with
their own pseudo parameters never meet."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytest.importorskip("cfnlint")

from cfn import Stack, load

# Properties that give a resource an account-wide (or region-wide) name.
NAME_PROPS = {
    "TableName",
    "Name",
    "LayerName",
    "IndexName",
    "DashboardName",
    "DomainName",
    "QueueName",
    "TopicName",
    "RoleName",
    "LogGroupName",
    "ManagedPolicyName",
}
# Named inside their own parent only (an API's authorizer name, a GSI name).
SCOPED = {("AWS::ApiGatewayV2::Authorizer", "Name")}


def _render(node: Any, stack: Stack, pseudo: dict[str, str]) -> str:
    """Evaluate the few intrinsics the names use, with these pseudo parameters."""
    if isinstance(node, str):
        return node
    ((fn, arg),) = node.items()
    if fn == "Ref":
        return pseudo.get(arg) or stack.params[arg]
    if fn == "Fn::Sub":
        text, extra = (arg, {}) if isinstance(arg, str) else arg
        values = {k: _render(v, stack, pseudo) for k, v in extra.items()}
        return re.sub(
            r"\$\{([\w:]+)\}",
            lambda m: values.get(m[1]) or _render({"Ref": m[1]}, stack, pseudo),
            text,
        )
    if fn == "Fn::Join":
        return arg[0].join(_render(p, stack, pseudo) for p in arg[1])
    if fn == "Fn::Select":
        return _split(arg[1], stack, pseudo)[int(arg[0])]
    raise AssertionError(f"unexpected intrinsic in a name: {fn}")


def _split(node: Any, stack: Stack, pseudo: dict[str, str]) -> list[str]:
    ((fn, (sep, value)),) = node.items()
    assert fn == "Fn::Split"
    return _render(value, stack, pseudo).split(sep)


def _names(stack: Stack, pseudo: dict[str, str]) -> dict[str, str]:
    out = {}
    for logical_id, res in stack.resources.items():
        for prop, value in res.get("Properties", {}).items():
            if isinstance(value, dict) and value.get("Ref") in stack.resources:
                continue  # a reference to another resource, not a name
            if prop in NAME_PROPS and (res["Type"], prop) not in SCOPED:
                out[f"{logical_id}.{prop}"] = _render(value, stack, pseudo)
    return out


def _pseudo(name: str, uid: str) -> dict[str, str]:
    return {
        "AWS::StackName": name,
        "AWS::StackId": f"arn:aws:cloudformation:us-east-1:123456789012:stack/{name}/{uid}",
        "AWS::Region": "us-east-1",
        "AWS::AccountId": "123456789012",
        "AWS::Partition": "aws",
    }


@pytest.mark.parametrize("store", ["dynamodb", "serverless", "domain"])
def test_two_stacks_in_one_account_share_no_name(store: str) -> None:
    template = load()
    stack = Stack(template, VectorStore=store, Geo="on", AlarmEmail="ops@example.com")
    first = _names(stack, _pseudo("gb-prod", "8c1f33a0-7d3e-11ef-9d6b-0a1b2c3d4e5f"))
    second = _names(stack, _pseudo("gb-test", "f2e4d6c8-7d3e-11ef-8a9b-0f1e2d3c4b5a"))
    assert first.keys() == second.keys()
    clashes = {k for k in first if first[k] == second[k]}
    assert not clashes, {k: first[k] for k in clashes}


def test_the_collection_name_is_derived_from_the_stack_and_fits() -> None:
    template = load()
    stack = Stack(template, VectorStore="serverless")
    assert stack.params["VectorCollectionName"] == ""
    names = _names(
        stack,
        _pseudo("a-very-long-stack-name-for-production", "8c1f33a0-7d3e-11ef-9d6b-0a1b2c3d4e5f"),
    )
    assert names["VectorCollection.Name"] == "gb-8c1f33a0"
    for policy in ("VectorEncryptionPolicy", "VectorNetworkPolicy", "VectorAccessPolicy"):
        assert names[f"{policy}.Name"].startswith("gb-8c1f33a0-")
        assert len(names[f"{policy}.Name"]) <= 32  # the policy name limit
    # a name given by hand still fits every policy name
    pattern = template["Parameters"]["VectorCollectionName"]["AllowedPattern"]
    longest = "a" * 27
    assert re.fullmatch(pattern, longest) and not re.fullmatch(pattern, longest + "a")
    assert len(f"{longest}-data") <= 32
    named = _names(
        Stack(template, VectorStore="serverless", VectorCollectionName="mine"), _pseudo("s", "0-0")
    )
    assert named["VectorCollection.Name"] == "mine"


def test_secrets_get_generated_names() -> None:
    # A deleted secret's name stays taken during its recovery window: a fixed
    # name would break a redeploy of the same stack after `sam delete`.
    stack = Stack(load())
    for res in stack.of_type("AWS::SecretsManager::Secret").values():
        assert "Name" not in res["Properties"]


def test_retained_tables_are_named_by_the_stack_and_documented() -> None:
    stack = Stack(load())
    tables = stack.of_type("AWS::DynamoDB::Table")
    retained = [k for k, v in tables.items() if v.get("DeletionPolicy") == "Retain"]
    assert retained
    from cfn import ROOT

    deploy = (ROOT / "docs/deploy.md").read_text()
    assert "--change-set-type IMPORT" in deploy  # how to take the retained tables back
