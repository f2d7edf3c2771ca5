"""The vector index: its port, the in-process index, the OpenSearch and SQLite adapters."""
