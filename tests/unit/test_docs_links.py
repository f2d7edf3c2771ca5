"""The docs hold together: every relative link in the README and the pages
under docs/ (and bench/) points at a file that exists and, with a #fragment,
at a heading of that file; the README stays short enough to read in five
minutes."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 200

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def pages() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "bench").rglob("README.md")),
    ]


def _prose(text: str) -> str:
    """The text without fenced blocks and code spans (their brackets are code)."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def anchors(text: str) -> set[str]:
    """The fragment ids GitHub gives the headings of a page: lowercase, code
    marks and punctuation dropped, spaces as hyphens, a repeat numbered."""
    seen: Counter[str] = Counter()
    out = set()
    for title in _HEADING.findall(_FENCE.sub("", text)):
        slug = re.sub(r"[^\w\- ]", "", title.replace("`", "").strip().lower()).replace(" ", "-")
        out.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return out


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Each relative link of ``page`` that does not resolve, with the reason."""
    problems = []
    name = page.relative_to(root)
    for target in _LINK.findall(_prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not ours to check
            continue
        path_part, _, fragment = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            problems.append(f"{name}: {target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest.read_text()):
            problems.append(f"{name}: {target}: no such heading")
    return problems


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    assert broken_links(page) == []


def test_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_every_doc_page_is_linked_from_the_readme() -> None:
    readme = _prose((ROOT / "README.md").read_text())
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in _LINK.findall(readme)}
    assert [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p not in linked] == []


def test_the_checker_finds_a_broken_file_and_a_broken_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Some `code` heading: here\n\n## Twice\n\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#some-code-heading-here) [ok](other.md#twice-1) [ok](#top)\n"
        "[web](https://example.com/x) `[not a link](nowhere.md)`\n"
        "```\n[in a code block](nowhere.md)\n```\n"
        "[gone](missing.md) [bad anchor](other.md#nope)\n\n# Top\n"
    )
    assert broken_links(page, tmp_path) == [
        "page.md: missing.md: no such file",
        "page.md: other.md#nope: no such heading",
    ]
