"""A session's lines as chat clients export them, for the LoCoMo ruler's
``--format`` (bench/locomo.py): the same turns, the same words, the speaker
and a time around them the way each client writes them. Does the product
still see a transcript, turn by turn, when the lines do not start with
``Name:``?

Each turn's time is its session's date plus a minute a turn (LoCoMo gives
one time per session).
"""

from __future__ import annotations

from datetime import datetime, timedelta

FORMATS = ("plain", "time", "whatsapp", "slack", "markdown", "irc", "id", "discord", "teams",
           "telegram", "sms")


def _clock(date: str, at: int) -> datetime:
    return datetime.strptime(date, "%Y-%m-%dT%H:%M:%SZ") + timedelta(minutes=at)


def _ampm(t: datetime) -> str:
    return f"{t.hour % 12 or 12}:{t.minute:02d} {'AM' if t.hour < 12 else 'PM'}"


def line(fmt: str, speaker: str, text: str, date: str, at: int, turn_id: str) -> str:
    """One turn in format ``fmt`` (its text may hold several lines: the
    lines after the first are the turn's own, as a client shows them)."""
    t = _clock(date, at)
    if fmt == "plain":
        return f"{speaker}: {text}"
    if fmt == "time":
        return f"[{t:%H:%M}] {speaker}: {text}"
    if fmt == "whatsapp":
        return f"{t.month}/{t.day}/{t:%y}, {_ampm(t)} - {speaker}: {text}"
    if fmt == "slack":
        return f"{speaker} [{_ampm(t)}]\n{text}"
    if fmt == "markdown":
        return f"**{speaker}**: {text}"
    if fmt == "irc":
        return f"<{speaker}> {text}"
    if fmt == "id":
        return f"[{turn_id}] {speaker}: {text}"
    if fmt == "discord":  # a header, the text below it
        return f"{speaker.lower()} — {t:%m/%d/%Y} {_ampm(t)}\n{text}"
    if fmt == "teams":
        return f"[{_ampm(t)}] {speaker}\n{text}"
    if fmt == "telegram":
        return f"{speaker}, [{t:%d.%m.%y %H:%M}]\n{text}"
    if fmt == "sms":
        return f"{speaker} ({_ampm(t)}): {text}"
    raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
