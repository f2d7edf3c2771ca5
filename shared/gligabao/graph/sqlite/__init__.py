"""The graph store on the embedded SQLite file: the store, its claims, its commit and rows."""
