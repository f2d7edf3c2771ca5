"""The reranker port (:mod:`.port`) and its adapters, one module per backend:
Amazon Bedrock's Rerank API (:mod:`.bedrock`) and any server speaking the
common ``/rerank`` JSON (:mod:`.http_api`)."""
