"""Time and cost to train, the most that fits (calc.flops, calc.plan; spec engine.md section 9).

Expected figures are computed here from the spec's formula and the models' published
config.json values, the vendors' datasheets and the published runs, not taken from the code.
"""

from __future__ import annotations

import json
import statistics
import time
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from calc.catalog import gpu, gpus, models
from calc.engine import estimate
from calc.errors import CalcError
from calc.fields import parse
from calc.flops import active_params, calibration, train_flops, utilisation
from calc.i18n import LOCALES, t
from calc.plan import MAX_BATCH, MAX_SEQ, fits_cards, max_fit, parse_plan, plan
from calc.scale import Scale, scaled

DATA = Path(__file__).resolve().parents[2] / "calc" / "data"

# Llama 3.2 1B, config.json on the Hub: 16 layers, hidden 2048, 32 heads of 64, vocabulary
# 128256, tied embeddings; 1,235,814,400 parameters (safetensors total).
N_1B, L_1B, H_1B, Q_1B, V_1B, D_1B = 1_235_814_400, 16, 32, 64, 128_256, 2048
# Llama 3.1 8B: 32 layers, hidden 4096, 32 heads of 128, kv 8 x 128, FFN 14336, vocabulary
# 128256, untied; 8,030,261,248 parameters.
N_8B, L_8B, H_8B, Q_8B, V_8B, D_8B, F_8B, KV_8B = (8_030_261_248, 32, 32, 128, 128_256, 4096,
                                                    14_336, 1024)


def q(**kw):
    return parse({k: str(v) for k, v in kw.items()})


# --- FLOPs per token ----------------------------------------------------------------------


def test_full_fine_tuning_is_6n_plus_attention():
    f = train_flops(q(model="llama-3.2-1b", method="full", seq=2048, ckpt="false"))
    attn = L_1B * H_1B * Q_1B * 2048  # L H Q T
    assert f.per_token == 6 * N_1B + 12 * attn == 8_220_192_768
    assert f.get("forward") == 2 * N_1B + 4 * attn
    assert f.get("backward_activations") == 2 * N_1B + 8 * attn
    assert f.get("backward_weights") == 2 * N_1B
    assert f.get("recompute") == 0


def test_recomputation_adds_one_forward_of_the_layers():
    off = train_flops(q(model="llama-3.2-1b", method="full", seq=2048, ckpt="false"))
    on = train_flops(q(model="llama-3.2-1b", method="full", seq=2048, ckpt="true"))
    attn = L_1B * H_1B * Q_1B * 2048
    # the layers' products (tied: the output head is the embedding matrix) + their attention
    assert on.per_token - off.per_token == 2 * (N_1B - V_1B * D_1B) + 4 * attn == 2_214_727_680


def test_lora_is_4n_plus_the_adapter():
    f = train_flops(q(model="llama-3.1-8b", method="lora", rank=16, targets="all-linear",
                      seq=2048, ckpt="false"))
    n = N_8B - V_8B * D_8B  # untied: the input embedding is a lookup, no product
    per_layer = 16 * ((D_8B + D_8B) + 2 * (D_8B + KV_8B) + (D_8B + D_8B) + 3 * (D_8B + F_8B))
    adapter = L_8B * per_layer
    assert adapter == 41_943_040
    attn = L_8B * H_8B * Q_8B * 2048
    assert f.per_token == 4 * n + 6 * adapter + 12 * attn
    assert f.get("backward_weights") == 2 * adapter


def test_the_rules_of_thumb_at_short_length():
    """At one token of context the attention term vanishes: 6 N full, 4 N LoRA, +2 N with
    recomputation (a tied model: every parameter is a matrix product)."""
    full = train_flops(q(model="llama-3.2-1b", method="full", seq=1, ckpt="false")).per_token
    lora = train_flops(q(model="llama-3.2-1b", method="lora", seq=1, ckpt="false")).per_token
    assert abs(full / N_1B - 6) < 0.001
    # LoRA r = 16 on all linear layers: 16 x (q 2048+2048, k and v 2048+512, o 2048+2048,
    # gate and up 2048+8192, down 8192+2048) per layer, 16 layers = 11,272,192 (0.9 % of N)
    adapter = 16 * 16 * (4096 + 2 * 2560 + 4096 + 3 * 10240)
    assert adapter == 11_272_192
    attn = L_1B * H_1B * Q_1B
    assert lora == 4 * N_1B + 6 * adapter + 12 * attn and abs(lora / N_1B - 4) < 0.06
    ckpt = train_flops(q(model="llama-3.2-1b", method="full", seq=1, ckpt="true")).per_token
    assert abs((ckpt - full) / (N_1B - V_1B * D_1B) - 2) < 0.001


def test_active_params_is_the_moe_seam():
    arch = q(model="llama-3.1-8b").arch
    assert active_params(arch) == arch.params


# --- the catalog's datasheet figures ------------------------------------------------------

# Dense BF16 TFLOPS and GB/s as the datasheets print them (sparse-only figures halved).
DATASHEET = {
    "t4": (65, 320), "l4": (121, 300), "a10": (125, 600), "rtx-3090": (71, 936),
    "rtx-4090": (Decimal("165.2"), 1008), "rtx-5090": (Decimal("209.5"), 1792),
    "a100-40": (312, 1555), "a40": (Decimal("149.7"), 696), "l40s": (Decimal("362.05"), 864),
    "rtx-a6000": (Decimal("154.8"), 768), "rtx-6000-ada": (Decimal("364.25"), 960),
    "a100-80": (312, 2039), "h100-80": (Decimal("989.5"), 3350),
    "rtx-pro-6000": (Decimal("503.8"), 1792), "h200-141": (Decimal("989.5"), 4800),
    "b200-180": (2250, 8000), "mi300x": (Decimal("1307.4"), 5300),
}


def test_peak_and_bandwidth_from_the_datasheets():
    for g in gpus():
        if g.id in DATASHEET:
            assert (g.peak_bf16_tflops, g.bandwidth_gbs) == DATASHEET[g.id], g.id
        elif g.id == "rtx-3060":
            assert g.peak_bf16_tflops is None and g.bandwidth_gbs == 360
        else:
            assert g.vendor == "Apple" and g.peak_bf16_tflops is None and g.bandwidth_gbs is None
    about = " ".join(json.loads((DATA / "gpus.json").read_text())["_about"]["sources"])
    for gid in DATASHEET:
        assert gid in about, gid  # every card's source is named


# --- calibration --------------------------------------------------------------------------


def _implied(run: dict) -> Fraction:
    """A run's utilisation, computed here from throughput.json with the spec's formula."""
    preset = next(m for m in models() if m.id == run["model"])
    a = preset.arch
    n = a.params - (0 if a.tied else a.vocab * a.hidden)
    layers_only = a.params - a.vocab * a.hidden * (1 if a.tied else 2)
    full = run["method"] == "full"
    qd, kv = a.heads * a.head_dim, a.kv_heads * a.head_dim
    shapes = {"q": a.hidden + qd, "k": a.hidden + kv, "v": a.hidden + kv, "o": qd + a.hidden,
              "gate": a.hidden + a.ffn, "up": a.hidden + a.ffn, "down": a.ffn + a.hidden}
    mods = {"qv": "qv", "attention": "qkvo"}.get(run.get("targets"), None)
    names = ["q", "v"] if mods == "qv" else ["q", "k", "v", "o"] if mods else list(shapes)
    adapter = 0 if full else a.layers * run["rank"] * sum(shapes[m] for m in names)
    attn = a.layers * a.heads * a.head_dim * run["seq"]
    flops = 4 * (n + adapter) + 2 * (n if full else adapter) + 12 * attn
    if run["ckpt"]:
        flops += 2 * (layers_only + adapter) + 4 * attn
    tps = Fraction(run["tokens_per_s"]) / (1 if run["per_card"] else run["cards"])
    return tps * flops / gpu(run["gpu"]).peak_flops


RUNS = json.loads((DATA / "throughput.json").read_text())["runs"]


def test_at_least_eight_published_runs_each_cited():
    assert len(RUNS) >= 8
    assert len({r["id"] for r in RUNS}) == len(RUNS)
    for r in RUNS:
        assert r["source"].startswith("https://github.com/") and "/blob/" in r["source"], r["id"]
        assert r["model"] and r["gpu"] and r["tokens_per_s"] > 0 and r["kind"], r["id"]
        assert 0 < _implied(r) < 1, r["id"]  # physically possible on the card


def test_calibration_is_the_median_per_method():
    for method in ("full", "lora", "qlora"):
        implied = [_implied(r) for r in RUNS if r["method"] == method]
        assert implied, method
        assert utilisation(q(method=method)) == statistics.median(implied)


def test_median_error_on_the_published_runs_within_25_percent():
    cal = calibration()
    errors = []
    for r in RUNS:  # estimated time / measured time - 1 = u_run / u_method - 1
        errors.append(abs(_implied(r) / cal.get(q(method=r["method"]).method) - 1))
    assert statistics.median(errors) <= Fraction(1, 4)
    assert cal.median_abs_error() == statistics.median(errors)


# --- time and cost ------------------------------------------------------------------------


def test_the_spec_cost_case_20_hours_at_0_74():
    # 72,000,000 tokens at 1000 tokens per second: 72,000 s = 20 h exactly
    p = plan(q(model="llama-3.2-1b"), parse_plan({"tokens": "72000000", "gpu": "l4",
                                                   "tokens_per_s": "1000", "price": "0.74"}))
    card = p.card("l4")
    assert card.hours == 20 and card.cost == Decimal("14.80") and card.source == "measured"


def test_measured_rate_hours_and_cost_by_hand():
    inputs = q(model="llama-3.2-1b", method="lora")
    base = {"tokens": "100M", "epochs": "2", "gpu": "h100-80", "tokens_per_s": "10000"}
    one = plan(inputs, parse_plan(base)).card("h100-80")
    # 2e8 tokens / 1e4 per second = 20,000 s = 5.5556 h; x 4.99 (catalog example) = 27.72
    assert abs(one.hours - Decimal(20_000) / 3600) < Decimal("1e-20")
    assert one.cost == Decimal("27.72") and one.cards == 1
    two = plan(inputs, parse_plan({**base, "gpus": "2"})).card("h100-80")
    assert abs(two.hours - Decimal(10_000) / 3600) < Decimal("1e-20")
    assert two.cost == Decimal("27.72") and two.cards == 2  # twice the cards, the same cost
    own = plan(inputs, parse_plan({**base, "price": "3"})).card("h100-80")
    assert own.cost == Decimal("16.67")  # 5.5556 h x 3


def test_a_measurement_scales_to_the_other_cards_by_peak():
    inputs = q(model="llama-3.2-1b", method="lora")
    p = plan(inputs, parse_plan({"tokens": "100M", "gpu": "h100-80", "tokens_per_s": "10000"}))
    a100 = p.card("a100-80")
    rate = Decimal(10_000) * 312 / Decimal("989.5")  # the A100's peak over the H100's
    assert a100.source == "scaled" and abs(a100.tokens_per_s - rate) < Decimal("1e-15")
    assert abs(a100.hours - Decimal(10**8) / rate / 3600) < Decimal("1e-15")


def test_estimated_hours_follow_the_formula():
    inputs = q(model="llama-3.2-1b", method="full", seq=2048, ckpt="false")
    p = plan(inputs, parse_plan({"tokens": "50M", "epochs": "3"}))
    card = p.card("h100-80")
    u = utilisation(inputs)
    expected = Fraction(50_000_000 * 3 * 8_220_192_768) / (Fraction("989.5e12") * u) / 3600
    assert abs(Fraction(card.hours) - expected) < Fraction(1, 10**20)
    assert card.source == "estimate" and p.calibrated


def test_ranking_by_cost_and_by_time():
    p = plan(q(model="llama-3.2-1b", method="lora"), parse_plan({"tokens": "1B"}))
    priced = {g.id: g.price_per_hour for g in gpus() if g.price_per_hour is not None}
    # every card with a peak holds this 1B LoRA run on one card: hours go as 1 / peak
    by_time = sorted(DATASHEET, key=lambda g: (-Decimal(DATASHEET[g][0]), g not in priced,
                                               priced.get(g, 0)))
    assert [c.gpu for c in p.by_time] == by_time
    by_cost = sorted(priced, key=lambda g: priced[g] / Decimal(DATASHEET[g][0]))
    assert [c.gpu for c in p.by_cost] == by_cost
    assert [c.gpu for c in p.cards if c.cheapest] == [by_cost[0]] == ["l40s"]
    assert [c.gpu for c in p.cards if c.fastest] == [by_time[0]] == ["b200-180"]
    costs = [c.cost for c in p.by_cost]
    assert costs == sorted(costs) and all(c >= 0 for c in costs)
    mac = p.card("mac-16")  # fits, but no datasheet throughput: no time, not ranked
    assert mac.fits and mac.hours is None and mac.gpu not in [c.gpu for c in p.by_time]


def test_cards_that_do_not_fit_are_not_ranked():
    p = plan(q(model="llama-3.1-405b", method="full"), parse_plan({"tokens": "1M"}))
    mac = p.card("mac-128")
    assert not mac.fits and mac.hours is None and mac.cost is None
    h100 = p.card("h100-80")  # ZeRO-3 across enough cards: ranked with that count
    assert h100.cards > 1 and h100.hours is not None


def test_no_nan_infinite_or_negative_figures_at_the_bounds():
    p = plan(q(model="llama-3.2-1b"), parse_plan(
        {"tokens": str(10**14), "epochs": "1000", "gpu": "l4", "tokens_per_s": "1e-24",
         "price": "100000", "gpus": "4096"}))
    for c in p.cards:
        for v in (c.hours, c.cost):
            assert v is None or (v.is_finite() and v >= 0)
    assert p.card("l4").cost > 0


# --- the most that fits -------------------------------------------------------------------

USABLE_4090 = 24 * 2**30 * 95 // 100  # 95 % of 24 GiB


@pytest.mark.parametrize("mode", ["planning", "detailed"])
def test_longest_seq_and_largest_batch_on_one_card(mode):
    inputs = q(model="llama-3.1-8b", method="lora", mode=mode)
    mf = max_fit(inputs, "rtx-4090")
    assert mf.seq is not None and 2 <= mf.seq < MAX_SEQ and not mf.seq_at_bound
    total = lambda **kw: estimate(q(model="llama-3.1-8b", method="lora", mode=mode, **kw)).total
    assert total(seq=mf.seq) <= USABLE_4090 < total(seq=mf.seq + 1)
    assert total(batch=mf.batch) <= USABLE_4090 < total(batch=mf.batch + 1)


def test_longest_seq_on_several_cards_with_sharding():
    """On several cards the search counts what the fit table counts: the per-card total of the
    scale layer (ZeRO-3 with the gathered layers), here read from `scaled()` at 16 cards."""
    inputs = q(model="llama-3.1-70b", method="full")
    mf = max_fit(inputs, "h100-80", 16)
    usable = 80 * 2**30 * 95 // 100

    def fits(seq, n=16):  # each of n cards holds its share of the run (calc.scale)
        run = scaled(q(model="llama-3.1-70b", method="full", seq=seq), Scale(gpus=n))
        return run.per_gpu_total <= usable

    assert mf.seq and fits(mf.seq) and not fits(mf.seq + 1)
    n = next(n for n in range(2, 64) if fits(2048, n))  # the default length's fewest cards
    assert not fits_cards(inputs, "h100-80", n - 1) and fits_cards(inputs, "h100-80", n)


def test_bounds_and_nothing_fits():
    # the textbook formula: the realistic logits term keeps a 1M-token sequence off any card
    small = max_fit(q(model="qwen2.5-0.5b", method="lora", mode="planning"), "b200-180")
    assert small.seq == MAX_SEQ and small.seq_at_bound
    none = max_fit(q(model="llama-3.1-405b", method="full"), "rtx-4090")
    assert none.seq is None and none.batch is None and none.model is None


def test_largest_model_of_the_family():
    mf = max_fit(q(model="qwen2.5-0.5b", method="qlora"), "rtx-4090")
    fitting = [m for m in models() if m.family == "Qwen2.5" and
               fits_cards(q(model=m.id, method="qlora"), "rtx-4090")]
    assert mf.model == max(fitting, key=lambda m: m.params).id


def test_max_fit_is_fast():
    inputs = q(model="llama-3.1-8b", method="lora", mode="detailed")
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        max_fit(inputs, "rtx-4090")
        runs.append(time.perf_counter() - start)
    assert statistics.median(runs) < 0.05


# --- bad input ----------------------------------------------------------------------------

BAD = [
    ({"tokens": "0"}, "tokens"), ({"tokens": "-5"}, "tokens"), ({"tokens": "abc"}, "tokens"),
    ({"tokens": "nan"}, "tokens"), ({"tokens": "1e20"}, "tokens"), ({"tokens": "1.5"}, "tokens"),
    ({"epochs": "0"}, "epochs"), ({"epochs": "-1"}, "epochs"), ({"epochs": "inf"}, "epochs"),
    ({"epochs": "5000"}, "epochs"),
    ({"gpu": "l4", "price": "1e9"}, "price"), ({"gpu": "l4", "tokens_per_s": "1e12"}, "tokens_per_s"),
    ({"gpu": "l4", "price": "0"}, "price"), ({"gpu": "l4", "price": "-2"}, "price"),
    ({"gpu": "l4", "tokens_per_s": "0"}, "tokens_per_s"),
    ({"gpu": "l4", "tokens_per_s": "-3"}, "tokens_per_s"),
    ({"gpu": "nope"}, "gpu"), ({"gpus": "0"}, "gpus"), ({"gpus": "5000"}, "gpus"),
    ({"gpus": "1.5"}, "gpus"), ({"price": "2"}, "gpu"), ({"tokens_per_s": "900"}, "gpu"),
]


@pytest.mark.parametrize("loc", LOCALES)
@pytest.mark.parametrize("query,field", BAD)
def test_bad_input_names_the_field_in_every_locale(query, field, loc):
    with pytest.raises(CalcError) as err:
        parse_plan(query, loc)
    messages = err.value.messages(loc)
    assert field in messages
    label = t(f"field.{field}", loc)
    assert label != f"field.{field}" and label in messages[field]
    if loc != "en":
        assert messages[field] != err.value.messages("en")[field]


def test_typed_values_in_the_readers_notation():
    assert parse_plan({"tokens": "۵۰M"}, "fa").tokens == 50_000_000
    assert parse_plan({"epochs": "1,5"}, "tr").epochs == Decimal("1.5")
    assert parse_plan({"tokens": "1.2B"}).tokens == 1_200_000_000
    p = parse_plan({})
    assert (p.tokens, p.epochs, p.gpu, p.gpus) == (None, 1, None, 1)
