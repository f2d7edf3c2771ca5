"""Events as webhooks signed as the Standard Webhooks specification says."""
