"""`served`, a `gligabao serve` one per module counting its rows, and `llm`, the
shared fake model: for the e2e suites (a suite that needs another server defines its own)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakes.anthropic_server import FakeAnthropic
from fakes.openai_server import FakeOpenAI
from served import ServedCounting


@pytest.fixture(scope="module")
def served(
    fake_anthropic_session: FakeAnthropic, fake_openai_session: FakeOpenAI
) -> Iterator[ServedCounting]:
    s = ServedCounting({**fake_anthropic_session.env(), **fake_openai_session.env()})
    yield s
    s.stop()


@pytest.fixture
def llm(fake_anthropic_shared: FakeAnthropic, fake_openai_shared: FakeOpenAI) -> FakeAnthropic:
    return fake_anthropic_shared
