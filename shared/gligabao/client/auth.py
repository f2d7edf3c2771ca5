"""How the client authenticates: a bearer token, the local server's API key,
or SigV4 (botocore, imported only then); and the error it raises."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class ApiError(Exception):
    """A response the API refused or failed with, after the retries."""

    def __init__(self, status: int, message: str, call_id: str | None = None) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.call_id = call_id


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes | None


class Bearer:
    """``Authorization: Bearer``: a token, or a function returning a fresh one
    (it is called for every attempt, so an expired token can be renewed)."""

    def __init__(self, token: str | Callable[[], str]) -> None:
        self.token = token

    def apply(self, req: Request) -> None:
        token = self.token() if callable(self.token) else self.token
        req.headers["Authorization"] = f"Bearer {token}"


class ApiKey:
    """``x-api-key``: the local server's ``GB_DEV_API_KEY``."""

    def __init__(self, key: str) -> None:
        self.key = key

    def apply(self, req: Request) -> None:
        req.headers["x-api-key"] = self.key


class SigV4:
    """AWS Signature Version 4 for the ``iam`` stack (API Gateway's IAM
    authorization): the caller's credentials from botocore's usual chain
    (environment, profile, instance role) unless given."""

    def __init__(
        self, region: str, *, service: str = "execute-api", credentials: Any = None
    ) -> None:
        self.region = region
        self.service = service
        self._credentials = credentials

    def apply(self, req: Request) -> None:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        credentials = self._credentials
        if credentials is None:
            import botocore.session

            credentials = botocore.session.get_session().get_credentials()
            if credentials is None:
                raise ApiError(0, "SigV4: no AWS credentials found")
        # Temporary credentials refresh themselves through this call.
        frozen = credentials.get_frozen_credentials()
        aws = AWSRequest(method=req.method, url=req.url, data=req.body or b"", headers=req.headers)
        SigV4Auth(frozen, self.service, self.region).add_auth(aws)
        req.headers.update({k: str(v) for k, v in aws.headers.items()})


Auth = Bearer | ApiKey | SigV4
