"""Named crash points (tests only): ``GB_TEST_CRASH_AT=<name>`` makes the
process die there, as a killed Lambda or server would (no cleanup, no flush)."""

from __future__ import annotations

import os

CRASH_ENV = "GB_TEST_CRASH_AT"


def crash_point(name: str) -> None:
    if os.environ.get(CRASH_ENV) == name:
        os._exit(137)
