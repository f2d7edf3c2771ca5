"""The graph store: a port, and its DynamoDB adapter."""
