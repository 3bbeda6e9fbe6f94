"""Accessibility, measured in Chromium with axe-core (node_modules/axe-core, pinned in
package.json), in both palettes (Material's `default` and `slate`, chosen by the browser's
colour scheme) and all five locales:

- every page (and the 404 page) has no serious or critical axe violation: every rule in the
  light palette, then the contrast rules again after switching to the dark one with Material's
  toggle (the palette changes colours only); the widgets there are audited in their error
  state (Python is kept from loading, so no page waits for it);
- the calculator has none in its loading state (the worker held back), its ready state with
  invalid input shown at the fields, and its error state;
- the whole calculator works from the keyboard: every control is reached by Tab in order (one
  stop per radio group), each shows a visible focus indicator, and it is operated with keys
  only (arrows, typing, Space, Enter) to the figures calc computes;
- right to left: on Persian pages every run of Latin text is marked `dir="ltr"` and
  `lang="en"`, so the bidi algorithm keeps it whole and a screen reader reads it in English;
  an `<option>` carries no isolate marks (a select's type-ahead matches its text from the
  first character) and its own `dir` (ltr for a Latin name, rtl for a Persian text); plain
  text that can carry no markup (the messages the page sets as text) has each run between
  isolate marks (LRI/FSI ... PDI); code, figures and form values aside.

axe runs in a context with `bypass_csp` (its script is evaluated into the page); the policy
itself is tested without the bypass in test_csp.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_helpers import (BOOT_TIMEOUT_MS, LOCALES, NAV_PAGES, assert_figures,
                             expected_calculator, figures, root, wait_idle, wait_ready)

ROOT = Path(__file__).resolve().parents[2]
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
PAGES = (*NAV_PAGES, "no-such-page")  # mkdocs.yml's nav, and the 404 page
SERIOUS = ("serious", "critical")

RUN_AXE = """async (rules) => {
  const options = { resultTypes: ['violations'] };
  if (rules) options.runOnly = { type: 'rule', values: rules };
  const result = await axe.run(document, options);
  return result.violations
    .filter((v) => ['serious', 'critical'].includes(v.impact))
    .map((v) => `${v.id} (${v.impact}): ${v.help}\\n` + v.nodes.slice(0, 5).map((n) =>
      `    ${n.target.join(' ')}: ${(n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 240)}`
    ).join('\\n'));
}"""

#: Text nodes with Latin letters that are not marked as left-to-right English.
UNMARKED_LATIN = r"""(scope) => {
  const out = [];
  const walker = document.createTreeWalker(scope, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue;
    if (!/[A-Za-z]/.test(text)) continue;
    const el = node.parentElement;
    if (el.closest('code, pre, kbd, samp, svg, textarea, script, style, noscript, .calc-fig, .headerlink'))
      continue;
    // An <option>: plain text that a select's type-ahead matches from its first character,
    // so no isolate marks; the option holds its direction (ltr: a Latin name, rtl: a text of
    // the locale with a right-to-left letter, Persian digits aside).
    const option = el.closest('option');
    if (option) {
      const rtl = Array.from(text).some((ch) => /\p{L}/u.test(ch) &&
                                               /[\p{Script=Arabic}\p{Script=Hebrew}]/u.test(ch));
      if (/[\u2066-\u2069]/.test(text) || option.getAttribute('dir') !== (rtl ? 'rtl' : 'ltr'))
        out.push(`option: ${text.slice(0, 60)}`);
      continue;
    }
    // Plain text (a message the page sets as text): each Latin run between isolate marks
    // (LRI/FSI ... PDI), as no attribute can be put there.
    const bare = text.replace(/[\u2066-\u2068][^\u2069]*\u2069/g, '');
    if (!/[A-Za-z]/.test(bare)) continue;
    const ltr = el.closest('[dir]');
    const lang = el.closest('[lang]');
    const ok = ltr && ltr.getAttribute('dir') === 'ltr' && lang &&
      (lang.getAttribute('lang').startsWith('en') || el.closest('cite, [dir="ltr"] cite, bdi'));
    if (!ok && !el.closest('cite')) out.push(text.trim().slice(0, 60));
  }
  return out;
}"""


@pytest.fixture(scope="session")
def axe_source() -> str:
    if not AXE_JS.is_file():
        pytest.fail("node_modules/axe-core is missing: run `npm ci` (make deps)")
    return AXE_JS.read_text(encoding="utf-8")


#: What the palette changes: colours. The dark palette is audited for these rules only (every
#: other rule gives the same answer in both).
CONTRAST_RULES = ["color-contrast", "link-in-text-block"]
TOGGLE = "form[data-md-component='palette'] label:visible"


def _scheme(page) -> str:
    return page.evaluate("document.body.getAttribute('data-md-color-scheme')")


def audit(page, axe_source: str) -> list[str]:
    """Every axe rule in the light palette, then the contrast rules in the dark one (switched
    with Material's own toggle, as a reader would, and back). Serious and critical findings."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(axe_source)
    assert _scheme(page) == "default"
    found = [f"[light] {v}" for v in page.evaluate(RUN_AXE, None)]
    page.locator(TOGGLE).first.evaluate("el => el.click()")
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'slate'")
    found += [f"[dark] {v}" for v in page.evaluate(RUN_AXE, CONTRAST_RULES)]
    page.locator(TOGGLE).first.evaluate("el => el.click()")
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'default'")
    return found


@pytest.fixture(scope="module")
def audit_context(browser):
    """The light palette to start with; axe is evaluated into each page (bypass_csp)."""
    context = browser.new_context(bypass_csp=True, color_scheme="light")
    yield context
    context.close()


def _no_python(route):
    route.fulfill(status=404, content_type="text/plain", body="kept back by the test")


@pytest.mark.parametrize("locale", LOCALES)
def test_every_page(audit_context, axe_source, calc_site, locale):
    page = audit_context.new_page()
    page.route("**/assets/calc/worker.js", _no_python)
    try:
        problems = {}
        for path in PAGES:
            page.goto(calc_site.page_url(locale, path) if path else
                      calc_site.url + ("" if locale == "en" else f"{locale}/"))
            if page.locator("[data-calc-widget]").count():
                page.wait_for_function(
                    "() => [...document.querySelectorAll('[data-calc-widget]')]"
                    ".every((w) => w.dataset.state === 'error')")
            found = audit(page, axe_source)
            if locale == "fa":
                found += [f"Latin text not marked ltr/en: {t}" for t in
                          page.locator("article").evaluate(UNMARKED_LATIN)]
            if found:
                problems[path or "/"] = found
        assert problems == {}, "\n".join(f"{locale} /{p}:\n" + "\n".join(v)
                                        for p, v in problems.items())
    finally:
        page.close()


def test_the_dark_palette_follows_the_system(browser, calc_site):
    """Without a stored choice, Material takes the reader's system palette (the media queries
    of mkdocs.yml): the dark palette audited above is the one dark-mode readers get."""
    context = browser.new_context(color_scheme="dark")
    try:
        page = context.new_page()
        page.goto(calc_site.page_url("fa", "faq"))
        assert _scheme(page) == "slate"
    finally:
        context.close()


@pytest.mark.parametrize("locale", LOCALES)
def test_calculator_states(audit_context, axe_source, calc_site, locale):
    """Loading (the worker never answers), ready with invalid input marked, error."""
    page = audit_context.new_page()
    try:
        url = calc_site.page_url(locale, "calculator")
        page.route("**/assets/calc/worker.js", lambda route: None)  # held: stays loading
        page.goto(url)
        assert root(page, "calculator").get_attribute("data-state") == "loading"
        loading = audit(page, axe_source)
        assert root(page, "calculator").get_attribute("data-state") == "loading"
        page.unroute("**/assets/calc/worker.js")

        page.goto(calc_site.page_url(locale, "calculator",
                                     "model=custom&seq=-1&batch=zwei&config=%7B&method=qlora"))
        wait_ready(page, "calculator")
        r = root(page, "calculator")
        # a custom model with a broken config.json, a negative length, a word for a number
        assert r.locator("[aria-invalid]").count() == 3  # the advanced options opened
        ready = audit(page, axe_source)
        if locale == "fa":
            ready += [f"Latin text not marked ltr/en: {t}"
                      for t in r.evaluate(UNMARKED_LATIN)]

        page.route("**/assets/calc/worker.js", _no_python)
        page.goto(url)
        page.wait_for_selector('[data-calc-widget][data-state="error"]', state="attached")
        error = audit(page, axe_source)
        assert (loading, ready, error) == ([], [], [])
    finally:
        page.close()


# --- the keyboard ----------------------------------------------------------------------------

STOP_KEY = """
function stopKey(el) {
  if (el.name) return el.name;  // a radio group is one stop
  const own = [...el.classList].filter((c) => c.startsWith('calc-'));
  return [el.tagName.toLowerCase(), ...own, el.getAttribute('aria-labelledby') || '']
    .filter(Boolean).join('.');
}
"""

FOCUS_STATE = """() => {""" + STOP_KEY + """
  const el = document.activeElement;
  const widget = el && el.closest('[data-calc-widget]');
  if (!widget) return null;
  const s = getComputedStyle(el);
  const outline = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 1;
  const ring = s.boxShadow && s.boxShadow !== 'none';
  return {
    key: stopKey(el),
    tag: el.tagName, type: el.type || '', visible: outline || ring,
    focusVisible: el.matches(':focus-visible'),
  };
}"""

STOPS = """(root) => {""" + STOP_KEY + """
  // what Tab must reach: every enabled, rendered control (one per radio group), each
  // focusable region and summary, the buttons
  const out = [];
  const seen = new Set();
  for (const el of root.querySelectorAll(
      'input, select, textarea, button, summary, [tabindex="0"]')) {
    if (el.disabled || el.closest('[hidden]') || !el.getClientRects().length) continue;
    if (el.closest('details:not([open])') && el.tagName !== 'SUMMARY') continue;
    const key = stopKey(el);
    if (el.type === 'radio') { if (seen.has(key)) continue; }
    seen.add(key);
    out.push(key);
  }
  return out;
}"""


@pytest.mark.parametrize("locale", ["en", "fa"])
def test_calculator_by_keyboard_alone(open_page, locale):
    page, watch = open_page(locale, "calculator")
    wait_ready(page, "calculator")
    r = root(page, "calculator")
    r.locator("details.calc-advanced:not(.calc-plan-fields)").evaluate("d => { d.open = true; }")
    stops = r.evaluate(STOPS)
    # two stops in a row with one key (two summaries) count once, as `reached` counts them
    expected_stops = [k for i, k in enumerate(stops) if i == 0 or stops[i - 1] != k]
    # from the element before the widget's first field, Tab through everything to the end
    r.locator('[name="model"]').focus()
    page.keyboard.press("Shift+Tab")
    reached, invisible = [], []
    for _ in range(200):
        page.keyboard.press("Tab")
        state = page.evaluate(FOCUS_STATE)
        if state is None:
            if reached:
                break  # left the widget: no keyboard trap
            continue
        if not (state["visible"] and state["focusVisible"]):
            invisible.append(state["key"])
        if not reached or reached[-1] != state["key"]:
            reached.append(state["key"])
    assert reached == expected_stops, f"{reached}\n{expected_stops}"
    assert invisible == [], f"no visible focus indicator on {invisible}"

    # operate it with keys only
    r.locator("details.calc-advanced:not(.calc-plan-fields)").evaluate("d => { d.open = false; }")
    model = r.locator('[name="model"]')
    model.focus()
    page.keyboard.press("Home")
    for _ in range(120):  # down the list (grouped by kind and family) to the model
        if model.input_value() == "qwen2.5-7b":
            break
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Tab")  # method: the checked radio
    page.keyboard.press("ArrowUp" if locale != "fa" else "ArrowUp")  # LoRA -> full
    page.keyboard.press("Tab")  # rank
    page.keyboard.press("Tab")  # targets
    page.keyboard.press("Tab")  # seq
    page.keyboard.press("Control+A")
    page.keyboard.type("1024")
    page.keyboard.press("Enter")  # no submit, no reload
    page.keyboard.press("Tab")  # batch
    page.keyboard.press("Tab")  # grad_accum
    page.keyboard.press("Tab")  # ckpt
    page.keyboard.press("Space")
    for _ in range(3):  # the training stack, the objective, my GPU
        page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # unit: GiB -> GB
    page.keyboard.press("ArrowDown" if locale != "fa" else "ArrowDown")
    for _ in range(15):  # past the GPUs group and time and cost: the advanced options' summary
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.tagName === 'SUMMARY' && !!document"
                         ".activeElement.closest('details.calc-advanced:not(.calc-plan-fields)')"):
            break
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")  # optimizer
    page.keyboard.press("ArrowDown")  # adamw -> the next optimizer
    wait_idle(page, "calculator")
    query = {"model": "qwen2.5-7b", "method": "full", "seq": "1024", "ckpt": "false",
             "unit": "GB", "optimizer": "adamw-no-master"}
    assert r.locator('[name="optimizer"]').input_value() == "adamw-no-master"
    assert_figures(figures(page, "calculator"), expected_calculator(query, locale))
    # the copy and reset buttons answer Enter and Space
    r.locator("[data-calc-copy='']").focus()
    page.keyboard.press("Enter")
    page.wait_for_function("el => el.textContent === el.closest('[data-calc-widget]')"
                           ".dataset.msgCopied", arg=r.locator("[data-calc-status]")
                           .element_handle())
    r.locator("button[type='reset']").focus()
    page.keyboard.press("Space")
    page.wait_for_function("el => el.dataset.busy === 'false'", arg=r.element_handle(),
                           timeout=BOOT_TIMEOUT_MS)
    wait_idle(page, "calculator")
    assert_figures(figures(page, "calculator"), expected_calculator({}, locale))
    watch.check()


@pytest.mark.parametrize("locale", LOCALES)
def test_404_page_speaks_the_locale(built_site, locale):
    """Material's 404 heading is English on every locale; ours is the page's language (an
    English heading on a Persian page would be read with the wrong voice)."""
    import re
    import sys

    sys.path.insert(0, str(ROOT))
    try:
        from build_tables import not_found_heading
    finally:
        sys.path.remove(str(ROOT))
    page = built_site / ("404.html" if locale == "en" else f"{locale}/404.html")
    h1 = re.findall(r"<h1>(.*?)</h1>", page.read_text(encoding="utf-8"), re.S)
    assert [h.strip() for h in h1] == [not_found_heading(locale)]
    assert "Not found" not in page.read_text(encoding="utf-8") or locale == "en"
