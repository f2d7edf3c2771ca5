"""Lambda entry point: the handler lives in the shared core package."""

from gligabao.handlers.remember import lambda_handler
from gligabao.local.sam_local import compose_remember

# `sam local` only: async remembers run in this process when there is no queue.
compose_remember()

__all__ = ["lambda_handler"]
