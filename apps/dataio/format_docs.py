"""The import formats as the admin reads them next to the upload forms.

docs/formats.md stays the one description of every format; the page renders the section of one
kind from it (with the rules common to every kind), and docs/examples/ holds the example files
offered for download. Both are read from the repository at request time, so they never drift.
"""

from __future__ import annotations

import re
from pathlib import Path

import markdown
from django.conf import settings
from django.urls import reverse

DOCS_DIR: Path = Path(settings.BASE_DIR) / "docs"
FORMATS_FILE = DOCS_DIR / "formats.md"
EXAMPLES_DIR = DOCS_DIR / "examples"

# The heading of each kind's section in docs/formats.md.
SECTION_TITLES = {
    "rubric": "Rubric files",
    "patents": "Patents",
    "ideas": "Ideas",
    "reviewers": "Reviewers",
    "ratings": "Ratings",
}
COMMON_TITLE = "Rules common to every kind"
# Example files per kind, in the order offered; only these names are ever served.
EXAMPLE_FILES = {
    "rubric": ("rubric.yaml", "rubric.json"),
    "patents": ("patents.csv", "patents.jsonl"),
    "ideas": ("ideas.csv", "ideas.jsonl"),
    "reviewers": ("reviewers.csv", "reviewers.jsonl"),
    "ratings": ("ratings.csv", "ratings.jsonl"),
}
CONTENT_TYPES = {
    ".csv": "text/csv",
    ".jsonl": "application/jsonl",
    ".json": "application/json",
    ".yaml": "application/yaml",
}


def _sections(text: str) -> dict[str, str]:
    """Level-2 sections of a Markdown text by title (the heading line left out)."""
    sections: dict[str, str] = {}
    title = ""
    lines: list[str] = []
    for line in text.splitlines():
        heading = re.match(r"^## (.+?)\s*$", line)
        if heading:
            if title:
                sections[title] = "\n".join(lines).strip()
            title, lines = heading.group(1), []
        elif title:
            lines.append(line)
    if title:
        sections[title] = "\n".join(lines).strip()
    return sections


def examples_for(kind: str) -> list[str]:
    return [name for name in EXAMPLE_FILES.get(kind, ()) if (EXAMPLES_DIR / name).is_file()]


def example_path(name: str) -> Path | None:
    """The example file of that exact name, or None: names outside the list are never served."""
    allowed = {n for names in EXAMPLE_FILES.values() for n in names}
    path = EXAMPLES_DIR / name
    return path if name in allowed and path.is_file() else None


def _render(text: str) -> str:
    html = markdown.markdown(text, extensions=["tables", "fenced_code"], output_format="html")

    # Links to docs/examples/... point at the download view instead of a repository path.
    def download(match: re.Match[str]) -> str:
        name = match.group(1)
        if example_path(name):
            return f'href="{reverse("catalog:example_file", kwargs={"name": name})}"'
        return f'href="{reverse("catalog:admin_home")}#examples"'

    html = re.sub(r'href="(?:docs/)?examples/([\w.-]*)"', download, html)
    return html


def format_doc(kind: str) -> tuple[str, str]:
    """(kind section, common rules) of docs/formats.md as HTML; empty strings when missing."""
    try:
        text = FORMATS_FILE.read_text(encoding="utf-8")
    except OSError:
        return "", ""
    sections = _sections(text)
    section = sections.get(SECTION_TITLES[kind], "")
    common = sections.get(COMMON_TITLE, "")
    return (_render(section) if section else "", _render(common) if common else "")
