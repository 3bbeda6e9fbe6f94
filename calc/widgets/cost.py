"""The cost widget of the choosing-a-GPU page: time and cost of a training run on one card,
from the plan engine (`calc.plan.plan`, engine.md section 9), with the cheapest and the
fastest cards beside it.

The reader picks a preset model and the method (the calculator's picker and field readers:
`calculator.parse`, `calculator_form.model_groups` / `gpu_groups`), the training tokens per
epoch, the epochs, the card (`gpu`) and optionally the number of cards (`gpus`), a measured
rate (`tokens_per_s`, which replaces the estimate) and an hourly price (`price`, which
replaces the card's example price). Every other engine field keeps the interface's default
(rank 16 on all linear layers, 2048 tokens, micro-batch 1, checkpointing, AdamW, the Hugging
Face stack), as the page's text says; the calculator takes them all.

The results: for the chosen card the cards the run needs (`cards`: the reader's `gpus`, or
the fit table's fewest when that is more), the hours, the cost = hours x cards x hourly price,
and whether the tokens per second behind the hours were estimated or measured; then the first
rows of `Plan.by_cost` and `Plan.by_time`. Every figure is `plan()`'s, emitted by
`calc.html.figure` and written by `calc.fmt`.

First paint (DEFAULT_QUERY): the page's example, QLoRA of Llama 3.1 8B on one A40
(content.md: "QLoRA of an 8B model on an A40"), for 50M training tokens, the example figure
of the spec's `tokens` field (engine.md section 9, "`50M` style") and of the calculator's
placeholder; one epoch (the interface's default).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any, Mapping

from .. import catalog
from ..engine import Inputs
from ..fields import CUSTOM, Collector, first
from ..fmt import fmt
from ..plan import CardPlan, Plan, PlanInputs, plan
from ..scale import Scale
from ..types import Method
from . import calculator
from .base import Form, Outcome, collect, dec, e, fig, form_layout, iso, product_html, \
    summary, td_fig, total_line, tx, txc
from .calculator_form import gpu_groups, model_groups
from .calculator_plan import hours_digits

__all__ = ["NAME", "DEFAULT_QUERY", "FORM_FIELDS", "NUMERIC_FIELDS", "SHORT_LIST", "CostState",
           "parse", "compute", "run", "form"]

NAME = "cost"
DEFAULT_QUERY: Mapping[str, str] = {"model": "llama-3.1-8b", "method": "qlora", "tokens": "50M",
                                    "gpu": "a40"}
FORM_FIELDS = ("model", "method", "tokens", "epochs", "gpu", "gpus", "tokens_per_s", "price")
NUMERIC_FIELDS = frozenset({"epochs", "gpus", "tokens_per_s", "price"})
#: Rows of each ranking shown (the calculator's time panel has the whole table).
SHORT_LIST = 3
#: What the form shows in an empty tokens field (help.tokens's own example).
_TOKENS_EXAMPLE = "50M"


@dataclass(frozen=True)
class CostState:
    """The parsed widget: the engine's inputs, the scale (the reader's `gpus`, ZeRO-3) and the
    plan's fields (tokens and the card always given)."""

    inputs: Inputs
    scale: Scale
    plan: PlanInputs


def _mine(query: Mapping[str, Any]) -> dict[str, Any]:
    """The widget's own fields: a link's other keys (a calculator link pasted here) are not
    read, so the result is what the form shows."""
    return {k: v for k, v in query.items() if k in FORM_FIELDS}


def _custom(q: Mapping[str, Any]) -> bool:
    model = first(q.get("model"))  # type: ignore[arg-type]
    return model is not None and str(model).strip().lower() == CUSTOM


def _required(q: Mapping[str, Any]) -> None:
    """What the plan engine leaves optional and this widget needs: the tokens and the card; a
    preset model (the form has no architecture fields: custom models are the calculator's)."""
    c = Collector(q)
    for name in ("tokens", "gpu"):
        if not c.has(name):
            c.add(name, "required")
    if _custom(q):
        c.add("model", "unknown_model", value=CUSTOM)
    c.done()


def parse(query: Mapping[str, Any], locale: str = "en") -> CostState:
    """The widget's fields read by the calculator's own parsers (`calculator.parse`: the
    engine's, the scale's and the plan's readers), every invalid field named at once."""
    q = _mine(query)
    known = {k: v for k, v in q.items() if k != "model"} if _custom(q) else q
    state, _ = collect(lambda: calculator.parse(known, locale), lambda: _required(q))
    return CostState(state.inputs, state.scale, state.plan)


@lru_cache(maxsize=64)
def compute(state: CostState) -> Plan:
    """The plan of every catalog card: `calc.plan.plan`, cards counted as the fit table does."""
    return plan(state.inputs, state.plan, scale=state.scale)


def canonical_query(state: CostState) -> dict[str, str]:
    i, p = state.inputs, state.plan
    q = {"model": i.model, "method": i.method.value, "tokens": str(p.tokens),
         "gpu": p.gpu or ""}
    if p.epochs != PlanInputs().epochs:
        q["epochs"] = dec(p.epochs)
    if p.gpus != 1:
        q["gpus"] = str(p.gpus)
    if p.tokens_per_s is not None:
        q["tokens_per_s"] = dec(p.tokens_per_s)
    if p.price is not None:
        q["price"] = dec(p.price)
    return q


def run(q: dict[str, str], loc: str, wid: str) -> Outcome:
    state = parse(q, loc)
    pl = compute(state)
    card = pl.card(state.plan.gpu or "")
    canonical = canonical_query(state)
    values = {n: "" for n in FORM_FIELDS}
    values.update(canonical)
    for name in ("tokens", "epochs", "tokens_per_s", "price"):  # as typed: 50M stays 50M
        if str(q.get(name, "")).strip():
            values[name] = str(q[name]).strip()
    g = catalog.gpu(card.gpu)
    placeholders = {"tokens": _TOKENS_EXAMPLE, "epochs": fmt(PlanInputs().epochs, "number", loc),
                    "gpus": fmt(1, "number", loc),
                    "price": "" if g.price_per_hour is None else fmt(g.price_per_hour, "number", loc, 2)}
    line = summary("ui.cost", _cost_text(card, loc), loc)
    html = "".join((_chosen(card, loc), _rankings(pl, loc, wid),
                    iso(f'<p class="calc-note">{e(txc("ui.prices_note", loc))}</p>', loc)))
    return Outcome(html, canonical, values, placeholders, line)


def _cost_text(card: CardPlan, loc: str) -> str:
    if card.cards is None:
        return txc("ui.no_cards", loc)
    if card.hours is None:
        return txc("ui.no_peak", loc)
    if card.cost is None:
        return txc("ui.no_price", loc)
    return fmt(card.cost, "USD", loc)


def _hours_text(hours: Decimal, loc: str) -> str:
    return fmt(hours, "hours", loc, hours_digits(hours))


@lru_cache(maxsize=256)
def _chosen(card: CardPlan, loc: str) -> str:
    """The chosen card: its cost as the headline, hours x cards x price = cost, and the tokens
    per second behind the hours with where they come from (estimated or measured)."""
    head = iso(f'<p class="calc-max-head">{product_html(card.gpu, loc)}</p>', loc)
    if card.cards is None or card.hours is None:
        none = (f'<strong class="calc-total-value" data-calc="cost" data-value="none">'
                f"{e(_cost_text(card, loc))}</strong>")
        return head + iso(total_line(tx("ui.cost", loc), none), loc)
    if card.cost is None:
        shown = (f'<strong class="calc-total-value" data-calc="cost" data-value="none">'
                 f"{e(txc('ui.no_price', loc))}</strong>")
    else:
        shown = fig("cost", card.cost, fmt(card.cost, "USD", loc), tag="strong",
                    cls="calc-fig calc-total-value")
    parts = [head, total_line(tx("ui.cost", loc), shown)]
    hours = fig("hours", card.hours, _hours_text(card.hours, loc))
    cards = fig("cards", card.cards, fmt(card.cards, "number", loc))
    if card.price is not None and card.cost is not None:
        price = fig("price", card.price, fmt(card.price, "USD", loc))
        parts.append(f'<p class="calc-formula">{hours} × {cards} × {price} = '
                     f'<bdi>{e(fmt(card.cost, "USD", loc))}</bdi></p>')
    else:
        parts.append(f'<p class="calc-formula">{hours} × {cards}</p>')
    if card.tokens_per_s is not None and card.source is not None:
        rate = fig("tokens_per_s", card.tokens_per_s, fmt(card.tokens_per_s, "number", loc, 0))
        source = (f'<span class="calc-rate" data-calc="rate" data-value="{e(card.source)}">'
                  f'({e(txc(f"ui.rate_{card.source}", loc))})</span>')
        parts.append(f"<p><span>{e(txc('ui.tokens_per_s', loc))}</span> {rate} {source}</p>")
    return iso("".join(parts), loc)


def _rankings(pl: Plan, loc: str, wid: str) -> str:
    return (_ranking("by_cost", pl.by_cost[:SHORT_LIST], loc, wid)
            + _ranking("by_time", pl.by_time[:SHORT_LIST], loc, wid))


@lru_cache(maxsize=256)
def _ranking(key: str, rows: tuple[CardPlan, ...], loc: str, wid: str) -> str:
    """The first rows of one ranking: card (the cheapest / the fastest marked), cards, hours,
    cost. Figures named `<ranking>.<gpu>.<what>`."""
    if not rows:
        return iso(f'<p class="calc-help">{e(txc("ui.plan_none", loc))}</p>', loc)
    heads = (tx("field.gpu", loc), tx("ui.cards", loc), tx("ui.hours", loc), tx("ui.cost", loc))
    cap_id = f"{wid}-{key.replace('_', '-')}-caption"
    ths = "".join(f'<th scope="col">{e(h)}</th>' for h in heads)
    body = []
    for c in rows:
        marks = "".join(
            f' <span class="calc-badge calc-{mark}">{e(txc(f"ui.{mark}", loc))}</span>'
            for mark, on in (("cheapest", c.cheapest), ("fastest", c.fastest)) if on)
        name = f"{key}.{c.gpu}"
        cost = (td_fig(f"{name}.cost", c.cost, fmt(c.cost, "USD", loc)) if c.cost is not None
                else f'<td data-calc="{e(name)}.cost" data-value="none">'
                     f'{e(txc("ui.no_price", loc))}</td>')
        body.append(f'<tr data-gpu="{e(c.gpu)}"><th scope="row">{product_html(c.gpu, loc)}{marks}</th>'
                    f'{td_fig(f"{name}.cards", c.cards, fmt(c.cards or 0, "number", loc))}'
                    f'{td_fig(f"{name}.hours", c.hours, _hours_text(c.hours, loc))}'  # type: ignore[arg-type]
                    f"{cost}</tr>")
    return iso(f'<div class="calc-table-wrap" role="region" tabindex="0" aria-labelledby="{cap_id}">'
               f'<table class="calc-table calc-plan-table calc-{key.replace("_", "-")}">'
               f'<caption id="{cap_id}">{e(txc(f"ui.{key}", loc))}</caption>'
               f'<thead><tr>{ths}</tr></thead><tbody>{"".join(body)}</tbody></table></div>', loc)


def form(f: Form, loc: str, placeholders: Mapping[str, str]) -> str:
    models = [(label, items) for label, items in model_groups(loc)
              if all(v != CUSTOM for v, _ in items)]  # custom models: the calculator's
    common = [
        f.grouped_select("model", models, cls="calc-field-wide"),
        f.radios("method", [(m.value, tx(f"method.{m.value}", loc)) for m in Method]),
        f.text("tokens", inputmode="text", ltr=True, placeholder=placeholders.get("tokens", "")),
        f.text("epochs", inputmode="decimal", placeholder=placeholders.get("epochs", "")),
        f.grouped_select("gpu", gpu_groups(loc)),
        f.text("gpus", inputmode="numeric", placeholder=placeholders.get("gpus", "")),
        f.text("tokens_per_s", inputmode="decimal"),
        f.text("price", inputmode="decimal", placeholder=placeholders.get("price", "")),
    ]
    return form_layout(f.wid, loc, common, [])
