"""Timestamps: RFC 3339 UTC with a trailing Z, second precision."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def fmt(ts: datetime | None) -> str | None:
    if ts is None:
        return None
    # isoformat, not strftime: the year has its four digits below 1000 too.
    return ts.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def now_str() -> str:
    s = fmt(now())
    assert s is not None
    return s


def parse(value: str) -> datetime:
    """Parse an ISO 8601 / RFC 3339 timestamp; naive values are taken as UTC."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    ts = datetime.fromisoformat(text)
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return ts.astimezone(UTC).replace(microsecond=0)


def normalize(value: str | None) -> str | None:
    """Parse-and-format, or None when the value is empty or not a timestamp."""
    if not value:
        return None
    try:
        return fmt(parse(value))
    except (ValueError, OverflowError):  # OverflowError: beyond year 1 to 9999 in UTC
        return None
