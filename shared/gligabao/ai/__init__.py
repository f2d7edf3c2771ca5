"""LLM and embedders: ports and adapters. SDKs are imported lazily so that a
handler's cold start does not pay for them before its first call."""
