"""The API Gateway HTTP API (payload 2.0) event of a request, as the local
server hands it to the deployed handlers."""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit


def make_event(
    method: str, target: str, headers: Mapping[str, str], body: bytes, client_ip: str
) -> dict[str, Any]:
    parts = urlsplit(target)
    query: dict[str, str] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        # API Gateway joins repeated parameters with commas.
        query[name] = f"{query[name]},{value}" if name in query else value
    try:
        text, b64 = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, b64 = base64.b64encode(body).decode(), True
    lower = {k.lower(): v for k, v in headers.items()}
    now = time.time()
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": parts.path,
        "rawQueryString": parts.query,
        "headers": lower,
        "queryStringParameters": query or None,
        "requestContext": {
            "accountId": "local",
            "apiId": "local",
            "domainName": lower.get("host", "localhost"),
            "http": {
                "method": method,
                "path": parts.path,
                "protocol": "HTTP/1.1",
                "sourceIp": client_ip,
                "userAgent": lower.get("user-agent", ""),
            },
            "requestId": uuid.uuid4().hex,
            "routeKey": "$default",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
        },
        "body": text,
        "isBase64Encoded": b64,
    }
