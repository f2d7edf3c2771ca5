"""gligabao: a bi-temporal knowledge-graph memory for LLM agents."""

__version__ = "0.1.0"
