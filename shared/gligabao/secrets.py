"""API keys from AWS Secrets Manager, exported to the environment variables the
settings read.

On Lambda the keys never sit in the function's environment: template.yaml
gives the functions the secrets' ARNs in ``GB_ANTHROPIC_SECRET`` and
``GB_OPENAI_SECRET`` (empty for a provider not in use: Bedrock needs none). ``load_secrets()`` fetches each named secret once
(Powertools Parameters, cached) and sets ``ANTHROPIC_API_KEY`` /
``OPENAI_API_KEY``, before ``config.load_settings()`` reads them. An API key
already in the environment wins (local runs, tests), so it costs nothing when
no secret is named and boto3 is then never imported.

A secret holds the plain key, or a JSON object with the key under
``api_key``. The value ``set-me`` (what the stack creates before anyone puts a
key in) counts as no key: the endpoints then answer 503 "LLM not configured"
rather than 401 from the provider.
"""

from __future__ import annotations

import json
import os

from .errors import UpstreamError

# secret env var -> the env var its value is exported to
SECRET_ENV: dict[str, str] = {
    "GB_ANTHROPIC_SECRET": "ANTHROPIC_API_KEY",
    "GB_OPENAI_SECRET": "OPENAI_API_KEY",
}
# Read by the provider SDKs themselves. template.yaml declares them empty (so
# that `sam local start-api --env-vars` may set them, see docs/sam-local.md),
# and the SDKs take an empty base URL literally: empty counts as unset.
SDK_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")
PLACEHOLDER = "set-me"
CACHE_SECONDS = 300


class SecretError(UpstreamError):
    """A named secret could not be read (an upstream failure: 502)."""


def _key_of(value: object) -> str:
    if isinstance(value, bytes):
        value = value.decode()
    text = str(value or "").strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            text = str(data.get("api_key") or "").strip()
    return "" if text == PLACEHOLDER else text


def load_secrets() -> dict[str, str]:
    """Export the API key of every secret named in the environment. Returns
    {env var: secret name} of the keys it set. Raises SecretError when a
    named secret cannot be read. Blank SDK variables (SDK_ENV) are removed."""
    for var in SDK_ENV:
        if var in os.environ and not os.environ[var].strip():
            del os.environ[var]
    exported: dict[str, str] = {}
    for secret_var, key_var in SECRET_ENV.items():
        name = os.environ.get(secret_var, "").strip()
        if not name or os.environ.get(key_var, "").strip():
            continue
        from aws_lambda_powertools.utilities.parameters import get_secret

        try:
            value = get_secret(name, max_age=CACHE_SECONDS)
        except Exception as exc:  # GetParameterError and botocore errors alike
            raise SecretError(f"could not read secret {name!r} ({secret_var}): {exc}") from exc
        key = _key_of(value)
        if key:
            os.environ[key_var] = key
            exported[key_var] = name
    return exported
