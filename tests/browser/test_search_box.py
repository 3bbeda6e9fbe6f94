"""Search in a real browser: on a page of each locale, Material's search box finds that
locale's pages only, from that locale's own index (the only index the page fetches)."""

from __future__ import annotations

import pytest

from browser_helpers import LOCALES

QUERY = "QLoRA"  # a term every locale's pages use


def root(locale: str) -> str:
    return "" if locale == "en" else f"{locale}/"


def search_and_check(page, watch, calc_site, locale: str) -> None:
    page.locator(".md-search__input").fill(QUERY)
    page.keyboard.press("End")
    page.wait_for_selector(".md-search-result__item", state="attached", timeout=15_000)
    hrefs = page.eval_on_selector_all(".md-search-result__link", "els => els.map(a => a.href)")
    own = calc_site.url + root(locale)
    others = tuple(calc_site.url + root(loc) for loc in LOCALES if loc not in (locale, "en"))
    assert len({h.split("#")[0] for h in hrefs}) >= 2, hrefs
    assert all(h.startswith(own) and not h.startswith(others) for h in hrefs), hrefs
    indexes = [u for u in watch.requests if u.endswith("search_index.json")]
    assert indexes == [own + "search/search_index.json"], indexes
    # the first result leads to a page of the locale
    page.wait_for_load_state("networkidle")
    page.locator(".md-search-result__link").first.click()
    page.wait_for_load_state()
    assert page.url.startswith(own)
    assert page.locator("html").get_attribute("lang").split("-")[0] == locale
    watch.check()


@pytest.mark.parametrize("locale", LOCALES)
def test_search_finds_the_locales_pages_from_its_own_index(open_page, calc_site, locale):
    page, watch = open_page(locale, "faq")
    search_and_check(page, watch, calc_site, locale)


def test_search_on_a_404_page_uses_its_locales_index(site_context, calc_site):
    from browser_helpers import Watch

    page = site_context.new_page()
    try:
        watch = Watch(calc_site.origin).attach(page)
        page.goto(calc_site.url + "fa/no-such-page/")
        watch.failed.clear()  # the 404 itself
        watch.console_errors.clear()  # Chromium reports the 404 response on the console
        search_and_check(page, watch, calc_site, "fa")
    finally:
        page.close()


def test_the_index_is_downloaded_when_search_is_used(open_page, calc_site):
    """No page downloads its search index until the reader uses search (site_build/search.py):
    the calculator page is live without it; focusing the box asks for it, once, and a query
    typed while the worker indexes it still finds the pages."""
    page, watch = open_page("tr", "calculator")
    page.wait_for_selector('[data-calc-widget][data-state="ready"]', state="attached",
                           timeout=60_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1000)
    assert not [u for u in watch.requests if u.endswith("search_index.json")]
    search_and_check(page, watch, calc_site, "tr")


@pytest.mark.parametrize("locale", ["en", "fa"])
def test_a_page_reached_from_a_result_highlights_the_query(open_page, calc_site, locale):
    """Material's search.highlight: a page opened with ?h=TERM (as search results link) marks
    the term in its text, with the index asked for on such a page only."""
    page, watch = open_page(locale, "faq", f"h={QUERY}")
    marks = page.locator("article mark[data-md-highlight]")
    marks.first.wait_for(state="attached", timeout=15_000)
    assert {t.strip().lower() for t in marks.all_text_contents()} == {QUERY.lower()}
    indexes = [u for u in watch.requests if u.endswith("search_index.json")]
    assert indexes == [calc_site.url + root(locale) + "search/search_index.json"], indexes
    watch.check()
