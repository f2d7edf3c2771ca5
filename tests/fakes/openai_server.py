"""A fake of OpenAI's Embeddings API (``POST /v1/embeddings``, also
``/embeddings``) for the real ``openai`` SDK over loopback HTTP.

Every text gets a deterministic unit vector seeded from a hash of the exact
text: distinct texts are nearly orthogonal (cosine ~ N(0, 1/dim)), the same
text always gets the same vector. Similarities are scripted with rules::

    with FakeOpenAI(dim=64) as fake:
        fake.alias("Bob Smith", "Robert Smith", 0.9)   # cosine exactly 0.9
        client = openai.OpenAI(api_key="x", base_url=fake.base_url)

Rules are resolved lazily, at request time, so their order does not matter.
Vectors travel as float32, so a scripted cosine comes back within ~1e-6.
"""

from __future__ import annotations

import base64
import hashlib
import math
import random
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

from ._server import FakeServer, FaultQueue, RecordedRequest, Response, estimate_tokens, new_id

EMBEDDINGS_PATHS = ("/v1/embeddings", "/embeddings")

ERROR_TYPES: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
}


def error_body(status: int, message: str) -> dict[str, Any]:
    kind, code = ERROR_TYPES.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def normalize(text: str) -> str:
    """The loose key of a text: stripped and case-folded."""
    return text.strip().casefold()


def hashed_unit_vector(text: str, dim: int, salt: str = "") -> list[float]:
    """A unit vector seeded from sha256 of ``salt + text``: deterministic across
    runs and processes."""
    seed = int.from_bytes(hashlib.sha256((salt + text).encode("utf-8")).digest()[:8], "big")
    rng = random.Random(seed)
    vec = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    return _unit(vec)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    if na == 0 or nb == 0:
        return 0.0
    return sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb)


def to_float32(vec: Sequence[float]) -> list[float]:
    """``vec`` rounded to float32, the precision the API sends."""
    return list(struct.unpack(f"<{len(vec)}f", struct.pack(f"<{len(vec)}f", *vec)))


def encode_base64(vec: Sequence[float]) -> str:
    """The API's ``encoding_format="base64"``: little-endian float32 bytes."""
    return base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode("ascii")


def _unit(vec: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0:
        raise ValueError("zero vector")
    return [x / norm for x in vec]


@dataclass(frozen=True)
class _Fixed:
    vector: tuple[float, ...]


@dataclass(frozen=True)
class _Near:
    other: str
    similarity: float


_Rule = _Fixed | _Near


@dataclass
class _Failure:
    status: int
    body: dict[str, Any] | str | None
    headers: dict[str, str]


class FakeOpenAI(FakeServer):
    """The fake Embeddings API. ``.url`` is the server root; ``.base_url`` is
    ``.url + "/v1"``, what ``OPENAI_BASE_URL`` conventionally holds (both
    ``/v1/embeddings`` and ``/embeddings`` are served)."""

    name = "fake-openai"

    def __init__(self, dim: int = 64, *, check_headers: bool = True) -> None:
        super().__init__()
        if dim < 2:
            raise ValueError("dim must be >= 2")
        self.dim = dim
        #: Answer 401 without ``authorization: Bearer ...`` (the SDK always sends it).
        self.check_headers = check_headers
        self._rules_lock = threading.RLock()
        self._exact: dict[str, _Rule] = {}
        self._loose: dict[str, _Rule] = {}
        self._prefixes: list[tuple[str, _Near]] = []
        self._failures: FaultQueue[_Failure] = FaultQueue()

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def env(self, api_key: str = "test-openai-key") -> dict[str, str]:
        """Environment variables that point the SDK (and the product) here."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": api_key}

    # -- scripting similarity ------------------------------------------------

    def set_vector(self, text: str, vector: Sequence[float]) -> Self:
        """``text`` embeds to ``vector`` (any non-zero length-``dim`` vector;
        sent as given, not normalized)."""
        if len(vector) != self.dim:
            raise ValueError(f"vector has {len(vector)} dimensions, the fake has {self.dim}")
        if not any(vector):
            raise ValueError("zero vector")
        self._add_rule(text, _Fixed(tuple(float(x) for x in vector)))
        return self

    def alias(self, text: str, other_text: str, similarity: float = 1.0) -> Self:
        """``text``'s vector has cosine exactly ``similarity`` with ``other_text``'s
        (whatever that one is: hashed, set or itself an alias). 1.0: the same
        vector. Built as ``s*v + sqrt(1-s^2)*u``, u a unit vector orthogonal to v
        seeded from ``text``."""
        if not -1.0 <= similarity <= 1.0:
            raise ValueError("similarity must be within [-1, 1]")
        self._add_rule(text, _Near(other_text, float(similarity)))
        return self

    def near(self, text: str, other: str, similarity: float) -> Self:
        """Same as :meth:`alias`, with the similarity required."""
        return self.alias(text, other, similarity)

    def prefix_rule(self, prefix: str, target_text: str, similarity: float = 1.0) -> Self:
        """Any input starting with ``prefix`` (exactly, else case-insensitively
        after stripping) without a rule of its own gets cosine ``similarity``
        with ``target_text``. The longest matching prefix wins. Two inputs under
        the same rule have cosine ~ similarity**2 with each other. The target
        texts of prefix rules are exempt from all prefix rules."""
        if not -1.0 <= similarity <= 1.0:
            raise ValueError("similarity must be within [-1, 1]")
        with self._rules_lock:
            self._prefixes.append((prefix, _Near(target_text, float(similarity))))
            self._prefixes.sort(key=lambda p: len(p[0]), reverse=True)
        return self

    def _add_rule(self, text: str, rule: _Rule) -> None:
        with self._rules_lock:
            self._exact[text] = rule
            self._loose[normalize(text)] = rule

    def _rule_for(self, text: str) -> _Rule | None:
        with self._rules_lock:
            rule = self._exact.get(text)
            if rule is not None:
                return rule
            rule = self._loose.get(normalize(text))
            if rule is not None:
                return rule
            loose = normalize(text)
            # The targets of prefix rules are anchors: never moved by one.
            if any(normalize(r.other) == loose for _, r in self._prefixes):
                return None
            for prefix, prule in self._prefixes:
                if text.startswith(prefix):
                    return prule
            for prefix, prule in self._prefixes:
                if loose.startswith(normalize(prefix)):
                    return prule
        return None

    def vector(self, text: str, dim: int | None = None) -> list[float]:
        """The vector the fake answers for ``text`` (before float32 rounding),
        without a request."""
        return self._resolve(text, dim or self.dim, ())

    def similarity(self, a: str, b: str) -> float:
        """The cosine between the fake's vectors of ``a`` and ``b``."""
        return cosine(self.vector(a), self.vector(b))

    def _resolve(self, text: str, dim: int, seen: tuple[str, ...]) -> list[float]:
        if text in seen:
            raise ValueError(f"alias cycle: {' -> '.join((*seen, text))}")
        rule = self._rule_for(text)
        if rule is None:
            return hashed_unit_vector(text, dim)
        if isinstance(rule, _Fixed):
            if len(rule.vector) != dim:
                raise ValueError(
                    f"set_vector({text!r}) has {len(rule.vector)} dimensions, "
                    f"the request asked for {dim}"
                )
            return list(rule.vector)
        v = _unit(self._resolve(rule.other, dim, (*seen, text)))
        s = rule.similarity
        if s >= 1.0:
            return v
        if s <= -1.0:
            return [-x for x in v]
        # u: a unit vector orthogonal to v, seeded from the text (Gram-Schmidt).
        u = hashed_unit_vector(text, dim, salt="orthogonal:")
        dot = sum(a * b for a, b in zip(u, v, strict=True))
        u = _unit([a - dot * b for a, b in zip(u, v, strict=True)])
        t = math.sqrt(max(0.0, 1.0 - s * s))
        return [s * a + t * b for a, b in zip(v, u, strict=True)]

    # -- faults --------------------------------------------------------------

    def fail_next(
        self,
        status: int = 500,
        body: dict[str, Any] | str | None = None,
        retry_after: float | str | None = None,
        times: int = 1,
        *,
        retry_after_ms: float | None = None,
        headers: dict[str, str] | None = None,
    ) -> Self:
        """Answer the next ``times`` requests with an OpenAI error
        (``{"error": {"message", "type", "param", "code"}}``). ``body``: a str
        replaces the message, a dict the whole JSON body. NB: like Anthropic's,
        the SDK ignores ``retry-after: 0``; use ``retry_after=0.001`` for fast
        retries."""
        hdrs = dict(headers or {})
        if retry_after is not None:
            hdrs["retry-after"] = str(retry_after)
        if retry_after_ms is not None:
            hdrs["retry-after-ms"] = str(retry_after_ms)
        self._failures.add(_Failure(status, body, hdrs), times=times)
        return self

    def delay_next(self, seconds: float, *, times: int = 1) -> Self:
        """Sleep ``seconds`` before answering the next request(s) (for client
        timeouts; a request whose client hung up is dropped, ``status`` 0)."""
        self._delays.add(seconds, times=times)
        return self

    def reset(self) -> None:
        """Forget requests, rules and faults (``dim`` stays)."""
        super().reset()
        with self._rules_lock:
            self._exact.clear()
            self._loose.clear()
            self._prefixes.clear()
        self._failures.clear()

    # -- inspection ----------------------------------------------------------

    def inputs(self) -> list[str]:
        """Every input string received, in order (retried requests repeat theirs)."""
        out: list[str] = []
        for req in self.requests:
            if req.path in EMBEDDINGS_PATHS:
                out.extend(_input_texts(req.get("input")) or [])
        return out

    def calls(self) -> int:
        """How many embeddings requests arrived (faulted ones and retries included)."""
        return sum(1 for r in self.requests if r.path in EMBEDDINGS_PATHS)

    # -- serving -------------------------------------------------------------

    def _bad_request(self, status: int, message: str) -> Response:
        return Response(status, error_body(status, message))

    def _handle(self, req: RecordedRequest) -> Response:
        if req.method != "POST" or req.path not in EMBEDDINGS_PATHS:
            return self._bad_request(404, f"{req.method} {req.path}: not found")
        if self.check_headers:
            auth = req.headers.get("authorization", "")
            if not auth.lower().startswith("bearer ") or not auth[7:].strip():
                return self._bad_request(401, "You didn't provide an API key.")
        if not isinstance(req.get("model"), str) or not req["model"]:
            return self._bad_request(400, "you must provide a model parameter")
        texts = _input_texts(req.get("input"))
        if not texts or any(t == "" for t in texts):
            return self._bad_request(400, "'$.input' is invalid: empty")
        fmt = req.get("encoding_format", "float")
        if fmt not in ("float", "base64"):
            return self._bad_request(400, f"invalid encoding_format {fmt!r}")
        dim = req.get("dimensions", self.dim)
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
            return self._bad_request(400, f"invalid dimensions {dim!r}")

        failure = self._failures.take(None)
        if failure is not None:
            return self._failure_response(failure)

        data: list[dict[str, Any]] = []
        for i, text in enumerate(texts):
            vec = to_float32(self._resolve(text, dim, ()))
            embedding: Any = encode_base64(vec) if fmt == "base64" else vec
            data.append({"object": "embedding", "index": i, "embedding": embedding})
        tokens = sum(estimate_tokens(t) for t in texts)
        body = {
            "object": "list",
            "data": data,
            "model": req["model"],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        return Response(200, body, {"x-request-id": new_id("req_")})

    def _failure_response(self, failure: _Failure) -> Response:
        if isinstance(failure.body, dict):
            body = failure.body
        else:
            body = error_body(failure.status, failure.body or f"fake error ({failure.status})")
        return Response(failure.status, body, {"x-request-id": new_id("req_"), **failure.headers})


def _input_texts(value: Any) -> list[str] | None:
    """The input as strings: a string, a list of strings, or token arrays
    (rendered ``"tokens:1,2,3"``). None when malformed."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(x, str) for x in value):
        return list(value)
    if all(isinstance(x, int) for x in value):
        return ["tokens:" + ",".join(map(str, value))]
    if all(isinstance(x, list) and all(isinstance(y, int) for y in x) for x in value):
        return ["tokens:" + ",".join(map(str, x)) for x in value]
    return None
