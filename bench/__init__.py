"""Benchmarks that print figures (run from the repository root: python -m bench.NAME)."""
