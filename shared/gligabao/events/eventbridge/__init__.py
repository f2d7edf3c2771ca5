"""Events on the stack's EventBridge bus."""
