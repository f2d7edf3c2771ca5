"""The vector index: its port, the in-process index, the DynamoDB, OpenSearch and SQLite adapters."""
