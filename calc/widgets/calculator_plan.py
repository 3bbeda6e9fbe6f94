"""The calculator's plan: time and cost on each card (`calc.plan.plan`: ranked by cost, the
cheapest and the fastest marked), the most that fits on the reader's card (`calc.plan.max_fit`)
and the run's training config (`calc.export`: TRL, Axolotl, torchtune) with a copy button.

The copy button is generic markup for the page script: `data-calc-copy="<id>"` names the
element whose text it copies; the root's `data-msg-text-copied` is what it says then.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING

from .. import catalog
from ..engine import Estimate, Inputs
from ..errors import CalcError, Problem
from ..export import FORMATS, export
from ..fmt import fmt
from ..i18n import error_message
from ..plan import MaxFit, Plan, PlanInputs, max_fit, plan
from ..scale import Scale, ScaledEstimate
from .base import e, fig, iso, product_html, td_fig, tx, txc

if TYPE_CHECKING:  # pragma: no cover
    from .calculator import State

__all__ = ["panel", "plan_of", "max_fit_of", "exports_of", "hours_digits"]


def hours_digits(hours: Decimal | None) -> int:
    """As the command line writes hours (calc.plan_report): one decimal from ten hours up, two
    from a tenth, three below, so a short run keeps a digit."""
    h = hours or Decimal(0)
    return 1 if h >= 10 else 2 if h >= Decimal("0.1") else 3


@lru_cache(maxsize=64)
def plan_of(inputs: Inputs, p: PlanInputs, est: Estimate, scale: Scale) -> Plan:
    return plan(inputs, p, est, scale)


@lru_cache(maxsize=64)
def max_fit_of(inputs: Inputs, gpu_id: str, scale: Scale) -> MaxFit:
    """The most that fits on `scale.gpus` cards of `gpu_id`, counted with the reader's
    sharding, offload and objective (as the fit table)."""
    return max_fit(inputs, gpu_id, scale.gpus, scale)


@lru_cache(maxsize=64)
def exports_of(inputs: Inputs, epochs: Decimal, cards: int
               ) -> tuple[tuple[str, str | None, Problem | None], ...]:
    """(format, text, None) of each export, or (format, None, the problem) where calc.export
    has no config for this run."""
    out: list[tuple[str, str | None, Problem | None]] = []
    for name in FORMATS:
        try:
            out.append((name, export(inputs, name, epochs, cards), None))
        except CalcError as err:
            out.append((name, None, err.problems[0]))
    return tuple(out)


def panel(state: "State", s: ScaledEstimate, loc: str, wid: str) -> str:
    i, p = state.inputs, state.plan
    parts = [iso(f'<h3 class="calc-section">{e(txc("ui.time_cost", loc))}</h3>', loc)]
    if p.gpu is not None:
        parts.append(_max_fit_block(max_fit_of(i, p.gpu, state.scale), i.seq, i.batch, loc))
    if p.tokens is None:
        parts.append(_plan_prompt(loc))
    else:
        parts.append(_plan_table(plan_of(i, p, s.estimate, state.scale), loc, wid))
    parts.append(_exports(exports_of(i, p.epochs, state.scale.gpus), loc, wid))
    return f'<div class="calc-plan">{"".join(parts)}</div>'


@lru_cache(maxsize=None)
def _plan_prompt(loc: str) -> str:
    return iso(f'<p class="calc-help">{e(txc("ui.plan_prompt", loc))}</p>', loc)


def _upto(name: str, n: int, at_bound: bool, loc: str) -> str:
    shown = fmt(n, "number", loc)
    if at_bound:
        shown = tx("ui.or_more", loc, n=shown)
    return fig(name, n, shown)


@lru_cache(maxsize=256)
def _max_fit_block(mf: MaxFit, seq: int, batch: int, loc: str) -> str:
    from .calculator_results import sentence

    card = product_html(mf.gpu, loc)
    if mf.cards > 1:
        card = f"{e(fmt(mf.cards, 'number', loc))} × {card}"
    lines = [f'<p class="calc-max-head">{card}</p>']
    if mf.seq is None:
        lines.append(f'<p data-calc="max_seq" data-value="none">{e(tx("ui.max_none", loc))}</p>')
    else:
        lines.append("<p>" + sentence("ui.max_fit", loc,
                                      seq=_upto("max_seq", mf.seq, mf.seq_at_bound, loc),
                                      batch=e(fmt(batch, "number", loc))) + "</p>")
    if mf.batch is not None:
        lines.append("<p>" + sentence("ui.max_batch", loc, seq=e(fmt(seq, "number", loc)),
                                      batch=_upto("max_batch", mf.batch, mf.batch_at_bound, loc))
                     + "</p>")
    if mf.model:
        lines.append(f'<p data-calc="max_model" data-value="{e(mf.model)}">'
                     + e(tx("ui.max_model", loc, model=catalog.model_label(catalog.model(mf.model), loc))) + "</p>")
    return iso(f'<div class="calc-max-fit">{"".join(lines)}</div>', loc)


@lru_cache(maxsize=128)
def _plan_table(pl: Plan, loc: str, wid: str) -> str:
    """The cards that fit with a time, ranked by total cost (cards without a price after,
    fastest first); the cheapest and the fastest marked."""
    rows = list(pl.by_cost) + [c for c in pl.by_time if c.cost is None]
    heads = (tx("field.gpu", loc), tx("ui.cards", loc), tx("ui.hours", loc), tx("ui.cost", loc),
             tx("ui.tokens_per_s", loc))
    cap_id = f"{wid}-plan-caption"
    ths = "".join(f'<th scope="col">{e(h)}</th>' for h in heads)
    body = []
    for c in rows:
        marks = []
        if c.cheapest:
            marks.append(f'<span class="calc-badge calc-cheapest">{e(txc("ui.cheapest", loc))}</span>')
        if c.fastest:
            marks.append(f'<span class="calc-badge calc-fastest">{e(txc("ui.fastest", loc))}</span>')
        cost = (td_fig(f"plan_cost.{c.gpu}", c.cost, fmt(c.cost, "USD", loc)) if c.cost is not None
                else f'<td data-calc="plan_cost.{e(c.gpu)}" data-value="none">'
                     f'{e(txc("ui.no_price", loc))}</td>')
        rate = "" if c.tokens_per_s is None else fmt(c.tokens_per_s, "number", loc, 0)
        source = f' <span class="calc-rate">({e(txc(f"ui.rate_{c.source}", loc))})</span>' \
            if c.source else ""
        body.append(
            f'<tr data-gpu="{e(c.gpu)}"><th scope="row">{product_html(c.gpu, loc)} {"".join(marks)}</th>'
            f'{td_fig(f"plan_cards.{c.gpu}", c.cards, fmt(c.cards or 0, "number", loc))}'
            f'{td_fig(f"plan_hours.{c.gpu}", c.hours, fmt(c.hours, "hours", loc, hours_digits(c.hours)))}'
            f"{cost}<td>{e(rate)}{source}</td></tr>")
    if not body:
        return iso(f'<p class="calc-help">{e(txc("ui.plan_none", loc))}</p>', loc)
    return iso(f'<div class="calc-table-wrap" role="region" tabindex="0" '
               f'aria-labelledby="{cap_id}"><table class="calc-table calc-plan-table">'
               f'<caption id="{cap_id}">{e(txc("ui.by_cost", loc))}</caption>'
               f'<thead><tr>{ths}</tr></thead><tbody>{"".join(body)}</tbody></table></div>', loc)


def _lines(body: str) -> str:
    """The text escaped, each line break as the character reference &#10;: the widget is one
    raw HTML block for Markdown, which a blank line would end (the browser reads the same
    text, and copying it gives the line breaks)."""
    return e(body).replace("\n", "&#10;")


@lru_cache(maxsize=128)
def _exports(items: tuple[tuple[str, str | None, Problem | None], ...], loc: str, wid: str) -> str:
    """Each format in a <details> (the first open): the text in <pre><code>, a copy button. The
    <code> (Material's block, overflow: auto) scrolls on a phone: focusable, as Material's own
    code blocks are, so the keyboard scrolls it too (axe: scrollable-region-focusable)."""
    blocks = []
    for n, (name, body, problem) in enumerate(items):
        pid = f"{wid}-export-{name}"
        if body is None:
            inner = f'<p class="calc-help">{e(error_message(problem, loc))}</p>'
        else:
            inner = (f'<button type="button" class="md-button calc-copy-text" '
                     f'data-calc-copy="{pid}">{e(txc("ui.copy_config", loc))}</button>'
                     f'<pre class="calc-export-code" id="{pid}" dir="ltr">'
                     f'<code tabindex="0">{_lines(body)}</code></pre>')
        blocks.append(f'<details class="calc-export-item" data-export="{name}"'
                      f'{" open" if n == 0 else ""}><summary>{e(txc(f"ui.export_{name}", loc))}'
                      f"</summary>{inner}</details>")
    head = f'<h3 class="calc-section">{e(txc("ui.export", loc))}</h3>'
    return iso(f'<div class="calc-export">{head}<p class="calc-help">{e(txc("help.export", loc))}</p>'
               f'{"".join(blocks)}</div>', loc)
