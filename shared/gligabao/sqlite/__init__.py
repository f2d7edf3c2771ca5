"""The embedded store's one SQLite file, shared by every SQLite adapter."""
