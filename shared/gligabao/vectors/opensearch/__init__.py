"""The vector index on OpenSearch: the store, the transport to a node, the request bodies."""
