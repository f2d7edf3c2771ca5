"""The job queue of asynchronous remembers: a port, an SQS adapter (deployed)
and an in-process adapter (the local server)."""
