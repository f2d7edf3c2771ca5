"""The Lambda handlers, one module per function. functions/<name>/app.py
re-exports each, and the local server calls the same ones."""
