"""Parsed pages of the built site (see tests/conftest.py for the build itself)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                  "source", "track", "wbr"})


@dataclass
class Fig:
    attrs: dict[str, str]
    text: str = ""


@dataclass
class Cell:
    text: str = ""
    figs: list[Fig] = field(default_factory=list)


@dataclass
class Page:
    path: Path
    html_attrs: dict[str, str] = field(default_factory=dict)
    body_attrs: dict[str, str] = field(default_factory=dict)
    ids: set[str] = field(default_factory=set)
    refs: list[tuple[str, str, str]] = field(default_factory=list)  # (tag, attr, value)
    alternates: list[tuple[str, str]] = field(default_factory=list)  # (hreflang, href)
    canonical: str | None = None
    article_text: str = ""
    figs: list[Fig] = field(default_factory=list)
    tables: list[list[list[Cell]]] = field(default_factory=list)  # table -> rows -> cells
    headings: list[tuple[str, dict[str, str], str]] = field(default_factory=list)
    scripts: list[dict[str, str]] = field(default_factory=list)
    widgets: list[dict[str, str]] = field(default_factory=list)


class _Parser(HTMLParser):
    def __init__(self, page: Page):
        super().__init__(convert_charrefs=True)
        self.page = page
        self.stack: list[str] = []
        self.in_article = 0
        self.skip = 0  # inside script/style
        self.fig_depth: list[int] = []  # stack depths of open calc-fig spans
        self.figs_open: list[Fig] = []
        self.cell: Cell | None = None
        self.heading: list | None = None
        self.article_parts: list[str] = []

    def handle_starttag(self, tag, attrs_list):
        attrs = {k: (v or "") for k, v in attrs_list}
        p = self.page
        if "id" in attrs:
            p.ids.add(attrs["id"])
        if "name" in attrs and tag == "a":
            p.ids.add(attrs["name"])
        for attr in ("href", "src"):
            if attr in attrs:
                p.refs.append((tag, attr, attrs[attr]))
        if tag == "html":
            p.html_attrs = attrs
        elif tag == "body":
            p.body_attrs = attrs
        elif tag == "link" and attrs.get("rel") == "alternate" and "hreflang" in attrs:
            p.alternates.append((attrs["hreflang"], attrs.get("href", "")))
        elif tag == "link" and attrs.get("rel") == "canonical":
            p.canonical = attrs.get("href")
        elif tag == "script":
            p.scripts.append(attrs)
        if "data-calc-widget" in attrs:
            p.widgets.append(attrs)
        if tag in VOID:
            return
        self.stack.append(tag)
        if tag in ("script", "style"):
            self.skip += 1
        if tag == "article":
            self.in_article += 1
        if tag == "span" and "calc-fig" in attrs.get("class", "").split():
            fig = Fig(attrs)
            p.figs.append(fig)
            self.figs_open.append(fig)
            self.fig_depth.append(len(self.stack))
            if self.cell is not None:
                self.cell.figs.append(fig)
        if self.in_article and tag == "table":
            p.tables.append([])
        elif self.in_article and tag == "tr" and p.tables:
            p.tables[-1].append([])
        elif self.in_article and tag in ("td", "th") and p.tables and p.tables[-1]:
            self.cell = Cell()
            p.tables[-1][-1].append(self.cell)
        if re.fullmatch(r"h[1-6]", tag):
            self.heading = [tag, attrs, ""]

    def handle_endtag(self, tag):
        if tag in VOID or tag not in self.stack:
            return
        while self.stack:
            open_tag = self.stack.pop()
            if self.fig_depth and self.fig_depth[-1] == len(self.stack) + 1:
                self.fig_depth.pop()
                self.figs_open.pop()
            if open_tag in ("script", "style"):
                self.skip -= 1
            if open_tag == "article":
                self.in_article -= 1
            if open_tag in ("td", "th"):
                self.cell = None
            if self.heading is not None and open_tag == self.heading[0]:
                self.page.headings.append(tuple(self.heading))
                self.heading = None
            if open_tag == tag:
                break

    def handle_data(self, data):
        if self.skip:
            return
        for fig in self.figs_open:
            fig.text += data
        if self.cell is not None:
            self.cell.text += data
        if self.heading is not None:
            self.heading[2] += data
        if self.in_article:
            self.article_parts.append(data)

    def close(self):
        super().close()
        self.page.article_text = re.sub(r"\s+", " ", "".join(self.article_parts)).strip()


def parse_page(path: Path) -> Page:
    page = Page(path)
    parser = _Parser(page)
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return page


@pytest.fixture(scope="session")
def site_pages(built_site: Path) -> dict[Path, Page]:
    """Every built HTML file, parsed (key: path relative to the site root)."""
    return {p.relative_to(built_site): parse_page(p) for p in sorted(built_site.rglob("*.html"))}


@pytest.fixture
def theme_asset(tmp_path: Path):
    """Writes a file where a built site has the theme's assets: `(folder, name, text)` -> path
    under `tmp_path/assets/folder` (the site_build patches look there)."""
    def write(folder: str, name: str, text: str) -> Path:
        d = tmp_path / "assets" / folder
        d.mkdir(parents=True, exist_ok=True)
        path = d / name
        path.write_text(text, encoding="utf-8")
        return path
    return write


@pytest.fixture
def bundle(theme_asset):
    """Writes `text` as the theme's minified bundle (the patches of palette.py, switcher.py and
    search.py edit it) -> its path."""
    return lambda text: theme_asset("javascripts", "bundle.0123abcd.min.js", text)
