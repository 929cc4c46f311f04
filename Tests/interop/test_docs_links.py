"""The README and docs/ stay a front page and a set of pages that link to each other without dead ends.

No process, no socket: reads the Markdown files only. Every relative link in README.md and docs/*.md
must name an existing file, and an anchor (`page.md#heading`, `#heading`) must name a heading of that
page as GitHub spells its ids. The README stays a front page (at most 12 KiB); the rest lives in docs/.
"""
import collections
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
README_MAX_BYTES = 12 * 1024

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def without_code_blocks(text):
    return re.sub(r"(?ms)^```.*?^```", "", text)


def github_anchors(path):
    """The ids GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    seen = collections.Counter()
    anchors = set()
    for line in without_code_blocks(path.read_text(encoding="utf-8")).splitlines():
        match = HEADING.match(line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(2).strip().lower()).replace(" ", "-")
        anchors.add(slug if seen[slug] == 0 else "%s-%d" % (slug, seen[slug]))
        seen[slug] += 1
    return anchors


def relative_links(path):
    text = re.sub(r"`[^`\n]*`", "", without_code_blocks(path.read_text(encoding="utf-8")))
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        yield target


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in relative_links(page):
        file_part, _, anchor = target.partition("#")
        resolved = (page.parent / file_part).resolve() if file_part else page
        if not resolved.exists():
            broken.append("%s: no such file" % target)
        elif anchor and resolved.suffix == ".md" and anchor not in github_anchors(resolved):
            broken.append("%s: no heading with that id" % target)
    assert not broken, "%s has broken links:\n  %s" % (page.relative_to(ROOT), "\n  ".join(broken))


def test_readme_is_a_front_page():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_MAX_BYTES, "README.md is %d bytes; move detail into docs/" % size
