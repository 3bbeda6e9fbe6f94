"""The worker started from the page's <head> (docs/assets/calc/early.js, boot.js): its downloads
begin before the page's own scripts have run, Python starts only once page.js has taken it
over, and without early.js page.js starts the worker itself. The figures are calc's."""

from __future__ import annotations

import re

from browser_helpers import Held, Watch, assert_figures, expected_calculator, figures, set_form, wait_ready
from calc.i18n import LOCALES

QUERY = {"model": "llama-3.1-8b", "method": "lora", "rank": "32"}


def test_each_calculator_page_names_its_worker_in_its_head(calc_site):
    for locale in LOCALES:
        html = (calc_site.directory / ("" if locale == "en" else locale) / "calculator"
                / "index.html").read_text(encoding="utf-8")
        head = html[:html.index("</head>")]
        tag = re.search(r'<script type="module" async src="[^"]*assets/calc/early\.js"\s+'
                        r'data-calc-worker="([^"]+)"', head)
        first = re.search(r'data-calc-widget="([^"]+)"[^>]*data-locale="([^"]+)"', html)
        assert tag and first, locale
        assert tag.group(1) == f"{first.group(1)} {first.group(2)}"  # messages.workerName


def test_the_runtime_downloads_start_before_the_page_script_runs(browser, calc_site):
    context = browser.new_context()
    try:
        held = Held()
        context.route("**/assets/calc/page.js", held)
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        page.goto(calc_site.page_url("tr", "calculator"), wait_until="commit")
        wasm = lambda: any(u.endswith("/assets/pyodide/pyodide.asm.wasm") for u in watch.requests)
        for _ in range(300):  # page.js asked for and held back, the worker's downloads begun
            if held.routes and wasm():
                break
            page.wait_for_timeout(100)
        assert held.routes, "page.js was never asked for"
        assert wasm() and any(u.endswith("/assets/calc/manifest.json") for u in watch.requests)
        assert page.locator('[data-calc-widget="calculator"]').get_attribute("data-state") == "loading"
        held.release()
        wait_ready(page, "calculator")
        set_form(page, "calculator", QUERY)
        assert_figures(figures(page, "calculator"), expected_calculator(QUERY, "tr"))
        watch.check()
    finally:
        context.close()


def test_without_the_early_script_the_page_starts_the_worker(browser, calc_site):
    context = browser.new_context()
    try:
        context.route("**/assets/calc/early.js",
                      lambda route: route.fulfill(status=404, body="", content_type="text/plain"))
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        page.goto(calc_site.page_url("pt", "calculator"))
        wait_ready(page, "calculator")
        set_form(page, "calculator", QUERY)
        assert_figures(figures(page, "calculator"), expected_calculator(QUERY, "pt"))
        # one worker: its script fetched once
        assert sum(u.endswith("/assets/calc/worker.js") for u in watch.requests) == 1
        watch.failed = [f for f in watch.failed if "early.js" not in f]
        watch.console_errors = [e for e in watch.console_errors if "early.js" not in e
                                and "404" not in e]
        watch.check()
    finally:
        context.close()
