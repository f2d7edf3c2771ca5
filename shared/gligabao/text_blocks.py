"""A text's own structure, for the windows it is searched by
(``text.passage_windows``): Markdown headings, code blocks, paragraphs and
lists, rather than runs of lines of a fixed size.

A long reply (BEAM's assistant answers 300-700 words in Markdown) says one
thing per section: a window cut across two sections is found by one and
costs the budget for both, and a window that opens in the middle of a list
has lost the line that says what the list is about.
"""

from __future__ import annotations

import re

_HEADING = re.compile(r"\s{0,3}#{1,6}\s+\S")
_FENCE = re.compile(r"\s{0,3}(```|~~~)")


def _size(line: str) -> int:
    return max(1, (len(line) + 3) // 4) + 1  # text.estimate_tokens, and its newline


def blocks(text: str) -> list[list[str]]:
    """The text's non-blank lines grouped into blocks, in order: a blank line
    ends a block (but not inside a code block), a heading opens one, a code
    block is one from its opening fence to its closing one."""
    out: list[list[str]] = []
    current: list[str] = []
    fenced = False

    def close() -> None:
        nonlocal current
        if current:
            out.append(current)
            current = []

    for line in text.splitlines():
        if _FENCE.match(line):
            if not fenced:
                close()
            current.append(line)
            fenced = not fenced
            if not fenced:
                close()
            continue
        if fenced:
            if line.strip():
                current.append(line)
            continue
        if not line.strip():
            close()
        elif _HEADING.match(line):
            close()
            current.append(line)
        else:
            current.append(line)
    close()
    return out


def pack(parts: list[list[str]], target_tokens: int) -> list[str]:
    """Blocks packed into windows of about ``target_tokens``, in order: a
    window takes whole blocks while they fit, a heading opens a new window,
    and a block larger than that is cut between its lines (a line is never
    cut)."""
    windows: list[str] = []
    current: list[str] = []
    size = 0

    def flush() -> None:
        nonlocal current, size
        if current:
            windows.append("\n".join(current))
        current, size = [], 0

    for block in parts:
        t = sum(_size(line) for line in block)
        if current and (_HEADING.match(block[0]) or size + t > target_tokens):
            flush()
        if t <= target_tokens:
            current += block
            size += t
            continue
        for line in block:  # a block too long for a window: by its lines
            lt = _size(line)
            if current and size + lt > target_tokens:
                flush()
            current.append(line)
            size += lt
    flush()
    return windows
