"""Preload hints for every script of a page, written into `<head>` by the build.

The policy's `<meta http-equiv="Content-Security-Policy">` (first in `<head>`, pages.py) turns
off Chromium's preload scanner for the rest of the document. Without the scanner, each script
at the end of `<body>` is requested only when the parser reaches it, after the one before it
has arrived and run. Material's bundle, the site's three classic scripts and a page's module
script (with its imports) then came one after another.

Measured with Chromium 156 (bench/ideas.md):
- on loopback, each request started when the one before it had run: DOMContentLoaded of the
  en calculator page came at 790-815 ms, against 560-600 ms with the `<meta>` taken out;
- on serve.py's fast-4G line (9 Mbit/s, 150 ms), DOMContentLoaded came at 2.4 s, at 1.35 s with
  these hints;
- Lighthouse mobile, 4 interleaved runs: ru faq 97 -> 99 (simulated first paint 1458 -> 903
  ms), pt how-it-works 98 -> 100.

So each external script gets a `<link rel="preload" as="script">` (classic) or
`<link rel="modulepreload">` (module, and every module it imports statically, read from its
source: Chromium fetches no dependency of a modulepreload). The links go right after the
head's last stylesheet: before Material's inline script, where the parser waits for the
stylesheets, and after the requests for them. `fetchpriority="low"` keeps them from competing
with the render-blocking stylesheets (measured: first paint 980 ms with it, 1150 ms without,
against 920 ms with no hints). They come after the policy, so the policy covers them.

Pages with a calculator get none (pages.py): there the scripts, arriving early, ran while the
worker compiled the runtime and started Python, on the same two cores. Lighthouse's blocking
time on the en calculator page went from 221 to 310 ms (score 96 -> 93, median of 5), and
from 221 to 332 ms with only the classic scripts preloaded.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from posixpath import dirname, join, normpath
from urllib.parse import urljoin, urlsplit

from .common import esc, fail

__all__ = ["add_preloads", "preload_links"]

_SCRIPT = re.compile(r"<script\b([^>]*)>", re.I)
_SRC = re.compile(r"""\ssrc\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I)
_MODULE = re.compile(r"""\stype\s*=\s*["']?module\b""", re.I)
_HEAD_END = re.compile(r"</head\s*>", re.I)
_STYLESHEET = re.compile(r"""<link\b[^>]*\srel\s*=\s*["']?stylesheet\b[^>]*>""", re.I)
#: A module's static imports: `import ... from "./x.js"`, `import "./x.js"`,
#: `export ... from "./x.js"` (relative specifiers only; what the site's modules use). Not a
#: dynamic `import("./x.js")`: what a module loads later is not needed to start it.
_IMPORT = re.compile(r"""^\s*(?:import|export)\s(?:[^"'`;()]*?\sfrom\s*)?["'](\.{1,2}/[^"']+)["']""",
                     re.M)


def _scripts(html_text: str) -> list[tuple[str, bool]]:
    """The page's external scripts, (href as written, is a module), in page order."""
    out = []
    for m in _SCRIPT.finditer(html_text):
        src = _SRC.search(m.group(1))
        if src:
            out.append((html.unescape(src.group(1) or src.group(2) or ""), bool(_MODULE.search(m.group(1)))))
    return out


def _source(path: str, roots: tuple[Path, ...]) -> str | None:
    """The text of the file a site path names, from the build's sources (docs/, the theme's
    overrides): the longest tail of the path found under one of `roots` (a site served
    under a sub-path has that prefix in absolute addresses)."""
    parts = [p for p in path.split("/") if p]
    for i in range(len(parts)):
        for root in roots:
            file = root.joinpath(*parts[i:])
            if file.is_file():
                return file.read_text(encoding="utf-8")
    return None


def preload_links(html_text: str, page_path: str, roots: tuple[Path, ...]) -> list[str]:
    """The `<link>` tags for the page's scripts; `page_path` is the page's own path on the site
    ("/tr/calculator/"), against which relative addresses resolve."""
    links: list[str] = []
    seen: set[str] = set()

    def add(href: str, module: bool) -> None:
        if href in seen:
            return
        seen.add(href)
        if not module:
            links.append(f'<link rel="preload" href="{esc(href)}" as="script" fetchpriority="low">')
            return
        links.append(f'<link rel="modulepreload" href="{esc(href)}" fetchpriority="low">')
        path = normpath(urlsplit(urljoin(page_path, href)).path)
        source = _source(path, roots)
        if source is None:
            raise fail(f"module script {href} (site path {path}) not found under "
                       f"{', '.join(map(str, roots))}: its imports cannot be preloaded")
        for spec in _IMPORT.findall(source):
            add(normpath(join(dirname(href), spec)), True)  # urljoin drops a leading ..

    for href, module in _scripts(html_text):
        if urlsplit(href).scheme or href.startswith("//"):
            continue  # another origin: the policy allows none, nothing to preload
        add(href, module)
    return links


def add_preloads(html_text: str, page_path: str, roots: tuple[Path, ...]) -> str:
    """The page with its scripts' preload links after the last stylesheet of `<head>` (or at
    its end when it has none)."""
    head_end = _HEAD_END.search(html_text)
    if not head_end:
        raise fail("the page has no </head>: nowhere to put the preload links")
    links = preload_links(html_text, page_path, roots)
    if not links:
        return html_text
    sheets = list(_STYLESHEET.finditer(html_text, 0, head_end.start()))
    at = sheets[-1].end() if sheets else head_end.start()
    return html_text[:at] + "\n    " + "".join(links) + html_text[at:]
