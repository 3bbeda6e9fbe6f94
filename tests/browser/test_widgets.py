"""The calculators in a real browser: real Pyodide, the real calc wheel, the real built site.

Every figure on the page is compared with calc run here in CPython for the same input and
locale: the raw value (data-bytes / data-value) and the visible text (calc.fmt).
"""

from __future__ import annotations

import json
import os
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from browser_helpers import (EXPECTED, LOCALES, PAGES, Watch, assert_figures,
                             expected_calculator, figures, root, set_form, wait_idle, wait_ready)
from calc import CalcError, parse, to_query
from calc.html import bidi_text
from calc.i18n import t
from calc.render import DEFAULT_QUERY, REGISTRY

CONFIG_JSON = json.dumps({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 3072,
    "intermediate_size": 8192, "num_hidden_layers": 28, "num_attention_heads": 24,
    "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 128256,
    "tie_word_embeddings": True, "torch_dtype": "bfloat16",
}, indent=2)

CALCULATOR_CASES = [
    {"method": "full"},
    {"method": "lora", "ckpt": "false"},
    {"method": "qlora", "rank": "64", "seq": "4096", "batch": "2"},
    {"model": "llama-2-7b", "targets": "qv"},  # no grouped-query attention
    {"model": "llama-3.1-8b", "targets": "attention", "unit": "GB"},  # GQA: k, v are narrower
    {"model": "qwen2.5-0.5b", "method": "full", "optimizer": "adamw-8bit", "ckpt": "false"},
    {"config": CONFIG_JSON, "method": "qlora"},
    {"model": "custom", "layers": "24", "hidden": "2048", "ffn": "5632", "heads": "16",
     "kv_heads": "4", "vocab": "32000"},
    {"mode": "detailed", "method": "qlora", "flash": "false"},
    {"method": "full", "grad_accum": "8"},  # the gradients alive at the loss
    {"method": "qlora", "framework": "litgpt", "targets": "qv", "ckpt": "false"},  # previous_step
    {"framework": "torchtune", "loss": "fused"},  # the loss off the peak (off_peak line)
]


def engine_errors(query, locale):
    """The engine's messages as the page shows them (on RTL pages with Latin runs isolated,
    calc.html.bidi_text)."""
    try:
        parse(query, locale)
    except CalcError as err:
        return {k: bidi_text(v, locale) for k, v in err.messages(locale).items()}
    raise AssertionError(f"{query} is valid")


# --- the detailed calculator: one page per locale, shared by the tests below -------------------


@pytest.fixture(scope="module", params=LOCALES)
def calculator(request, site_context, calc_site):
    """The calculator page of one locale: loaded once, first paint captured before Python."""
    locale = request.param
    page = site_context.new_page()
    watch = Watch(calc_site.origin).attach(page)
    page.goto(calc_site.page_url(locale, "calculator"), wait_until="domcontentloaded")
    first_paint = figures(page, "calculator")
    state_at_first_paint = root(page, "calculator").get_attribute("data-state")
    wait_ready(page, "calculator")
    yield locale, page, watch, first_paint, state_at_first_paint
    page.close()


def test_loads_and_takes_over_without_changing_the_figures(calculator):
    locale, page, watch, first_paint, state = calculator
    expected = expected_calculator({}, locale)
    assert state == "loading"
    assert_figures(first_paint, expected)  # rendered at build time by the same Python
    assert_figures(figures(page, "calculator"), expected)  # ...and redrawn by Pyodide
    r = root(page, "calculator")
    assert r.get_attribute("data-state") == "ready"
    status = r.locator("[data-calc-status]").text_content()
    assert status.startswith(t("ui.ready", locale))
    assert page.locator("html").get_attribute("lang").startswith(locale)
    watch.check()


@pytest.mark.parametrize("query", CALCULATOR_CASES, ids=lambda q: ",".join(f"{k}" for k in q))
def test_configurations_match_calc(calculator, query):
    locale, page, watch, *_ = calculator
    set_form(page, "calculator", query)
    assert_figures(figures(page, "calculator"), expected_calculator(query, locale))
    assert root(page, "calculator").locator("[data-calc-results]").get_attribute("data-stale") is None
    watch.check()


def test_editing_one_field_recomputes(calculator):
    locale, page, watch, *_ = calculator
    set_form(page, "calculator", {})
    before = figures(page, "calculator")["total"]
    field = root(page, "calculator").locator('[name="seq"]')
    field.fill("8192")
    wait_idle(page, "calculator")
    after = figures(page, "calculator")
    assert after["total"] != before
    assert_figures(after, expected_calculator({"seq": "8192"}, locale))
    watch.check()


def test_invalid_input_is_marked_at_the_field(calculator):
    locale, page, watch, *_ = calculator
    r = root(page, "calculator")
    set_form(page, "calculator", {"seq": "1024"})
    good = figures(page, "calculator")
    bad = {"seq": "-5", "batch": "zwei"}
    set_form(page, "calculator", bad, reset=False)
    messages = engine_errors({"seq": "-5", "batch": "zwei"}, locale)
    assert set(messages) == {"seq", "batch"}
    for field, message in messages.items():
        control = r.locator(f'[name="{field}"]')
        slot = r.locator(f'[data-calc-error-for="{field}"]')
        assert slot.is_visible() and slot.text_content() == message
        assert control.get_attribute("aria-invalid") == "true"
        described = control.get_attribute("aria-describedby").split()
        assert described[0] == slot.get_attribute("id")
    results = r.locator("[data-calc-results]")
    assert results.get_attribute("data-stale") == "true"
    assert figures(page, "calculator") == good  # the last valid result stays, marked stale
    assert next(iter(messages.values())) in r.locator("[data-calc-status]").text_content()
    assert "NaN" not in results.text_content() and "Traceback" not in page.content()

    # the rest keeps working: fixing one field leaves the other marked
    r.locator('[name="seq"]').fill("512")
    wait_idle(page, "calculator")
    assert r.locator('[name="seq"]').get_attribute("aria-invalid") is None
    assert r.locator('[data-calc-error-for="seq"]').is_hidden()
    assert r.locator('[name="batch"]').get_attribute("aria-invalid") == "true"
    r.locator('[name="batch"]').fill("2")
    wait_idle(page, "calculator")
    assert results.get_attribute("data-stale") is None
    assert_figures(figures(page, "calculator"), expected_calculator({"seq": "512", "batch": "2"}, locale))

    # a broken config.json: the engine's message at the textarea (the details open by itself)
    set_form(page, "calculator", {"config": '{"hidden_size": 4096,'})
    message = engine_errors({"config": '{"hidden_size": 4096,'}, locale)["config"]
    assert r.locator('[data-calc-error-for="config"]').text_content() == message
    assert r.locator('[name="config"]').get_attribute("aria-invalid") == "true"
    set_form(page, "calculator", {})
    assert r.locator("[aria-invalid]").count() == 0
    watch.check()


def test_copy_link_gives_the_canonical_url(calculator):
    locale, page, watch, *_ = calculator
    query = {"model": "mistral-7b", "method": "qlora", "rank": "8"}
    set_form(page, "calculator", query)
    r = root(page, "calculator")
    r.locator("[data-calc-copy='']").click()
    page.wait_for_function("el => el.textContent.length > 0 && el.textContent === el.closest('[data-calc-widget]').dataset.msgCopied",
                           arg=r.locator("[data-calc-status]").element_handle())
    copied = page.evaluate("navigator.clipboard.readText()")
    assert dict(parse_qsl(urlsplit(copied).query)) == to_query(parse(query, locale))
    assert copied == page.url  # the address bar already holds the same state
    watch.check()


def test_right_to_left_and_digits(calculator):
    locale, page, watch, *_ = calculator
    html_dir = page.locator("html").get_attribute("dir")
    total = figures(page, "calculator")["total"][2]
    if locale == "fa":
        assert html_dir == "rtl"
        assert root(page, "calculator").get_attribute("dir") == "rtl"
        assert any("\u06f0" <= ch <= "\u06f9" for ch in total)
        assert not any("0" <= ch <= "9" for ch in total)
        # the bar starts at the right edge
        box = page.evaluate("""() => {
          const svg = document.querySelector('[data-calc-widget] svg.calc-chart');
          const first = svg.querySelector('rect');
          const s = svg.getBoundingClientRect(), r = first.getBoundingClientRect();
          return [s.left, s.right, r.left, r.right];
        }""")
        assert abs(box[1] - box[3]) < 2 and box[2] > box[0] + 2
    else:
        assert html_dir in (None, "ltr")
        assert any("0" <= ch <= "9" for ch in total)
    watch.check()


def test_python_runs_off_the_main_thread(calculator):
    locale, page, watch, *_ = calculator
    # Pyodide was fetched (by the worker) but never by the page itself
    assert any(u.endswith("/assets/pyodide/pyodide.asm.wasm") for u in watch.requests)
    assert any(u.endswith(".whl") for u in watch.requests)
    main_thread = page.evaluate(
        "performance.getEntriesByType('resource').map(e => e.name)")
    assert not any("pyodide" in u or u.endswith(".whl") for u in main_thread)
    assert page.evaluate("typeof window.loadPyodide") == "undefined"
    # no long task anywhere near a Python boot on the main thread (seconds)
    longest = max(page.evaluate("window.__calcLongTasks"), default=0)
    assert longest < 1000, f"main thread blocked for {longest} ms"
    watch.check()


def test_keyboard_alone(calculator):
    locale, page, watch, *_ = calculator
    set_form(page, "calculator", {})
    r = root(page, "calculator")
    r.locator("details.calc-advanced:not(.calc-plan-fields)").evaluate("d => { d.open = false; }")
    page.evaluate("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
    page.evaluate("window.__stillHere = true")

    def active_name():
        return page.evaluate("document.activeElement && document.activeElement.name || ''")

    for _ in range(120):  # Tab from the top of the page to the model field
        page.keyboard.press("Tab")
        if active_name() == "model":
            break
    assert active_name() == "model"
    page.keyboard.press("Tab")
    assert active_name() == "method"  # the checked radio of the group
    page.keyboard.press("ArrowUp")  # LoRA -> full (the previous radio, in either direction)
    for want in ("rank", "targets", "seq"):
        page.keyboard.press("Tab")
        assert active_name() == want
    page.keyboard.press("Control+A")
    page.keyboard.type("4096")
    page.keyboard.press("Enter")  # must not submit the form / reload the page
    page.keyboard.press("Tab")
    assert active_name() == "batch"
    page.keyboard.press("Tab")
    assert active_name() == "grad_accum"
    page.keyboard.press("Tab")
    assert active_name() == "ckpt"
    page.keyboard.press("Space")
    wait_idle(page, "calculator")
    assert page.evaluate("window.__stillHere") is True
    query = {"method": "full", "seq": "4096", "ckpt": "false"}
    assert_figures(figures(page, "calculator"), expected_calculator(query, locale))
    # the advanced options open from the keyboard
    for _ in range(60):  # Tab through the main fields to the advanced options' summary
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.tagName === 'SUMMARY' && "
                         "!!document.activeElement.closest('details.calc-advanced:not(.calc-plan-fields)')"):
            break
    page.keyboard.press("Enter")
    assert r.locator("details.calc-advanced:not(.calc-plan-fields)").get_attribute("open") is not None
    page.keyboard.press("Tab")
    assert active_name() == "optimizer"
    watch.check()


# --- the URL holds the state -------------------------------------------------------------------

URL_QUERY = {"model": "llama-2-7b", "method": "qlora", "rank": "32", "targets": "qv",
             "seq": "1024", "ckpt": "false", "unit": "GB", "optimizer": "adamw-8bit"}


@pytest.mark.parametrize("locale", LOCALES)
def test_url_round_trip(open_page, locale):
    page, watch = open_page(locale, "calculator", urlencode(URL_QUERY))
    r = root(page, "calculator")
    # the form shows the link's settings at once, and the figures follow when Python is up
    assert r.locator('[name="model"]').input_value() == "llama-2-7b"
    assert r.locator('input[name="method"][value="qlora"]').is_checked()
    assert not r.locator('[name="ckpt"]').is_checked()
    wait_ready(page, "calculator")
    assert r.locator('[name="optimizer"]').input_value() == "adamw-8bit"
    assert_figures(figures(page, "calculator"), expected_calculator(URL_QUERY, locale))
    # an edit updates the address bar with the canonical query
    r.locator('[name="seq"]').fill("3000")
    wait_idle(page, "calculator")
    edited = {**URL_QUERY, "seq": "3000"}
    assert dict(parse_qsl(urlsplit(page.url).query)) == to_query(parse(edited, locale))
    assert_figures(figures(page, "calculator"), expected_calculator(edited, locale))
    watch.check()


def test_language_switch_keeps_the_calculation(open_page, calc_site):
    """A colleague's English link, switched to Persian: same page, same settings, same anchor,
    the same calculation formatted for the Persian reader."""
    page, watch = open_page("en", "calculator", urlencode(URL_QUERY))
    page.goto(page.url + "#how-to-use")
    wait_ready(page, "calculator")
    page.locator(".md-header .md-select").first.hover()
    page.locator('.md-select a[hreflang="fa"]').first.click()
    page.wait_for_url("**/fa/calculator/**")
    parts = urlsplit(page.url)
    assert parts.path.endswith("/fa/calculator/") and parts.fragment == "how-to-use"
    assert parse(dict(parse_qsl(parts.query))) == parse(URL_QUERY)  # canonical form of the link
    assert page.locator("html").get_attribute("dir") == "rtl"
    wait_ready(page, "calculator")
    assert_figures(figures(page, "calculator"), expected_calculator(URL_QUERY, "fa"))
    watch.check()


def test_pages_fetch_no_sitemap_and_the_menu_still_switches(open_page):
    """Material's switcher fetched sitemap.xml beside each of a page's five hreflang links on
    every load (site_build/switcher.py takes it out); the language menu keeps working on a
    guide page and keeps its anchor (lang-switch.js)."""
    page, watch = open_page("tr", "how-it-works")
    page.wait_for_load_state("load")
    page.wait_for_timeout(500)  # Material's start-up subscriptions have run
    names = page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
    assert names and not [n for n in names if n.endswith("sitemap.xml")]
    page.goto(page.url.split("#")[0] + "#top")
    page.locator(".md-header .md-select").first.hover()
    page.locator('.md-select a[hreflang="ru"]').first.click()
    page.wait_for_url("**/ru/how-it-works/**")
    assert urlsplit(page.url).path.endswith("/ru/how-it-works/")
    assert urlsplit(page.url).fragment == "top"
    watch.check()


@pytest.mark.parametrize("locale", ["fa"])
def test_bad_values_in_a_link(open_page, locale):
    bad = {"seq": "<img src=x onerror=alert(1)>", "method": "dpo", "batch": "4"}
    page, watch = open_page(locale, "calculator", urlencode(bad))
    wait_ready(page, "calculator")
    r = root(page, "calculator")
    messages = engine_errors(bad, locale)
    assert set(messages) == {"seq", "method"}
    for field, message in messages.items():
        assert r.locator(f'[data-calc-error-for="{field}"]').text_content() == message
    assert r.locator('[name="seq"]').input_value() == bad["seq"]  # as text, never as markup
    assert page.locator("[data-calc-widget] img").count() == 0
    # the build-time default stays, marked stale
    assert r.locator("[data-calc-results]").get_attribute("data-stale") == "true"
    assert_figures(figures(page, "calculator"), expected_calculator({}, locale))
    r.locator('[name="seq"]').fill("2048")
    wait_idle(page, "calculator")
    assert_figures(figures(page, "calculator"), expected_calculator({"batch": "4"}, locale))
    watch.check()


def test_yes_no_words_of_a_link_are_read_as_calc_reads_them(open_page):
    """A hand-edited link with "off" and "yes" in its yes/no fields and an invalid field: the
    page has no result's form to copy, so it sets the checkboxes from the words calc reads as
    yes (told by the worker), and the figures, once the field is fixed, are calc's."""
    link = {"seq": "abc", "ckpt": "off", "flash": "yes", "mode": "detailed"}
    page, watch = open_page("en", "calculator", urlencode(link))
    wait_ready(page, "calculator")
    r = root(page, "calculator")
    assert r.locator("[data-calc-results]").get_attribute("data-stale") == "true"
    assert not r.locator('[name="ckpt"]').is_checked()
    assert r.locator('[name="flash"]').is_checked()
    r.locator('[name="seq"]').fill("2048")
    wait_idle(page, "calculator")
    fixed = {**link, "seq": "2048"}
    assert_figures(figures(page, "calculator"), expected_calculator(fixed, "en"))
    watch.check()


# --- the small widgets -------------------------------------------------------------------------

SMALL_CASES = {
    "adapter": ([{"rank": "64"}, {"d_in": "4096", "d_out": "1024", "rank": "8", "dtype": "fp32"}],
                {"d_in": "-1"}),
    "quick": ([{"act": "20"}, {"n": "14", "bpp": "12"}, {"n": "3", "bpp": "custom", "bpp_custom": "10"},
               {"n": "0.5", "unit": "GiB"}],
              {"n": "abc"}),
    "cost": ([{"gpu": "h100-80", "tokens": "200M"},
              {"model": "llama-3.1-70b", "method": "full", "tokens": "10M", "gpu": "h100-80"},
              {"method": "lora", "tokens": "72M", "epochs": "2", "gpu": "l40s", "gpus": "2",
               "tokens_per_s": "1000", "price": "1.5"}],
             {"tokens": "0"}),
}


# Each small widget in English, in Persian (RTL, Persian digits) and in one of the other
# locales, so that every locale's pages boot at least twice; CALC_BROWSER_FULL=1 runs all
# fifteen. (Every widget in every locale is compared with calc in
# tests/unit/test_widget_figures.py.)
SMALL_MATRIX = ([(n, loc) for n in ("adapter", "quick", "cost") for loc in LOCALES]
                if os.environ.get("CALC_BROWSER_FULL") else
                [("adapter", "en"), ("adapter", "fa"), ("adapter", "tr"),
                 ("quick", "en"), ("quick", "fa"), ("quick", "pt"),
                 ("cost", "en"), ("cost", "fa"), ("cost", "ru")])


@pytest.mark.parametrize("name, locale", SMALL_MATRIX)
def test_small_widget(open_page, name, locale):
    page, watch = open_page(locale, PAGES[name])
    expect = EXPECTED[name]
    assert_figures(figures(page, name), expect(DEFAULT_QUERY[name], locale))  # first paint
    wait_ready(page, name)
    assert_figures(figures(page, name), expect(DEFAULT_QUERY[name], locale))
    cases, bad = SMALL_CASES[name]
    for query in cases:
        set_form(page, name, query)
        assert_figures(figures(page, name), expect({**DEFAULT_QUERY[name], **query}, locale))
    set_form(page, name, bad)
    field = next(iter(bad))
    r = root(page, name)
    assert r.locator(f'[name="{field}"]').get_attribute("aria-invalid") == "true"
    parser = REGISTRY[name].parse  # the widget's own parser
    with pytest.raises(CalcError) as err:
        parser({**DEFAULT_QUERY[name], **bad}, locale)
    assert r.locator(f'[data-calc-error-for="{field}"]').text_content() == \
        bidi_text(err.value.messages(locale)[field], locale)
    assert r.locator("[data-calc-results]").get_attribute("data-stale") == "true"
    watch.check()
