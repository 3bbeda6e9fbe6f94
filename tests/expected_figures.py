"""The calculator's expected figures, computed from calc's own functions (the estimate, the
scale layer, the catalog): shared by the unit tests of the results markup and the browser
tests of the live page, so both check the same thing."""

from __future__ import annotations

from calc import catalog, engine
from calc.engine import estimate
from calc.fields import parse
from calc.fmt import fmt
from calc.render import EXAMPLE_HOURS
from calc.types import GpuKind


def expected_calculator(query: dict, locale: str) -> dict:
    """Every figure of the calculator's results from calc's own functions: the estimate, the
    scale layer (per GPU, cards per strategy), the other model's total, the catalog (as
    tests/unit/test_widget_figures.py, which checks the same in CPython)."""
    from dataclasses import replace

    from calc.scale import Scale, cards_needed, parse_scale, scaled
    from calc.types import Mode

    inputs = parse(query, locale)
    sc = parse_scale(query, locale)
    s = scaled(inputs, sc)
    est = estimate(inputs)
    unit = inputs.unit.value
    exp = {name: ("bytes", str(v), fmt(v, unit, locale)) for name, v in s.gpu_components}
    head = "total" if sc in (Scale(), Scale(sharding=sc.sharding)) else "per_gpu_total"
    exp[head] = ("bytes", str(s.per_gpu_total), fmt(s.per_gpu_total, unit, locale))
    other = scaled(replace(inputs, mode=Mode.PLANNING if inputs.mode is Mode.DETAILED
                           else Mode.DETAILED), sc).per_gpu_total
    exp["textbook_total" if inputs.mode is Mode.DETAILED else "realistic_total"] = (
        "bytes", str(other), fmt(other, unit, locale))
    off = sum(v for _, v in s.estimate.off_peak)  # with checkpointing, the smaller moment
    if off:
        # two fraction digits, MiB where GiB would round to 0 (written out, not imported)
        off_unit, digits = ("MiB", 0) if unit == "GiB" and off < 2**30 // 200 else (unit, 2)
        exp["off_peak"] = ("bytes", str(off), fmt(off, off_unit, locale, digits))
    if s.cpu_bytes:
        exp["cpu_bytes"] = ("bytes", str(s.cpu_bytes), fmt(s.cpu_bytes, unit, locale))
        for name, v in s.cpu_components:
            exp[f"cpu.{name}"] = ("bytes", str(v), fmt(v, unit, locale))
    exp["trainable_params"] = ("value", str(est.trainable_params),
                               fmt(est.trainable_params, "params", locale))
    exp["params"] = ("value", str(inputs.arch.params), fmt(inputs.arch.params, "params", locale))
    needed = cards_needed(inputs, sc)
    for g in catalog.gpus():
        by = needed[g.id]
        n = by[sc.sharding.value]
        usable = engine.usable_bytes(g)
        exp[f"fits.{g.id}"] = ("value", "true" if n is not None and n <= sc.gpus else "false", None)
        exp[f"memory.{g.id}"] = ("bytes", str(g.memory_bytes), fmt(g.memory_bytes, unit, locale))
        exp[f"usable.{g.id}"] = ("bytes", str(usable), fmt(usable, unit, locale))
        if g.kind is not GpuKind.DISCRETE:
            continue
        exp[f"cards.{g.id}"] = ("value", str(n) if n else "none",
                                fmt(n, "number", locale) if n else None)
        for strategy, m in by.items():
            if strategy != sc.sharding.value:
                exp[f"cards.{strategy}.{g.id}"] = ("value", str(m) if m else "none",
                                                   fmt(m, "number", locale) if m else "—")
        if g.price_per_hour is None:
            exp[f"price.{g.id}"] = exp[f"cost.{g.id}"] = ("value", "none", None)
            continue
        exp[f"price.{g.id}"] = ("value", str(g.price_per_hour), fmt(g.price_per_hour, "USD", locale))
        if n:
            c = engine.cost(EXAMPLE_HOURS, g.price_per_hour * n)
            exp[f"cost.{g.id}"] = ("value", str(c), fmt(c, "USD", locale))
        else:
            exp[f"cost.{g.id}"] = ("value", "none", None)
    one = [g for g in catalog.gpus()
           if g.kind is GpuKind.DISCRETE and needed[g.id][sc.sharding.value] == 1]
    exp["smallest_gpu"] = ("value", min(one, key=lambda g: g.memory_bytes).id if one else "none",
                           None)
    return exp


def hours_text(hours, locale: str) -> str:
    """Hours as the widgets write them: one decimal from ten hours up, two from a tenth, three
    below (the rule of calc.plan_report, restated here)."""
    from decimal import Decimal

    digits = 1 if hours >= 10 else 2 if hours >= Decimal("0.1") else 3
    return fmt(hours, "hours", locale, digits)


#: Rows of each ranking the cost widget shows.
COST_SHORT_LIST = 3


def expected_cost(query: dict, locale: str) -> dict:
    """Every figure of the cost widget from the plan engine itself: the query's fields read by
    the engine's own parsers (calc.fields, calc.scale, calc.plan), `calc.plan.plan` with the
    reader's `gpus`, the chosen card's row and the first rows of by_cost and by_time."""
    from calc.plan import PLAN_FIELDS, parse_plan, plan
    from calc.scale import parse_scale

    given = {k: v for k, v in query.items() if str(v).strip()}
    inputs = parse({k: v for k, v in given.items() if k in ("model", "method")}, locale)
    sc = parse_scale({k: v for k, v in given.items() if k == "gpus"}, locale)
    p = parse_plan({k: v for k, v in given.items() if k in PLAN_FIELDS}, locale)
    pl = plan(inputs, p, scale=sc)
    card = pl.card(p.gpu)
    exp: dict = {}
    if card.cards is None or card.hours is None or card.cost is None:
        exp["cost"] = ("value", "none", None)
    else:
        exp["cost"] = ("value", str(card.cost), fmt(card.cost, "USD", locale))
    if card.cards is not None and card.hours is not None:
        exp["hours"] = ("value", str(card.hours), hours_text(card.hours, locale))
        exp["cards"] = ("value", str(card.cards), fmt(card.cards, "number", locale))
        if card.cost is not None:
            exp["price"] = ("value", str(card.price), fmt(card.price, "USD", locale))
        exp["tokens_per_s"] = ("value", str(card.tokens_per_s),
                               fmt(card.tokens_per_s, "number", locale, 0))
        exp["rate"] = ("value", card.source, None)
    for key, rows in (("by_cost", pl.by_cost), ("by_time", pl.by_time)):
        for c in rows[:COST_SHORT_LIST]:
            exp[f"{key}.{c.gpu}.cards"] = ("value", str(c.cards), fmt(c.cards, "number", locale))
            exp[f"{key}.{c.gpu}.hours"] = ("value", str(c.hours), hours_text(c.hours, locale))
            exp[f"{key}.{c.gpu}.cost"] = (("value", str(c.cost), fmt(c.cost, "USD", locale))
                                          if c.cost is not None else ("value", "none", None))
    return exp
