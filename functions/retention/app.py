"""Lambda entry point: the handler lives in the shared core package."""

from gligabao.handlers.retention import lambda_handler

__all__ = ["lambda_handler"]
