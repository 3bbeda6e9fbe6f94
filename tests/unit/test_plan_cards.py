"""The plan counts cards as the calculator's fit table does (issue 16): `calc.plan.plan`'s
`cards` and `calc.plan.max_fit`'s searches against an independent count.

The independent count never calls `calc.scale.cards_needed` or `calc.scale.fewest`: it asks
the scale layer for the per-card total of the run on n cards (`calc.scale.scaled`, the figure
the calculator's headline shows for `gpus=n`) and searches n itself: one card first, then the
smallest n >= 2 whose per-card total is within the card's usable memory (for n >= 2 each card
holds the unsharded part and ceil(sharded / n), which never grows with n, so a bisection finds
it). A Mac is one machine. The fit table's own figures are read from the calculator's
rendered results, as a reader sees them.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from calc import catalog
from calc.engine import MAX_CARDS, usable_bytes
from calc.fields import parse
from calc.plan import fits_cards, max_fit, parse_plan, plan
from calc.render import results
from calc.scale import Scale, parse_scale, scaled
from calc.types import GpuKind, Sharding

from widget_dom import figures

#: (engine fields, scale fields): dense and mixture-of-experts models, every method, long and
#: short sequences, each sharding strategy, offload and DPO.
CONFIGS = [
    ({"model": "llama-3.1-8b", "method": "lora"}, {}),
    ({"model": "llama-3.1-8b", "method": "full"}, {}),
    ({"model": "llama-3.1-70b", "method": "full"}, {}),
    ({"model": "llama-3.1-70b", "method": "qlora", "seq": "8192"}, {}),
    ({"model": "llama-3.1-70b", "method": "full"}, {"sharding": "zero2"}),
    ({"model": "llama-3.1-70b", "method": "full"}, {"sharding": "zero1"}),
    ({"model": "llama-3.1-8b", "method": "full"}, {"sharding": "ddp"}),
    ({"model": "llama-3.1-70b", "method": "full"}, {"offload": "optimizer"}),
    ({"model": "llama-3.1-70b", "method": "full"}, {"offload": "optimizer+params"}),
    ({"model": "llama-3.1-8b", "method": "full"}, {"objective": "dpo"}),
    ({"model": "mixtral-8x7b", "method": "lora", "seq": "4096"}, {}),
    ({"model": "qwen2.5-0.5b", "method": "full", "mode": "planning"}, {"sharding": "zero3"}),
]
GPUS = ("rtx-4090", "l4", "a40", "a100-80", "h100-80", "b200-180", "mac-64")


def per_card(inputs, sc: Scale, n: int) -> int:
    return scaled(inputs, Scale(n, sc.sharding, sc.offload, sc.objective)).per_gpu_total


def independent_fewest(inputs, sc: Scale, gpu_id: str) -> int | None:
    g = catalog.gpu(gpu_id)
    usable = usable_bytes(g)
    if per_card(inputs, sc, 1) <= usable:
        return 1
    if g.kind is GpuKind.UNIFIED or per_card(inputs, sc, MAX_CARDS) > usable:
        return None
    lo, hi = 1, MAX_CARDS  # not lo (or lo is the single card), hi holds it
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if mid >= 2 and per_card(inputs, sc, mid) <= usable else (mid, hi)
    return hi


def _config(fields: dict, scale_fields: dict):
    inputs = parse(fields)
    sc = parse_scale(scale_fields)
    return inputs, sc


@pytest.mark.parametrize("fields, scale_fields", CONFIGS, ids=str)
def test_plan_cards_equal_an_independent_count_and_the_fit_table(fields, scale_fields):
    inputs, sc = _config(fields, scale_fields)
    p = plan(inputs, parse_plan({"tokens": "10M"}), scale=sc)
    shown = figures(results("calculator", {**fields, **scale_fields}, "en")["html"])
    for gpu_id in GPUS:
        want = independent_fewest(inputs, sc, gpu_id)
        card = p.card(gpu_id)
        assert card.cards == want, (gpu_id, card.cards, want)
        assert card.fits == (want is not None)
        if catalog.gpu(gpu_id).kind is GpuKind.DISCRETE:  # the fit table's "fewest cards"
            kind, raw, _ = shown[f"cards.{gpu_id}"]
            assert raw == (str(want) if want is not None else "none"), gpu_id
        else:  # a Mac's row: fits or not
            assert shown[f"fits.{gpu_id}"][1] == ("true" if want == 1 else "false")


def test_the_default_scale_is_zero3_and_the_readers_gpus_are_a_floor():
    inputs = parse({"model": "llama-3.1-70b", "method": "full"})
    zero3 = independent_fewest(inputs, Scale(), "h100-80")
    assert plan(inputs, parse_plan({"tokens": "1M"})).card("h100-80").cards == zero3
    more = plan(inputs, parse_plan({"tokens": "1M", "gpus": str(zero3 + 5)})).card("h100-80")
    assert more.cards == zero3 + 5
    zero2 = plan(inputs, parse_plan({"tokens": "1M"}), scale=Scale(sharding=Sharding.ZERO2))
    assert zero2.card("h100-80").cards == independent_fewest(inputs, Scale(sharding=Sharding.ZERO2),
                                                             "h100-80")


def test_hours_and_cost_follow_the_counted_cards():
    """cost = hours x cards x price with the scale layer's cards (tokens per second measured:
    the hours are tokens / (cards x rate) / 3600, no utilisation involved)."""
    inputs, sc = _config({"model": "llama-3.1-70b", "method": "full"}, {})
    n = independent_fewest(inputs, sc, "h100-80")
    card = plan(inputs, parse_plan({"tokens": "36M", "gpu": "h100-80", "tokens_per_s": "500"}),
                scale=sc).card("h100-80")
    hours = Decimal(36_000_000) / (n * 500) / 3600
    assert card.cards == n and abs(card.hours - hours) < Decimal("1e-20")
    assert card.cost == (hours * n * Decimal("4.99")).quantize(Decimal("0.01"))


@pytest.mark.parametrize("fields, scale_fields, gpu_id, cards", [
    ({"model": "llama-3.1-8b", "method": "lora"}, {}, "rtx-4090", 1),
    ({"model": "llama-3.1-70b", "method": "full"}, {}, "h100-80", 24),
    ({"model": "llama-3.1-70b", "method": "full"}, {"offload": "optimizer"}, "h100-80", 8),
    ({"model": "llama-3.1-8b", "method": "full"}, {"objective": "dpo", "sharding": "zero2"},
     "a100-80", 4),
], ids=str)
def test_max_fit_searches_the_fit_tables_rule(fields, scale_fields, gpu_id, cards):
    inputs, sc = _config(fields, scale_fields)
    mf = max_fit(inputs, gpu_id, cards, sc)

    def fits(**change):
        changed = parse({**fields, **{k: str(v) for k, v in change.items()}})
        n = independent_fewest(changed, sc, gpu_id)
        return n is not None and n <= cards

    assert mf.seq is not None and fits(seq=mf.seq) and not fits(seq=mf.seq + 1)
    if mf.batch is not None:
        assert fits(batch=mf.batch) and not fits(batch=mf.batch + 1)
    assert fits_cards(inputs, gpu_id, cards, sc) == fits()


@pytest.mark.parametrize("flags, strategy", [
    (("--model", "llama-3.1-70b", "--method", "full"), "zero3"),
    (("--model", "llama-3.1-70b", "--method", "full", "--sharding", "zero2"), "zero2"),
    (("--model", "llama-3.1-8b", "--method", "full", "--objective", "dpo"), "zero3"),
], ids=str)
def test_the_command_lines_plan_counts_what_its_cards_say(flags, strategy):
    """`python -m calc --json` (its `main`, in this process: the Pyodide run of this suite has
    no subprocesses; tests/unit/test_cli.py runs the command itself): each card's plan `cards`
    (merged into `fits`) is the fewest of the JSON's own `cards` table for the run's strategy,
    and the independent count."""
    import contextlib
    import io
    import json

    from calc.__main__ import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main([*flags, "--tokens", "1M", "--gpu", "h100-80", "--json"])
    assert code == 0, stderr.getvalue()
    data = json.loads(stdout.getvalue())
    fields = dict(zip(flags[::2], flags[1::2]))
    inputs = parse({k[2:]: v for k, v in fields.items() if k[2:] not in ("sharding", "objective")})
    sc = parse_scale({k[2:]: v for k, v in fields.items() if k[2:] in ("sharding", "objective")})
    for entry in data["fits"]:
        gpu_id = entry["gpu"]
        if catalog.gpu(gpu_id).kind is not GpuKind.DISCRETE:
            continue
        assert entry["cards"] == data["cards"][gpu_id][strategy], gpu_id
        if gpu_id in GPUS:
            assert entry["cards"] == independent_fewest(inputs, sc, gpu_id), gpu_id
    assert data["max_fit"]["cards"] == 1


@pytest.mark.parametrize("fields, scale_fields", [c for c in CONFIGS if c[1]], ids=str)
def test_the_calculators_time_panel_counts_the_readers_scale(fields, scale_fields):
    """The calculator's time-and-cost table (cards per card kind) and its most-that-fits line
    follow the reader's sharding, offload and objective, as the fit table beside them does."""
    inputs, sc = _config(fields, scale_fields)
    q = {**fields, **scale_fields, "tokens": "10M", "gpu": "h100-80"}
    shown = figures(results("calculator", q, "en")["html"])
    for gpu_id in GPUS:
        want = independent_fewest(inputs, sc, gpu_id)
        name = f"plan_cards.{gpu_id}"
        if want is None or catalog.gpu(gpu_id).peak_flops is None:
            continue
        want_shown = 1 if catalog.gpu(gpu_id).kind is GpuKind.UNIFIED else max(sc.gpus, want)
        assert shown[name][1] == str(want_shown), (gpu_id, shown[name], want)
    # the longest sequence on the reader's one H100: the independent rule at that length holds,
    # one token more does not
    seq = shown.get("max_seq")
    assert seq is not None
    if seq[1].isdigit() and int(seq[1]) < 1_048_576:
        n = int(seq[1])
        fits = independent_fewest(parse({**fields, "seq": str(n)}), sc, "h100-80")
        more = independent_fewest(parse({**fields, "seq": str(n + 1)}), sc, "h100-80")
        assert fits is not None and fits <= sc.gpus
        assert more is None or more > sc.gpus
