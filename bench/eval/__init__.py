"""Retrieval evaluation without an LLM: the corpus generator and the runner."""
