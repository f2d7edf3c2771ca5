"""A long text's windows follow its structure (text_blocks.py): a heading
opens a window, a list stays with the line that introduces it, a code block
is not cut while it fits, and no line is lost or cut."""

from __future__ import annotations

from gligabao.text import passage_windows
from gligabao.text_blocks import blocks

PARA = "This paragraph explains one part of the plan in a few plain sentences."

REPLY = "\n".join(
    [
        "Here is how to set it up.",
        "",
        "## Install",
        "",
        PARA,
        "",
        "Key points:",
        "1. **Python**: use 3.11 or later.",
        "2. **Storage**: one SQLite file.",
        "3. **Embedder**: the local model.",
        "",
        "## Configure",
        "",
        PARA,
        "",
        "```python",
        "settings = load()",
        "",
        "print(settings)",
        "```",
        "",
        "## Run",
        "",
        PARA,
        PARA,
    ]
)


def test_blocks_are_paragraphs_lists_and_code() -> None:
    got = blocks(REPLY)
    assert got[0] == ["Here is how to set it up."]
    assert ["Key points:", *REPLY.splitlines()[7:10]] in got  # the list with its lead-in
    assert ["```python", "settings = load()", "print(settings)", "```"] in got
    assert ["## Install"] in got


def test_each_section_opens_a_window() -> None:
    windows = passage_windows(REPLY, 70)
    starts = [w.splitlines()[0] for w in windows]
    for heading in ("## Install", "## Configure", "## Run"):
        assert heading in starts
    code = next(w for w in windows if "```python" in w)
    assert "print(settings)" in code  # the code block whole
    lines = [ln for ln in REPLY.splitlines() if ln.strip()]
    assert "\n".join(windows).splitlines() == lines  # every line once, in order, none cut


def test_a_block_longer_than_a_window_is_cut_between_its_lines() -> None:
    text = "\n".join(f"- item {i}: {PARA}" for i in range(20))
    windows = passage_windows(text, 60)
    assert len(windows) > 3
    assert "\n".join(windows) == text
