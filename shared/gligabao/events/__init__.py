"""Events: every committed change of memory, told to subscribers
(docs/events.md). ``model`` (the events and their shapes), ``port`` (a sink),
``publisher`` (the sinks together, each delivery in the call record), one
folder per backend: ``webhooks`` (Standard Webhooks), ``eventbridge``."""
