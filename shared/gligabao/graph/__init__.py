"""The graph store: its port (port.py) and one adapter per backend (dynamodb/, sqlite/)."""
