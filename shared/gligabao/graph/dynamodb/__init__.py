"""The graph store on DynamoDB: the store, its commit protocol and recovery, leases and row keys."""
