"""AuthMode: closed by default, open only by name and then loudly."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("cfnlint")

from cfn import Stack, load

ROUTE = "AWS::ApiGatewayV2::Route"


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load()


def _auth_types(stack: Stack) -> dict[str, str]:
    return {
        res["Properties"]["RouteKey"]: res["Properties"]["AuthorizationType"]
        for res in stack.of_type(ROUTE).values()
    }


def test_default_parameters_have_no_route_without_authorization(template: dict[str, Any]) -> None:
    stack = Stack(template)
    assert stack.params["AuthMode"] == "iam"
    types = _auth_types(stack)
    assert types and set(types.values()) == {"AWS_IAM"}, types
    env = stack.globals["Function"]["Environment"]["Variables"]
    assert env["GB_AUTH_MODE"] == {"Ref": "AuthMode"}
    assert "GB_REQUIRE_AUTH" not in env
    assert "ApiIsOpenWarning" not in stack.outputs
    # the two IAM policies: clients never get the cross-user records route
    client = stack.resources["ApiClientPolicy"]["Properties"]["PolicyDocument"]
    operator = stack.resources["ApiOperatorPolicy"]["Properties"]["PolicyDocument"]
    client_arns = str(client["Statement"])
    assert "/GET/v1/gb/inferences" not in client_arns
    assert "/GET/v1/gb/inferences" in str(operator["Statement"])


def test_jwt_mode_puts_the_authorizer_on_every_route(template: dict[str, Any]) -> None:
    stack = Stack(template, AuthMode="jwt", JwtIssuer="https://issuer.example", JwtAudience="app")
    assert set(_auth_types(stack).values()) == {"JWT"}
    for res in stack.of_type(ROUTE).values():
        assert res["Properties"]["AuthorizerId"] == {"Ref": "JwtAuthorizer"}
    assert "JwtAuthorizer" in stack.resources
    assert "ApiClientPolicy" not in stack.resources
    assert "ApiIsOpenWarning" not in stack.outputs
    # jwt without an issuer or audience is refused by a template rule
    rule = template["Rules"]["JwtNeedsIssuerAndAudience"]
    assert rule["RuleCondition"] == {"Fn::Equals": [{"Ref": "AuthMode"}, "jwt"]}
    asserted = str(rule["Assertions"])
    assert "JwtIssuer" in asserted and "JwtAudience" in asserted


def test_only_auth_mode_none_opens_the_api_and_the_outputs_say_so(template: dict[str, Any]) -> None:
    for mode in ("iam", "jwt"):
        stack = Stack(template, AuthMode=mode, JwtIssuer="https://i", JwtAudience="a")
        assert "NONE" not in _auth_types(stack).values()
    allowed = template["Parameters"]["AuthMode"]["AllowedValues"]
    assert sorted(allowed) == ["iam", "jwt", "none"]
    stack = Stack(template, AuthMode="none")
    assert set(_auth_types(stack).values()) == {"NONE"}
    warning = stack.outputs["ApiIsOpenWarning"]["Value"]
    assert "OPEN" in warning and "AuthMode=none" in warning
