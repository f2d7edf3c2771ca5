"""A fake of the gligabao HTTP API, for the Python client's own behaviour
(retries, waits, signing): every request is recorded and answered with the
next scripted reply, or 200 and an empty listing."""

from __future__ import annotations

from typing import Any, Self

from ._server import FakeServer, FaultQueue, RecordedRequest, Response

REMEMBERED = {
    "artifact_id": 1,
    "artifacts": [1],
    "entities": [],
    "edges": [],
    "invalidated": [],
    "chunks": 0,
}


class FakeGligabao(FakeServer):
    name = "fake-gligabao"

    def __init__(self) -> None:
        super().__init__()
        self._replies: FaultQueue[Response] = FaultQueue()

    def reply_next(
        self, status: int, body: Any, headers: dict[str, str] | None = None, *, times: int = 1
    ) -> Self:
        self._replies.add(Response(status, body, dict(headers or {})), times=times)
        return self

    def reset(self) -> None:
        super().reset()
        self._replies.clear()

    def _handle(self, req: RecordedRequest) -> Response:
        scripted = self._replies.take(None)
        if scripted is not None:
            return Response(scripted.status, scripted.body, dict(scripted.headers))
        if req.path == "/v1/gb/remember":
            return Response(200, REMEMBERED)
        return Response(200, {"datasets": []})


def sigv4_valid(
    req: RecordedRequest, url: str, secret: str, region: str, service: str = "execute-api"
) -> bool:
    """Whether a request that arrived at ``url`` carries a SigV4 signature made
    with ``secret``: recomputed with botocore from the headers it signed, its
    query as sent and its body, as API Gateway would check it."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    auth = req.headers.get("authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 ") or "SignedHeaders=" not in auth:
        return False
    access_key = auth.split("Credential=")[1].split("/")[0]
    signed = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
    if any(h not in req.headers for h in signed):
        return False
    aws = AWSRequest(
        method=req.method,
        url=url + req.path + (f"?{req.query}" if req.query else ""),
        data=req.raw,
        headers={h: req.headers[h] for h in signed},
    )
    aws.context["timestamp"] = req.headers.get("x-amz-date", "")
    signer = SigV4Auth(Credentials(access_key, secret), service, region)
    expected = signer.signature(signer.string_to_sign(aws, signer.canonical_request(aws)), aws)
    return auth.endswith(f"Signature={expected}")
