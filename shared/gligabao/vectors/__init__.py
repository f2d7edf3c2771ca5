"""The vector index: a port, the embedded (in-process) adapter and the
OpenSearch adapter."""
