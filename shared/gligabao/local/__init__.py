"""The local stack behind `gligabao serve`: no AWS account, no Docker."""
