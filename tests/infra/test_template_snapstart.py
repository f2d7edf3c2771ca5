"""SnapStart (the SnapStart parameter): off by default. Either way the API's
and the worker's functions publish versions behind the alias ``live``, which
the API's integrations, its invoke permissions and the queue's event source
name; on, those versions have SnapStart (docs/deploy.md#snapstart)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cfnlint")

from cfn import EvaluatedStack, load

ALIASED = {
    "RememberFunction",
    "RememberWorkerFunction",
    "QueryFunction",
    "DatasetsFunction",
    "RecordsFunction",
    "BrowseFunction",
    "McpFunction",
}


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return load()


def _props(stack: EvaluatedStack, fn: str) -> dict[str, Any]:
    return dict(stack.resources[fn]["Properties"])


@pytest.mark.parametrize(("setting", "apply_on"), [("off", "None"), ("on", "PublishedVersions")])
def test_the_functions_publish_behind_an_alias_with_snapstart_as_asked(
    raw: dict[str, Any], setting: str, apply_on: str
) -> None:
    stack = EvaluatedStack(raw, **({} if setting == "off" else {"SnapStart": setting}))
    functions = set(stack.of_type("AWS::Serverless::Function"))
    assert functions >= ALIASED
    for fn in ALIASED:
        props = _props(stack, fn)
        assert props["AutoPublishAlias"] == "live", fn
        assert props["SnapStart"] == {"ApplyOn": apply_on}, fn
        # SAM's version ID follows the code only: the description, which differs with
        # the setting, makes a change of the setting publish a new version.
        assert props["VersionDescription"] == f"SnapStart {setting}", fn
    # The deploy-time custom resource is invoked unqualified: no version, no snapshot.
    for fn in functions - ALIASED:
        assert "SnapStart" not in _props(stack, fn), fn
    # What invokes the functions invokes the alias.
    uris = {
        r["Properties"]["IntegrationUri"]
        for r in stack.of_type("AWS::ApiGatewayV2::Integration").values()
    }
    assert uris == {f"ref:{fn}.Alias" for fn in ALIASED - {"RememberWorkerFunction"}}
    permitted = {
        r["Properties"]["FunctionName"] for r in stack.of_type("AWS::Lambda::Permission").values()
    }
    assert permitted == uris
    [mapping] = stack.of_type("AWS::Lambda::EventSourceMapping").values()
    assert mapping["Properties"]["FunctionName"] == "ref:RememberWorkerFunction.Alias"


def test_snapstart_is_off_by_default(raw: dict[str, Any]) -> None:
    assert raw["Parameters"]["SnapStart"]["Default"] == "off"
    assert EvaluatedStack(raw).conditions["SnapStartOn"] is False


def test_what_snapstart_supports(raw: dict[str, Any]) -> None:
    """Python 3.12 or later; no provisioned concurrency, EFS or ephemeral
    storage over 512 MB (AWS's list of what SnapStart does not support)."""
    stack = EvaluatedStack(raw, SnapStart="on")
    runtime = stack.globals["Function"]["Runtime"]
    assert runtime.startswith("python3.") and int(runtime.split(".")[1]) >= 12
    for fn in ALIASED:
        props = {**stack.globals["Function"], **_props(stack, fn)}
        assert "ProvisionedConcurrencyConfig" not in props, fn
        assert "FileSystemConfigs" not in props, fn
        assert props.get("EphemeralStorage", {}).get("Size", 512) <= 512, fn
