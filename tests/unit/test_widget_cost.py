"""The choosing-a-GPU page's cost widget on the plan engine (issue 16; engine.md section 9).

Its figures are `calc.plan.plan`'s (tests/expected_figures.py computes them from the engine's
own parsers and `plan()`, as the browser tests do), one case is worked by hand from the
training FLOPs, the A40's datasheet peak and the calibrated utilisation, and the spec's cost
case (20 hours x 0.74 = 14.80) comes out of a measured rate. Bad input names its field in every
locale.
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from expected_figures import expected_cost  # noqa: E402

from calc.errors import CalcError  # noqa: E402
from calc.fields import parse  # noqa: E402
from calc.flops import train_flops, utilisation  # noqa: E402
from calc.i18n import LOCALES, t  # noqa: E402
from calc.render import DEFAULT_QUERY, results, warm_queries, widget  # noqa: E402
from calc.widgets import cost  # noqa: E402

from widget_dom import dom, figures  # noqa: E402

#: NVIDIA A40 datasheet: 149.7 TFLOPS dense BF16 (without sparsity), example price 0.74 USD an
#: hour (content.md's price list).
A40_PEAK = Fraction("149.7e12")
A40_PRICE = Decimal("0.74")

CASES = [
    {},  # the first paint
    {"gpu": "h100-80"},
    {"method": "lora", "tokens": "200M", "epochs": "3", "gpu": "l40s"},
    {"model": "llama-3.1-70b", "method": "full", "tokens": "10M", "gpu": "h100-80"},
    {"model": "llama-3.1-70b", "method": "qlora", "tokens": "20M", "gpu": "a100-80", "gpus": "4"},
    {"tokens": "72M", "gpu": "a40", "tokens_per_s": "1000"},
    {"gpu": "a40", "price": "0.5", "tokens_per_s": "1800"},
    {"gpu": "a100-40"},  # no example price
    {"gpu": "rtx-3060"},  # no datasheet throughput
    {"gpu": "rtx-3060", "tokens_per_s": "400", "price": "0.2"},
    {"model": "llama-3.1-405b", "method": "full", "gpu": "rtx-4090"},  # no number of cards
    {"model": "mixtral-8x7b", "method": "qlora", "gpu": "l40s", "epochs": "1.5"},
]


def query(case: dict) -> dict:
    return {**DEFAULT_QUERY["cost"], **case}


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_figures_are_the_plans(case, locale):
    res = results("cost", query(case), locale)
    assert res["ok"], res["errors"]
    got = figures(res["html"])
    assert got == {k: v if v[2] is not None else (v[0], v[1], got.get(k, v)[2])
                   for k, v in expected_cost(query(case), locale).items()}
    for kind, raw, text in got.values():
        assert raw not in ("NaN", "Infinity", "-Infinity") and not raw.startswith("-")


def test_the_first_paint_by_hand():
    """QLoRA of Llama 3.1 8B on one A40, 50M tokens, one epoch, the estimate:
    hours = tokens x epochs x FLOPs per token / (cards x peak x u) / 3600,
    cost = hours x cards x price (to the cent)."""
    res = results("cost", DEFAULT_QUERY["cost"], "en")
    got = figures(res["html"])
    inputs = parse({"model": "llama-3.1-8b", "method": "qlora"})
    flops = train_flops(inputs).per_token
    u = utilisation(inputs)
    hours = Fraction(50_000_000) * 1 * flops / (1 * A40_PEAK * u) / 3600
    assert abs(Fraction(got["hours"][1]) - hours) < Fraction(1, 10**15)
    money = Decimal(hours.numerator) / Decimal(hours.denominator) * 1 * A40_PRICE
    assert Decimal(got["cost"][1]) == money.quantize(Decimal("0.01"))
    assert got["cards"][1] == "1" and got["price"][1] == str(A40_PRICE)
    assert got["rate"][1] == "estimate"
    rate = A40_PEAK * u / flops  # tokens per second on one card
    assert abs(Fraction(got["tokens_per_s"][1]) - rate) < Fraction(1, 10**12)
    assert res["status"] == f'{t("ui.cost", "en")}: {got["cost"][2]}'


def test_a_measured_rate_gives_the_specs_cost_case():
    """engine.md: 20 h x 0.74 per hour = 14.80. 72M tokens at a measured 1000 tokens per
    second on one A40 are 72,000 s = 20 h at the A40's example price."""
    got = figures(results("cost", query({"tokens": "72M", "tokens_per_s": "1000"}), "en")["html"])
    assert Decimal(got["hours"][1]) == 20 and got["cost"][1] == "14.80"
    assert got["rate"][1] == "measured"
    # two cards, each at the measured rate, a price of the reader's: half the hours, the same
    # card-hours
    got = figures(results("cost", query({"tokens": "72M", "tokens_per_s": "1000", "gpus": "2",
                                         "price": "1.5"}), "en")["html"])
    assert Decimal(got["hours"][1]) == 10 and got["cards"][1] == "2"
    assert got["price"][1] == "1.5" and got["cost"][1] == "30.00"


def test_the_rankings_are_short_and_marked():
    res = results("cost", DEFAULT_QUERY["cost"], "en")
    root = dom(res["html"])
    for key in ("by-cost", "by-time"):
        table = root.find(lambda n: n.tag == "table" and f"calc-{key}" in n.get("class", ""))
        rows = [n for n in table.iter() if n.tag == "tr" and n.get("data-gpu")]
        assert 1 <= len(rows) <= cost.SHORT_LIST
    html = res["html"]
    assert html.count("calc-cheapest") >= 1 and html.count("calc-fastest") >= 1


def test_the_canonical_query_uses_the_specs_names_and_round_trips():
    res = results("cost", query({"tokens": "1.2B", "epochs": "2", "gpus": "2",
                                 "tokens_per_s": "900", "price": "2.5"}), "en")
    assert res["query"] == {"model": "llama-3.1-8b", "method": "qlora", "tokens": "1200000000",
                            "epochs": "2", "gpu": "a40", "gpus": "2", "tokens_per_s": "900",
                            "price": "2.5"}
    assert res["form"]["tokens"] == "1.2B"  # as typed
    again = results("cost", res["query"], "en")
    assert again["query"] == res["query"] and again["html"] == res["html"]
    # a calculator link's other fields are not read: the form has none of them
    other = results("cost", {**res["query"], "seq": "8192", "rank": "64"}, "en")
    assert other["html"] == res["html"]


def test_the_form_reuses_the_calculators_pickers():
    root = dom(widget("cost", "pt"))
    names = {n.get("name") for n in root.iter() if n.tag in ("input", "select") and n.get("name")}
    assert names == set(cost.FORM_FIELDS)
    options = {n.get("value") for n in root.iter() if n.tag == "option"}
    assert {"llama-3.1-8b", "mixtral-8x7b", "a40", "h100-80", "mac-64"} <= options
    assert "custom" not in options  # the calculator takes custom architectures


BAD = [
    ({"tokens": "0"}, "tokens"), ({"tokens": "-5"}, "tokens"), ({"tokens": "abc"}, "tokens"),
    ({"tokens": "1e20"}, "tokens"), ({"tokens": ""}, "tokens"), ({"tokens": "nan"}, "tokens"),
    ({"epochs": "0"}, "epochs"), ({"epochs": "-1"}, "epochs"), ({"epochs": "inf"}, "epochs"),
    ({"epochs": "5000"}, "epochs"),
    ({"gpu": "nope"}, "gpu"), ({"gpu": ""}, "gpu"),
    ({"gpus": "0"}, "gpus"), ({"gpus": "-2"}, "gpus"), ({"gpus": "100000"}, "gpus"),
    ({"tokens_per_s": "0"}, "tokens_per_s"), ({"tokens_per_s": "-3"}, "tokens_per_s"),
    ({"tokens_per_s": "1e12"}, "tokens_per_s"), ({"tokens_per_s": "NaN"}, "tokens_per_s"),
    ({"price": "0"}, "price"), ({"price": "-2"}, "price"), ({"price": "1e9"}, "price"),
    ({"price": "inf"}, "price"),
    ({"model": "gpt-17"}, "model"), ({"model": "custom"}, "model"), ({"method": "dpo"}, "method"),
]


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("bad, field", BAD, ids=str)
def test_bad_input_names_the_field_in_every_locale(bad, field, locale):
    res = results("cost", query(bad), locale)
    assert not res["ok"] and res["query"] is None
    assert set(res["errors"]) == {field}
    message = res["errors"][field]
    label = t(f"field.{field}", locale)
    assert message.strip() and label != f"field.{field}"
    assert label.replace("\u2066", "").replace("\u2069", "") in \
        message.replace("\u2066", "").replace("\u2069", "")
    if locale != "en":
        assert message != results("cost", query(bad), "en")["errors"][field]
    with pytest.raises(CalcError) as err:  # the widget's own parser says the same
        cost.parse(query(bad), locale)
    assert field in err.value.messages(locale)
    assert 'data-stale="true"' in res["html"]


def test_absurd_but_valid_sizes_give_finite_figures():
    q = query({"tokens": str(10**14), "epochs": "1000", "tokens_per_s": "0.000001",
               "price": "100000", "gpus": "4096"})
    got = figures(results("cost", q, "en")["html"])
    for kind, raw, text in got.values():
        assert raw == "none" or raw in ("estimate", "measured", "scaled") or \
            (Decimal(raw).is_finite() and Decimal(raw) >= 0), raw
        assert "NaN" not in text and "∞" not in text and "inf" not in text.lower()


@pytest.mark.parametrize("locale", ["en", "fa"])
def test_warm_up_steps_the_tokens(locale):
    queries = [json.loads(q) for q in json.loads(warm_queries("cost", locale, runs=5))]
    assert [q["tokens"] for q in queries] == ["50000001", "50000003", "50000006", "50000007",
                                              "50000009"]
