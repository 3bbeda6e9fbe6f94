"""The answer in view (issue 19), measured in Chromium in every locale: the calculator's summary
(total, verdict for the reader's card, textbook figure) stays inside the viewport while the
reader edits fields further down the form, on a phone (390 x 844) and on a 1280 x 800 screen,
and never covers the field that has the keyboard focus; no horizontal overflow at 390 px; no
layout shift while the page loads and Python takes over; a link's inputs shown at once with
the summary marked as computing until Python has computed them.

Every expected figure comes from calc in CPython (expected_figures), never from the page.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from browser_helpers import (Held, LOCALES, Watch, assert_figures, expected_calculator, figures, root,
                             set_form, wait_idle, wait_ready)
from calc.fmt import fmt
from calc.html import local_digits
from calc.fields import parse
from calc.scale import parse_scale, scaled

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
VIEWPORTS = {"phone": PHONE, "desktop": DESKTOP}
SUMMARY = "#calc-calculator-summary"

#: Layout shifts, recorded from the start of the page (the Layout Instability API).
LAYOUT_SHIFTS = """
window.__calcShifts = [];
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.hadRecentInput) continue;
      const inWidget = e.sources.some((s) => s.node && s.node.nodeType === 1 &&
                                              s.node.closest('[data-calc-widget]'));
      window.__calcShifts.push([e.value, inWidget]);
    }
  }).observe({ type: "layout-shift", buffered: true });
} catch (e) {}
"""

BOXES = """(sel) => {
  const s = document.querySelector(sel).getBoundingClientRect();
  const a = document.activeElement.getBoundingClientRect();
  const header = document.querySelector('.md-header').getBoundingClientRect();
  return {summary: [s.top, s.bottom, s.left, s.right], focus: [a.top, a.bottom, a.left, a.right],
          header: header.bottom, height: window.innerHeight, width: window.innerWidth,
          scrollWidth: document.documentElement.scrollWidth};
}"""


def _total(query: dict, locale: str) -> tuple[str, str, str]:
    """The headline figure calc gives: (kind, raw bytes, text) under its name."""
    inputs, sc = parse(query, locale), parse_scale(query, locale)
    per_gpu = scaled(inputs, sc).per_gpu_total
    return ("bytes", str(per_gpu), fmt(per_gpu, inputs.unit.value, locale))


def _in_view_and_clear(b: dict) -> None:
    top, bottom, left, right = b["summary"]
    assert top >= b["header"] - 1 and bottom <= b["height"] + 1, b  # whole, below the header
    assert 0 <= left and right <= b["width"] + 1, b
    f_top, f_bottom, f_left, f_right = b["focus"]
    overlap = not (f_bottom <= top or f_top >= bottom or f_right <= left or f_left >= right)
    assert not overlap, f"the summary covers the focused field: {b}"
    assert f_top >= b["header"] - 1 and f_bottom <= b["height"] + 1, b  # the field in view


@pytest.fixture(scope="module")
def layout_context(browser):
    context = browser.new_context()
    context.add_init_script(LAYOUT_SHIFTS)
    yield context
    context.close()


@pytest.mark.parametrize("size", VIEWPORTS)
@pytest.mark.parametrize("locale", LOCALES)
def test_summary_stays_in_view_while_editing_further_down(layout_context, calc_site, locale, size):
    page = layout_context.new_page()
    page.set_viewport_size(VIEWPORTS[size])
    watch = Watch(calc_site.origin).attach(page)
    try:
        page.goto(calc_site.page_url(locale, "calculator"))
        wait_ready(page, "calculator")
        r = root(page, "calculator")
        # the GPU count, below the main fields: typed as a reader types
        gpus = r.locator('[name="gpus"]')
        gpus.scroll_into_view_if_needed()
        gpus.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("2")
        wait_idle(page, "calculator")
        b = page.evaluate(BOXES, SUMMARY)
        _in_view_and_clear(b)
        assert b["scrollWidth"] <= b["width"], b
        got = figures(page, "calculator")
        assert got["per_gpu_total"] == _total({"gpus": "2"}, locale)
        # the optimizer, at the end of the advanced options: chosen from the keyboard
        r.locator("details.calc-advanced:not(.calc-plan-fields) > summary").click()
        optimizer = r.locator('[name="optimizer"]')
        optimizer.focus()
        optimizer.select_option("adamw-8bit")
        wait_idle(page, "calculator")
        _in_view_and_clear(page.evaluate(BOXES, SUMMARY))
        query = {"gpus": "2", "optimizer": "adamw-8bit"}
        assert_figures(figures(page, "calculator"), expected_calculator(query, locale))
        watch.check()
    finally:
        page.close()


@pytest.mark.parametrize("locale", LOCALES)
def test_tab_never_leaves_the_focused_field_under_the_summary(layout_context, calc_site, locale):
    """On a phone the summary sticks under the header; a field that the keyboard focus reaches
    while it lies under the summary is scrolled clear of it (scroll-padding)."""
    page = layout_context.new_page()
    page.set_viewport_size(PHONE)
    try:
        page.goto(calc_site.page_url(locale, "calculator"))
        wait_ready(page, "calculator")
        r = root(page, "calculator")
        names = ("seq", "batch")  # batch comes right after seq in the tab order
        r.locator(f'[name="{names[0]}"]').focus()
        # scroll so that the next field lies just under the header, behind the summary
        page.evaluate("""(name) => {
          const el = document.querySelector(`[data-calc-widget="calculator"] [name="${name}"]`);
          const header = document.querySelector('.md-header').getBoundingClientRect().bottom;
          window.scrollBy(0, el.getBoundingClientRect().top - header - 4);
        }""", names[1])
        covered = page.evaluate(BOXES, SUMMARY)
        field = r.locator(f'[name="{names[1]}"]').bounding_box()
        assert field["y"] < covered["summary"][1], "the setup did not put the field under it"
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.name") == names[1]
        _in_view_and_clear(page.evaluate(BOXES, SUMMARY))
    finally:
        page.close()


@pytest.mark.parametrize("locale", LOCALES)
def test_phone_no_overflow_and_no_layout_shift_at_load(layout_context, calc_site, locale):
    page = layout_context.new_page()
    page.set_viewport_size(PHONE)
    watch = Watch(calc_site.origin).attach(page)
    try:
        page.goto(calc_site.page_url(locale, "calculator"))
        r = root(page, "calculator")
        summary = page.locator(SUMMARY)
        summary.scroll_into_view_if_needed()
        before = summary.bounding_box()
        wait_ready(page, "calculator")
        page.wait_for_timeout(300)
        after = summary.bounding_box()
        assert before == after  # Python took over without moving or resizing the summary
        # the summary comes before the form on a phone (the answer first)
        form = r.locator("[data-calc-form]").bounding_box()
        assert after["y"] + after["height"] <= form["y"] + 1
        shifts = page.evaluate("window.__calcShifts")
        # web.dev/articles/cls: 0.1 or less is "good"; nothing in the calculator moves at all
        assert sum(v for v, _ in shifts) < 0.1, shifts
        # nothing in the calculator moves that a reader could see: a layout-shift score of 0.001
        # is under a pixel on this viewport (sub-pixel rounding of a font's metrics scores 1e-5)
        assert sum(v for v, in_widget in shifts if in_widget) < 0.001, shifts
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width
        watch.check()
    finally:
        page.close()



@pytest.mark.parametrize("locale", LOCALES)
def test_a_qlora_link_is_marked_computing_in_view_until_python_answers(browser, calc_site, locale):
    """A shared QLoRA link on a phone: the form shows QLoRA at once, the summary in view says
    by its dashed bar and the status line that its figures are not the link's yet; the rank
    the reader changes meanwhile is kept; the figures are then calc's for both."""
    link = {"method": "qlora", "rank": "64", "seq": "4096"}
    context = browser.new_context(viewport=PHONE)
    held = Held()
    try:
        context.route("**/assets/pyodide/pyodide.asm.wasm", held)
        page = context.new_page()
        page.goto(calc_site.page_url(locale, "calculator", urlencode(link)))
        r = root(page, "calculator")
        assert r.locator('input[name="method"][value="qlora"]').is_checked()
        assert r.locator('[name="rank"]').input_value() == "64"
        assert r.get_attribute("data-state") == "loading"
        assert r.get_attribute("data-pending") == "link"
        assert r.locator("[data-calc-results]").get_attribute("data-stale") == "true"
        style = page.locator(SUMMARY).evaluate(
            "el => getComputedStyle(el).getPropertyValue('border-inline-start-style')")
        assert style == "dashed"
        status = r.locator("[data-calc-status]").text_content()
        assert status.startswith(r.get_attribute("data-msg-loading-link")), status
        rank = r.locator('[name="rank"]')
        rank.scroll_into_view_if_needed()
        rank.fill("16")
        _in_view_and_clear(page.evaluate(BOXES, SUMMARY))
        held.release_once_asked(page)
        wait_ready(page, "calculator")
        assert rank.input_value() == local_digits("16", locale)  # the form writes the locale's digits
        assert r.locator('input[name="method"][value="qlora"]').is_checked()
        assert r.locator("[data-calc-results]").get_attribute("data-stale") is None
        assert page.locator(SUMMARY).evaluate(
            "el => getComputedStyle(el).getPropertyValue('border-inline-start-style')") == "solid"
        assert_figures(figures(page, "calculator"),
                       expected_calculator({**link, "rank": "16"}, locale))
    finally:
        context.close()


@pytest.mark.parametrize("locale", LOCALES)
def test_phone_layout_passes_axe(browser, calc_site, locale):
    """The one-column layout (the summary first and sticky, the results region without a box
    of its own) has no serious or critical axe-core finding, in both palettes' light one;
    test_a11y.py audits the wide layout."""
    from test_a11y import AXE_JS, RUN_AXE

    context = browser.new_context(bypass_csp=True, color_scheme="light", viewport=PHONE)
    try:
        page = context.new_page()
        page.goto(calc_site.page_url(locale, "calculator", "gpu=rtx-4090"))
        wait_ready(page, "calculator")
        page.locator(SUMMARY).scroll_into_view_if_needed()
        page.evaluate(AXE_JS.read_text(encoding="utf-8"))
        assert page.evaluate(RUN_AXE, None) == []
    finally:
        context.close()


@pytest.mark.parametrize("locale", LOCALES)
def test_accuracy_tables_laid_out_late_become_keyboard_regions_in_view(layout_context, calc_site,
                                                                       locale):
    """The accuracy page's long tables are laid out only near the viewport
    (content-visibility: auto, site.css); on a phone each is wider than the screen, so its box
    must be a focusable, named region (tables.js) before it is laid out and still once scrolled
    into view and measured, as a table laid out at load is (WCAG 2.1.1)."""
    page = layout_context.new_page()
    page.set_viewport_size(PHONE)
    watch = Watch(calc_site.origin).attach(page)
    try:
        page.goto(calc_site.page_url(locale, "accuracy"))
        page.wait_for_load_state("load")
        wrap = page.locator(".md-typeset__scrollwrap:has(#accuracy-published)")
        assert page.evaluate(
            "getComputedStyle(document.getElementById('accuracy-published'))"
            ".contentVisibility") == "auto"
        # Presumed wide before it is laid out (a tool or a jump to it finds a keyboard region).
        assert wrap.get_attribute("tabindex") == "0"
        wrap.scroll_into_view_if_needed()
        for _ in range(50):  # the page's policy allows no string evaluation (wait_for_function)
            if wrap.get_attribute("tabindex") == "0":
                break
            page.wait_for_timeout(100)
        assert wrap.get_attribute("tabindex") == "0"
        assert wrap.get_attribute("role") == "region"
        assert wrap.get_attribute("aria-label")  # the table's caption
        assert page.evaluate("(w => w.scrollWidth > w.clientWidth)(document.querySelector("
                             "'.md-typeset__scrollwrap:has(#accuracy-published)'))")
        wrap.focus()
        assert page.evaluate("document.activeElement.matches('.md-typeset__scrollwrap')")
        watch.check()
    finally:
        page.close()


#: The results' fit table: its box's content-visibility, whether its first body cell is rendered
#: (a box that content-visibility: auto skips renders none of its content), the box's height and
#: each figure's text as rendered (innerText: only what is laid out).
FIT_TABLE = """(sel) => {
  const wrap = document.querySelector(sel);
  const cell = wrap.querySelector('tbody td');
  const shown = {};
  for (const el of wrap.querySelectorAll('[data-calc]')) {
    shown[el.getAttribute('data-calc')] = el.innerText;
  }
  return [getComputedStyle(wrap).contentVisibility,
          cell.checkVisibility({ contentVisibilityAuto: true }),
          wrap.getBoundingClientRect().height, shown];
}"""
FIT_WRAP = "[data-calc-results] .calc-table-wrap:has(.calc-gpus)"


@pytest.mark.parametrize("locale", ["en", "fa"])
def test_results_tables_are_rendered_only_in_view_with_the_figures_of_python(
        layout_context, calc_site, locale):
    """The results' tables are rendered only near the viewport (calc.css: each edit replaces
    the results region, and its fit tables, below the summary, are most of its elements). On a
    phone at the top of the page the fit table is skipped, also after an edit; scrolled into
    view it is rendered at its own height (not the placeholder's), showing the figures calc
    computes in CPython for the edited form."""
    page = layout_context.new_page()
    page.set_viewport_size(PHONE)
    try:
        page.goto(calc_site.page_url(locale, "calculator"))
        wait_ready(page, "calculator")
        visibility, rendered, _, _ = page.evaluate(FIT_TABLE, FIT_WRAP)
        assert (visibility, rendered) == ("auto", False)
        query = {"model": "llama-3.1-70b", "method": "full", "seq": "3072"}
        set_form(page, "calculator", query)
        page.evaluate("window.scrollTo(0, 0)")
        assert page.evaluate(FIT_TABLE, FIT_WRAP)[1] is False
        page.locator(FIT_WRAP).scroll_into_view_if_needed()
        for _ in range(50):  # rendered at the next frame (the policy allows no wait_for_function)
            _, rendered, height, shown = page.evaluate(FIT_TABLE, FIT_WRAP)
            if rendered:
                break
            page.wait_for_timeout(100)
        assert rendered
        assert height != 600  # calc.css's placeholder (contain-intrinsic-size)
        expected = expected_calculator(query, locale)
        cards = [name for name in shown if name.startswith("cards.")]
        assert cards and any(expected[n][1] not in ("1", "none") for n in cards)  # an edit's own
        for name, text in shown.items():
            if expected[name][2] is not None:
                assert text.strip() == expected[name][2], (name, text)
        assert_figures(figures(page, "calculator"), expected)
    finally:
        page.close()


def test_persian_pages_name_fonts_with_persian_letters_first(layout_context, calc_site):
    """site.css puts fonts that have Persian letters before Material's system stack on fa
    pages (the browser otherwise searched its fallback fonts for every run of Persian text
    while laying the page out); the other locales keep Material's stack."""
    page = layout_context.new_page()
    try:
        families = {}
        for locale in ("fa", "en"):
            page.goto(calc_site.page_url(locale, "how-it-works"))
            page.wait_for_load_state("load")
            families[locale] = page.evaluate(
                "[getComputedStyle(document.body).fontFamily,"
                " getComputedStyle(document.querySelector('.md-typeset p')).fontFamily]")
        for family in families["fa"]:
            assert family.startswith('"Segoe UI", Tahoma, "Noto Sans Arabic"'), family
            assert family.endswith("sans-serif"), family  # Material's stack after them
        for family in families["en"]:
            assert "Tahoma" not in family and "sans-serif" in family, family
    finally:
        page.close()


#: A reader's palette switch, clicked as a reader would (the visible toggle), timed in the page:
#: a link's transition before it, during the click's own task and once two frames are drawn,
#: and the transitions the switch started.
PALETTE_SWITCH = """() => new Promise((resolve) => {
  const link = document.querySelector('a.md-nav__link');
  const state = () => [document.body.getAttribute('data-md-color-scheme'),
                       document.body.hasAttribute('data-site-switching'),
                       getComputedStyle(link).transitionDuration];
  const before = state();
  document.querySelector("form[data-md-component='palette'] label:not([hidden])").click();
  const during = state();
  requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => resolve({
    before, during, after: state(),
    transitions: document.getAnimations().filter((a) => a instanceof CSSTransition).length,
  }), 50)));
})"""


@pytest.mark.parametrize("locale", ["en", "fa"])
def test_a_palette_switch_starts_no_transition(browser, calc_site, locale):
    """The theme's rule that turned transitions off on every load is gone
    (site_build/palette.py); the site's own does it for the frame of a reader's switch only.
    Material gives its navigation links a 125 ms colour transition (`.md-nav__link`); a
    switch starts none, and afterwards the links have theirs again."""
    context = browser.new_context(color_scheme="light")
    try:
        page = context.new_page()
        page.goto(calc_site.page_url(locale, "faq"))
        page.wait_for_load_state("load")
        page.wait_for_timeout(100)  # Material's own first application of the palette is done
        got = page.evaluate(PALETTE_SWITCH)
        assert got == {"before": ["default", False, "0.125s"],
                       "during": ["slate", True, "0s"],
                       "after": ["slate", False, "0.125s"],
                       "transitions": 0}, got
        # and back by keyboard (Enter on the palette's focused option, Material's handler)
        page.focus("form[data-md-component='palette'] input:checked")
        page.keyboard.press("Enter")
        page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'default'"
                               " && !document.body.hasAttribute('data-site-switching')")
    finally:
        context.close()


#: The page's color-scheme metas in <head> (content), and the body's palette.
SCHEME_METAS = """() => [
  [...document.head.querySelectorAll('meta[name=color-scheme]')].map((m) => m.content),
  document.body.getAttribute('data-md-color-scheme')]"""


@pytest.mark.parametrize("preference", ["light", "dark"])
def test_the_pages_color_scheme_meta_follows_the_palette(browser, calc_site, preference):
    """Material's palette script writes into the page's own color-scheme meta (the build's
    patch, site_build/palette.py) instead of appending one: one meta, `light` or `dark` as
    the palette Material applied (the reader's system preference on a first visit), after a
    switch, and after a reload, which keeps the reader's choice."""
    context = browser.new_context(color_scheme=preference)
    scheme = {"default": "light", "slate": "dark"}  # Material's palette CSS: color-scheme
    try:
        page = context.new_page()
        page.goto(calc_site.page_url("ru", "faq"))
        page.wait_for_load_state("load")
        page.wait_for_timeout(100)
        metas, palette_name = page.evaluate(SCHEME_METAS)
        assert palette_name == ("slate" if preference == "dark" else "default")
        assert metas == [scheme[palette_name]]
        page.locator("form[data-md-component='palette'] label:not([hidden])").click()
        page.wait_for_timeout(100)
        metas, switched = page.evaluate(SCHEME_METAS)
        assert switched != palette_name and metas == [scheme[switched]]
        page.reload()
        page.wait_for_load_state("load")
        page.wait_for_timeout(100)
        assert page.evaluate(SCHEME_METAS) == [[scheme[switched]], switched]
    finally:
        context.close()
