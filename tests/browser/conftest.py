"""Browser tests of the calculator widgets: the real site (mkdocs build of the checkout, real
Pyodide from node_modules, the real calc wheel) in the system's Chromium, driven by
pytest-playwright.

- `browser_type_launch_args`: /usr/bin/chromium (no browser download works offline), or
  $CHROMIUM; the flags a container needs.
- `calc_site`: the session's site from tests/conftest.py (`built_site`, a real `mkdocs build
  --strict`, served by serve.py at `site_url`, the address it was built for), so the absolute
  hreflang alternates (and the sitemaps Material fetches beside them) stay on the served
  origin and a test can demand that no request leaves it.
- `site_context`: one browser context for the whole session (shared HTTP cache: Pyodide's
  files are fetched once), with a long-task observer on every page.
- `Watch` (browser_helpers): records every request, console error and page error of a page, for
  `watch.check()`: nothing failed, nothing left the origin.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from browser_helpers import Watch

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]

LONGTASKS = """
window.__calcLongTasks = [];
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__calcLongTasks.push(e.duration);
  }).observe({ type: "longtask", buffered: true });
} catch (e) {}
"""


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set CHROMIUM)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": FLAGS}


@dataclass
class Site:
    directory: Path
    url: str  # http://127.0.0.1:PORT/

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    def page_url(self, locale: str, path: str, query: str = "") -> str:
        prefix = "" if locale == "en" else f"{locale}/"
        return f"{self.url}{prefix}{path}/" + (f"?{query}" if query else "")


@pytest.fixture(scope="session")
def calc_site(built_site, site_url) -> Site:
    """The session's site (tests/conftest.py: built once for, and served at, `site_url`)."""
    page = (built_site / "calculator" / "index.html").read_text(encoding="utf-8")
    assert f'href="{site_url}tr/calculator/"' in page, \
        f"the site was not built for {site_url} (SITE_URL): its hreflang links point elsewhere"
    for needed in ("assets/pyodide/pyodide.asm.wasm", "assets/calc/manifest.json",
                   "assets/calc/worker.js", "assets/calc/page.js"):
        assert (built_site / needed).is_file(), f"the built site lacks {needed}"
    return Site(built_site, site_url)


@pytest.fixture(scope="session")
def site_context(browser):
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    context.add_init_script(LONGTASKS)
    yield context
    context.close()


@pytest.fixture
def open_page(site_context, calc_site):
    """open_page(locale, path, query="") -> (page, watch); closed after the test."""
    opened = []

    def _open(locale: str, path: str, query: str = "", context=None):
        page = (context or site_context).new_page()
        watch = Watch(calc_site.origin).attach(page)
        opened.append(page)
        page.goto(calc_site.page_url(locale, path, query))
        return page, watch

    yield _open
    for page in opened:
        page.close()
