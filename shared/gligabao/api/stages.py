"""``reasoning`` and ``models``, typed per endpoint by the stages it runs:
``reasoning`` is a level (the endpoint's main stage's) or an object of a
level per stage; ``models`` an object of a model name per stage. A stage
left out runs with "none" and the server's model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import ConfigDict, Discriminator, Tag, with_config
from typing_extensions import TypedDict

from .fields import Level, ModelName

REMEMBER_STAGES = ("extract", "invalidate", "summarize")
QUERY_STAGES = ("query", "detect_geo")
SEARCH_STAGES = ("detect_geo",)
# The tags of a reasoning's two forms (in a validation error's location).
FORM_TAGS = ("level", "stages")
_STRICT = ConfigDict(extra="forbid", strict=True)


@with_config(_STRICT)
class RememberLevels(TypedDict, total=False):
    extract: Level
    invalidate: Level
    summarize: Level


@with_config(_STRICT)
class QueryLevels(TypedDict, total=False):
    query: Level
    detect_geo: Level


@with_config(_STRICT)
class SearchLevels(TypedDict, total=False):
    detect_geo: Level


@with_config(_STRICT)
class RememberModels(TypedDict, total=False):
    extract: ModelName
    invalidate: ModelName
    summarize: ModelName


@with_config(_STRICT)
class QueryModels(TypedDict, total=False):
    query: ModelName
    detect_geo: ModelName


@with_config(_STRICT)
class SearchModels(TypedDict, total=False):
    detect_geo: ModelName


def _form(value: Any) -> str:
    return "stages" if isinstance(value, dict) else "level"


RememberReasoning = Annotated[
    Annotated[Level, Tag("level")] | Annotated[RememberLevels, Tag("stages")],
    Discriminator(_form),
]
QueryReasoning = Annotated[
    Annotated[Level, Tag("level")] | Annotated[QueryLevels, Tag("stages")],
    Discriminator(_form),
]
SearchReasoning = Annotated[
    Annotated[Level, Tag("level")] | Annotated[SearchLevels, Tag("stages")],
    Discriminator(_form),
]


def levels(reasoning: str | Mapping[str, Any] | None, main_stage: str) -> dict[str, str]:
    """The level of each stage given: a level alone is the main stage's."""
    if reasoning is None:
        return {}
    if isinstance(reasoning, str):
        return {main_stage: reasoning}
    return dict(reasoning)


def models(chosen: Mapping[str, Any] | None) -> dict[str, str]:
    return dict(chosen or {})
