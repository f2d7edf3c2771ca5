"""The request types carry their rules: what they accept is what their JSON
Schema says (null only where it says nullable; a level in any case; an
integer written 2.0), and a broken rule is a 400 naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from gligabao.api.batch import BatchRequest
from gligabao.api.openapi import REQUESTS, build
from gligabao.api.openapi_settings import DatasetSettings
from gligabao.api.params import param_cursor, param_id, param_limit, param_user
from gligabao.api.requests import QueryRequest, RememberRequest, SearchRequest, validate
from gligabao.api.stages import levels, models
from gligabao.errors import BadRequest

OK = {"user_id": "u1", "text": "Alice works at Acme."}


def _nullable(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "null" or any(_nullable(s) for s in schema.get("anyOf", []))


def test_a_field_that_takes_null_says_so_in_the_document() -> None:
    schemas = build()["components"]["schemas"]
    for model in REQUESTS:
        for name, prop in schemas[model.__name__]["properties"].items():
            if prop.get("default", ...) is None:
                assert _nullable(prop), f"{model.__name__}.{name}"
                if (model, name) != (RememberRequest, "text"):  # text or messages: one given
                    validate(model, {**_minimal(model), name: None})  # the server takes it


def _minimal(model: type) -> dict[str, Any]:
    return {
        RememberRequest: OK,
        BatchRequest: {"user_id": "u1", "items": [{"text": "x"}]},
        QueryRequest: {"user_id": "u1", "query": "q"},
        SearchRequest: {"user_id": "u1", "query": "q"},
        DatasetSettings: {},  # (its user is in the query string)
    }.get(model, {"user_id": "u1"})


def test_a_field_that_refuses_null_says_so_in_the_document() -> None:
    schemas = build()["components"]["schemas"]
    assert not _nullable(schemas["RememberRequest"]["properties"]["extract"])
    with pytest.raises(BadRequest, match="extract"):
        validate(RememberRequest, {**OK, "extract": None})
    with pytest.raises(BadRequest, match=r"reasoning\.extract"):
        validate(RememberRequest, {**OK, "reasoning": {"extract": None}})


def test_reasoning_and_models_are_typed_by_the_endpoints_stages() -> None:
    req = validate(RememberRequest, {**OK, "reasoning": {"extract": "HIGH", "summarize": "low"}})
    assert levels(req.reasoning, "extract") == {"extract": "high", "summarize": "low"}
    req = validate(QueryRequest, {"user_id": "u1", "query": "q", "reasoning": "Medium"})
    assert levels(req.reasoning, "query") == {"query": "medium"}
    req = validate(QueryRequest, {"user_id": "u1", "query": "q", "models": {"query": "m-1"}})
    assert models(req.models) == {"query": "m-1"}
    for body, message in [
        ({**OK, "reasoning": {"query": "low"}}, "reasoning: unknown stage 'query'"),
        ({**OK, "reasoning": "extreme"}, "reasoning: unknown level"),
        ({**OK, "reasoning": 5}, "reasoning: unknown level"),
        ({**OK, "models": {"extract": "a b"}}, "models.extract: a model name is"),
        ({**OK, "models": "m"}, "models: "),
    ]:
        with pytest.raises(BadRequest) as exc:
            validate(RememberRequest, body)
        assert str(exc.value.message).startswith(message), exc.value.message
    with pytest.raises(BadRequest, match="unknown stage 'query'"):
        validate(SearchRequest, {"user_id": "u1", "query": "q", "models": {"query": "m"}})


def test_text_or_messages_is_in_the_schema_too() -> None:
    schema = build()["components"]["schemas"]["RememberRequest"]
    assert [b["required"] for b in schema["oneOf"]] == [["text"], ["messages"]]
    msgs = [{"role": "user", "content": "hi"}]
    validate(RememberRequest, {"user_id": "u1", "text": "x", "messages": None})
    validate(RememberRequest, {"user_id": "u1", "messages": msgs, "text": None, "speaker": None})
    for body in [
        {"user_id": "u1"},
        {"user_id": "u1", "text": None, "messages": None},
        {"user_id": "u1", "text": "x", "messages": msgs},
        {"user_id": "u1", "messages": msgs, "speaker": "Ann"},
    ]:
        with pytest.raises(BadRequest):
            validate(RememberRequest, body)


def test_timestamps_are_rfc_3339_with_a_zone() -> None:
    req = validate(RememberRequest, {**OK, "reference_time": "2025-01-31T10:00:00+01:00"})
    assert req.reference_time == "2025-01-31T09:00:00Z"
    for bad in [
        "2025-01-31",
        "2025-01-31T10:00:00",
        "2025-13-01T00:00:00Z",
        "0001-01-01T00:00:00+01:00",
    ]:
        with pytest.raises(BadRequest, match="reference_time: must be an RFC 3339"):
            validate(RememberRequest, {**OK, "reference_time": bad})


def test_an_integer_may_be_written_with_a_zero_fraction() -> None:
    req = validate(QueryRequest, {"user_id": "u1", "query": "q", "max_context_tokens": 500.0})
    assert req.max_context_tokens == 500 and isinstance(req.max_context_tokens, int)
    for bad in [500.5, True, "500"]:
        with pytest.raises(BadRequest, match="max_context_tokens"):
            validate(QueryRequest, {"user_id": "u1", "query": "q", "max_context_tokens": bad})


def test_parameters_are_read_by_the_types_the_document_gives() -> None:
    doc = build()
    params = {
        p["name"]: p["schema"] for p in doc["paths"]["/v1/gb/inferences"]["get"]["parameters"]
    }
    assert params["user_id"]["pattern"] and params["user_id"]["minLength"] == 1
    assert params["cursor"]["minLength"] == 1 and params["call_id"]["minLength"] == 1
    assert params["limit"] == {"type": "integer", "minimum": 1, "maximum": 200}
    (path_id,) = doc["paths"]["/v1/gb/entities/{id}"]["get"]["parameters"][:1]
    assert path_id["schema"] == {"type": "integer", "minimum": 1, "maximum": 10**18 - 1}
    assert param_id("42") == 42
    for bad in ["0", "-1", "1.5", "²", "1" * 19]:
        with pytest.raises(BadRequest, match="id must be a positive integer"):
            param_id(bad)
    with pytest.raises(BadRequest, match="user_id"):
        param_user({"user_id": "a\x85b"})
    with pytest.raises(BadRequest, match="cursor"):
        param_cursor({"cursor": ""}, "inferences")
    assert param_limit({}, 20, 100) == 20 and param_limit({"limit": "100"}, 20, 100) == 100
    with pytest.raises(BadRequest, match="limit must be an integer from 1 to 100"):
        param_limit({"limit": "101"}, 20, 100)


def test_the_document_leaves_out_the_geo_fields_when_geo_is_off() -> None:
    off = build(geo=False)["components"]["schemas"]
    on = build()["components"]["schemas"]
    for model in ("QueryRequest", "SearchRequest"):
        assert {"geo_nearby", "geo_radius_km"} <= set(on[model]["properties"])
        assert not {"geo_nearby", "geo_radius_km"} & set(off[model]["properties"])
