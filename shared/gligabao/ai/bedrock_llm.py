"""Claude on Amazon Bedrock: the Messages body of :mod:`.anthropic_llm`, with
``anthropic_version`` in it and the model in the path, sent to InvokeModel
through boto3 (:mod:`.bedrock_runtime`; SigV4 from the function's role or the
local AWS credentials, or a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK).

A model is a Bedrock model ID (``anthropic.claude-...``), an inference
profile ID (``us.anthropic.claude-...``) or an inference profile ARN
(``arn:aws:bedrock:REGION:ACCOUNT:inference-profile/...``): botocore puts it,
URL-quoted, in the InvokeModel path. Reasoning levels map to extended-thinking
budgets exactly as on Anthropic's API.
"""

from __future__ import annotations

from typing import Any

from .anthropic_llm import messages_body, reply_of
from .bedrock_runtime import invoke, runtime_client
from .port import LLMReply, LLMRequest

# The Messages API version Bedrock's Claude models take, in the body.
BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31"


class BedrockLLM:
    provider = "bedrock"

    def __init__(
        self,
        region: str,
        *,
        endpoint_url: str = "",
        timeout_s: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        self._region = region
        self._endpoint_url = endpoint_url
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._client: Any = None

    def complete(self, request: LLMRequest) -> LLMReply:
        if self._client is None:
            self._client = runtime_client(
                self._region, self._endpoint_url, self._timeout_s, self._max_retries
            )
        body = {"anthropic_version": BEDROCK_ANTHROPIC_VERSION, **messages_body(request)}
        msg, _ = invoke(self._client, request.model, body, "LLM")
        return reply_of(msg, request)
