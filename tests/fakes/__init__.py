"""Fake Anthropic (Messages) and OpenAI (Embeddings) HTTP servers for tests:
stdlib only, on 127.0.0.1, driven through the real SDKs.

    from fakes import FakeAnthropic, FakeOpenAI      # tests/ on sys.path
    from fakes.fixtures import fake_anthropic, fake_openai
    from tests.fakes import FakeAnthropic            # the repository root on sys.path (bench/)

Relative imports only, and the servers need nothing but the standard library, so that
both work.
"""

from ._server import RecordedRequest
from .anthropic_server import DEFAULT_REPLIES, STAGES, FakeAnthropic, find_stage
from .openai_server import FakeOpenAI, cosine, hashed_unit_vector

__all__ = [
    "DEFAULT_REPLIES",
    "STAGES",
    "FakeAnthropic",
    "FakeOpenAI",
    "RecordedRequest",
    "cosine",
    "find_stage",
    "hashed_unit_vector",
]
