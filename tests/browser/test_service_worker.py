"""The service worker (/sw.js, docs/assets/calc/sw.js as the build writes it): registered once
Python is ready and the reader has stopped editing, a second visit's runtime comes from its
cache, an offline reload still gets a live calculator with calc's figures, and a new build
replaces the caches. Each test in a fresh browser context (its own service workers and
caches)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from browser_helpers import (ROOT, Watch, assert_figures, expected_calculator, figures, set_form,
                             wait_ready)
from serve import serve_in_thread

RUNTIME = ("/assets/pyodide/pyodide.asm.wasm", "/assets/calc/snapshot.bin", ".whl")


def _activated(page) -> str:
    """Waits until the page is controlled by the activated worker; returns its script URL."""
    page.wait_for_function(
        "() => navigator.serviceWorker.controller && navigator.serviceWorker.controller.state"
        " === 'activated'", timeout=60_000)
    return page.evaluate("navigator.serviceWorker.controller.scriptURL")


def _cache_names(page) -> list[str]:
    return sorted(page.evaluate("caches.keys()"))


def _cached_urls(page, name: str) -> list[str]:
    return page.evaluate("async (n) => (await (await caches.open(n)).keys()).map(r => r.url)",
                         name)


def _build_id(site) -> str:
    return json.loads((site / "assets" / "calc" / "manifest.json").read_text())["build"]


def test_the_build_writes_the_worker_at_the_root(calc_site):
    sw = (calc_site.directory / "sw.js").read_text(encoding="utf-8")
    build = _build_id(calc_site.directory)
    assert f'"id": "{build}"' in sw and '"dev"' not in sw.split("const BUILD =", 1)[1][:80]
    assert not (calc_site.directory / "assets" / "calc" / "sw.js").exists()
    for path in ("assets/calc/snapshot.bin", "assets/pyodide/pyodide.asm.wasm",
                 "assets/calc/manifest.json"):
        assert f'"{path}"' in sw


def test_a_page_without_a_widget_registers_nothing(browser, calc_site):
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(calc_site.page_url("en", "faq"))
        page.wait_for_load_state("networkidle")
        assert page.evaluate("navigator.serviceWorker.getRegistrations()"
                             ".then(r => r.length)") == 0
        assert context.service_workers == []
    finally:
        context.close()


def test_second_visit_from_the_cache_and_offline(browser, calc_site):
    context = browser.new_context()
    try:
        page = context.new_page()
        first: list = []
        page.on("response", lambda r: first.append(r))
        page.goto(calc_site.page_url("en", "calculator"))
        wait_ready(page, "calculator")
        # the first visit downloaded the runtime itself, not through a service worker
        runtime = [r for r in first if r.url.endswith(RUNTIME)]
        assert runtime and not any(r.from_service_worker for r in runtime)
        assert _activated(page) == calc_site.url + "sw.js"
        build = _build_id(calc_site.directory)
        page.wait_for_function(
            "async (n) => (await (await caches.open(n)).keys()).length >= 8",
            arg=f"calc-runtime-{build}", timeout=60_000)
        assert {f"calc-runtime-{build}", f"calc-pages-{build}"} <= set(_cache_names(page))
        cached = _cached_urls(page, f"calc-runtime-{build}")
        assert any(u.endswith("/assets/calc/snapshot.bin") for u in cached)

        # second visit: the runtime's files come from the service worker's cache
        second = context.new_page()
        watch = Watch(calc_site.origin).attach(second)
        responses: list = []
        second.on("response", lambda r: responses.append(r))
        second.goto(calc_site.page_url("en", "calculator"))
        wait_ready(second, "calculator")
        served = {r.url.rsplit("/", 1)[-1]: r.from_service_worker
                  for r in responses if r.url.endswith(RUNTIME)}
        assert served and all(served.values()), served
        watch.check()
        second.close()

        # offline: a reload still gets the page and a live calculator with calc's figures
        page.wait_for_function(
            "async (n) => (await caches.match(location.href, {ignoreSearch: true})) !== undefined",
            arg=None, timeout=30_000)
        context.set_offline(True)
        page.reload()
        wait_ready(page, "calculator")
        query = {"model": "qwen2.5-7b", "method": "qlora", "seq": "4096"}
        set_form(page, "calculator", query)
        assert_figures(figures(page, "calculator"), expected_calculator(query, "en"))
        # another locale's calculator page was never visited: offline it is not there
        other = context.new_page()
        with pytest.raises(Exception):
            other.goto(calc_site.page_url("fa", "calculator"))
        other.close()
    finally:
        context.close()


#: docs/assets/calc/offline.js QUIET_MS: the worker waits for this long without a request.
QUIET_MS = int(re.search(r"^const QUIET_MS = (\d+);", (ROOT / "docs" / "assets" / "calc" /
                         "offline.js").read_text(encoding="utf-8"), re.M).group(1))


def test_registered_only_once_the_reader_stops_editing(browser, calc_site):
    # Its install copies the runtime into its cache, which slowed the edits right after ready
    # (bench/ideas.md): while the reader keeps editing, no worker; after a pause, the worker.
    context = browser.new_context()
    registrations = "navigator.serviceWorker.getRegistrations().then(r => r.length)"
    try:
        page = context.new_page()
        page.goto(calc_site.page_url("en", "calculator"))
        wait_ready(page, "calculator")
        t0 = page.evaluate("performance.now()")
        for seq in range(1024, 1024 + 6 * 64, 64):  # one edit a second, twice QUIET_MS in all
            set_form(page, "calculator", {"seq": str(seq)}, reset=False)
            page.wait_for_timeout(1000)
            assert page.evaluate(registrations) == 0, seq
        assert page.evaluate("performance.now()") - t0 >= 2 * QUIET_MS
        assert context.service_workers == []
        assert _activated(page) == calc_site.url + "sw.js"  # the pause after the last edit
        assert page.evaluate(registrations) == 1
    finally:
        context.close()


def test_a_new_build_replaces_the_cache(browser, calc_site, tmp_path):
    # A copy of the built site served on its own port; "rebuilt" the way a build changes it:
    # a new build id in the manifest and in /sw.js (new bytes: the browser installs it).
    site = tmp_path / "site"
    shutil.copytree(calc_site.directory, site)
    old = _build_id(site)
    server, url = serve_in_thread(site)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url + "calculator/")
        wait_ready(page, "calculator")
        _activated(page)
        page.wait_for_function("async (n) => (await caches.keys()).includes(n)",
                               arg=f"calc-runtime-{old}", timeout=60_000)
        new = "0123456789abcdef"
        assert new != old
        manifest = site / "assets" / "calc" / "manifest.json"
        manifest.write_text(manifest.read_text().replace(old, new))
        sw = site / "sw.js"
        sw.write_text(sw.read_text().replace(old, new))
        for stale in ("manifest.json.br", "manifest.json.gz"):
            (site / "assets" / "calc" / stale).unlink(missing_ok=True)
        for stale in ("sw.js.br", "sw.js.gz"):
            (site / stale).unlink(missing_ok=True)
        page.goto(url + "calculator/")
        wait_ready(page, "calculator")
        # The new worker installs now, and takes over once the old one has no request of this
        # page left in flight: Chromium 156 holds it back as long as a calculator page the old
        # worker answered stays open (bench/ideas.md); the reader's next page lets it in.
        page.goto(url + "faq/")
        for _ in range(600):
            names = _cache_names(page)
            if f"calc-runtime-{new}" in names and not [n for n in names if old in n]:
                break
            page.wait_for_timeout(100)
        assert f"calc-runtime-{new}" in names and f"calc-pages-{new}" in names
        assert not [n for n in names if old in n]
        assert page.evaluate("navigator.serviceWorker.controller.scriptURL") == url + "sw.js"
    finally:
        context.close()
        server.shutdown()
        server.server_close()
