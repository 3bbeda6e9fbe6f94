"""When Python cannot load, the page says so in the reader's language and keeps the figures
computed at build time (which still equal calc's defaults)."""

from __future__ import annotations

import re

import pytest

from browser_helpers import Watch, assert_figures, expected_calculator, figures, root
from calc.i18n import t


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
    ("wheel missing", "**/assets/calc/*.whl", _404, "fa", "ui.error_load"),
    ("worker missing", "**/assets/calc/worker.js", _404, "ru", "ui.error_load"),
    ("runtime never arrives", "**/assets/pyodide/pyodide.asm.wasm", _never, "pt",
     "ui.error_timeout"),
]


@pytest.mark.parametrize("what, pattern, handler, locale, key", CASES, ids=[c[0] for c in CASES])
def test_failure_is_visible_and_the_static_figures_stay(browser, calc_site, what, pattern,
                                                        handler, locale, key):
    context = browser.new_context()
    try:
        context.route(pattern, handler)
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
        assert not r.locator("[data-calc-copy]").is_visible()
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
    """The wheel must match the checksum in manifest.json (a stale cache, a truncated upload)."""
    context = browser.new_context()
    try:
        def truncated(route):
            response = route.fetch()
            route.fulfill(response=response, body=response.body()[:-100])

        context.route("**/assets/calc/*.whl", truncated)
        page = context.new_page()
        page.goto(calc_site.page_url("tr", "calculator"))
        page.wait_for_selector('[data-calc-widget="calculator"][data-state="error"]',
                               state="attached", timeout=30_000)
        status = root(page, "calculator").locator("[data-calc-status]").text_content()
        assert status == t("ui.error_load", "tr")
        assert_figures(figures(page, "calculator"), expected_calculator({}, "tr"))
    finally:
        context.close()
