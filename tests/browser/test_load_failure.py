"""When Python cannot load, the page says so in the reader's language and keeps the figures
computed at build time (which still equal calc's defaults)."""

from __future__ import annotations

import json
import re

import pytest

from browser_helpers import (Watch, assert_figures, expected_calculator, figures, root,
                             wait_ready)
from calc.i18n import t


def _ordinary_boot(route):
    """The manifest without the snapshot and the lite archive: Python boots the ordinary way."""
    data = route.fetch().json()
    for key in ("snapshot", "stdlib_lite"):
        data.pop(key)
    route.fulfill(status=200, body=json.dumps(data), content_type="application/json")


#: Cases that need the ordinary boot (the wheel is fetched before live only there).
ORDINARY_BOOT = {"wheel missing"}


def _404(route):
    route.fulfill(status=404, content_type="text/plain", body="not here")


def _as_octet_stream(route):
    response = route.fetch()
    route.fulfill(response=response,
                  headers={**response.headers, "content-type": "application/octet-stream"})


def _never(route):
    pass  # the request stays pending: a server that never answers


CASES = [
    # (what breaks, route pattern, handler, locale, catalog key of the message)
    ("runtime missing", "**/assets/pyodide/pyodide.asm.wasm", _404, "en", "ui.error_load"),
    ("runtime with a wrong MIME type", "**/assets/pyodide/pyodide.asm.wasm", _as_octet_stream,
     "tr", "ui.error_load"),
    # only an ordinary boot needs the wheel before it is live (ORDINARY_BOOT below)
    ("wheel missing", "**/assets/calc/*.whl", _404, "fa", "ui.error_load"),
    ("worker missing", "**/assets/calc/worker.js", _404, "ru", "ui.error_load"),
    # worker.js imports the rest only once its first requests are out (a dynamic import)
    ("worker's Python module missing", "**/assets/calc/worker-python.js", _404, "tr",
     "ui.error_load"),
    ("runtime never arrives", "**/assets/pyodide/pyodide.asm.wasm", _never, "pt",
     "ui.error_stalled"),  # no bytes for the guard's time: the download has stopped
]


@pytest.mark.parametrize("what, pattern, handler, locale, key", CASES, ids=[c[0] for c in CASES])
def test_failure_is_visible_and_the_static_figures_stay(browser, calc_site, what, pattern,
                                                        handler, locale, key):
    context = browser.new_context()
    try:
        context.route(pattern, handler)
        if what in ORDINARY_BOOT:
            context.route("**/assets/calc/manifest.json", _ordinary_boot)
        if handler is _never:  # the page's own guard, shortened for the test
            page_url = re.escape(calc_site.page_url(locale, "calculator"))

            def shorter_timeout(route):
                response = route.fetch()
                body = response.text().replace('data-timeout-ms="20000"', 'data-timeout-ms="2500"')
                assert 'data-timeout-ms="2500"' in body
                route.fulfill(response=response, body=body)

            context.route(re.compile(page_url + "$"), shorter_timeout)
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        page.goto(calc_site.page_url(locale, "calculator"))
        page.wait_for_selector('[data-calc-widget="calculator"][data-state="error"]',
                               state="attached", timeout=30_000)
        r = root(page, "calculator")
        assert r.locator("[data-calc-status]").text_content() == t(key, locale)
        assert r.locator("[data-calc-status]").is_visible()
        assert_figures(figures(page, "calculator"), expected_calculator({}, locale))
        assert r.locator("[data-calc-results]").get_attribute("data-stale") is None
        assert watch.foreign() == [] and watch.page_errors == []
        # the form stays usable (nothing recomputes, nothing breaks)
        r.locator('[name="seq"]').fill("4096")
        page.wait_for_timeout(200)
        assert r.get_attribute("data-state") == "error"
        assert_figures(figures(page, "calculator"), expected_calculator({}, locale))
    finally:
        context.close()


@pytest.mark.parametrize("locale", ["en", "fa"])
def test_without_javascript(browser, calc_site, locale):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(calc_site.page_url(locale, "calculator"))
        r = root(page, "calculator")
        assert_figures(figures_static(page), expected_calculator({}, locale))
        assert r.locator("noscript").count() == 1
        assert t("ui.error_load", locale) in page.content()
        assert not r.locator("[data-calc-status]").is_visible()
        assert not r.locator("[data-calc-copy='']").is_visible()
    finally:
        context.close()


def figures_static(page):
    """figures() without running page JavaScript: read the DOM through Playwright locators."""
    out = {}
    for el in page.locator("[data-calc-widget] [data-calc-results] [data-calc]").all():
        name = el.get_attribute("data-calc")
        if el.get_attribute("data-bytes") is not None:
            out[name] = ("bytes", el.get_attribute("data-bytes"), el.text_content())
        else:
            out[name] = ("value", el.get_attribute("data-value"), el.text_content())
    return out


def test_a_corrupt_wheel_is_refused(browser, calc_site):
    """The wheel must match the checksum in manifest.json (a stale cache, a truncated upload).
    An ordinary boot (the one that installs the wheel before it is live)."""
    context = browser.new_context()
    try:
        context.route("**/assets/calc/manifest.json", _ordinary_boot)
        def truncated(route):
            response = route.fetch()
            route.fulfill(response=response, body=response.body()[:-100])

        context.route("**/assets/calc/*.whl", truncated)
        page = context.new_page()
        page.goto(calc_site.page_url("tr", "calculator"))
        page.wait_for_selector('[data-calc-widget="calculator"][data-state="error"]',
                               state="attached", timeout=30_000)
        status = root(page, "calculator").locator("[data-calc-status]").text_content()
        # shorter than the manifest says: the files did not arrive complete
        assert status == t("ui.error_network", "tr")
        assert_figures(figures(page, "calculator"), expected_calculator({}, "tr"))
    finally:
        context.close()


# --- WebAssembly blocked; the worker crashing after it worked ---------------------------------


def _worker_without_wasm_policy(route):
    """The worker under a policy that forbids compiling WebAssembly (a host's strict CSP)."""
    response = route.fetch()
    route.fulfill(response=response, headers={
        **response.headers, "content-security-policy": "default-src 'self'; script-src 'self'"})


def _worker_without_wasm(route):
    """A browser without WebAssembly (e.g. a hardened or lockdown mode): the worker's global
    has none. (An init script would not reach the worker: it runs in pages only.)"""
    response = route.fetch()
    route.fulfill(response=response, body="delete globalThis.WebAssembly;\n" + response.text())


@pytest.mark.parametrize("handler, locale", [(_worker_without_wasm_policy, "pt"),
                                             (_worker_without_wasm, "fa")],
                         ids=["blocked by policy", "absent"])
def test_webassembly_blocked(browser, calc_site, handler, locale):
    """Said at once (not after the load timeout), in the reader's language."""
    import time

    context = browser.new_context()
    try:
        context.route("**/assets/calc/worker.js", handler)
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        start = time.monotonic()
        page.goto(calc_site.page_url(locale, "calculator"))
        page.wait_for_selector('[data-calc-widget="calculator"][data-state="error"]',
                               state="attached", timeout=30_000)
        assert time.monotonic() - start < 15  # the load timeout is 20 s
        r = root(page, "calculator")
        assert r.locator("[data-calc-status]").text_content() == t("ui.error_load", locale)
        assert r.get_attribute("data-busy") != "true"
        assert_figures(figures(page, "calculator"), expected_calculator({}, locale))
        assert watch.page_errors == [] and watch.foreign() == []
    finally:
        context.close()


def _calc_worker(page):
    found = [w for w in page.workers if w.url.endswith("/assets/calc/worker.js")]
    assert len(found) == 1, page.workers
    return found[0]


@pytest.mark.parametrize("how, locale", [("uncaught error", "en"), ("silent death", "fa"),
                                         ("uncaught error", "ru")])
def test_worker_crash_mid_session(browser, calc_site, how, locale):
    """The worker stops after it has worked: an uncaught error (the page hears it), or a worker
    that dies without a word (an edit then goes unanswered; the page gives up after
    data-timeout-ms). Either way: error state within 30 s, no endless busy state, the figures
    kept (marked stale when an edit was left without its answer), the reader told in their
    language that it stopped and what the figures are."""
    context = browser.new_context()
    try:
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        page.goto(calc_site.page_url(locale, "calculator"))
        wait_ready(page, "calculator")
        r = root(page, "calculator")
        worker = _calc_worker(page)
        if how == "uncaught error":
            worker.evaluate("setTimeout(() => { throw new Error('crash test'); }, 0)")
        else:
            r.evaluate("el => { el.dataset.timeoutMs = '3000'; }")  # the page's 20 s, shortened
            worker.evaluate("self.close()")
            r.locator('[name="seq"]').fill("4096")
        page.wait_for_selector('[data-calc-widget="calculator"][data-state="error"]',
                               state="attached", timeout=30_000)
        assert r.get_attribute("data-busy") == "false"
        status = r.locator("[data-calc-status]")
        assert status.text_content() == t("ui.error_worker", locale) and status.is_visible()
        assert_figures(figures(page, "calculator"), expected_calculator({}, locale))
        results = r.locator("[data-calc-results]")
        assert (results.get_attribute("data-stale") == "true") == (how == "silent death")
        # the page stays usable: an edit marks the figures stale, nothing throws or hangs
        r.locator('[name="batch"]').fill("2")
        page.wait_for_timeout(200)
        assert results.get_attribute("data-stale") == "true"
        assert r.get_attribute("data-state") == "error" and r.get_attribute("data-busy") == "false"
        assert watch.page_errors == [] and watch.foreign() == []
    finally:
        context.close()
