"""The scripts' preload links (site_build/preload.py): the `<meta>` policy turns Chromium's
preload scanner off, so every page names its scripts in `<head>` for the browser to fetch
at once. Unit checks of the module, then every built page checked from its own HTML and the
built files (the imports resolved as a browser resolves them, against the page's address)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from mkdocs.exceptions import PluginError

from site_build.preload import add_preloads, preload_links

PAGE = """<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'self'">
<link rel="stylesheet" href="../a.css"><link rel="stylesheet" href="../b.css">
<script>inline()</script></head><body>
<script src="../js/bundle.js"></script><script type="module" src="../calc/page.js"></script>
</body></html>"""


def _sources(tmp_path: Path) -> tuple[Path, ...]:
    docs, theme = tmp_path / "docs", tmp_path / "overrides"
    (docs / "calc").mkdir(parents=True)
    (theme / "js").mkdir(parents=True)
    (docs / "calc" / "page.js").write_text(
        'import * as m from "./messages.js";\nimport {\n  x,\n} from "../js/util.js";\n'
        '  import("./later.js").then(() => {});\n'
        '// import "./commented.js" is not at the start of a line\nconst s = "import";\n')
    (docs / "calc" / "messages.js").write_text('export const a = 1;\n')
    (theme / "js" / "util.js").write_text('import "../calc/messages.js";\nexport const x = 2;\n')
    return docs, theme


def test_each_script_and_each_import_gets_one_link(tmp_path):
    links = preload_links(PAGE, "/guide/", _sources(tmp_path))
    assert links == [
        '<link rel="preload" href="../js/bundle.js" as="script" fetchpriority="low">',
        '<link rel="modulepreload" href="../calc/page.js" fetchpriority="low">',
        '<link rel="modulepreload" href="../calc/messages.js" fetchpriority="low">',
        '<link rel="modulepreload" href="../js/util.js" fetchpriority="low">',
    ]


def test_links_go_after_the_last_stylesheet_before_the_inline_script(tmp_path):
    out = add_preloads(PAGE, "/guide/", _sources(tmp_path))
    head = out[:out.index("</head>")]
    assert head.index('href="../b.css"') < head.index('rel="preload"') < head.index("<script>")
    assert out.count("<link rel=") == 2 + 4


def test_a_page_without_scripts_is_unchanged(tmp_path):
    page = '<html><head><link rel="stylesheet" href="a.css"></head><body></body></html>'
    assert add_preloads(page, "/", _sources(tmp_path)) == page


def test_other_origins_are_left_alone(tmp_path):
    page = '<html><head></head><body><script src="https://cdn.example/x.js"></script></body></html>'
    assert preload_links(page, "/", _sources(tmp_path)) == []


def test_a_module_that_is_not_in_the_sources_fails_the_build(tmp_path):
    page = '<html><head></head><body><script type="module" src="/nowhere.js"></script></body></html>'
    with pytest.raises(PluginError, match="nowhere.js"):
        add_preloads(page, "/", _sources(tmp_path))


def test_an_absolute_address_under_a_sub_path_finds_its_source(tmp_path):
    page = '<html><head></head><body><script type="module" src="/proj/calc/page.js"></script></body></html>'
    links = preload_links(page, "/proj/", _sources(tmp_path))
    assert '<link rel="modulepreload" href="/proj/calc/messages.js" fetchpriority="low">' in links


# --- the built site ------------------------------------------------------------------------


class _Head(HTMLParser):
    """The start tags of a document, in order, with whether they are inside <head>."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str], bool]] = []
        self.in_head = False

    def handle_starttag(self, tag, attrs):
        if tag == "head":
            self.in_head = True
        self.tags.append((tag, {k: v or "" for k, v in attrs}, self.in_head))

    def handle_endtag(self, tag):
        if tag == "head":
            self.in_head = False


# static imports only (`import x from "./y.js"`, `import "./y.js"`), not `import("./y.js")`
_IMPORT = re.compile(r"""^\s*(?:import\s[^;"'()]*?from|import|export\s[^;"'()]*?from)\s*["'](\.[^"']+)["']""",
                     re.M)


def test_every_page_without_a_calculator_preloads_every_script_and_its_imports(
        built_site, site_base_url):
    pages = sorted(built_site.rglob("*.html"))
    assert len(pages) > 40
    base_path = urlsplit(site_base_url).path
    widget_pages = 0
    for path in pages:
        rel = path.relative_to(built_site).as_posix()
        page_url = site_base_url + (rel[:-len("index.html")] if rel.endswith("index.html") else rel)
        parser = _Head()
        parser.feed(path.read_text(encoding="utf-8"))
        tags = parser.tags
        absolute = lambda href: urljoin(page_url, href)  # noqa: E731
        scripts = [(absolute(a["src"]), a.get("type") == "module") for t, a, _ in tags
                   if t == "script" and "src" in a]
        preloads = {absolute(a["href"]): a for t, a, head in tags
                    if t == "link" and a.get("rel") in ("preload", "modulepreload") and head}
        assert scripts, rel
        wanted = {url: module for url, module in scripts}
        todo = [url for url, module in scripts if module]
        while todo:  # each module's static imports, read from the built file
            url = todo.pop()
            file = built_site / urlsplit(url).path[len(base_path):]
            for spec in _IMPORT.findall(file.read_text(encoding="utf-8")):
                dep = urljoin(url, spec)
                if dep not in wanted:
                    wanted[dep] = True
                    todo.append(dep)
        order = [(t, a) for t, a, head in tags if head]
        sheets = [i for i, (t, a) in enumerate(order) if t == "link" and a.get("rel") == "stylesheet"]
        waits = [i for i, (t, a) in enumerate(order) if t == "script" and i > min(sheets)
                 and "src" not in a and a.get("type", "") in ("", "module")]
        if any("data-calc-widget" in a for t, a, _ in tags):
            # a calculator's page: none from the build (site_build/preload.py), only page.js's
            # first imports from the template
            assert {a.get("rel") for a in preloads.values()} == {"modulepreload"}, rel
            assert not any(a.get("fetchpriority") for a in preloads.values()), rel
            widget_pages += 1
            continue
        assert set(preloads) == set(wanted), rel
        for url, module in wanted.items():
            link = preloads[url]
            assert link["rel"] == ("modulepreload" if module else "preload"), (rel, url)
            assert module or link.get("as") == "script", (rel, url)
            assert link.get("fetchpriority") == "low", (rel, url)
        # where: after the policy and every stylesheet of <head>, before the first script the
        # parser waits at (an inline one after the stylesheets)
        first_link = next(i for i, (t, a) in enumerate(order)
                          if t == "link" and a.get("rel") in ("preload", "modulepreload"))
        csp = next(i for i, (t, a) in enumerate(order)
                   if t == "meta" and a.get("http-equiv", "").lower() == "content-security-policy")
        assert csp < first_link and max(sheets) < first_link, rel
        assert not waits or first_link < min(waits), rel
    assert widget_pages >= 5 * 4  # the four pages with a widget, in every locale
