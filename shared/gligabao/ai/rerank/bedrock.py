"""Reranking on Amazon Bedrock: the Rerank API of the Agents runtime
(``bedrock-agent-runtime``, ``POST /rerank``) through boto3, signed with
SigV4 from the function's role or the local AWS credentials.

Models: Cohere Rerank 3.5 (``cohere.rerank-v3-5:0``) and Amazon Rerank 1.0
(``amazon.rerank-v1:0``), named by model ID (made into the foundation-model
ARN of the reranker's region) or by a full ARN. They are offered in fewer
regions than the LLMs: GB_RERANK_REGION may differ from AWS_REGION.

Throttling (429) and server errors are retried by botocore's standard retry
mode, as the embeddings calls are; what still fails is an UpstreamError.
"""

from __future__ import annotations

from typing import Any

from ...errors import NotConfigured, UpstreamError, detail_of, failure_kind
from .port import RerankReply, RerankRequest, estimated_tokens, ranked, search_units

# The API takes at most 1000 sources; the pipeline sends far fewer.
MAX_SOURCES = 1000


def model_arn(model: str, region: str) -> str:
    if model.startswith("arn:"):
        return model
    return f"arn:aws:bedrock:{region}::foundation-model/{model}"


class BedrockReranker:
    provider = "bedrock"

    def __init__(
        self,
        model: str,
        region: str,
        *,
        endpoint_url: str = "",
        timeout_s: float = 10.0,
        max_retries: int = 2,
    ) -> None:
        self.model = model
        self._region = region
        self._endpoint_url = endpoint_url
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._client: Any = None

    def _sdk(self) -> Any:
        if self._client is None:
            import boto3  # lazy: keeps boto3's service models out of the cold start
            from botocore.config import Config

            # Its own session, as the Bedrock embedder: credentials resolved
            # from the environment this reranker was built in.
            self._client = boto3.session.Session().client(
                "bedrock-agent-runtime",
                region_name=self._region,
                endpoint_url=self._endpoint_url or None,
                config=Config(
                    connect_timeout=self._timeout_s,
                    read_timeout=self._timeout_s,
                    # total_max_attempts counts the first try; botocore's
                    # max_attempts would count retries only.
                    retries={"total_max_attempts": self._max_retries + 1, "mode": "standard"},
                ),
            )
        return self._client

    def rerank(self, request: RerankRequest) -> RerankReply:
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        docs = request.documents[:MAX_SOURCES]
        try:
            resp = self._sdk().rerank(
                queries=[{"type": "TEXT", "textQuery": {"text": request.query}}],
                sources=[
                    {
                        "type": "INLINE",
                        "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": d}},
                    }
                    for d in docs
                ],
                rerankingConfiguration={
                    "type": "BEDROCK_RERANKING_MODEL",
                    "bedrockRerankingConfiguration": {
                        "modelConfiguration": {"modelArn": model_arn(self.model, self._region)},
                        "numberOfResults": len(docs),
                    },
                },
            )
        except NoCredentialsError as exc:
            raise NotConfigured(
                "reranker not configured: provider bedrock found no AWS credentials"
            ) from exc
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "error")
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "?")
            raise UpstreamError(f"rerank request failed: HTTP {status} {code}") from exc
        except BotoCoreError as exc:
            raise UpstreamError(
                f"rerank request failed: {failure_kind(exc)}", detail=detail_of(exc)
            ) from exc
        results = ranked(resp.get("results"), len(docs), "relevanceScore", self.model)
        # Bedrock's reply counts no tokens: the estimate stands in (the bill
        # is by search units anyway).
        tokens = estimated_tokens(request.query, docs)
        return RerankReply(results, self.model, tokens, search_units(len(docs)))
