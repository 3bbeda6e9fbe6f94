"""Hostile links and hostile typing, in all five locales: a link sent to a customer may arrive
mangled (negative, zero, NaN, 1e400, fractional integers, script tags, path traversal, emoji,
5,000-character values, unknown and repeated keys). Whatever it holds:

- no uncaught error, no dialog, no CSP violation, nothing from the URL inserted as markup;
- no NaN, undefined, Infinity or negative figure anywhere on the page;
- every offending field shows the engine's translated message (`aria-invalid`, and
  `aria-describedby` naming the message first), the figures stay (marked stale);
- the rest of the calculator keeps working: fixing the fields, or resetting the form, brings
  figures equal to calc's own for that input.

One page per locale loads each hostile link in turn (Pyodide boots once per link: the URL is
read when the page starts); the hostile values are also typed into the loaded calculator, which
needs no reload.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from browser_helpers import (LOCALES, PAGES, Watch, assert_figures, expected_calculator,
                             figures, root, set_form, wait_idle, wait_ready)
from calc.render import DEFAULT_QUERY, FORM_FIELDS, results

LONG = "9" * 5000
XSS_IMG = '"><img src=x onerror="window.__xss=1">'
XSS_SCRIPT = "<script>window.__xss=1</script>"
XSS_SVG = "'><svg onload=window.__xss=1>"

#: (widget, list of (key, value) pairs: keys may repeat, the last one wins)
HOSTILE_LINKS = {
    "calculator-every-field": ("calculator", [
        ("seq", "-4096"), ("batch", "0"), ("rank", "NaN"), ("layers", "1e400"),
        ("hidden", "2048.5"), ("model", "../../../etc/passwd"), ("method", XSS_SCRIPT),
        ("targets", "\U0001F600\U0001F525"), ("optimizer", "a" * 5000), ("unit", "GiB"),
        ("unit", XSS_IMG), ("ckpt", "maybe"), ("vocab", LONG), ("heads", "-0"),
        ("config", XSS_SVG), ("zzz", XSS_SCRIPT), ("__proto__", "1"), ("constructor", "x"),
        ("utm_source", "mail"), ("grad_accum", "1e400"),
    ]),
    "calculator-repeated-keys": ("calculator", [
        ("seq", "-1"), ("seq", "1e400"), ("seq", "1024"), ("batch", "2.0"), ("method", "qlora"),
        ("method", "QLoRA"), ("unknown", "\U0001F600" * 500), ("rank", "٣٢"), ("rank", "32"),
        ("model", "LLAMA-2-7B"), ("model", "qwen2.5-7b"), ("ckpt", "TRUE"), ("ckpt", "off"),
        ("grad_accum", "-3"), ("grad_accum", "٤"),
    ]),
    # mixture-of-experts and latent-attention fields (engine.md section 7) and lora_experts
    "calculator-moe-preset": ("calculator", [
        ("model", "mixtral-8x7b"), ("experts_active", "9"), ("expert_ffn", "NaN"),
        ("shared_experts", "-1"), ("dense_layers", "1e400"), ("moe_every", "0"),
        ("lora_experts", XSS_SCRIPT), ("experts", XSS_IMG), ("experts", "8"),
    ]),
    "calculator-moe-custom": ("calculator", [
        ("model", "custom"), ("layers", "32"), ("hidden", "4096"), ("ffn", "14336"),
        ("heads", "32"), ("kv_heads", "8"), ("vocab", "32000"), ("experts", "8"),
        ("experts_active", "9"), ("expert_ffn", "-14336"), ("kv_lora_rank", "512"),
        ("v_head_dim", XSS_IMG), ("q_lora_rank", "1e400"), ("qk_rope_head_dim", "٦٤"),
        ("qk_nope_head_dim", "0x80"), ("lora_experts", "maybe"),
    ]),
    "calculator-moe-on-dense": ("calculator", [
        ("model", "llama-3.1-8b"), ("experts_active", "2"), ("shared_experts", "1"),
        ("dense_layers", "1"), ("kv_lora_rank", "512"), ("lora_experts", "true"),
    ]),
    "adapter": ("adapter", [("d_in", "-1"), ("d_out", "1e400"), ("rank", XSS_SCRIPT),
                            ("dtype", "../../x"), ("dtype", "\U0001F600")]),
    "quick": ("quick", [("n", "NaN"), ("bpp", "custom"), ("bpp_custom", "-0"),
                        ("act", "1e-999999999"), ("act", "1e400"), ("unit", XSS_IMG)]),
    "cost": ("cost", [("gpu", "../../etc/passwd"), ("tokens", "0"), ("tokens_per_s", "NaN"),
                      ("epochs", "1e400"), ("model", XSS_IMG), ("price", LONG), ("price", "-5")]),
}

#: Typed into the loaded calculator, one field at a time.
TYPED_VALUES = ["-1", "0", "-0", "NaN", "1e400", "2048.5", XSS_SCRIPT, XSS_IMG, "../../etc/passwd",
                "\U0001F600", LONG]
TYPED_FIELDS = ["seq", "rank"]  # the model is a list now (a select): nothing to type into

PAGE_CHECK = r"""() => {
  const bad = [];
  const num = /^[+]?\d+(\.\d+)?(e[+-]?\d+)?$/i;
  for (const el of document.querySelectorAll('[data-calc]')) {
    for (const attr of ['data-bytes', 'data-value']) {
      const v = el.getAttribute(attr);
      if (v === null) continue;
      if (/nan|infinity|undefined|null|^\s*$|^-/i.test(v)) bad.push(`${attr}=${v}`);
      if (num.test(v) && !(Number(v) >= 0 && Number.isFinite(Number(v)))) bad.push(`${attr}=${v}`);
    }
    if (el.closest('[data-calc-widget]')) {
      const text = el.textContent;
      if (/NaN|undefined|Infinity|^\s*[-\u2212\u2012\u2013]/.test(text)) bad.push(`text ${text}`);
    }
  }
  // DeepSpeed's "ZeRO-Infinity" is a name (the offload option), not a figure
  const body = document.body.innerText.replaceAll('ZeRO-Infinity', '');
  for (const word of ['NaN', 'undefined', 'Infinity', 'Traceback', '[object Object]']) {
    if (body.includes(word)) bad.push(`page text has ${word}`);
  }
  if (document.querySelector('[onerror], [onload], img[src="x"], svg[onload]')) {
    bad.push('markup from the URL');
  }
  if (window.__xss !== undefined) bad.push('script from the URL ran');
  for (const s of document.querySelectorAll('script:not([src])')) {
    if (s.textContent.includes('__xss')) bad.push('inline script from the URL');
  }
  return bad;
}"""


def last_values(pairs):
    """The query as calc sees it: the last value of a repeated key; only the widget's keys."""
    out = {}
    for k, v in pairs:
        out[k] = v
    return out


@pytest.fixture(scope="module", params=LOCALES)
def hostile_page(request, browser, calc_site):
    """One page per locale, in a context that enforces the CSP, recording dialogs and CSP
    violations."""
    context = browser.new_context()
    context.add_init_script("""
      window.__csp = [];
      document.addEventListener('securitypolicyviolation',
        (e) => window.__csp.push(e.effectiveDirective + ' ' + e.blockedURI), true);
    """)
    page = context.new_page()
    watch = Watch(calc_site.origin).attach(page)
    dialogs: list[str] = []

    def on_dialog(d):
        dialogs.append(f"{d.type}: {d.message}")
        d.dismiss()

    page.on("dialog", on_dialog)
    yield request.param, page, watch, dialogs
    context.close()


def check_clean(page, watch, dialogs) -> None:
    assert page.evaluate(PAGE_CHECK) == []
    assert dialogs == []
    assert page.evaluate("window.__csp") == []
    assert watch.page_errors == [] and watch.foreign() == []
    # a request cancelled because the page navigated on (the favicon, under load) is no failure
    assert [f for f in watch.failed if not f.endswith("net::ERR_ABORTED")] == []


FIELD_STATES = """(root) => {
  const out = {};
  for (const slot of root.querySelectorAll('[data-calc-error-for]')) {
    const control = document.getElementById(slot.id.replace(/-error$/, ''));
    out[slot.dataset.calcErrorFor] = {
      shown: !slot.hidden && slot.offsetParent !== null, text: slot.textContent, slot: slot.id,
      invalid: control && control.getAttribute('aria-invalid'),
      described: ((control && control.getAttribute('aria-describedby')) || '').split(' ')[0],
    };
  }
  return out;
}"""


def check_errors_at_fields(page, name: str, errors: dict[str, str]) -> None:
    """Every offending field: its message visible, the control aria-invalid and described by
    the message first; every other field clean. (One evaluation: the typing test runs this
    after every keystroke's recalculation.)"""
    states = root(page, name).evaluate(FIELD_STATES)
    assert set(errors) <= set(states), set(errors) - set(states)
    for field, st in states.items():
        if field in errors:
            assert st["shown"] and st["text"] == errors[field], (field, st, errors[field])
            assert st["invalid"] == "true" and st["described"] == st["slot"], (field, st)
        else:
            assert not st["shown"] and not st["text"] and st["invalid"] is None, (field, st)


@pytest.mark.parametrize("case", list(HOSTILE_LINKS))
def test_hostile_link(hostile_page, calc_site, case):
    locale, page, watch, dialogs = hostile_page
    name, pairs = HOSTILE_LINKS[case]
    page.goto(calc_site.page_url(locale, PAGES[name], urlencode(pairs)))
    wait_ready(page, name)
    r = root(page, name)
    query = {k: v for k, v in last_values(pairs).items() if k in FORM_FIELDS[name]}
    expected = results(name, {**DEFAULT_QUERY[name], **query}, locale)
    check_errors_at_fields(page, name, expected["errors"])
    check_clean(page, watch, dialogs)
    if expected["ok"]:  # a link whose last values are valid: its figures, not the defaults
        assert r.locator("[data-calc-results]").get_attribute("data-stale") is None
        if name == "calculator":
            assert_figures(figures(page, name), expected_calculator(query, locale))
        return
    assert r.locator("[data-calc-results]").get_attribute("data-stale") == "true"
    first = next(iter(expected["errors"].values()))
    assert first in r.locator("[data-calc-status]").text_content()
    # the values stay in their fields, as text
    for field in ("seq", "d_in", "n", "hours"):
        if field in query:
            assert r.locator(f'[name="{field}"]').input_value() == query[field]
    # the rest keeps working: the form's reset brings back calc's defaults, then an edit works
    r.locator('button[type="reset"]').click()
    wait_idle(page, name)
    assert r.locator("[aria-invalid]").count() == 0
    assert r.locator("[data-calc-results]").get_attribute("data-stale") is None
    if name == "calculator":
        assert_figures(figures(page, name), expected_calculator({}, locale))
        set_form(page, name, {"method": "full", "seq": "1024"}, reset=False)
        assert_figures(figures(page, name), expected_calculator({"method": "full",
                                                                 "seq": "1024"}, locale))
    check_clean(page, watch, dialogs)


def test_hostile_typing(hostile_page, calc_site):
    """Hostile values typed into the loaded calculator: each field marked, one at a time, the
    others untouched; the last valid figures stay; fixing the field brings calc's figures."""
    locale, page, watch, dialogs = hostile_page
    page.goto(calc_site.page_url(locale, "calculator"))
    wait_ready(page, "calculator")
    r = root(page, "calculator")
    good = figures(page, "calculator")
    for field in TYPED_FIELDS:
        control = r.locator(f'[name="{field}"]')
        for value in TYPED_VALUES:
            control.fill(value)
            wait_idle(page, "calculator")
            expected = results("calculator", {field: value}, locale)
            check_errors_at_fields(page, "calculator", expected["errors"])
            if not expected["ok"]:
                assert figures(page, "calculator") == good
                assert r.locator("[data-calc-results]").get_attribute("data-stale") == "true"
            assert control.input_value() == value
        control.fill({"seq": "2048", "rank": "16", "model": "llama-3.1-8b"}[field])
        wait_idle(page, "calculator")
        assert r.locator("[aria-invalid]").count() == 0
        assert_figures(figures(page, "calculator"), expected_calculator({}, locale))
    check_clean(page, watch, dialogs)
