"""The environment as a settings model's input: what pydantic-settings'
``EnvSettingsSource`` read for ``config.Settings``, without importing
pydantic-settings.

Why not pydantic-settings itself: its package imports every source it has
(the AWS, Azure and GCP secret stores, the CLI parser, dotenv) and asyncio,
some 25 to 45 ms of CPU of every handler's cold start on this machine (the
handlers' import was 186 ms against 147 ms without it and without the
Powertools resolvers we do not use, interleaved runs, load 6;
docs/performance.md). The settings read environment variables only, which
is these few lines.

The rules kept from pydantic-settings (``case_sensitive=False``,
``env_ignore_empty=True``): a field is set by the first of its variables
found (its ``AliasChoices``, else the prefix and its name), matched without
regard to case; an empty value counts as unset; a dict or list field's value
is JSON. tests/unit/test_env_source.py holds them."""

from __future__ import annotations

import json
import os
import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import AliasChoices, BaseModel


class EnvError(ValueError):
    """A variable of a dict or list field that is not JSON."""


def names_of(model: type[BaseModel], field: str, prefix: str) -> list[str]:
    """The variables that set a field, first found wins."""
    alias = model.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    if isinstance(alias, str):
        return [alias]
    return [f"{prefix}{field.upper()}"]


def _is_json(annotation: Any) -> bool:
    """A field whose value comes as JSON: a dict, list, set or tuple (or an
    optional one), as pydantic-settings decides for "complex" fields."""
    origin = typing.get_origin(annotation) or annotation
    if origin in (dict, list, set, tuple, frozenset):
        return True
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return origin in (typing.Union, types.UnionType) and any(_is_json(a) for a in args)


def read(
    model: type[BaseModel], prefix: str, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """{field name: raw value} of every field a variable sets."""
    env = {k.lower(): v for k, v in (os.environ if environ is None else environ).items()}
    values: dict[str, Any] = {}
    for field, info in model.model_fields.items():
        for name in names_of(model, field, prefix):
            raw = env.get(name.lower())
            if raw is None or raw == "":
                continue
            if _is_json(info.annotation):
                try:
                    values[field] = json.loads(raw)
                except ValueError as exc:
                    raise EnvError(f"{name}: not JSON ({exc})") from exc
            else:
                values[field] = raw
            break
    return values
