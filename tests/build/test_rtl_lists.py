"""Ordered lists on the Persian (right-to-left) pages are numbered in Persian digits.

Material numbers `.md-typeset ol` in `decimal` (the browser's default) and its nested levels in
Latin letters and Roman numerals, so a fa page showed "1. 2. 3." among figures that are all in
Persian digits (review of the languages, systemic problem 5). The site's own stylesheet sets
the CSS predefined counter style `persian` for right-to-left pages. These tests read the
stylesheets that the built fa pages really link, not the source file, so a rule that is missing,
scoped to the wrong pages or in a stylesheet the pages do not load fails here.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from sitepaths import PAGES, page_path

#: Counter styles that print Latin digits, letters or Roman numerals (CSS Counter Styles 3).
LATIN_STYLES = {"decimal", "decimal-leading-zero", "lower-alpha", "upper-alpha", "lower-latin",
                "upper-latin", "lower-roman", "upper-roman", "lower-greek"}
#: The nested lists Material styles with Latin letters or Roman numerals (its main CSS:
#: `.md-typeset ol ol, .md-typeset ul ol {list-style-type: lower-alpha}` and deeper).
NESTED = ("ol ol", "ul ol", "ol ol ol", "ul ol ol")
RTL = r'\[dir=(?:"rtl"|\'rtl\'|rtl)\]'
PERSIAN_SCRIPT = re.compile(r"^[\u0600-\u06ff\u200c]+$")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sheets: list[str] = []
        self.ordered_lists = 0
        self.in_article = 0

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        if tag == "link" and "stylesheet" in a.get("rel", "").split():
            self.sheets.append(a.get("href", ""))
        elif tag == "article":
            self.in_article += 1
        elif tag == "ol" and self.in_article:
            self.ordered_lists += 1

    def handle_endtag(self, tag):
        if tag == "article":
            self.in_article -= 1


def _page(site: Path, page: str) -> tuple[Path, _Links]:
    path = page_path(site, "fa", page)
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return path, parser


def _sheet_path(site: Path, page_file: Path, href: str) -> Path:
    """The built file a page's relative stylesheet link points at."""
    assert not urlsplit(href).scheme and not href.startswith("//"), f"third-party sheet {href}"
    page_url = "/" + page_file.relative_to(site).as_posix()
    return site / urlsplit(urljoin(page_url, href)).path.lstrip("/")


def _rules(css: str) -> tuple[list[tuple[str, list[tuple[str, str]]]], dict[str, str]]:
    """(selector, [(property, value), ...]) of every style rule, descending into @media and
    @supports, and the body of every @counter-style by name."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules: list[tuple[str, list[tuple[str, str]]]] = []
    counters: dict[str, str] = {}

    def walk(text: str) -> None:
        i = 0
        while True:
            brace = text.find("{", i)
            if brace < 0:
                return
            head = text[i:brace].strip().split(";")[-1].strip()  # drop @import/@charset
            depth, j = 1, brace + 1
            while depth and j < len(text):
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            body = text[brace + 1:j - 1]
            if head.startswith("@counter-style"):
                counters[head.split()[1]] = body
            elif head.startswith(("@media", "@supports", "@layer")):
                walk(body)
            elif not head.startswith("@"):
                decls = [(p.strip().lower(), v.strip()) for p, _, v in
                         (d.partition(":") for d in body.split(";")) if v.strip()]
                for selector in head.split(","):
                    rules.append((" ".join(selector.split()), decls))
            i = j

    walk(css)
    return rules, counters


@pytest.fixture(scope="module")
def fa_styles(built_site):
    """Every style rule of the stylesheets a fa page links (the same set on every fa page)."""
    sheets: set[Path] = set()
    for page in PAGES:
        path, links = _page(built_site, page)
        assert links.sheets, f"{path} links no stylesheet"
        for href in links.sheets:
            sheet = _sheet_path(built_site, path, href)
            assert sheet.is_file(), f"{path} links {href}, which is not in the built site"
            sheets.add(sheet)
    rules, counters = [], {}
    for sheet in sorted(sheets):
        r, c = _rules(sheet.read_text(encoding="utf-8"))
        rules += r
        counters.update(c)
    return rules, counters


def _list_style(decls: list[tuple[str, str]]) -> list[str]:
    return [v.lower() for p, v in decls if p == "list-style-type"]


def _persian_style(name: str, counters: dict[str, str]) -> bool:
    """`persian` (the predefined ۰-۹ style) or a @counter-style whose symbols are Persian."""
    if name == "persian":
        return True
    body = counters.get(name)
    if body is None:
        return False
    symbols = re.search(r"symbols\s*:\s*([^;]+)", body)
    items = re.findall(r'"([^"]*)"|\'([^\']*)\'', symbols.group(1)) if symbols else []
    glyphs = [a or b for a, b in items]
    return bool(glyphs) and all(PERSIAN_SCRIPT.match(g) for g in glyphs)


def _rtl_rules_for(nesting: str, rules) -> list[list[str]]:
    """list-style-type values of right-to-left rules that select exactly this nesting."""
    steps = r"\s+".join(re.escape(tag) + r"(?::not\(\[type\]\))?" for tag in nesting.split())
    pattern = re.compile(rf"^(?:html)?{RTL}\s+\.md-typeset\s+{steps}$")
    return [_list_style(d) for sel, d in rules if pattern.match(sel) and _list_style(d)]


def test_fa_pages_with_ordered_lists_exist(built_site):
    """The pages the review found with Latin-numbered lists still have ordered lists, and are
    right to left: otherwise the rule below would be tested against nothing."""
    for page in ("rule-of-thumb", "how-it-works"):
        path, links = _page(built_site, page)
        assert links.ordered_lists, f"{path}: no ordered list in the article"
        assert re.search(r'<html[^>]*\sdir="rtl"', path.read_text(encoding="utf-8")), path


def test_rtl_ordered_lists_use_persian_digits_with_a_fallback(fa_styles):
    rules, _ = fa_styles
    found = _rtl_rules_for("ol", rules)
    assert found, "no [dir=rtl] .md-typeset ol rule in the stylesheets the fa pages link"
    values = found[-1]
    assert values[-1] == "persian", values
    # A fallback every browser knows comes first, for one that rejects `persian`.
    assert len(values) >= 2 and values[0] == "decimal", values


@pytest.mark.parametrize("nesting", NESTED)
def test_nested_rtl_ordered_lists_are_not_latin(fa_styles, nesting):
    """Material's nested levels (lower-alpha, lower-roman, ...) would print Latin letters and
    Roman numerals on a Persian page: each selector it styles has a right-to-left counterpart
    (higher specificity) with a Persian style, after the same decimal fallback."""
    rules, counters = fa_styles
    found = _rtl_rules_for(nesting, rules)
    assert found, f"no [dir=rtl] .md-typeset {nesting} rule"
    values = found[-1]
    assert values[-1] not in LATIN_STYLES and _persian_style(values[-1], counters), (nesting, values)
    assert values[0] == "decimal", values


def test_persian_numbering_only_on_right_to_left_pages(fa_styles):
    """The rule is scoped: an English, Turkish, Portuguese or Russian page keeps its numbers."""
    rules, counters = fa_styles
    persian_names = {"persian"} | {n for n in counters if _persian_style(n, counters)}
    unscoped = [sel for sel, d in rules
                if set(_list_style(d)) & persian_names and not re.search(RTL, sel)]
    assert not unscoped, unscoped
