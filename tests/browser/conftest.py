"""Browser tests of the calculator widgets: the real site (mkdocs build of the checkout, real
Pyodide from node_modules, the real calc wheel) in the system's Chromium, driven by
pytest-playwright.

- `browser_type_launch_args`: /usr/bin/chromium (no browser download works offline), or
  $CHROMIUM; the flags a container needs.
- `calc_site`: the site built once per session into a temporary directory and served on a free
  loopback port by the project's serve.py (application/wasm, text/javascript). The build's
  `site_url` is that server's URL, so the absolute hreflang alternates (and the sitemaps
  Material fetches beside them) stay on the served origin and a test can demand that no
  request leaves it.
- `site_context`: one browser context for the whole session (shared HTTP cache: Pyodide's
  files are fetched once), with a long-task observer on every page.
- `Watch` (browser_helpers): records every request, console error and page error of a page, for
  `watch.check()`: nothing failed, nothing left the origin.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from browser_helpers import Watch

ROOT = Path(__file__).resolve().parents[2]
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
def calc_site(tmp_path_factory) -> Site:
    sys.path.insert(0, str(ROOT))
    try:
        from serve import serve_in_thread
    finally:
        sys.path.remove(str(ROOT))
    directory = tmp_path_factory.mktemp("calc-site")
    server, url = serve_in_thread(directory)  # serves the directory once it is built
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config, n = re.subn(r"(?m)^site_url:.*$", f"site_url: {url}", config)
    assert n == 1, "mkdocs.yml has no top-level site_url"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", "-",
         "--site-dir", str(directory)],
        input=config, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        server.shutdown()
        pytest.fail(f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}")
    for needed in ("assets/pyodide/pyodide.asm.wasm", "assets/calc/manifest.json",
                   "assets/calc/worker.js", "assets/calc/page.js"):
        assert (directory / needed).is_file(), f"the built site lacks {needed}"
    yield Site(directory, url)
    server.shutdown()
    server.server_close()


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
