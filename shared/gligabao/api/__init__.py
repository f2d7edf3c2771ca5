"""What the handlers share: request models, error mapping, the call wrapper."""
