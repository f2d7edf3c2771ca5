"""A handler that makes its instance's ID at import, as SnapStart must never
see: every environment resumed from one snapshot would answer with the same
ID (tests/unit/test_snapstart.py shows its check catches this)."""

from __future__ import annotations

import uuid
from typing import Any

import gligabao.handlers  # noqa: F401  (the package's SnapStart hooks, as a real handler)

INSTANCE_ID = uuid.uuid4().hex  # the mistake


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return {"statusCode": 404, "headers": {"X-Gb-Call-Id": INSTANCE_ID}, "body": "{}"}
