"""The calculator as readers use it (issue 19), in Chromium, in every locale: "my GPU" with its
verdict, margin and line on the bar; the GPU table grouped, sorted by verdict, the reader's
card first; the model, GPU and other selects found by typing on the focused select (type-ahead,
Persian pages included); a model named in a link by its display name or Hugging Face id; the
custom model from its paste box with no error before input; product names whole and left to
right; "4k" lengths; an emptied length and a second invalid field both named.

Every expected figure and verdict comes from calc in CPython (the engine, the scale layer, the
catalog, the parsers), never from the page.
"""

from __future__ import annotations

import json
import unicodedata
from urllib.parse import parse_qsl, quote, urlsplit

import pytest

from browser_helpers import (LOCALES, Watch, assert_figures, expected_calculator, figures, root,
                             set_form, wait_idle, wait_ready)
from calc import CalcError, catalog, engine, parse, to_query
from calc.fmt import fmt
from calc.html import bidi_text
from calc.i18n import t
from calc.model_names import hub_id
from calc.scale import cards_needed, parse_scale, scaled
from calc.types import GpuKind

CONFIG_JSON = json.dumps({
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 1536,
    "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12,
    "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
}, indent=2)

#: The table's groups, as the issue names them (the catalog's `use` of each card).
GROUP_OF_USE = {"datacenter": "datacenter", "datacenter-training": "datacenter",
                "inference": "datacenter", "workstation": "workstation", "consumer": "consumer"}
GROUP_ORDER = ("datacenter", "workstation", "consumer")


@pytest.fixture(scope="module", params=LOCALES)
def calc_page(request, site_context, calc_site):
    locale = request.param
    page = site_context.new_page()
    watch = Watch(calc_site.origin).attach(page)
    page.goto(calc_site.page_url(locale, "calculator"))
    wait_ready(page, "calculator")
    yield locale, page, watch
    page.close()


def _my_gpu(query: dict, locale: str) -> tuple[bool, int, str]:
    """(fits, margin bytes, margin text) of the reader's card, from the scale layer."""
    inputs, sc = parse(query, locale), parse_scale(query, locale)
    g = catalog.gpu(query["gpu"])
    assert g.kind is GpuKind.DISCRETE
    need = scaled(inputs, sc).per_gpu_total
    usable = engine.usable_bytes(g)
    margin = abs(usable - need)
    return need <= usable, margin, fmt(margin, inputs.unit.value, locale)


# --- my GPU -------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", [
    {"gpu": "rtx-4090"},  # LoRA on Llama 3.1 8B: more than a 24 GB card holds
    {"gpu": "rtx-4090", "method": "qlora"},
    {"gpu": "h100-80", "method": "full", "gpus": "4"},
])
def test_my_gpu_verdict_margin_and_line_on_the_bar(calc_page, query):
    locale, page, watch = calc_page
    set_form(page, "calculator", query)
    fits, margin, text = _my_gpu(query, locale)
    got = figures(page, "calculator")
    assert got["my_gpu_fits"][:2] == ("value", "true" if fits else "false")
    assert got["margin"] == ("bytes", str(margin), text)
    verdict = root(page, "calculator").locator('[data-calc="my_gpu_fits"]')
    assert "calc-yes" in verdict.get_attribute("class") if fits else "calc-no" in verdict.get_attribute("class")
    assert verdict.is_visible()
    # the card's usable memory is a line on the stacked bar, inside it or at its end
    assert root(page, "calculator").locator("svg.calc-chart .calc-marker").count() == 1
    watch.check()


# --- the GPU table ------------------------------------------------------------------------------

TABLE_JS = """(root) => Array.from(root.querySelectorAll('table.calc-gpus tbody')).map((tb) => ({
  label: tb.querySelector('tr.calc-group-row th').textContent,
  rows: Array.from(tb.querySelectorAll('tr[data-gpu]')).map((tr) => tr.dataset.gpu),
}))"""


@pytest.mark.parametrize("query", [{"gpu": "rtx-3060"}, {"gpu": "a100-80", "method": "qlora"}])
def test_gpu_table_grouped_sorted_by_verdict_with_the_readers_card_first(calc_page, query):
    locale, page, watch = calc_page
    set_form(page, "calculator", query)
    groups = root(page, "calculator").evaluate(TABLE_JS)
    inputs, sc = parse(query, locale), parse_scale(query, locale)
    need = cards_needed(inputs, sc)
    mine = query["gpu"]
    assert groups[0] == {"label": t("ui.gpu_group.mine", locale), "rows": [mine]}
    order = list(catalog.gpu_ids())
    discrete = [g for g in catalog.gpus() if g.kind is GpuKind.DISCRETE and g.id != mine]
    want_labels = [t(f"ui.gpu_group.{name}", locale) for name in GROUP_ORDER
                   if any(GROUP_OF_USE[g.use] == name for g in discrete)]
    assert [g["label"] for g in groups[1:]] == want_labels
    for group in groups[1:]:
        name = GROUP_ORDER[[t(f"ui.gpu_group.{n}", locale) for n in GROUP_ORDER].index(group["label"])]
        members = [g.id for g in discrete if GROUP_OF_USE[g.use] == name]
        assert sorted(group["rows"]) == sorted(members)

        def key(gpu_id):
            n = need[gpu_id][sc.sharding.value]
            return (not (n is not None and n <= sc.gpus), n is None, n or 0, order.index(gpu_id))

        assert group["rows"] == sorted(members, key=key)  # fitting first, then fewest cards
    watch.check()


# --- type-ahead on the focused selects -----------------------------------------------------------


def _type(page, text: str) -> None:
    """Type as a reader's keyboard does: ASCII through Playwright's keyboard, any other letter
    (Persian) as the key event a Persian layout sends (DevTools protocol), so that the select
    sees a keypress with that character."""
    cdp = None
    for ch in text:
        if ch.isascii():
            page.keyboard.type(ch)
        else:
            cdp = cdp or page.context.new_cdp_session(page)
            cdp.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": ch,
                                                "unmodifiedText": ch, "key": ch})
            cdp.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": ch})


def _first_word(text: str) -> str:
    return text.split(" ")[0]


def _cases(locale: str) -> list[tuple[str, str, str]]:
    """(field, prefix the reader types, the value it must select): a prefix that names one
    option only, from the catalog's display names and the locale's labels."""
    mixtral = catalog.model("mixtral-8x22b").name  # "Mixtral 8x22B": the second Mixtral
    out = [("model", mixtral, "mixtral-8x22b"),
           ("model", catalog.model("gpt-oss-120b").name, "gpt-oss-120b"),
           ("gpu", catalog.gpu_label("rtx-4090", locale), "rtx-4090"),
           ("optimizer", t("optimizer.lion", locale), "lion"),
           ("framework", t("framework.unsloth", locale), "unsloth")]
    mac = catalog.gpu_label("mac-36", locale).replace("\u2066", "").replace("\u2069", "")
    out.append(("gpu", mac, "mac-36"))
    targets = t("targets.qv", locale)
    out.append(("targets", _first_word(targets), "qv"))
    return out


def test_type_ahead_finds_options_by_their_text(calc_page):
    locale, page, watch = calc_page
    set_form(page, "calculator", {})
    r = root(page, "calculator")
    r.locator("details.calc-advanced:not(.calc-plan-fields)").evaluate("d => { d.open = true; }")
    for field, prefix, value in _cases(locale):
        texts = r.locator(f'select[name="{field}"] option').evaluate_all(
            "os => os.map(o => o.text)")
        # the prefix names one option only (else the test would prove nothing)
        folded = prefix.casefold()  # it names one option only, else it would prove nothing
        assert sum(x.casefold().startswith(folded) for x in texts) == 1, (field, prefix, texts)
        select = r.locator(f'select[name="{field}"]')
        select.focus()
        page.wait_for_timeout(1100)  # a new type-ahead session (Chromium's is 1 s)
        _type(page, prefix)
        assert select.input_value() == value, (field, prefix, select.input_value())
        wait_idle(page, "calculator")
        page.wait_for_timeout(1100)
    query = {"model": "gpt-oss-120b", "gpu": "mac-36", "optimizer": "lion",
             "framework": "unsloth", "targets": "qv"}
    got = figures(page, "calculator")
    want = expected_calculator(query, locale)
    assert got["total"] == want["total"]
    watch.check()


def test_option_texts_start_with_their_first_letter(calc_page):
    """No isolate or embedding mark before an option's first letter, in any select."""
    locale, page, watch = calc_page
    texts = root(page, "calculator").locator("select option").evaluate_all(
        "os => os.map(o => [o.parentElement.closest('select').name, o.text, o.getAttribute('dir')])")
    for name, text, direction in texts:
        assert not any(unicodedata.category(ch) == "Cf" and ch != "\u200c" for ch in text), (name, text)
        if locale == "fa":
            rtl = any(unicodedata.bidirectional(ch) in ("R", "AL")
                      and unicodedata.category(ch)[0] == "L" for ch in text)
            assert direction == ("rtl" if rtl else "ltr"), (name, text, direction)


# --- a model named in a link -------------------------------------------------------------------


@pytest.mark.parametrize("locale", LOCALES)
def test_a_link_may_name_the_model_by_display_name_or_hugging_face_id(open_page, locale):
    preset = catalog.model("qwen2.5-7b")
    for named in (preset.name, hub_id(preset)):
        page, watch = open_page(locale, "calculator", f"model={quote(named)}&method=qlora")
        wait_ready(page, "calculator")
        r = root(page, "calculator")
        assert r.locator('[name="model"]').input_value() == preset.id
        assert r.locator('[data-calc-error-for="model"]').is_hidden()
        query = {"model": named, "method": "qlora"}
        assert_figures(figures(page, "calculator"), expected_calculator(query, locale))
        r.locator('[name="seq"]').fill("1024")  # the address bar then holds the canonical id
        wait_idle(page, "calculator")
        assert dict(parse_qsl(urlsplit(page.url).query)) == to_query(
            parse({**query, "seq": "1024"}, locale))
        watch.check()


# --- the custom model ----------------------------------------------------------------------------


def test_custom_model_starts_from_the_paste_box_without_errors(calc_page):
    locale, page, watch = calc_page
    set_form(page, "calculator", {})
    r = root(page, "calculator")
    r.locator('[name="model"]').select_option("custom")
    wait_idle(page, "calculator")
    paste = r.locator("fieldset.calc-paste")
    assert paste.is_visible()
    # right under the main fields: before the GPUs group
    assert paste.bounding_box()["y"] < r.locator("fieldset.calc-gpus-group").bounding_box()["y"]
    assert r.locator("[aria-invalid]").count() == 0
    for slot in r.locator("[data-calc-error-for]").all():
        assert slot.is_hidden()
    prompt = r.locator(".calc-prompt")
    assert prompt.is_visible() and prompt.text_content().strip() == t("ui.custom_prompt", locale)
    r.locator('[name="config"]').fill(CONFIG_JSON)
    wait_idle(page, "calculator")
    assert r.locator("[aria-invalid]").count() == 0
    assert_figures(figures(page, "calculator"),
                   expected_calculator({"model": "custom", "config": CONFIG_JSON}, locale))
    watch.check()


# --- product names --------------------------------------------------------------------------------

PRODUCTS_JS = """(root) => Array.from(root.querySelectorAll(
    '.calc-summary .calc-product, table.calc-gpus tbody:first-of-type th .calc-product')).map(
  (el) => [el.textContent, Array.from(el.getClientRects()).map((r) => r.top),
          getComputedStyle(el).direction])"""

#: Where two pieces of the verdict's text are drawn: [left, right, top] of each.
DRAWN_JS = """([root, model, memory]) => {
  const el = root.querySelector('[data-calc="my_gpu_fits"]');
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const i = n.nodeValue.indexOf(model);
    if (i < 0) continue;
    const j = n.nodeValue.indexOf(memory, i + model.length);
    if (j < 0) return null;
    const box = (k, len) => {
      const range = document.createRange();
      range.setStart(n, k); range.setEnd(n, k + len);
      const b = range.getBoundingClientRect();
      return [b.left, b.right, b.top];
    };
    return [box(i, model.length), box(j, memory.length)];
  }
  return null;
}"""


def test_product_names_are_whole_and_left_to_right(calc_page):
    """The reader's card in the summary's verdict: the model number drawn before (to the left
    of) its memory size on the same line, in every locale ("RTX 3060 12 GB", Persian digits on
    fa, never "GB 12 RTX 3060"); on fa the name is one left-to-right element, on one line, in
    the summary and first in the table."""
    locale, page, watch = calc_page
    set_form(page, "calculator", {"gpu": "rtx-3060"})
    r = root(page, "calculator")
    label = catalog.gpu_label("rtx-3060", locale).replace("\u2066", "").replace("\u2069", "")
    memory = fmt(catalog.gpu("rtx-3060").advertised_bytes, "GB", locale, 0)
    digits = memory.split("\u00a0")[0].split(" ")[0]  # "12" / "۱۲", as the label writes it
    assert digits and digits in label
    drawn = page.evaluate(DRAWN_JS, [r.element_handle(), "3060", digits])
    assert drawn is not None, "the card's name is not whole in the verdict"
    model, size = drawn
    assert abs(model[2] - size[2]) < 4, drawn  # one line
    assert size[0] >= model[1] - 0.5, drawn  # left to right: 3060, then its memory
    if locale == "fa":
        found = r.evaluate(PRODUCTS_JS)
        assert len(found) == 2, found
        for text, tops, direction in found:  # bidi runs are fragments of one line
            assert text.replace("\u2066", "").replace("\u2069", "") == label
            assert max(tops) - min(tops) < 4 and direction == "ltr", (text, tops, direction)
    watch.check()


# --- lengths and invalid fields ------------------------------------------------------------------


@pytest.mark.parametrize("written", ["4k", "32K"])
def test_lengths_written_in_thousands(calc_page, written):
    locale, page, watch = calc_page
    set_form(page, "calculator", {"seq": written})
    r = root(page, "calculator")
    assert r.locator("[aria-invalid]").count() == 0
    assert_figures(figures(page, "calculator"), expected_calculator({"seq": written}, locale))
    assert dict(parse_qsl(urlsplit(page.url).query))["seq"] == to_query(parse({"seq": written}))["seq"]
    watch.check()


def test_an_emptied_length_and_a_second_invalid_field_are_both_named(calc_page):
    locale, page, watch = calc_page
    set_form(page, "calculator", {})
    r = root(page, "calculator")
    bad = {"seq": "", "rank": "abc"}
    set_form(page, "calculator", bad, reset=False)
    with pytest.raises(CalcError) as err:
        parse(bad, locale)
    messages = {k: bidi_text(v, locale) for k, v in err.value.messages(locale).items()}
    assert set(messages) == {"seq", "rank"}
    status = r.locator("[data-calc-status]").text_content()
    for field, message in messages.items():
        assert r.locator(f'[data-calc-error-for="{field}"]').text_content() == message
        assert r.locator(f'[name="{field}"]').get_attribute("aria-invalid") == "true"
        assert message in status, (field, status)  # the status line names every field
    assert r.locator("[data-calc-results]").get_attribute("data-stale") == "true"
    watch.check()
