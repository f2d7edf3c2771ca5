"""Pytest fixtures for the fakes. Import them into a conftest::

    from fakes.fixtures import fake_anthropic, fake_openai  # noqa: F401

The function-scoped fixtures start a fresh server per test and point the SDKs
at it through ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL`` (monkeypatched, so
restored afterwards; API keys are left alone). The session-scoped ones share
one server: they are reset before each use by the ``*_shared`` fixtures.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .anthropic_server import FakeAnthropic
from .openai_server import FakeOpenAI


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        yield fake


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        yield fake


@pytest.fixture(scope="session")
def fake_anthropic_session() -> Iterator[FakeAnthropic]:
    """One server for the session; no env vars set, never reset by itself."""
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture(scope="session")
def fake_openai_session() -> Iterator[FakeOpenAI]:
    """One server for the session; no env vars set, never reset by itself."""
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def fake_anthropic_shared(
    fake_anthropic_session: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> FakeAnthropic:
    """The session server, reset, with ``ANTHROPIC_BASE_URL`` pointing at it."""
    fake_anthropic_session.reset()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic_session.url)
    return fake_anthropic_session


@pytest.fixture
def fake_openai_shared(
    fake_openai_session: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> FakeOpenAI:
    """The session server, reset, with ``OPENAI_BASE_URL`` pointing at it."""
    fake_openai_session.reset()
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai_session.base_url)
    return fake_openai_session
