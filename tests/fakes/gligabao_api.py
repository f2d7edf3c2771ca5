"""A fake of the gligabao HTTP API, for the Python client's own behaviour
(retries, waits, signing): every request is recorded and answered with the
next scripted reply, or 200 and an empty listing."""

from __future__ import annotations

from typing import Any, Self

from ._server import FakeServer, FaultQueue, RecordedRequest, Response

REMEMBERED = {"artifact_id": 1, "entities": [], "edges": [], "invalidated": [], "chunks": 0}


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
