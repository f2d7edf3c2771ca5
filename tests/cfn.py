"""Read template.yaml as CloudFormation would for a given set of parameters:
conditions evaluated, ``Fn::If`` resolved, conditional resources and outputs
dropped. Only what the template uses (Ref to parameters, Equals, Not, And,
Or, Condition); other intrinsics are left as they are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cfnlint.decode import cfn_yaml

ROOT = Path(__file__).resolve().parents[1]
NO_VALUE = object()


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
            self._condition(name)
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

    def _condition(self, name: str) -> bool:
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
                return self._condition(arg)
        return node

    def resolve(self, node: Any) -> Any:
        if isinstance(node, dict):
            if len(node) == 1 and "Fn::If" in node:
                name, yes, no = node["Fn::If"]
                return self.resolve(yes if self._condition(name) else no)
            if node == {"Ref": "AWS::NoValue"}:
                return NO_VALUE
            out = {k: self.resolve(v) for k, v in node.items()}
            return {k: v for k, v in out.items() if v is not NO_VALUE}
        if isinstance(node, list):
            items = [self.resolve(v) for v in node]
            return [v for v in items if v is not NO_VALUE]
        return node

    def of_type(self, type_: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.resources.items() if v["Type"] == type_}
