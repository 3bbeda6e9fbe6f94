"""calc.render: the entry points (registry, widget(), results(), results_json(), warm-up,
prime()) and what every widget shares: its markup in every locale, its form, escaping, the
memoized pieces. Each widget's figures against the engine: test_widget_figures.py.

Expected values are computed here by running the engine (calc.engine / calc.fields) directly,
never copied from the rendered output; texts by calc.fmt / calc.i18n for the same locale.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from calc import catalog, engine
from calc.engine import QUICK_PRESETS, estimate
from calc.fields import FIELDS, parse
from calc.plan import PLAN_FIELDS
from calc.scale import SCALE_FIELDS
from calc.fmt import fmt
from calc.i18n import LOCALES, locale_dir, t
from calc.render import DEFAULT_QUERY, FORM_FIELDS, WIDGETS, results, results_json, widget
from calc.types import GpuKind
from widget_dom import Node, by_id, dom, figures

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "' onmouseover='alert(1)",
    "</textarea><script>alert(2)</script>",
    "&lt;b&gt;&amp;",
    "javascript:alert(1)",
]


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

    code = {id(n) for p in w.iter() if p.tag == "pre" for n in p.iter()}  # an export's text
    visible = "".join(c for n in w.iter() if id(n) not in code for c in n.children
                      if isinstance(c, str))
    visible += " ".join(n.get("placeholder", "") + n.get("aria-label", "") for n in w.iter())
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
        # every interface field of engine.md is in the form: the engine's, the training stack's,
        # the scale's and the plan's
        assert set(FIELDS) | set(SCALE_FIELDS) | set(PLAN_FIELDS) <= names
    # each field has its (hidden, empty) error slot, addressed by field name
    slots = {n.get("data-calc-error-for"): n for n in root.iter() if "data-calc-error-for" in n.attrs}
    assert set(slots) == names
    for field, slot in slots.items():
        assert "hidden" in slot.attrs and slot.text() == ""
        assert slot.get("id") == f"calc-{name}-{field}-error"


def test_common_fields_first_advanced_in_details():
    root = dom(widget("calculator", "en"))
    form = root.find(lambda n: n.tag == "form")
    advanced = [n for n in form.children if getattr(n, "tag", "") == "details"][-1]
    inside = {n.get("name") for n in advanced.iter() if n.get("name")}
    assert {"optimizer", "mode", "layers", "hidden", "kv_heads", "tied", "adapter_dtype",
            "loss", "opt_step", "act_offload", "quantized", "kbit_upcast", "compile"} <= inside
    main = {n.get("name") for n in form.children[0].iter() if n.get("name")}
    # issue 13: the training stack is a main field; issue 19: the reader's card too
    assert {"model", "method", "rank", "targets", "seq", "batch", "ckpt", "framework",
            "objective", "gpu"} <= main
    # the GPUs group and the time-and-cost fields have their own groups, outside both
    gpus = root.find(lambda n: n.tag == "fieldset" and "calc-gpus-group" in n.get("class", ""))
    assert {n.get("name") for n in gpus.iter() if n.get("name")} == {"gpus", "sharding", "offload"}
    plan = root.find(lambda n: n.tag == "details" and "calc-plan-fields" in n.get("class", ""))
    assert {n.get("name") for n in plan.iter() if n.get("name")} == {
        "tokens", "epochs", "tokens_per_s", "price"}
    # the config.json paste box comes first for a custom model, before the architecture
    paste = root.find(lambda n: n.get("data-show-when") == "model=custom")
    assert paste.tag == "fieldset" and "hidden" in paste.attrs
    assert [n.get("name") for n in paste.iter() if n.get("name")] == ["config"]
    order = [n.get("name") for n in root.iter() if n.get("name")]
    assert order.index("config") < order.index("layers")
    custom = dom(widget("calculator", "en", {"model": "custom"}))
    assert "hidden" not in custom.find(lambda n: n.get("data-show-when") == "model=custom").attrs


def test_knobs_default_to_the_stack():
    """Each knob's select starts at "as the stack does" (the empty value), its other options
    the enumeration's values with their catalog labels."""
    from calc.fields import KNOB_CHOICES

    root = dom(widget("calculator", "en"))
    for name, enum in KNOB_CHOICES.items():
        select = root.find(lambda n: n.tag == "select" and n.get("name") == name)
        options = [(o.get("value"), o.text()) for o in select.iter() if o.tag == "option"]
        assert options == [("", t("ui.stack_default", "en"))] + [
            (m.value, t(f"{name}.{m.value}", "en")) for m in enum]
        assert [o.get("value") for o in select.iter() if "selected" in o.attrs] == [""]
    framework = root.find(lambda n: n.tag == "select" and n.get("name") == "framework")
    assert [o.get("value") for o in framework.iter() if "selected" in o.attrs] == ["hf"]


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
    root = dom(widget("cost", "fa", {"tokens": "50M", "gpu": "a40", "epochs": "2"}))
    epochs = root.find(lambda n: n.get("name") == "epochs")
    assert epochs.get("value") == "۲" and epochs.get("dir") == "ltr"
    res = results("quick", {"n": "0.5", "bpp": "custom", "bpp_custom": "10"}, "fa")
    assert res["form"]["n"] == "۰٫۵" and res["form"]["bpp_custom"] == "۱۰"
    assert res["query"]["n"] == "0.5"  # the URL stays ASCII
    again = results("quick", res["form"], "fa")  # and the engine reads the fields back
    assert again["ok"] and again["query"] == res["query"]
    # an invalid value is left exactly as typed
    assert dom(widget("calculator", "fa", {"seq": "12x"})).find(
        lambda n: n.get("name") == "seq").get("value") == "12x"


def test_model_picker_groups_dense_and_moe_models():
    """Issue 14: dense models first, then mixture-of-experts models, one <optgroup> per kind and
    family; the options show display names, "custom model" last."""
    root = dom(widget("calculator", "en"))
    model = root.find(lambda n: n.get("name") == "model")
    assert model.tag == "select"
    groups = [n for n in model.children if getattr(n, "tag", "") == "optgroup"]
    kinds = []
    for g in groups[:-1]:
        ids = [o.get("value") for o in g.iter() if o.tag == "option"]
        presets = [catalog.model(i) for i in ids]
        assert {(m.kind, m.family) for m in presets} == {(presets[0].kind, presets[0].family)}
        assert g.get("label") == t(f"ui.model_kind.{presets[0].kind}", "en", family=presets[0].family)
        # a multimodal checkpoint's language model says so after its name, as written here
        text_part = {"gemma-3-4b", "gemma-3-12b", "gemma-3-27b", "llama-4-scout"}
        shown = [m.name + (" (text)" if m.id in text_part else "") for m in presets]
        assert [o.text() for o in g.iter() if o.tag == "option"] == shown
        kinds.append(presets[0].kind)
    assert kinds == sorted(kinds, key=["dense", "moe"].index) and "moe" in kinds
    values = [o.get("value") for o in model.iter() if o.tag == "option"]
    assert sorted(values[:-1]) == sorted(catalog.model_ids()) and values[-1] == "custom"
    assert [o.get("value") for o in model.iter() if "selected" in o.attrs] == ["llama-3.1-8b"]


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


def test_widget_texts_are_in_the_catalogs():
    """Every literal key calc.render and the widgets look up is in the English catalog
    (test_i18n checks that every locale has every English key)."""
    import calc.render
    import calc.widgets
    from calc.i18n import catalog

    files = [Path(calc.render.__file__), *Path(calc.widgets.__file__).parent.glob("*.py")]
    source = "\n".join(f.read_text(encoding="utf-8") for f in files)
    keys = set(re.findall(r'\b(?:t|tx|txc)\(\s*f?"([a-z_]+\.[\w.-]+)"', source))
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


def calc_modules():
    """Every module of the calc package (imported), found by walking it: a module added or
    moved is cleared too, without naming it here."""
    import importlib
    import pkgutil

    import calc

    names = ["calc"] + [m.name for m in pkgutil.walk_packages(calc.__path__, "calc.")]
    return [importlib.import_module(n) for n in names]


def _clear_caches():
    cleared = 0
    for module in calc_modules():
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()
                cleared += 1
    assert cleared > 10  # the widgets', fmt's, the chart's and the catalogs' caches


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
    import calc.widgets.base
    from calc.bidi import isolate_latin

    expected = results("calculator", query, "fa")
    _clear_caches()
    monkeypatch.setattr(calc.widgets.base, "isolate_latin", lambda html, *a: html)
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


# --- the registry and prime() -------------------------------------------------------------------


def test_every_widget_module_is_registered_and_complete():
    """One module per widget under calc/widgets/, each in the registry under its own NAME,
    holding what calc.render needs of it (calc.widgets.base.Widget)."""
    import importlib
    import pkgutil

    import calc.widgets
    from calc.render import REGISTRY

    # calculator_*: the parts of the calculator's module (its form, results, tables, plan)
    modules = [m.name for m in pkgutil.iter_modules(calc.widgets.__path__)
               if m.name != "base" and not m.name.startswith("calculator_")]
    assert sorted(modules) == sorted(WIDGETS) and tuple(REGISTRY) == WIDGETS
    for name, module in REGISTRY.items():
        assert module is importlib.import_module(f"calc.widgets.{name}")
        assert module.NAME == name
        assert set(module.NUMERIC_FIELDS) <= set(module.FORM_FIELDS), name
        assert set(module.DEFAULT_QUERY) <= set(module.FORM_FIELDS), name
        for attr in ("parse", "run", "form"):
            assert callable(getattr(module, attr)), (name, attr)


def test_prime_renders_every_widget_in_every_locale_once(monkeypatch):
    import calc.render

    calls = []
    real = calc.render.results_json
    monkeypatch.setattr(calc.render, "results_json",
                        lambda name, q, loc: calls.append((name, json.loads(q), loc)) or real(name, q, loc))
    assert calc.render.prime() == len(WIDGETS) * len(LOCALES)
    assert sorted((n, loc) for n, _, loc in calls) == sorted(
        (n, loc) for n in WIDGETS for loc in LOCALES)
    assert all(q == DEFAULT_QUERY[n] for n, q, _ in calls)
