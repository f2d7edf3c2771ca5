"""Idempotent remember: the port, and its persistence on DynamoDB or the SQLite file."""
