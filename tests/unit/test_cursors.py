"""The page cursors: what each listing's ``next`` gives, the pattern the
OpenAPI document states for its ``cursor``, and the reading of the parameter
agree: a string is a cursor of a listing exactly when it has the pattern."""

from __future__ import annotations

import re

import pytest

from gligabao.api.openapi import build
from gligabao.api.params import param_cursor
from gligabao.errors import BadRequest
from gligabao.graph.port import page_key
from gligabao.memory.browse import (
    ARTIFACT_CURSOR,
    ENTITY_CURSOR,
    artifact_cursor,
    artifact_position,
    entity_cursor,
    entity_position,
)
from gligabao.models import Artifact, Entity
from gligabao.records.codec import INFERENCE_CURSOR, decode_cursor, encode_cursor
from gligabao.records.meter import inference_id

PATTERNS = {
    "/v1/gb/entities": ("entities", ENTITY_CURSOR),
    "/v1/gb/artifacts": ("artifacts", ARTIFACT_CURSOR),
    "/v1/gb/inferences": ("inferences", INFERENCE_CURSOR),
}
TS = "2024-05-01T12:34:56Z"
SAMPLES = [
    "e2024-05-01T12:34:56Z_000000000007",
    "e_000000000007",
    "e9999-99-99T99:99:99Z_999999999999999999",
    "a1",
    "a999999999999999999",
    f"i{TS}_{'0' * 32}",
    f"i0000-00-00T00:00:00Z_{'f' * 32}",
    # not a cursor of any listing
    "",
    "0",
    "e30",
    "eyJrIjoiYXJ0aWZhY3RzIiwicCI6MX0",
    f"e{TS}#000000000007",
    f"e{TS}_00000000007",
    f"e{TS}_0000000000000000007",
    "e2024-05-01T12:34:56+00:00_000000000007",
    "a0",
    "a01",
    "a1000000000000000000",
    "A1",
    f"i{TS}#{'0' * 32}",
    f"i{TS}_{'F' * 32}",
    f"i{TS}_{'0' * 31}",
    f"i{TS}_{'0' * 33}",
    f"i2024-05-01T12:34:56.5Z_{'0' * 32}",
]


def _cursor_schema(path: str) -> dict[str, object]:
    params = build()["paths"][path]["get"]["parameters"]
    (schema,) = [p["schema"] for p in params if p["name"] == "cursor"]
    return dict(schema)


@pytest.mark.parametrize("path", sorted(PATTERNS))
def test_the_document_states_each_listings_pattern(path: str) -> None:
    listing, pattern = PATTERNS[path]
    schema = _cursor_schema(path)
    assert schema["type"] == "string" and schema["pattern"] == pattern
    longest = {"entities": 40, "artifacts": 19, "inferences": 54}[listing]
    assert schema["maxLength"] == longest
    assert "next" in str(schema["description"])  # opaque to clients: pass back what next gave


@pytest.mark.parametrize("path", sorted(PATTERNS))
@pytest.mark.parametrize("value", SAMPLES)
def test_a_cursor_is_read_exactly_when_it_has_the_pattern(path: str, value: str) -> None:
    listing, _ = PATTERNS[path]
    schema = _cursor_schema(path)
    shaped = bool(re.fullmatch(str(schema["pattern"]), value)) and len(value) <= int(
        str(schema["maxLength"])
    )
    if shaped:
        assert param_cursor({"cursor": value}, listing) == value
    else:
        with pytest.raises(BadRequest, match="cursor: not a cursor of this listing"):
            param_cursor({"cursor": value}, listing)


def test_the_three_shapes_never_overlap() -> None:
    for value in SAMPLES:
        assert sum(bool(re.fullmatch(p, value)) for _, p in PATTERNS.values()) <= 1, value


def test_next_round_trips_to_the_position() -> None:
    e = Entity(7, "Alice", "person", "", created_at=TS, updated_at=TS)
    assert entity_cursor(e) == f"e{TS}_000000000007"
    assert entity_position(entity_cursor(e)) == page_key(e)
    legacy = Entity(7, "Alice", "person", "", created_at="", updated_at="")  # no updated_at
    assert entity_position(entity_cursor(legacy)) == page_key(legacy) == "#000000000007"
    big = Entity(10**18 - 1, "Alice", "person", "", created_at=TS, updated_at=TS)
    assert re.fullmatch(ENTITY_CURSOR, entity_cursor(big))
    assert entity_position(entity_cursor(big)) == page_key(big)
    a = Artifact(10**18 - 1, "text", TS, TS)
    assert (
        artifact_cursor(a) == "a999999999999999999"
        and artifact_position(artifact_cursor(a)) == a.id
    )
    sk = f"{TS}#{inference_id()}"
    assert (
        re.fullmatch(INFERENCE_CURSOR, encode_cursor(sk)) and decode_cursor(encode_cursor(sk)) == sk
    )
    assert entity_position(None) is None and artifact_position(None) is None
