from .fixtures import (  # noqa: F401
    fake_anthropic,
    fake_anthropic_session,
    fake_anthropic_shared,
    fake_openai,
    fake_openai_session,
    fake_openai_shared,
)
