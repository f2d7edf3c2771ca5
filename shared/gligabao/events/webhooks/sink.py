"""Webhooks (https://www.standardwebhooks.com): each event POSTed as JSON to
every configured URL (``GB_WEBHOOK_URL``; never a URL from a request), with
``webhook-id`` (the event's ID: a retry or a redelivery carries the same),
``webhook-timestamp`` and ``webhook-signature`` (``v1,`` + base64 of the
HMAC-SHA256 of ``id.timestamp.body``, keyed by the bytes of the base64 secret
after ``whsec_``, ``GB_WEBHOOK_SECRET``). Retried with backoff on a network
error, a 5xx, 408 or 429."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request

from tenacity import Retrying, retry_if_result, stop_after_attempt

from ...backoff import half_jitter
from ..model import Event
from ..port import Delivery, Undelivered

SECRET_PREFIX = "whsec_"
RETRIED = frozenset({408, 429})


def secret_key(secret: str) -> bytes:
    """The signing key: the base64 after ``whsec_`` (a bare base64 secret too)."""
    raw = secret.removeprefix(SECRET_PREFIX)
    try:
        return base64.b64decode(raw, validate=True)
    except ValueError as exc:
        raise ValueError("GB_WEBHOOK_SECRET must be whsec_ followed by base64") from exc


def sign(key: bytes, msg_id: str, timestamp: int, body: str) -> str:
    digest = hmac.new(key, f"{msg_id}.{timestamp}.{body}".encode(), hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def urls_of(setting: str) -> list[str]:
    """``GB_WEBHOOK_URL``: one URL, or several separated by commas."""
    return [u.strip() for u in setting.split(",") if u.strip()]


class WebhookSink:
    def __init__(
        self,
        urls: list[str],
        secret: str,
        attempts: int = 4,
        base_wait_s: float = 0.5,
        max_wait_s: float = 8.0,
        timeout_s: float = 5.0,
    ) -> None:
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"GB_WEBHOOK_URL: not an http(s) URL: {url!r}")
        self.urls = urls
        self.key = secret_key(secret)
        self.attempts = attempts
        self.wait = half_jitter(base_wait_s, max_wait_s)
        self.timeout_s = timeout_s

    def publish(self, events: list[Event]) -> list[Delivery]:
        out = [
            self._deliver(f"webhook:{n}", url, event)
            for event in events
            for n, url in enumerate(self.urls, 1)
        ]
        if not all(d.ok for d in out):
            raise Undelivered(out)
        return out

    def _deliver(self, target: str, url: str, event: Event) -> Delivery:
        body = json.dumps(event.public(), separators=(",", ":"))
        tries = 0

        def post() -> int:
            nonlocal tries
            tries += 1
            ts = int(time.time())  # each attempt signs its own time (receivers check it)
            req = urllib.request.Request(
                url,
                data=body.encode(),
                method="POST",
                headers={
                    "content-type": "application/json",
                    "webhook-id": event.id,
                    "webhook-timestamp": str(ts),
                    "webhook-signature": sign(self.key, event.id, ts, body),
                },
            )
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    return int(resp.status)
            except urllib.error.HTTPError as exc:
                return int(exc.code)
            except OSError:
                return 0

        status = Retrying(
            retry=retry_if_result(lambda s: s == 0 or s >= 500 or s in RETRIED),
            stop=stop_after_attempt(self.attempts),
            wait=self.wait,
            retry_error_callback=lambda state: state.outcome.result() if state.outcome else 0,
        )(post)
        return Delivery(target, 1, tries, 200 <= status < 300, status)
