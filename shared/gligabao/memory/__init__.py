"""The use cases: remember, query, datasets. Pure logic: the stores, the LLM
and the embedder come in through their ports."""
