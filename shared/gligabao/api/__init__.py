"""What the handlers share: request and response models, auth, errors, the call wrapper."""
