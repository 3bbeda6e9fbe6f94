"""The results region after an edit (docs/assets/calc/patch.js): exactly Python's markup, with
only what changed touched, and the reader's open <details> left open.

The expected markup is calc.render's, run here in CPython for the form's state as the page
sends it, and serialized by the browser's own parser; the page's region must serialize the
same after each edit of a sequence whose results differ in structure (rows, parts, notes).
"""

from __future__ import annotations

import json

import pytest

from browser_helpers import root, set_form, wait_idle, wait_ready
from calc.render import results_json

# Each differs from the one before in the results' structure, not only in figures.
SEQUENCE = [
    {"method": "full"},
    {"method": "qlora", "rank": "64", "seq": "4096", "batch": "2"},
    {"model": "qwen2.5-0.5b", "method": "full", "optimizer": "adamw-8bit", "ckpt": "false"},
    {"mode": "detailed", "method": "qlora", "flash": "false"},
    {"method": "qlora", "framework": "litgpt", "targets": "qv", "ckpt": "false"},
    {"framework": "torchtune", "loss": "fused", "unit": "GB"},
    {},
]

# The form's state as page.js sends it (its formQuery): enabled named controls, a checked
# radio's value, a checkbox as "true"/"false".
FORM_JS = """(root) => {
  const query = {};
  for (const el of root.querySelector('[data-calc-form]').elements) {
    if (!el.name || el.disabled) continue;
    if (el.type === 'radio') { if (el.checked) query[el.name] = el.value; }
    else if (el.type === 'checkbox') query[el.name] = el.checked ? 'true' : 'false';
    else if (!['button', 'submit', 'reset'].includes(el.type)) query[el.name] = el.value;
  }
  return query;
}"""

# Python's HTML through the browser's parser into a copy of the region, compared node by node
# (isEqualNode: the same elements, attributes and text; the order of an element's attributes
# is not part of the document), with both serializations for the message.
SAME_JS = """([root, html]) => {
  const region = root.querySelector('[data-calc-results]');
  const t = document.createElement('template');
  t.innerHTML = html;
  const copy = region.cloneNode(false);
  copy.append(t.content);
  return [region.isEqualNode(copy), region.innerHTML, copy.innerHTML];
}"""


@pytest.fixture(scope="module", params=["en", "fa"])
def calculator(request, site_context, calc_site):
    page = site_context.new_page()
    page.goto(calc_site.page_url(request.param, "calculator"))
    wait_ready(page, "calculator")
    yield request.param, page
    page.close()


def test_each_edit_leaves_exactly_pythons_markup(calculator):
    locale, page = calculator
    for query in SEQUENCE:
        set_form(page, "calculator", query)
        form = root(page, "calculator").evaluate(FORM_JS)
        expected = json.loads(results_json("calculator", json.dumps(form), locale))
        assert expected["ok"], (query, expected["errors"])
        same, got, want = page.evaluate(
            SAME_JS, [root(page, "calculator").element_handle(), expected["html"]])
        assert same, (query, got, want)


def test_unchanged_nodes_stay_and_open_details_stay_open(calculator):
    _, page = calculator
    set_form(page, "calculator", {})
    results = root(page, "calculator").locator("[data-calc-results]")
    # mark the first table's element object, and open the results' first <details>
    results.evaluate("r => { r.querySelector('table').markedNode = true;"
                     " r.querySelector('details').open = true; }")
    before = results.evaluate("r => r.querySelector('[data-calc=\"total\"]').textContent")
    field = root(page, "calculator").locator('[name="seq"]')
    field.fill("3000")
    wait_idle(page, "calculator")
    after = results.evaluate("r => r.querySelector('[data-calc=\"total\"]').textContent")
    assert after != before  # the figures did change
    # the same element object (not a copy with the same markup): only what differed was set
    assert results.evaluate("r => r.querySelector('table').markedNode === true")
    assert results.evaluate("r => r.querySelector('details').open")


# The theme's focus marks on the field being typed in: attributes that are not the page's writes.
THEME_MARKS = json.dumps(["class", "data-focus-visible-added"])

# Records every change of the form's markup from now on (the page's own writes after an edit).
WATCH_FORM_JS = """(root) => {
  const form = root.querySelector('[data-calc-form]');
  window.formWrites = [];
  new MutationObserver((records) => {
    for (const r of records) {
      if (THEME_MARKS.includes(r.attributeName)) continue;
      window.formWrites.push(`${r.type} ${r.attributeName || ''} ${r.target.id || r.target.nodeName}`);
    }
  }).observe(form, { attributes: true, childList: true, subtree: true, characterData: true });
}""".replace("THEME_MARKS", THEME_MARKS)


def test_an_edit_without_errors_writes_nothing_into_the_form(calculator):
    """The error slots, their controls' aria attributes and the dependent fields are written
    only when they change: an edit that adds or clears no error leaves the form's markup as it
    was, and an error shown and then cleared leaves the control as it was at first."""
    _, page = calculator
    set_form(page, "calculator", {})
    widget = root(page, "calculator")
    seq = widget.locator('[name="seq"]')
    first = seq.evaluate("el => [el.getAttribute('aria-describedby'), el.getAttribute('aria-invalid')]")
    widget.evaluate(WATCH_FORM_JS)
    for value in ("3000", "3072", "4096"):
        seq.fill(value)
        wait_idle(page, "calculator")
    writes = page.evaluate("window.formWrites")
    assert writes == [], sorted(set(writes))
    # an error, then none: the slot shows and hides, the control's attributes come back
    seq.fill("-5")
    wait_idle(page, "calculator")
    slot = widget.locator('[data-calc-error-for="seq"]')
    assert slot.is_visible() and slot.text_content().strip()
    assert seq.get_attribute("aria-invalid") == "true"
    assert seq.get_attribute("aria-describedby").split()[0] == slot.get_attribute("id")
    seq.fill("2048")
    wait_idle(page, "calculator")
    assert slot.is_hidden() and slot.text_content() == ""
    assert seq.evaluate("el => [el.getAttribute('aria-describedby'), el.getAttribute('aria-invalid')]") == first


# Every write into a form control's value or checked state, and every attribute written on an
# element of a calculator form, from before the page's scripts run (THEME_MARKS aside).
WATCH_START_JS = """(() => {
  window.formWrites = [];
  const inForm = (el) => el && el.closest && el.closest('[data-calc-form]');
  const spy = (proto, prop) => {
    const d = Object.getOwnPropertyDescriptor(proto, prop);
    Object.defineProperty(proto, prop, { ...d, set(v) {
      if (inForm(this)) window.formWrites.push(`${prop} ${this.name}`);
      return d.set.call(this, v);
    } });
  };
  spy(HTMLInputElement.prototype, 'value');
  spy(HTMLInputElement.prototype, 'checked');
  spy(HTMLSelectElement.prototype, 'value');
  spy(HTMLTextAreaElement.prototype, 'value');
  new MutationObserver((records) => {
    for (const r of records) {
      if (THEME_MARKS.includes(r.attributeName)) continue;
      if (inForm(r.target)) window.formWrites.push(`attribute ${r.attributeName} ${r.target.id}`);
    }
  }).observe(document, { attributes: true, subtree: true });
})();""".replace("THEME_MARKS", THEME_MARKS)


@pytest.mark.parametrize("locale, query", [("en", ""), ("en", "rank=32&seq=4096"),
                                           ("fa", "rank=32&seq=4096")])
def test_starting_up_writes_into_the_form_only_what_it_lacks(browser, calc_site, locale, query):
    """The page's start and Python's first answer (the canonical form: fill) write a control
    only where its value differs, and keep the controls' own descriptions out of the page: a
    page without a link's inputs starts without a write into its form; with a link, only the
    link's fields are written: once where the link's value is calc's canonical one (en), and
    once more where calc writes it otherwise (fa: in Persian digits)."""
    fields = [pair.split("=")[0] for pair in query.split("&") if pair]
    context = browser.new_context()
    try:
        context.add_init_script(WATCH_START_JS)
        page = context.new_page()
        page.goto(calc_site.page_url(locale, "calculator", query))
        wait_ready(page, "calculator")
        writes = page.evaluate("window.formWrites")
        once = sorted(f"value {name}" for name in fields)
        assert sorted(writes) == (once if locale == "en" else sorted(once * 2)), writes
        if locale == "fa":
            assert root(page, "calculator").locator('[name="rank"]').input_value() == "۳۲"
    finally:
        context.close()
