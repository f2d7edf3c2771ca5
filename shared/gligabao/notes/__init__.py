"""What the memory keeps about its entities and its user beside the graph:
entity summaries (written by the model off the request path) and the user's
standing preferences and instructions."""
