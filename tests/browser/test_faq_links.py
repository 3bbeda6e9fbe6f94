"""FAQ links and search input (issue 19): every FAQ question has a copy-link button whose
status line says "link copied" in the page's language and whose copied address is the
question's own; the question a link lands on is highlighted; the search box finds text that
arrives without key events (pasted, or from an input method)."""

from __future__ import annotations

import pytest

from calc.i18n import t


@pytest.mark.parametrize("locale", ["en", "fa", "tr"])
def test_every_question_has_a_copy_link_button(open_page, calc_site, locale):
    page, watch = open_page(locale, "faq")
    ids = page.eval_on_selector_all(".md-typeset h2.faq[id]", "els => els.map(e => e.id)")
    assert len(ids) >= 5
    buttons = page.locator(".md-typeset h2.faq .faq-copy")
    assert buttons.count() == len(ids)
    assert buttons.first.text_content() == t("ui.copy_link", locale)
    # its accessible name is its visible text (WCAG 2.5.3); the longer wording is the tooltip
    assert buttons.first.get_attribute("title") == t("site.faq_copy_link", locale)
    target = ids[len(ids) // 2]
    heading = page.locator(f"h2.faq#{target}")
    heading.locator(".faq-copy").click()
    status = heading.locator(".faq-copied[role=status]")
    status.wait_for(state="visible")
    assert status.text_content() == t("site.faq_link_copied", locale)
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == calc_site.page_url(locale, "faq") + f"#{target}"
    watch.check()


@pytest.mark.parametrize("locale", ["en", "ru"])
def test_the_question_a_link_lands_on_is_highlighted(open_page, calc_site, locale):
    page, _ = open_page(locale, "faq")
    ids = page.eval_on_selector_all(".md-typeset h2.faq[id]", "els => els.map(e => e.id)")
    target = ids[-1]
    page.goto(calc_site.page_url(locale, "faq") + f"#{target}")
    style = "el => [el.matches(':target'), getComputedStyle(el).backgroundColor]"
    landed, landed_bg = page.locator(f"h2.faq#{target}").evaluate(style)
    other, other_bg = page.locator(f"h2.faq#{ids[0]}").evaluate(style)
    assert landed and not other
    assert landed_bg != other_bg and other_bg in ("rgba(0, 0, 0, 0)", "transparent")


@pytest.mark.parametrize("locale", ["en", "fa"])
def test_search_finds_text_that_came_without_key_events(open_page, calc_site, locale):
    page, _ = open_page(locale, "faq")
    box = page.locator(".md-search__input")
    box.focus()
    page.keyboard.insert_text("QLoRA")  # an `input` event only, as a paste or an IME sends
    page.wait_for_selector(".md-search-result__item", state="attached", timeout=15_000)
    prefix = calc_site.url + ("" if locale == "en" else f"{locale}/")
    hrefs = page.eval_on_selector_all(".md-search-result__link", "els => els.map(a => a.href)")
    assert hrefs and all(h.startswith(prefix) for h in hrefs)
