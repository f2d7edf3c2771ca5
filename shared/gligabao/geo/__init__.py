"""Geo: place names to coordinates (resolver) and the nearby search of query."""
