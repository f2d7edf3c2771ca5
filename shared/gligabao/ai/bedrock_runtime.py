"""Bedrock's InvokeModel through boto3's ``bedrock-runtime`` client, shared by
the Claude adapter and the embedders: one JSON body in, one JSON object out,
SigV4 from the function's role or the local AWS credentials (or a Bedrock API
key, ``AWS_BEARER_TOKEN_BEDROCK``, which botocore sends instead).

boto3 is in the Lambda layer anyway (DynamoDB); speaking Bedrock through it
keeps the anthropic SDK (15 MiB with its bytecode, 0.9 s of CPU to import)
out of the default stack's layer and out of its first LLM request.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from ..errors import NotConfigured, UpstreamError, detail_of, failure_kind

# The input tokens Bedrock counted, in a response header of every InvokeModel.
TOKEN_HEADER = "x-amzn-bedrock-input-token-count"


def runtime_client(
    region: str, endpoint_url: str, timeout_s: float, max_retries: int, connections: int = 10
) -> Any:
    """A ``bedrock-runtime`` client of its own session: credentials resolved
    now, from the environment the adapter was built in (boto3's default
    session keeps the first ones it ever saw in the process). botocore's
    standard retries take throttling (429) and 5xx; ``max_retries`` is what
    follows the first attempt."""
    import boto3  # lazy: keeps boto3's service models out of the cold start
    from botocore.config import Config

    return boto3.session.Session().client(
        "bedrock-runtime",
        region_name=region,
        endpoint_url=endpoint_url or None,
        config=Config(
            connect_timeout=timeout_s,
            read_timeout=timeout_s,
            retries={"total_max_attempts": max_retries + 1, "mode": "standard"},
            max_pool_connections=connections,
        ),
    )


def invoke(
    client: Any, model: str, body: dict[str, Any], kind: Literal["LLM", "embeddings"]
) -> tuple[dict[str, Any], int]:
    """One InvokeModel: the decoded reply and the input tokens Bedrock counted
    (0 when its header is absent). ``kind`` names the request in errors."""
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        InvalidEndpointConfigurationError,
        NoCredentialsError,
    )

    what = "LLM call" if kind == "LLM" else "embeddings request"
    try:
        resp = client.invoke_model(
            modelId=model,
            body=json.dumps(body),
            contentType="application/json",
            accept="application/json",
        )
        reply = json.loads(resp["body"].read())
    except NoCredentialsError as exc:
        raise NotConfigured(
            f"{kind} not configured: provider bedrock found no AWS credentials"
        ) from exc
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "error")
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "?")
        # Bedrock's message ("invalid model identifier", ...) goes to the log only.
        raise UpstreamError(f"{what} failed: HTTP {status} {code}", detail=detail_of(exc)) from exc
    except InvalidEndpointConfigurationError as exc:
        # botocore sends a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) over https only.
        raise NotConfigured(
            f"{kind} not configured: provider bedrock has a Bedrock API key "
            "(AWS_BEARER_TOKEN_BEDROCK), which is sent to an https endpoint only, and "
            "GB_BEDROCK_ENDPOINT_URL is not one"
        ) from exc
    except (BotoCoreError, ValueError) as exc:
        raise UpstreamError(f"{what} failed: {failure_kind(exc)}", detail=detail_of(exc)) from exc
    if not isinstance(reply, dict):
        raise UpstreamError(f"{model} reply is not a JSON object")
    headers = resp.get("ResponseMetadata", {}).get("HTTPHeaders", {})
    raw = str(headers.get(TOKEN_HEADER, "") or "")
    return reply, int(raw) if raw.isdigit() else 0
