"""The record store in the embedded SQLite file."""
