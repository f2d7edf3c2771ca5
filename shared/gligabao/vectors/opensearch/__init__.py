"""The vector index on OpenSearch: the store, its indexes, searches and writes, the transport, the request bodies."""
