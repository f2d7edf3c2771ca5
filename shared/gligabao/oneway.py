"""One-way keys for what must outlive an erased user.

An erase removes every row that names the user, but a few things must go on
after it: a dataset's ID counters (IDs are never reused, so that a vector
left in an eventually consistent index, or an ID a client still holds, can
never reach a row of whoever uses the name next) and the erase's own call
record. They are kept under a SHA-256 of the user ID (and dataset): the same
input finds them again, and nothing stored reveals the ID. A keyless hash,
not an HMAC: a key that went missing would restart the counters (IDs reused);
the price is that someone who guesses a user ID can test the guess.
"""

from __future__ import annotations

import hashlib

# Never part of a user ID (control characters are refused) nor of a dataset
# name ([A-Za-z0-9._-]): a key that starts with it names no user.
SEP = "\x1f"
# The partitions of what outlives erased users (``user_id`` of those rows).
ERASED = f"{SEP}erased"
ERASING = f"{SEP}erasing"


def one_way(*parts: str) -> str:
    """A hex SHA-256 of the parts (joined by the unit separator)."""
    return hashlib.sha256(SEP.join(("gligabao", *parts)).encode()).hexdigest()


def erased_user(user_id: str) -> str:
    """Where an erased user's erase call records are kept (the ``user_id``
    of those records): readable with the user ID, revealing none of it."""
    return f"{ERASED}#{one_way('user', user_id)}"


def erased_dataset(user_id: str, dataset: str) -> str:
    """The key an erased dataset's ID counters are kept under."""
    return one_way("dataset", user_id, dataset)


def idempotency_owner(user_id: str) -> str:
    """The part of an idempotency record's key that says whose it is (an
    erase finds the user's records by it)."""
    return one_way("idempotency", user_id)[:32]
