"""The worker started from the page's <head> (docs/assets/calc/early.js, inline there, and
boot.js): its downloads begin before the page's styles and scripts have arrived, Pyodide's
modules are imported and Python starts only once page.js has taken it over, and without the
early script page.js starts the worker itself. The figures are calc's."""

from __future__ import annotations

import re

from browser_helpers import Held, Watch, assert_figures, expected_calculator, figures, set_form, wait_ready
from calc.i18n import LOCALES

QUERY = {"model": "llama-3.1-8b", "method": "lora", "rank": "32"}


EARLY_TAG = re.compile(r'<script data-calc-worker="([^"]+)"\s+data-calc-src="([^"]+)">(.*?)</script>',
                       re.S)


def test_each_calculator_page_starts_its_worker_before_any_stylesheet(calc_site):
    code = (calc_site.directory / "assets" / "calc" / "early.js").read_text(encoding="utf-8")
    for locale in LOCALES:
        page = calc_site.directory / ("" if locale == "en" else locale) / "calculator" / "index.html"
        html = page.read_text(encoding="utf-8")
        head = html[:html.index("</head>")]
        tag = EARLY_TAG.search(head)
        first = re.search(r'data-calc-widget="([^"]+)"[^>]*data-locale="([^"]+)"', html)
        assert tag and first, locale
        assert tag.group(1) == f"{first.group(1)} {first.group(2)}"  # messages.workerName
        assert (page.parent / tag.group(2)).resolve() == (
            calc_site.directory / "assets" / "calc" / "worker.js").resolve()
        # before every stylesheet and script file, right after the policy that covers it
        assert tag.start() < head.index('rel="stylesheet"')
        assert not re.search(r"<script[^>]*\ssrc=", head[:tag.start()])
        assert head.index('http-equiv="Content-Security-Policy"') < tag.start()
        # the file's code, without its comments, and nothing else
        lines = [line for line in code.splitlines() if line.strip() and not line.lstrip().startswith("//")]
        assert tag.group(3) == "\n".join(lines), locale


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
        # Pyodide's modules (1.2 MB of JavaScript to parse) wait for the handover: the worker
        # has run its own code (its last static import asked for) and a second has passed
        mine = lambda name: any(u.endswith(name) for u in watch.requests)
        for _ in range(300):
            if mine("/assets/calc/delta.mjs"):
                break
            page.wait_for_timeout(100)
        page.wait_for_timeout(1000)
        assert mine("/assets/calc/delta.mjs")
        assert not mine("/assets/pyodide/pyodide.asm.mjs") and not mine("/assets/pyodide/pyodide.mjs")
        assert page.locator('[data-calc-widget="calculator"]').get_attribute("data-state") == "loading"
        held.release()
        wait_ready(page, "calculator")
        set_form(page, "calculator", QUERY)
        assert_figures(figures(page, "calculator"), expected_calculator(QUERY, "tr"))
        watch.check()
    finally:
        context.close()


def _without_early_script(route):
    response = route.fetch()
    html, n = EARLY_TAG.subn("", response.text())
    assert n == 1
    route.fulfill(response=response, body=html)


def test_without_the_early_script_the_page_starts_the_worker(browser, calc_site):
    context = browser.new_context()
    try:
        context.route(calc_site.page_url("pt", "calculator"), _without_early_script)
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        page.goto(calc_site.page_url("pt", "calculator"))
        wait_ready(page, "calculator")
        set_form(page, "calculator", QUERY)
        assert_figures(figures(page, "calculator"), expected_calculator(QUERY, "pt"))
        # one worker: its script fetched once
        assert sum(u.endswith("/assets/calc/worker.js") for u in watch.requests) == 1
        watch.check()
    finally:
        context.close()


def _with_an_image(route):
    response = route.fetch()
    # the site's own image, at an address of its own (the favicon's request is not held)
    html = response.text().replace(
        "</main>", '<img src="../../assets/images/favicon.png?held" alt=""></main>', 1)
    route.fulfill(response=response, body=html)


def test_python_starts_when_the_page_has_loaded_or_soon_after_if_it_never_does(browser, calc_site):
    """boot.js starts Python after the page's load event, and at the latest a moment after
    page.js has taken the worker over: an image that never arrives keeps `load` from firing,
    and the calculator is live all the same."""
    context = browser.new_context()
    try:
        held = Held()
        context.route("**/assets/images/favicon.png?held", held)
        context.route(calc_site.page_url("ru", "calculator"), _with_an_image)
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        page.goto(calc_site.page_url("ru", "calculator"), wait_until="commit")
        wait_ready(page, "calculator")
        assert held.routes and page.evaluate("document.readyState") != "complete"
        set_form(page, "calculator", QUERY)
        assert_figures(figures(page, "calculator"), expected_calculator(QUERY, "ru"))
        held.release()
        for _ in range(100):
            if page.evaluate("document.readyState") == "complete":
                break
            page.wait_for_timeout(100)
        watch.check()
    finally:
        context.close()
