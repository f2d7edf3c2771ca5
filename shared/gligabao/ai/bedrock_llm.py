"""Claude on Amazon Bedrock: the Anthropic adapter with the anthropic SDK's
Bedrock client, which sends the same Messages body to InvokeModel, signed
with SigV4 (the function's role, or the local AWS credentials).

A model is a Bedrock model ID (``anthropic.claude-...``), an inference
profile ID (``us.anthropic.claude-...``) or an inference profile ARN
(``arn:aws:bedrock:REGION:ACCOUNT:inference-profile/...``): the SDK puts it,
URL-quoted, in the InvokeModel path. Reasoning levels map to extended-thinking
budgets exactly as on Anthropic's API.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import NotConfigured
from .anthropic_llm import AnthropicLLM


class BedrockLLM(AnthropicLLM):
    provider = "bedrock"

    def __init__(
        self,
        region: str,
        *,
        endpoint_url: str = "",
        timeout_s: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        super().__init__("", timeout_s=timeout_s, max_retries=max_retries)
        self._region = region
        self._endpoint_url = endpoint_url

    def _new_client(self) -> Any:
        import boto3  # lazy, as the SDKs: the handlers' cold start stays light

        # A Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) replaces SigV4 in the SDK.
        if not os.environ.get("AWS_BEARER_TOKEN_BEDROCK") and (
            boto3.Session(region_name=self._region).get_credentials() is None
        ):
            raise NotConfigured("LLM not configured: provider bedrock found no AWS credentials")
        import anthropic

        return anthropic.AnthropicBedrock(
            aws_region=self._region,
            base_url=self._endpoint_url or None,
            timeout=self._timeout_s,
            max_retries=self._max_retries,
        )
