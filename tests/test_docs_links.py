"""Every relative link in README.md and docs/*.md points at a file that exists and, with
a ``#fragment``, at a heading that file has (GitHub's anchors: the heading lowercased,
punctuation dropped, spaces as hyphens, repeats numbered). Links inside code are text."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def prose(text: str) -> str:
    """The page without fenced code blocks (headings and links inside are text)."""
    return FENCE.sub("", text)


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for the page's headings."""
    seen: Counter[str] = Counter()
    found = set()
    for heading in HEADING.findall(prose(page.read_text(encoding="utf-8"))):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return found


def links(page: Path) -> list[str]:
    return [
        target
        for target in LINK.findall(CODE.sub("", prose(page.read_text(encoding="utf-8"))))
        if target and not EXTERNAL.match(target)
    ]


def broken(page: Path) -> list[str]:
    problems = []
    for target in links(page):
        path, _, fragment = target.partition("#")
        linked = (page.parent / unquote(path)).resolve() if path else page
        if not linked.exists():
            problems.append(f"{target}: no such file")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            problems.append(f"{target}: no such heading in {linked.name}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_relative_links_resolve(page: Path) -> None:
    assert broken(page) == []


def test_anchors_follow_github(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Events: webhooks and the audit log\n## 9. Built-in variables\n"
        "### `POST /api/system-prompt/preview` — `preview_template`\n"
        "## Decisions\n## Decisions\n```\n# not a heading\n```\n"
    )

    assert anchors(page) == {
        "events-webhooks-and-the-audit-log",
        "9-built-in-variables",
        "post-apisystem-promptpreview--preview_template",
        "decisions",
        "decisions-1",
    }


def test_broken_links_are_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Here\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#here) [gone](missing.md) [bad](other.md#there) [self](#nowhere) "
        "`[code](missing.md)` [web](https://example.com/x)\n"
    )

    assert broken(page) == [
        "missing.md: no such file",
        "other.md#there: no such heading in other.md",
        "#nowhere: no such heading in page.md",
    ]


def test_readme_stays_the_front_door() -> None:
    """What it is, the two commands, a tour and links: the figures, the settings and the
    reference live in docs/, so the README stays short and holds no long table."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    tables = re.findall(r"(?:^\|.*\|\n)+", prose(readme), re.MULTILINE)

    assert len(readme.encode()) < 10_000
    assert max((table.count("\n") for table in tables), default=0) <= 15
    assert re.search(r"^bash scripts/serve +#", readme, re.MULTILINE)
    assert re.search(r"^bash scripts/test +#", readme, re.MULTILINE)
