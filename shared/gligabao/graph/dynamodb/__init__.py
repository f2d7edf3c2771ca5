"""The graph store on DynamoDB: the store, its commit protocol, leases and row keys."""
