"""Named crash points (tests only): ``GB_TEST_CRASH_AT=<name>`` makes the
process die there, as a killed Lambda or server would (no cleanup, no flush)."""

from __future__ import annotations

import os

from .config import settings


def crash_point(name: str) -> None:
    if settings().test_crash_at == name:  # GB_TEST_CRASH_AT, read once per process
        os._exit(137)
