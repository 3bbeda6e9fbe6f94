"""Each widget's figures and messages against the engine: the calculator, the adapter size,
the quick estimate and the cost, in every locale, from the engine's own functions (never copied
from the rendered output), with the spec's worked examples where engine.md gives them.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ (also inside Pyodide)
import expected_figures  # noqa: E402

from calc import catalog, engine
from calc.engine import estimate, gpu_fit
from calc.errors import CalcError, Problem
from calc.fields import parse, to_query
from calc.fmt import fmt
from calc.html import bidi_text
from calc.i18n import LOCALES, error_message
from calc.render import EXAMPLE_HOURS, results, widget
from calc.types import GpuKind
from calc.widgets.adapter import parse as parse_adapter
from calc.widgets.cost import parse as parse_cost
from calc.widgets.quick import parse as parse_quick
from widget_dom import by_id, dom, figures

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
    # training stacks and their knobs (issue 13), planning mode's headline
    {"framework": "unsloth", "method": "qlora"},
    {"framework": "torchtune", "loss": "fused", "opt_step": "foreach", "adapter_dtype": "bf16"},
    {"mode": "planning", "method": "qlora"},
    # several GPUs, offload, DPO (issue 15)
    {"gpus": "4", "sharding": "zero2", "method": "full"},
    {"gpus": "2", "sharding": "zero3", "offload": "optimizer", "method": "full"},
    {"objective": "dpo", "method": "full", "model": "qwen2.5-0.5b"},
    {"act_offload": "true", "seq": "8192"},
    {"framework": "torchtune", "compile": "true", "seq": "4096", "batch": "2"},
    # mixture of experts (issue 14)
    {"model": "qwen3-30b-a3b", "method": "qlora"},
]


def expected_calculator(query, locale):
    """The estimate and every figure of the calculator's results (tests/expected_figures.py)."""
    return estimate(parse(query, locale)), expected_figures.expected_calculator(query, locale)


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("query", CALCULATOR_CASES, ids=lambda q: ",".join(q) or "default")
def test_calculator_figures_match_the_engine(query, locale):
    res = results("calculator", query, locale)
    assert res["ok"], res["errors"]
    got = figures(res["html"])
    est, exp = expected_calculator(query, locale)
    share = got.pop("trainable_share")
    assert float(share[1]) == pytest.approx(est.trainable_params / est.inputs.arch.params)
    for moe in ("experts_share", "active_params"):  # a mixture-of-experts model's line
        got.pop(moe, None)
    assert set(got) == set(exp)
    for name, (kind, raw, text) in exp.items():
        assert got[name][:2] == (kind, raw), name
        if text is not None:
            assert got[name][2] == text, name
    from calc.scale import parse_scale, to_query as scale_query

    assert res["query"] == {**to_query(parse(query, locale)),
                            **scale_query(parse_scale(query, locale))}


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


# The cost widget: tests/unit/test_widget_cost.py.


def test_canonical_query_round_trips():
    for q in CALCULATOR_CASES:
        first = results("calculator", q, "en")
        second = results("calculator", first["query"], "en")
        assert second["query"] == first["query"] and second["html"] == first["html"]


# --- invalid input ------------------------------------------------------------------------------


def engine_messages(query, locale, parser=parse):
    """The engine's messages as the widgets show them: on RTL pages with Latin runs between
    isolate marks (calc.html.bidi_text)."""
    with pytest.raises(CalcError) as err:
        parser(query, locale)
    return {k: bidi_text(v, locale) for k, v in err.value.messages(locale).items()}


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
    return parse_quick(q, loc)


def test_cost_and_adapter_errors():
    q = {"gpu": "", "tokens": "5M"}
    assert results("cost", q, "pt")["errors"] == engine_messages(q, "pt", parse_cost)
    q = {"gpu": "nope", "tokens": "-1"}
    assert results("cost", q, "fa")["errors"] == engine_messages(q, "fa", parse_cost)
    q = {"d_in": "16", "rank": "64"}
    assert results("adapter", q, "en")["errors"] == engine_messages(q, "en", parse_adapter)


def test_unit_of_a_small_widget_is_validated():
    res = results("quick", {"unit": "MiB"}, "en")
    assert set(res["errors"]) == {"unit"}
