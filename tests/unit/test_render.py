"""calc.render: the widgets' HTML at build time and in the worker.

Expected figures are computed here by running the engine (calc.engine / calc.fields) directly,
never copied from the rendered output; texts by calc.fmt / calc.i18n for the same locale.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from calc import catalog, engine
from calc.engine import QUICK_PRESETS, estimate, gpu_fit
from calc.errors import CalcError, Problem
from calc.fields import FIELDS, STACK_FIELDS, parse, to_query
from calc.fmt import fmt
from calc.i18n import error_message, locale_dir, t
from calc.render import DEFAULT_QUERY, EXAMPLE_HOURS, FORM_FIELDS, WIDGETS, results, \
    results_json, widget
from calc.types import GpuKind

LOCALES = ("en", "tr", "pt", "ru", "fa")
VOID = {"input", "br", "img", "meta", "link", "hr", "col", "source", "wbr", "area", "base"}
HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "' onmouseover='alert(1)",
    "</textarea><script>alert(2)</script>",
    "&lt;b&gt;&amp;",
    "javascript:alert(1)",
]


# --- a tiny DOM -----------------------------------------------------------------------------


class Node:
    def __init__(self, tag, attrs, parent=None):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children: list = []

    def get(self, name, default=None):
        return self.attrs.get(name, default)

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def find_all(self, pred):
        return [n for n in self.iter() if pred(n)]

    def find(self, pred):
        found = self.find_all(pred)
        return found[0] if found else None

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)


class TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.stack[-1])
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Node(tag, attrs, self.stack[-1]))

    def handle_endtag(self, tag):
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def dom(text: str) -> Node:
    b = TreeBuilder()
    b.feed(text)
    b.close()
    assert b.stack == [b.root], "unclosed elements: " + ", ".join(n.tag for n in b.stack[1:])
    return b.root


def figures(html: str) -> dict[str, tuple[str, str, str]]:
    """data-calc name -> (kind, raw, visible text); each name appears once."""
    out = {}
    for n in dom(html).find_all(lambda n: "data-calc" in n.attrs):
        name = n.get("data-calc")
        assert name not in out, f"data-calc={name} twice"
        if "data-bytes" in n.attrs:
            out[name] = ("bytes", n.get("data-bytes"), n.text())
        else:
            assert "data-value" in n.attrs, name
            out[name] = ("value", n.get("data-value"), n.text())
    return out


def by_id(root: Node, ident: str) -> Node | None:
    return root.find(lambda n: n.get("id") == ident)


# --- every widget, every locale ----------------------------------------------------------------

RAW_KEY = re.compile(r"\b(ui|field|help|component|method|optimizer|targets|mode|bool|unit|error)"
                     r"\.[a-z_][a-z0-9_.-]*")


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("name", WIDGETS)
def test_every_widget_renders_in_every_locale(name, locale):
    html = widget(name, locale)
    assert "\n\n" not in html  # one raw HTML block for Markdown
    root = dom(html)
    tops = [c for c in root.children if isinstance(c, Node)]
    assert len(tops) == 1
    w = tops[0]
    assert (w.tag, w.get("data-calc-widget"), w.get("data-state")) == ("div", name, "loading")
    assert w.get("data-locale") == locale and w.get("dir") == locale_dir(locale)
    assert w.get("id") == f"calc-{name}"
    for key in ("loading", "ready", "error", "timeout", "failure", "copied", "copy-failed"):
        assert w.get(f"data-msg-{key}"), key
    assert w.get("data-msg-error") == t("ui.error_load", locale)
    status = w.find(lambda n: "data-calc-status" in n.attrs)
    assert status.get("role") == "status" and status.text() == t("ui.loading", locale)
    copy = w.find(lambda n: "data-calc-copy" in n.attrs)
    assert copy.tag == "button" and copy.get("type") == "button"
    assert copy.text() == t("ui.copy_link", locale)
    assert w.find(lambda n: "data-calc-results" in n.attrs) is not None
    form = w.find(lambda n: n.tag == "form")
    assert "data-calc-form" in form.attrs

    visible = w.text() + " ".join(n.get("placeholder", "") + n.get("aria-label", "")
                                  for n in w.iter())
    assert not RAW_KEY.search(visible), RAW_KEY.search(visible)
    ids = [n.get("id") for n in w.iter() if n.get("id")]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for n in w.iter():
        if n.tag == "label" and n.get("for"):
            assert n.get("for") in ids
        for ref in (n.get("aria-describedby") or "").split() + (n.get("aria-labelledby") or "").split():
            assert ref in ids, ref
    # every control has an accessible name: a label, or a legend of its radio group
    labelled = {n.get("for") for n in w.iter() if n.tag == "label"}
    for n in w.iter():
        if n.tag in ("input", "select", "textarea") and n.get("type") != "radio":
            assert n.get("id") in labelled, n.get("name")


@pytest.mark.parametrize("name", WIDGETS)
def test_form_fields_carry_the_interface_names(name):
    root = dom(widget(name, "en"))
    names = {n.get("name") for n in root.iter() if n.tag in ("input", "select", "textarea")}
    assert names == set(FORM_FIELDS[name])
    if name == "calculator":
        # every interface field of engine.md is in the form, but the training stack's, which the
        # form gains when it is wired to them (issue 13)
        assert set(FIELDS) - set(STACK_FIELDS) <= names
    # each field has its (hidden, empty) error slot, addressed by field name
    slots = {n.get("data-calc-error-for"): n for n in root.iter() if "data-calc-error-for" in n.attrs}
    assert set(slots) == names
    for field, slot in slots.items():
        assert "hidden" in slot.attrs and slot.text() == ""
        assert slot.get("id") == f"calc-{name}-{field}-error"


def test_common_fields_first_advanced_in_details():
    root = dom(widget("calculator", "en"))
    details = root.find(lambda n: n.tag == "details")
    inside = {n.get("name") for n in details.iter() if n.get("name")}
    assert {"optimizer", "mode", "config", "layers", "hidden", "kv_heads", "tied"} <= inside
    assert not inside & {"model", "method", "rank", "targets", "seq", "batch", "ckpt"}


def test_form_starts_with_the_engines_defaults():
    root = dom(widget("calculator", "en"))
    inputs = parse({})

    def control(name):
        return root.find(lambda n: n.get("name") == name and n.tag in ("input", "select", "textarea")
                         and (n.get("type") != "radio" or "checked" in n.attrs))

    assert control("method").get("value") == inputs.method.value
    assert control("unit").get("value") == inputs.unit.value
    for name in ("ckpt", "flash", "dquant"):
        assert ("checked" in control(name).attrs) is getattr(inputs, name), name
    for name in ("rank", "seq", "batch"):
        assert control(name).get("value") == str(getattr(inputs, name))
    selected = {n.parent.get("name"): n.get("value") for n in root.iter()
                if n.tag == "option" and "selected" in n.attrs}
    assert selected["targets"] == inputs.targets.value
    assert selected["optimizer"] == inputs.optimizer.value and selected["mode"] == inputs.mode.value
    # architecture fields are empty (the preset's own values), shown as placeholders
    arch = inputs.arch
    for name in ("layers", "hidden", "kv_heads"):
        assert control(name).get("value") == ""
        assert control(name).get("placeholder") == fmt(getattr(arch, name), "number", "en")


def test_persian_pages_show_persian_digits_in_the_fields():
    root = dom(widget("cost", "fa"))
    hours = root.find(lambda n: n.get("name") == "hours")
    assert hours.get("value") == "۲۰" and hours.get("dir") == "ltr"
    res = results("quick", {"n": "0.5", "bpp": "custom", "bpp_custom": "10"}, "fa")
    assert res["form"]["n"] == "۰٫۵" and res["form"]["bpp_custom"] == "۱۰"
    assert res["query"]["n"] == "0.5"  # the URL stays ASCII
    again = results("quick", res["form"], "fa")  # and the engine reads the fields back
    assert again["ok"] and again["query"] == res["query"]
    # an invalid value is left exactly as typed
    assert dom(widget("calculator", "fa", {"seq": "12x"})).find(
        lambda n: n.get("name") == "seq").get("value") == "12x"


def test_model_picker_is_a_native_combobox():
    root = dom(widget("calculator", "en"))
    model = root.find(lambda n: n.get("name") == "model")
    assert model.tag == "input" and model.get("value") == "llama-3.1-8b"
    datalist = by_id(root, model.get("list"))
    assert datalist.tag == "datalist"
    values = [o.get("value") for o in datalist.iter() if o.tag == "option"]
    assert values == [*catalog.model_ids(), "custom"]
    labels = [o.text() for o in datalist.iter() if o.tag == "option"][:-1]
    assert labels == [m.name for m in catalog.models()]


def test_quick_presets_and_custom():
    root = dom(widget("quick", "en"))
    bpp = root.find(lambda n: n.get("name") == "bpp")
    assert bpp.tag == "select"
    assert [o.get("value") for o in bpp.iter() if o.tag == "option"] == [
        *(str(v) for v in QUICK_PRESETS.values()), "custom"]
    custom = root.find(lambda n: n.get("data-field") == "bpp_custom")
    assert custom.get("data-show-when") == "bpp=custom" and "hidden" in custom.attrs


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("name", WIDGETS)
def test_first_paint_is_the_default_result(name, locale):
    res = results(name, DEFAULT_QUERY[name], locale)
    assert res["ok"] and res["errors"] == {}
    assert res["html"] in widget(name, locale)


# --- figures against the engine ---------------------------------------------------------------

CONFIG_JSON = json.dumps({
    "model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
    "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
    "head_dim": 64, "vocab_size": 128256, "tie_word_embeddings": True,
})
CALCULATOR_CASES = [
    {},
    {"method": "full"},
    {"method": "qlora", "rank": "64"},
    {"method": "lora", "ckpt": "false", "seq": "4096", "batch": "2"},
    {"model": "llama-2-7b", "targets": "qv"},
    {"model": "llama-3.1-8b", "targets": "attention", "unit": "GB"},
    {"model": "qwen2.5-0.5b", "method": "full", "optimizer": "adamw-8bit"},
    {"model": "llama-3.1-70b", "method": "full"},
    {"config": CONFIG_JSON, "method": "qlora"},
    {"model": "custom", "layers": "24", "hidden": "2048", "ffn": "5632", "heads": "16",
     "vocab": "32000"},
    {"model": "llama-3.1-8b", "kv_heads": "32", "params": "8B"},
]


def expected_calculator(query, locale):
    inputs = parse(query, locale)
    est = estimate(inputs)
    unit = inputs.unit.value
    exp = {name: ("bytes", str(v), fmt(v, unit, locale)) for name, v in est.components}
    exp["total"] = ("bytes", str(est.total), fmt(est.total, unit, locale))
    exp["trainable_params"] = ("value", str(est.trainable_params),
                               fmt(est.trainable_params, "params", locale))
    exp["params"] = ("value", str(inputs.arch.params), fmt(inputs.arch.params, "params", locale))
    for f in gpu_fit(est):
        g = f.gpu
        exp[f"fits.{g.id}"] = ("value", "true" if f.fits else "false", None)
        exp[f"memory.{g.id}"] = ("bytes", str(g.memory_bytes), fmt(g.memory_bytes, unit, locale))
        exp[f"usable.{g.id}"] = ("bytes", str(f.usable), fmt(f.usable, unit, locale))
        if g.kind is GpuKind.DISCRETE:
            exp[f"cards.{g.id}"] = ("value", str(f.cards) if f.cards else "none",
                                    fmt(f.cards, "number", locale) if f.cards else None)
            if g.price_per_hour is None:
                exp[f"price.{g.id}"] = ("value", "none", None)
                exp[f"cost.{g.id}"] = ("value", "none", None)
            else:
                exp[f"price.{g.id}"] = ("value", str(g.price_per_hour),
                                        fmt(g.price_per_hour, "USD", locale))
                if f.cards:
                    c = engine.cost(EXAMPLE_HOURS, g.price_per_hour * f.cards)
                    exp[f"cost.{g.id}"] = ("value", str(c), fmt(c, "USD", locale))
                else:
                    exp[f"cost.{g.id}"] = ("value", "none", None)
    one = [f for f in gpu_fit(est) if f.fits and f.gpu.kind is GpuKind.DISCRETE]
    smallest = min(one, key=lambda f: f.gpu.memory_bytes).gpu.id if one else "none"
    exp["smallest_gpu"] = ("value", smallest, None)
    return est, exp


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("query", CALCULATOR_CASES, ids=lambda q: ",".join(q) or "default")
def test_calculator_figures_match_the_engine(query, locale):
    res = results("calculator", query, locale)
    assert res["ok"], res["errors"]
    got = figures(res["html"])
    est, exp = expected_calculator(query, locale)
    share = got.pop("trainable_share")
    assert float(share[1]) == pytest.approx(est.trainable_params / est.inputs.arch.params)
    assert set(got) == set(exp)
    for name, (kind, raw, text) in exp.items():
        assert got[name][:2] == (kind, raw), name
        if text is not None:
            assert got[name][2] == text, name
    assert res["query"] == to_query(parse(query, locale))


def test_figures_by_hand_for_a_gqa_and_a_non_gqa_model():
    """The default LoRA setting in the textbook formula (mode=planning), totals from the formulas
    of engine.md written out here."""
    for model in ("llama-3.1-8b", "llama-2-7b"):
        a = catalog.model(model).arch
        kv = a.kv_heads * a.head_dim
        per_layer = 16 * ((a.hidden + a.heads * a.head_dim) * 2 + (a.hidden + kv) * 2
                          + (a.hidden + a.ffn) * 3)
        trainable = a.layers * per_layer
        total = a.params * 2 + trainable * (2 + 12) + a.layers * 2048 * a.hidden * 2 + 2**30
        got = figures(results("calculator", {"model": model, "mode": "planning"}, "en")["html"])
        assert got["trainable_params"][1] == str(trainable)
        assert got["total"][1] == str(total)


def test_fa_figures_use_persian_digits():
    got = figures(results("calculator", {}, "fa")["html"])
    assert re.search("[۰-۹]", got["total"][2]) and not re.search("[0-9]", got["total"][2])


ADAPTER_CASES = [{}, {"rank": "64"}, {"d_in": "4096", "d_out": "1024", "rank": "8", "dtype": "fp32"}]


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("query", ADAPTER_CASES, ids=str)
def test_adapter_figures(query, locale):
    res = results("adapter", query, locale)
    d_in, d_out = int(query.get("d_in", 4096)), int(query.get("d_out", 4096))
    rank, dtype = int(query.get("rank", 16)), query.get("dtype", "bf16")
    params = engine.lora_layer_params(d_in, d_out, rank)
    size = engine.adapter_bytes(d_in, d_out, rank, dtype)
    got = figures(res["html"])
    assert got["adapter_params"] == ("value", str(params), fmt(params, "params", locale))
    assert got["adapter_bytes"] == ("bytes", str(size), fmt(size, "MiB", locale, 2))
    if not query:  # engine.md: 131,072 parameters, 262,144 bytes = 0.25 MiB
        assert (params, size) == (131_072, 262_144)


QUICK_CASES = [({}, 112 * 10**9), ({"act": "20"}, 132 * 10**9), ({"n": "0.5", "bpp": "12"}, None),
               ({"bpp": "custom", "bpp_custom": "10", "n": "3"}, 30 * 10**9),
               ({"unit": "GiB", "n": "7", "bpp": "8", "act": "1.5"}, None)]


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("query, spec", QUICK_CASES, ids=lambda x: str(x))
def test_quick_figures(query, spec, locale):
    res = results("quick", query, locale)
    assert res["ok"], res["errors"]
    n = Decimal(query.get("n", "7"))
    bpp = Decimal(query["bpp_custom"] if query.get("bpp") == "custom" else query.get("bpp", "16"))
    act = Decimal(query.get("act", "0"))
    unit = query.get("unit", "GB")
    total = engine.quick_full(n, bpp, act)
    if spec is not None:
        assert total == spec
    got = figures(res["html"])
    assert got["quick_total"] == ("bytes", str(total), fmt(total, unit, locale))
    states = engine.quick_full(n, bpp, 0)
    assert got["quick_states"] == ("bytes", str(states), fmt(states, unit, locale))
    assert res["query"]["bpp"] == format(bpp.normalize(), "f")
    fitting = [g for g in catalog.gpus() if g.kind is GpuKind.DISCRETE and total <= engine.usable_bytes(g)]
    smallest = min(fitting, key=lambda g: g.memory_bytes).id if fitting else "none"
    assert got["smallest_gpu"][1] == smallest


def test_quick_custom_value_round_trips_through_the_form():
    res = results("quick", {"bpp": "custom", "bpp_custom": "10"}, "en")
    assert res["query"]["bpp"] == "10"
    assert res["form"]["bpp"] == "custom" and res["form"]["bpp_custom"] == "10"
    again = results("quick", res["query"], "en")  # the URL form: bpp=10
    assert again["form"] == res["form"] and again["html"] == res["html"]


COST_CASES = [({"gpu": "a40"}, Decimal("14.80")), ({"gpu": "l4", "hours": "20"}, None),
              ({"gpu": "h100-80", "hours": "3.5"}, None), ({"gpu": "", "hours": "10", "price": "2,5"}, None)]


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("query, spec", COST_CASES, ids=lambda x: str(x))
def test_cost_figures(query, spec, locale):
    res = results("cost", query, locale)
    assert res["ok"], res["errors"]
    hours = Decimal(query.get("hours", "20"))
    price = (Decimal(query["price"].replace(",", ".")) if query.get("price")
             else catalog.gpu(query["gpu"]).price_per_hour)
    total = engine.cost(hours, price)
    if spec is not None:
        assert total == spec  # engine.md: 20 h x 0.74 = 14.80
    got = figures(res["html"])
    assert got["cost"] == ("value", str(total), fmt(total, "USD", locale))
    assert got["hours"][1] == str(hours.normalize()) or Decimal(got["hours"][1]) == hours
    assert Decimal(got["price"][1]) == price


# --- invalid input ------------------------------------------------------------------------------


def engine_messages(query, locale, parser=parse):
    """The engine's messages as the widgets show them: on RTL pages with Latin runs between
    isolate marks (render._bidi_text)."""
    from calc.render import _bidi_text

    with pytest.raises(CalcError) as err:
        parser(query, locale)
    return {k: _bidi_text(v, locale) for k, v in err.value.messages(locale).items()}


BAD_CALCULATOR = [
    {"seq": "-1"},
    {"seq": "abc", "batch": "0", "method": "dpo"},
    {"model": "gpt-17"},
    {"rank": "100000"},
    {"config": "{not json"},
    {"model": "custom", "layers": "2"},
    {"kv_heads": "7"},
    {"seq": "NaN", "optimizer": "<script>"},
]


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("query", BAD_CALCULATOR, ids=str)
def test_errors_per_field_are_the_engines_messages(query, locale):
    res = results("calculator", query, locale)
    expected = engine_messages(query, locale)
    assert not res["ok"] and res["errors"] == expected
    assert res["query"] is None
    assert 'data-stale="true"' in res["html"]
    assert next(iter(expected.values())) in res["status"]
    # the stale html is the default result, whose figures are the engine's default
    assert figures(res["html"])["total"][1] == str(estimate(parse({})).total)

    root = dom(widget("calculator", locale, query))
    for field, message in expected.items():
        slot = by_id(root, f"calc-calculator-{field}-error")
        assert slot is not None and slot.text() == message and "hidden" not in slot.attrs
        control = by_id(root, f"calc-calculator-{field}")
        assert control.get("aria-invalid") == "true"
        assert control.get("aria-describedby").split()[0] == slot.get("id")
    results_region = root.find(lambda n: "data-calc-results" in n.attrs)
    assert results_region.get("data-stale") == "true"


def test_quick_custom_errors_land_at_the_custom_field():
    res = results("quick", {"bpp": "custom", "bpp_custom": "abc"}, "ru")
    assert res["errors"] == {"bpp_custom": error_message(Problem.of("bpp", "not_a_number", value="abc"), "ru")}
    res = results("quick", {"bpp": "custom", "bpp_custom": ""}, "tr")
    assert res["errors"] == {"bpp_custom": error_message(Problem.of("bpp", "required"), "tr")}
    res = results("quick", {"n": "-3", "act": "x"}, "en")
    assert res["errors"] == engine_messages({"n": "-3", "act": "x"}, "en", _parse_quick)


def _parse_quick(q, loc):
    from calc.fields import parse_quick
    return parse_quick(q, loc)


def test_cost_and_adapter_errors():
    from calc.fields import parse_adapter, parse_cost

    q = {"gpu": "", "hours": "5"}
    assert results("cost", q, "pt")["errors"] == engine_messages(q, "pt", parse_cost)
    q = {"gpu": "nope", "hours": "-1"}
    assert results("cost", q, "fa")["errors"] == engine_messages(q, "fa", parse_cost)
    q = {"d_in": "16", "rank": "64"}
    assert results("adapter", q, "en")["errors"] == engine_messages(q, "en", parse_adapter)


def test_unit_of_a_small_widget_is_validated():
    res = results("quick", {"unit": "MiB"}, "en")
    assert set(res["errors"]) == {"unit"}


# --- escaping -----------------------------------------------------------------------------------


def assert_inert(html: str):
    root = dom(html)
    for n in root.iter():
        assert n.tag not in ("script", "img", "iframe", "object", "embed", "style"), n.tag
        for attr in n.attrs:
            assert not attr.startswith("on"), attr
        for attr in ("href", "src"):
            assert not (n.get(attr) or "").lower().startswith("javascript:")
    return root


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("name", WIDGETS)
def test_hostile_values_are_escaped(name, value):
    for field in FORM_FIELDS[name]:
        query = {**DEFAULT_QUERY[name], field: value}
        for locale in ("en", "fa"):
            html = widget(name, locale, query)
            root = assert_inert(html)
            if "<" in value:
                assert value not in html
            res = results(name, query, locale)
            # an invalid value stays in its field as text (a valid one is normalised)
            shown = value if not res["ok"] else res["form"].get(field, "")
            control = root.find(lambda n: n.get("name") == field and n.tag in ("input", "textarea"))
            if control is not None and control.get("type") == "text":
                assert control.get("value") == shown
            if control is not None and control.tag == "textarea":
                assert control.text() == shown
            assert_inert(res["html"])
            # messages are plain text: the page puts them in with textContent
            json.dumps(res)


def test_results_json_is_the_workers_entry_point():
    q = {"model": "qwen2.5-7b", "method": "qlora", "seq": ["1024", "512"]}
    out = json.loads(results_json("calculator", json.dumps(q), "tr"))
    assert out == json.loads(json.dumps(results("calculator", q, "tr")))
    assert out["query"]["seq"] == "512"  # repeated key: the last one wins
    for junk in ("", "[1,2]", "{bad", "null"):
        assert json.loads(results_json("calculator", junk, "en"))["ok"] is True


def test_unknown_widget_is_a_build_error():
    with pytest.raises(ValueError):
        widget("nope", "en")
    with pytest.raises(ValueError):
        results("nope", {}, "en")


def test_canonical_query_round_trips():
    for q in CALCULATOR_CASES:
        first = results("calculator", q, "en")
        second = results("calculator", first["query"], "en")
        assert second["query"] == first["query"] and second["html"] == first["html"]


def test_widget_texts_are_in_the_catalogs():
    """Every literal key render.py looks up is in the English catalog (test_i18n checks that
    every locale has every English key)."""
    import calc.render
    from calc.i18n import catalog

    source = Path(calc.render.__file__).read_text(encoding="utf-8")
    keys = set(re.findall(r'_tx\(\s*"([a-z_]+\.[\w.-]+)"', source))
    assert len(keys) > 20
    assert sorted(k for k in keys if k not in catalog("en")) == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(WIDGETS), locale=st.sampled_from(LOCALES),
       query=st.dictionaries(st.sampled_from(sorted({f for fs in FORM_FIELDS.values() for f in fs})),
                             st.one_of(st.text(max_size=20),
                                       st.from_regex(r"-?[0-9]{1,12}([.,][0-9]{1,3})?[kKmMbB]?",
                                                     fullmatch=True)),
                             max_size=5))
def test_any_input_gives_figures_or_messages(name, locale, query):
    res = results(name, query, locale)
    assert isinstance(res["ok"], bool)
    if res["ok"]:
        for kind, raw, text in figures(res["html"]).values():
            assert raw.lower() not in ("nan", "inf", "-inf", "infinity")
            assert not raw.startswith("-")
            assert "nan" not in text.lower()
    else:
        assert res["errors"] and all(isinstance(m, str) and m for m in res["errors"].values())


# --- memoized pieces (the worker renders on every edit) --------------------------------------

EDITS = [
    {},
    {"seq": "4096", "batch": "4", "ckpt": "false"},
    {"method": "full", "optimizer": "adamw-8bit", "unit": "GB"},
    {"method": "qlora", "mode": "detailed", "flash": "false", "rank": "64"},
    {"model": "llama-3.1-405b", "method": "qlora", "targets": "qv"},
    {"model": "qwen2.5-0.5b", "seq": "128", "ckpt": "false"},
    {"model": "custom", "layers": "2", "hidden": "64", "ffn": "128", "heads": "4", "vocab": "100"},
    {"seq": "abc"},
]


def _clear_caches():
    import calc.chart
    import calc.fmt
    import calc.render

    for module in (calc.render, calc.chart, calc.fmt):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


@pytest.mark.parametrize("name", WIDGETS)
@pytest.mark.parametrize("locale", LOCALES)
def test_memoized_results_equal_fresh_ones(name, locale):
    """The same bytes from warm caches as from empty ones, in any order of edits."""
    queries = EDITS if name == "calculator" else [{}, {"rank": "8"}, {"hours": "3"}, {"n": "x"}]
    warm = [results(name, q, locale) for q in queries + queries[::-1]]
    _clear_caches()
    fresh = [results(name, q, locale) for q in queries[::-1] + queries]
    assert warm == fresh[len(queries):] + fresh[:len(queries)]


@pytest.mark.parametrize("query", EDITS)
def test_pieces_isolated_alone_equal_the_region_isolated_whole(query, monkeypatch):
    """Right to left: each piece of the results region is isolated when it is made; the region
    is the same as isolating it whole (isolate_latin distributes over the region's pieces)."""
    import calc.render
    from calc.bidi import isolate_latin

    expected = results("calculator", query, "fa")
    _clear_caches()
    monkeypatch.setattr(calc.render, "isolate_latin", lambda html, *a: html)
    raw = results("calculator", query, "fa")
    monkeypatch.undo()
    _clear_caches()
    assert raw["html"] != expected["html"]  # there is something to isolate
    assert isolate_latin(raw["html"]) == expected["html"]


@pytest.mark.parametrize("query", EDITS[:-1])
def test_fits_on_is_the_spec_rule(query):
    """fits_on against the rule written out: fits when the total is within the usable memory;
    fewest cards n (at most MAX_CARDS) with sharded / n + per-card bytes within it, searched
    one n at a time; a unified-memory machine is one machine."""
    from fractions import Fraction

    est = estimate(parse(query))
    for g in catalog.gpus():
        usable = engine.usable_bytes(g)
        unified = g.kind is GpuKind.UNIFIED
        fits = est.total <= usable
        if unified:
            cards = 1 if fits else None
        else:
            cards = next((n for n in range(1, engine.MAX_CARDS + 1)
                          if Fraction(est.sharded, n) + est.per_card <= usable), None)
        assert engine.fits_on(est.total, est.sharded, usable, unified) == (fits, cards), g.id


@pytest.mark.parametrize("name", WIDGETS)
@pytest.mark.parametrize("locale", ["en", "fa"])
def test_warm_queries_are_new_valid_states(name, locale):
    """The worker's warm-up: new states of the widget (none repeated, none the default one),
    each valid, each one field away from the one before."""
    from calc.render import warm_queries

    queries = [json.loads(q) for q in json.loads(warm_queries(name, locale, runs=40))]
    assert len(queries) == 40
    texts = [json.dumps(q, sort_keys=True) for q in queries]
    assert len(set(texts)) == 40
    default = results(name, DEFAULT_QUERY[name], locale)["query"]
    assert default not in queries
    for before, after in zip([default] + queries, queries):
        assert sum(before[k] != after[k] for k in after) == 1
    for q in queries[:10]:
        assert results(name, q, locale)["errors"] == {}
