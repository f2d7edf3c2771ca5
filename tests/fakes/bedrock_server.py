"""A fake of the Bedrock runtime's InvokeModel (``POST /model/{id}/invoke``)
for boto3's ``bedrock-runtime`` client over loopback HTTP (the Claude adapter and
the embedders both speak InvokeModel through it), pointed here by its
endpoint URL (GB_BEDROCK_ENDPOINT_URL).

Every request must carry a valid SigV4 signature: the fake recomputes it with
botocore from the credentials it hands out (``env()``) and answers 403
``InvalidSignatureException`` otherwise, as Bedrock does. The model in the
path picks the body it expects:

* ``anthropic.*`` (a model ID, an inference profile ID such as
  ``us.anthropic.claude-...`` or a profile ARN): the Anthropic Messages body
  with ``anthropic_version`` and no ``model``; replies are scripted per stage
  exactly as on :class:`FakeAnthropic` (this class is one);
* ``amazon.titan-embed-text-v2:0``: ``inputText``, ``dimensions``,
  ``normalize``;
* ``cohere.embed-*``: ``texts`` (up to 96), ``input_type``.

Embedding vectors come from :attr:`embeddings`, a (never started)
:class:`FakeOpenAI` whose similarity rules (``alias``, ``near``) apply here.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from typing import Any, Self

from ._server import FaultQueue, RecordedRequest, Response, estimate_tokens, new_id
from .anthropic_server import MESSAGES_PATH, FakeAnthropic, find_stage
from .openai_server import FakeOpenAI, to_float32

INVOKE_RE = re.compile(r"^/model/(?P<model>[^/]+)/invoke$")
AUTH_RE = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/"
    r"(?P<service>[^/]+)/aws4_request, ?SignedHeaders=(?P<signed>[^,]+), ?Signature=(?P<sig>[0-9a-f]+)$"
)
TITAN_DIMENSIONS = (256, 512, 1024)
COHERE_V4_DIMENSIONS = (256, 512, 1024, 1536)
COHERE_MAX_TEXTS = 96
COHERE_INPUT_TYPES = ("search_document", "search_query", "classification", "clustering")
TOKEN_HEADER = "x-amzn-bedrock-input-token-count"


def bedrock_error(status: int, kind: str, message: str) -> Response:
    """Bedrock's error shape: the type in ``x-amzn-ErrorType`` (what botocore
    reads as the error code), the message in the body."""
    return Response(status, {"message": message}, {"x-amzn-ErrorType": f"{kind}:"})


class FakeBedrock(FakeAnthropic):
    name = "fake-bedrock"

    def __init__(
        self,
        dim: int = 256,
        *,
        access_key: str = "AKIDGLIGABAOFAKE0001",
        secret_key: str = "gligabao-fake-bedrock-secret",
        region: str = "us-east-1",
    ) -> None:
        super().__init__()
        self.access_key = access_key
        self.secret_key = secret_key
        self.region = region
        #: The similarity rules and vectors of the embedding models.
        self.embeddings = FakeOpenAI(dim)
        self._embed_failures: FaultQueue[tuple[int, str]] = FaultQueue()

    def env(self, api_key: str = "") -> dict[str, str]:
        """Environment that points the SDKs (and the product) here, with the
        fake's credentials and nothing else AWS may read instead."""
        return {
            "GB_BEDROCK_ENDPOINT_URL": self.url,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_SESSION_TOKEN": "",
            "AWS_PROFILE": "",
            "AWS_BEARER_TOKEN_BEDROCK": "",
            "AWS_REGION": self.region,
        }

    def child_env(self, **extra: str) -> dict[str, str]:
        """A child process's environment: this one's without any GB_ or AWS_
        variable, then the fake's (the ones it empties left unset: botocore
        reads AWS_PROFILE="" as a profile named ""), then ``extra``."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GB_", "AWS_"))}
        env.update({k: v for k, v in self.env().items() if v})
        env.update(extra)
        return env

    # -- scripting -------------------------------------------------------------

    def fail_embeddings_next(
        self, status: int = 429, kind: str = "ThrottlingException", *, times: int = 1
    ) -> Self:
        """Answer the next embedding request(s) with a Bedrock error."""
        self._embed_failures.add((status, kind), times=times)
        return self

    def reset(self) -> None:
        super().reset()
        self.embeddings.reset()
        self._embed_failures.clear()

    # -- inspection ------------------------------------------------------------

    def invocations(self, family: str | None = None) -> list[RecordedRequest]:
        """The InvokeModel requests (of one family: anthropic, titan, cohere)."""
        out = []
        for r in self.requests:
            model = model_of(r)
            if model is not None and (family is None or family_of(model) == family):
                out.append(r)
        return out

    def requests_for(self, stage: str) -> list[RecordedRequest]:
        return [r for r in self.invocations("anthropic") if r.stage == stage]

    def calls(self, stage: str | None = None) -> int:
        """InvokeModel requests to Claude (of ``stage``), faulted ones included."""
        return sum(1 for r in self.invocations("anthropic") if stage is None or r.stage == stage)

    # -- serving ---------------------------------------------------------------

    def _classify(self, req: RecordedRequest) -> None:
        model = model_of(req)
        if model is not None and family_of(model) == "anthropic":
            req.stage = find_stage(req.get("system"))

    def _bad_request(self, status: int, message: str) -> Response:
        return bedrock_error(status, "ValidationException", message)

    def _handle(self, req: RecordedRequest) -> Response:
        model = model_of(req)
        if req.method != "POST" or model is None:
            return bedrock_error(404, "UnknownOperationException", f"{req.method} {req.path}")
        problem = self._check_signature(req)
        if problem:
            return bedrock_error(403, "InvalidSignatureException", problem)
        family = family_of(model)
        if family == "anthropic":
            return self._anthropic(req, model)
        failure = self._embed_failures.take(None)
        if failure is not None:
            return bedrock_error(failure[0], failure[1], f"fake {failure[1]}")
        if family == "titan":
            return self._titan(req)
        if family == "cohere":
            return self._cohere(req, model)
        return bedrock_error(404, "ResourceNotFoundException", f"model {model} not found")

    def _check_signature(self, req: RecordedRequest) -> str | None:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        m = AUTH_RE.match(req.headers.get("authorization", ""))
        if m is None:
            return "missing or malformed AWS4-HMAC-SHA256 Authorization header"
        if m["key"] != self.access_key:
            return f"unknown access key {m['key']}"
        if m["service"] != "bedrock" or m["region"] != self.region:
            return f"credential scope {m['region']}/{m['service']} is not {self.region}/bedrock"
        amz_date = req.headers.get("x-amz-date", "")
        if not amz_date.startswith(m["date"]):
            return "x-amz-date does not match the credential scope"
        signed = m["signed"].split(";")
        missing = [h for h in signed if h not in req.headers]
        if missing or "host" not in signed:
            return f"signed headers missing: {missing or ['host']}"
        url = f"http://{req.headers['host']}{req.path}"
        aws_req = AWSRequest(
            method=req.method, url=url, headers={h: req.headers[h] for h in signed}, data=req.raw
        )
        aws_req.context["timestamp"] = amz_date
        signer = SigV4Auth(Credentials(self.access_key, self.secret_key), "bedrock", self.region)
        expected = signer.signature(
            signer.string_to_sign(aws_req, signer.canonical_request(aws_req)), aws_req
        )
        if expected != m["sig"]:
            return "The request signature we calculated does not match the signature you provided"
        return None

    def _anthropic(self, req: RecordedRequest, model: str) -> Response:
        # The SDK names the version in the body (Bedrock has no header for it).
        if not isinstance(req.get("anthropic_version"), str) or not req["anthropic_version"]:
            return self._bad_request(400, "anthropic_version: required")
        if "model" in req:
            return self._bad_request(400, "extraneous key [model] is not permitted")
        # The same Messages logic, on the body as Anthropic's API would see it.
        inner = RecordedRequest(
            {**req.body, "model": model},
            method="POST",
            path=MESSAGES_PATH,
            headers={"x-api-key": "sigv4", "anthropic-version": "2023-06-01"},
            raw=req.raw,
        )
        inner.stage = req.stage
        resp = super()._handle(inner)
        if resp.status != 200:
            kind = "ThrottlingException" if resp.status == 429 else "ValidationException"
            message = str((resp.body.get("error") or {}).get("message", ""))
            return Response(resp.status, {"message": message}, {"x-amzn-ErrorType": f"{kind}:"})
        usage = resp.body.get("usage") or {}
        resp.headers[TOKEN_HEADER] = str(usage.get("input_tokens", 0))
        return resp

    def _titan(self, req: RecordedRequest) -> Response:
        text = req.get("inputText")
        if not isinstance(text, str) or not text:
            return self._bad_request(400, "inputText: expected a non-empty string")
        dim = req.get("dimensions", 1024)
        if dim not in TITAN_DIMENSIONS:
            return self._bad_request(400, f"dimensions: expected one of {TITAN_DIMENSIONS}")
        if not isinstance(req.get("normalize", True), bool):
            return self._bad_request(400, "normalize: expected a boolean")
        tokens = estimate_tokens(text)
        body = {
            "embedding": to_float32(self.embeddings.vector(text, dim)),
            "inputTextTokenCount": tokens,
        }
        return Response(200, body, {TOKEN_HEADER: str(tokens), "x-amzn-requestid": new_id("")})

    def _cohere(self, req: RecordedRequest, model: str) -> Response:
        texts = req.get("texts")
        if (
            not isinstance(texts, list)
            or not texts
            or not all(isinstance(t, str) and t for t in texts)
        ):
            return self._bad_request(400, "texts: expected a non-empty list of strings")
        if len(texts) > COHERE_MAX_TEXTS:
            return self._bad_request(400, f"texts: at most {COHERE_MAX_TEXTS}")
        if req.get("input_type") not in COHERE_INPUT_TYPES:
            return self._bad_request(400, f"input_type: expected one of {COHERE_INPUT_TYPES}")
        if "-v3" in model:
            if "output_dimension" in req:
                return self._bad_request(400, "extraneous key [output_dimension]")
            dim = 1024
        else:
            dim = req.get("output_dimension", 1536)
            if dim not in COHERE_V4_DIMENSIONS:
                return self._bad_request(400, f"output_dimension: one of {COHERE_V4_DIMENSIONS}")
        # Queries and documents embed alike here: rules script their similarity.
        vectors = [to_float32(self.embeddings.vector(t, dim)) for t in texts]
        types = req.get("embedding_types")
        embeddings: Any = {"float": vectors} if types else vectors
        body = {
            "id": new_id(""),
            "embeddings": embeddings,
            "texts": texts,
            "response_type": "embeddings_by_type" if types else "embeddings_floats",
        }
        tokens = sum(estimate_tokens(t) for t in texts)
        return Response(200, body, {TOKEN_HEADER: str(tokens)})


def model_of(req: RecordedRequest) -> str | None:
    m = INVOKE_RE.match(req.path)
    return urllib.parse.unquote(m["model"]) if m else None


def family_of(model: str) -> str:
    if "anthropic." in model:
        return "anthropic"
    if "amazon.titan-embed-text-v2" in model:
        return "titan"
    if "cohere.embed" in model:
        return "cohere"
    return "unknown"
