"""Read template.yaml as CloudFormation would for a given set of parameters:
conditions evaluated, ``Fn::If`` resolved, conditional resources and outputs
dropped. Only what the template uses (Ref to parameters, Equals, Not, And,
Or, Condition); other intrinsics are left as they are by :class:`Stack`, and
evaluated by :class:`EvaluatedStack` (Ref, Fn::Sub, Fn::GetAtt, with fixed
pseudo parameters) for the tests that read values such as ARNs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cfnlint.decode import cfn_yaml

ROOT = Path(__file__).resolve().parents[1]
NO_VALUE = object()
KEEP = object()  # an intrinsic that Stack leaves as it is

# The pseudo parameters of an EvaluatedStack (a stack "gb" in eu-west-1).
PSEUDO = {
    "AWS::Region": "eu-west-1",
    "AWS::AccountId": "123456789012",
    "AWS::Partition": "aws",
    "AWS::StackName": "gb",
    "AWS::StackId": "arn:aws:cloudformation:eu-west-1:123456789012:stack/gb/8c1f33a0-7d3e-11ef-9d6b-0a1b2c3d4e5f",
    "AWS::URLSuffix": "amazonaws.com",
}


def load() -> dict[str, Any]:
    return dict(json.loads(json.dumps(cfn_yaml.load(str(ROOT / "template.yaml")))))


def defaults(template: dict[str, Any]) -> dict[str, str]:
    return {k: str(v.get("Default", "")) for k, v in template["Parameters"].items()}


class Stack:
    def __init__(self, template: dict[str, Any], **params: str) -> None:
        unknown = set(params) - set(template["Parameters"])
        assert not unknown, unknown
        self.params = {**defaults(template), **params}
        self.template = template
        self.conditions: dict[str, bool] = {}
        for name in template.get("Conditions", {}):
            self.condition(name)
        self.resources = {
            k: self.resolve(v)
            for k, v in template["Resources"].items()
            if "Condition" not in v or self.conditions[v["Condition"]]
        }
        self.outputs = {
            k: self.resolve(v)
            for k, v in template.get("Outputs", {}).items()
            if "Condition" not in v or self.conditions[v["Condition"]]
        }
        self.globals = self.resolve(template.get("Globals", {}))

    def condition(self, name: str) -> bool:
        if name not in self.conditions:
            self.conditions[name] = bool(self._eval(self.template["Conditions"][name]))
        return self.conditions[name]

    def _eval(self, node: Any) -> Any:
        if isinstance(node, dict) and len(node) == 1:
            ((key, arg),) = node.items()
            if key == "Ref" and arg in self.params:
                return self.params[arg]
            if key == "Fn::Equals":
                return str(self._eval(arg[0])) == str(self._eval(arg[1]))
            if key == "Fn::Not":
                return not self._eval(arg[0])
            if key == "Fn::And":
                return all(self._eval(a) for a in arg)
            if key == "Fn::Or":
                return any(self._eval(a) for a in arg)
            if key == "Condition":
                return self.condition(arg)
        return node

    def resolve(self, node: Any) -> Any:
        if isinstance(node, dict):
            if len(node) == 1 and "Fn::If" in node:
                name, yes, no = node["Fn::If"]
                return self.resolve(yes if self.condition(name) else no)
            if node == {"Ref": "AWS::NoValue"}:
                return NO_VALUE
            if len(node) == 1:
                ((key, arg),) = node.items()
                value = self._intrinsic(key, arg)
                if value is not KEEP:
                    return value
            out = {k: self.resolve(v) for k, v in node.items()}
            return {k: v for k, v in out.items() if v is not NO_VALUE}
        if isinstance(node, list):
            items = [self.resolve(v) for v in node]
            return [v for v in items if v is not NO_VALUE]
        return node

    def _intrinsic(self, key: str, arg: Any) -> Any:
        """The value of one intrinsic function other than Fn::If; KEEP: the
        node stays as it is (its arguments resolved)."""
        return KEEP

    def of_type(self, type_: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.resources.items() if v["Type"] == type_}


class EvaluatedStack(Stack):
    """A Stack whose Ref, Fn::Sub and Fn::GetAtt are evaluated too: a
    parameter or pseudo parameter gives its value, a resource ``ref:<name>``
    (it must exist and be created), an attribute ``getatt:<name>.<attribute>``."""

    def _intrinsic(self, key: str, arg: Any) -> Any:
        if key == "Ref":
            return self.ref(arg)
        if key == "Fn::Sub":
            return self.sub(arg) if isinstance(arg, str) else self.sub(arg[0], arg[1])
        if key == "Fn::GetAtt":
            return f"getatt:{arg if isinstance(arg, str) else '.'.join(arg)}"
        return KEEP

    def ref(self, name: str) -> str:
        if name in self.params:
            return self.params[name]
        if name in PSEUDO:
            return PSEUDO[name]
        resources = self.template["Resources"]
        if name.endswith(".Alias"):  # SAM's reference to a function's AutoPublishAlias
            function = resources.get(name.removesuffix(".Alias"), {})
            assert function.get("Properties", {}).get("AutoPublishAlias"), f"no alias: {name}"
            return f"ref:{name}"
        assert name in resources, f"Ref to a missing resource {name}"
        cond = resources[name].get("Condition")
        assert cond is None or self.condition(cond), f"Ref to {name}, not created"
        return f"ref:{name}"

    def sub(self, text: str, names: dict[str, Any] | None = None) -> str:
        def one(m: re.Match[str]) -> str:
            name = m.group(1)
            if names and name in names:
                return str(self.resolve(names[name]))
            return self.ref(name) if "." not in name else f"getatt:{name}"

        return re.sub(r"\$\{([^}!]+)\}", one, text)

    def env(self, function: str) -> dict[str, Any]:
        """A function's environment: the Globals' variables, then its own."""
        glob = self.globals["Function"]["Environment"]["Variables"]
        own = self.resources[function]["Properties"].get("Environment", {}).get("Variables", {})
        return {**glob, **own}

    def grants(self, function: str, action: str) -> list[str]:
        """The resources of every statement of the function's policies that
        allows ``action``."""
        out: list[str] = []
        for policy in self.resources[function]["Properties"].get("Policies", []):
            for st in policy["Statement"]:
                actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
                if action in actions:
                    res = st["Resource"]
                    out.extend(res if isinstance(res, list) else [res])
        return out

    def secrets(self) -> set[str]:
        return set(self.of_type("AWS::SecretsManager::Secret"))
