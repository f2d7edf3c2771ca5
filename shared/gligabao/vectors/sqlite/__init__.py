"""The vector index in the embedded SQLite file."""
