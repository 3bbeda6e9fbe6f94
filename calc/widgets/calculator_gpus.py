"""Which GPUs fit: per card kind, the fewest cards under the chosen sharding strategy (and, in
a column of its own, under each other strategy that runs the chosen offload), from
`calc.scale.cards_needed`; the verdict for the reader's `gpus` cards; memory, price and an
example cost. Rows grouped (the reader's card first, then data centre, workstation, consumer)
and sorted by verdict; the Macs (unified memory: one machine) in a table of their own.

Rows are memoized by their state and whole tables by their rows' states; the parts that do not
depend on the input are rendered once per unit and locale.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from .. import catalog, engine, html
from ..engine import Inputs
from ..fmt import fmt
from ..scale import Scale, cards_needed
from ..types import GpuKind
from .base import GROUPS, bidi, dec_of, e, gpu_group, iso, product_html, td_fig, tx, txc, yes_no

if TYPE_CHECKING:  # pragma: no cover
    from .calculator import State

__all__ = ["EXAMPLE_HOURS", "tables", "needed", "rows_order"]

#: Hours of the example cost column of the GPU table.
EXAMPLE_HOURS = 10

#: The strategies' short names in the table (the techniques' own names, the same in every
#: language; the catalogs' `sharding.*` labels explain them in the form).
SHORT = {"ddp": "DDP", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3/FSDP"}

#: (gpu id, fewest cards under the chosen strategy or None, ((strategy, n or None), ...) of
#: the others, verdict for the reader's gpus cards)
Row = tuple[str, "int | None", tuple[tuple[str, "int | None"], ...], bool]


def needed(inputs: Inputs, sc: Scale) -> tuple[tuple[str, tuple[tuple[str, int | None], ...]], ...]:
    """scale.cards_needed as a hashable tuple, memoized. It tries every strategy and any
    number of cards, so it depends on the offload and the objective only: the memo's key
    leaves out gpus and sharding (an edit of either is a cache hit)."""
    return _needed(inputs, Scale(offload=sc.offload, objective=sc.objective))


@lru_cache(maxsize=128)
def _needed(inputs: Inputs, sc: Scale) -> tuple[tuple[str, tuple[tuple[str, int | None], ...]], ...]:
    return tuple((g, tuple(by.items())) for g, by in cards_needed(inputs, sc).items())


def _rows(inputs: Inputs, sc: Scale) -> tuple[Row, ...]:
    chosen = sc.sharding.value
    out = []
    for gpu_id, by in needed(inputs, sc):
        cards = dict(by).get(chosen)
        others = tuple((s, n) for s, n in by if s != chosen)
        out.append((gpu_id, cards, others, cards is not None and cards <= sc.gpus))
    return tuple(out)


def rows_order(rows: tuple[Row, ...], mine: str | None) -> list[tuple[str, list[Row]]]:
    """(group, rows) in table order: the reader's card alone first, then each group, its rows
    by verdict (fitting first), then fewest cards, then the catalog's order (by memory)."""
    index = {g: n for n, g in enumerate(catalog.gpu_ids())}
    groups: dict[str, list[Row]] = {"mine": [], **{g: [] for g in GROUPS}}
    for row in rows:
        groups["mine" if row[0] == mine else gpu_group(catalog.gpu(row[0]))].append(row)
    for items in groups.values():
        items.sort(key=lambda r: (not r[3], r[1] is None, r[1] or 0, index[r[0]]))
    return [(g, items) for g, items in groups.items() if items]


def tables(state: "State", loc: str, wid: str) -> str:
    i, sc = state.inputs, state.scale
    rows = _rows(i, sc)
    mine = state.plan.gpu
    unit = i.unit.value
    order = rows_order(rows, mine)
    macs = [(g, items) for g, items in order
            if g == "mac" or (g == "mine" and catalog.gpu(items[0][0]).kind is GpuKind.UNIFIED)]
    cards = [(g, items) for g, items in order if (g, items) not in macs]
    fitting = [r for r in rows if r[1] == 1 and catalog.gpu(r[0]).kind is GpuKind.DISCRETE]
    return "".join((
        _smallest_line(tuple(r[0] for r in fitting), loc),
        _gpu_table(tuple((g, tuple(items)) for g, items in cards), sc.sharding.value, sc.gpus,
                   unit, loc, wid),
        _unified_table(tuple((g, tuple(items)) for g, items in macs), unit, loc, wid),
        iso(f'<p class="calc-note">{e(txc("ui.prices_note", loc))}</p>', loc),
    ))


@lru_cache(maxsize=256)
def _smallest_line(one: tuple[str, ...], loc: str) -> str:
    """The smallest card that holds the run alone."""
    if one:
        smallest = min((catalog.gpu(g) for g in one), key=lambda g: g.memory_bytes)
        line = _sentence_gpu("ui.smallest_fit", smallest.id, loc)
        return iso(f'<p class="calc-smallest" data-calc="smallest_gpu" '
                   f'data-value="{e(smallest.id)}">{line}</p>', loc)
    return iso(f'<p class="calc-smallest" data-calc="smallest_gpu" data-value="none">'
               f'{e(tx("ui.none_fit", loc))}</p>', loc)


def _sentence_gpu(key: str, gpu_id: str, loc: str) -> str:
    from .calculator_results import sentence

    return sentence(key, loc, gpu=product_html(gpu_id, loc))


@lru_cache(maxsize=512)
def _gpu_table(groups: tuple[tuple[str, tuple[Row, ...]], ...], chosen: str, gpus: int,
               unit: str, loc: str, wid: str) -> str:
    heads = _gpu_heads(chosen, gpus, loc)
    cap_id = f"{wid}-gpus-caption"
    ths = "".join(f'<th scope="col">{e(h)}</th>' for h in heads)
    head = iso(f'<div class="calc-table-wrap" role="region" tabindex="0" '
               f'aria-labelledby="{cap_id}"><table class="calc-table calc-gpus">'
               f'<caption id="{cap_id}">{e(txc("ui.which_gpus", loc))}</caption>'
               f"<thead><tr>{ths}</tr></thead>", loc)
    body = "".join(f"<tbody>{_group_row(g, len(heads), loc)}"
                   f'{"".join(_gpu_row(*r, unit, loc) for r in items)}</tbody>'
                   for g, items in groups)
    return f"{head}{body}</table></div>"


@lru_cache(maxsize=None)
def _group_row(group: str, span: int, loc: str) -> str:
    return iso(f'<tr class="calc-group-row"><th scope="rowgroup" colspan="{span}">'
               f'{e(txc(f"ui.gpu_group.{group}", loc))}</th></tr>', loc)


@lru_cache(maxsize=4096)
def _gpu_row(gpu_id: str, cards: int | None, others: tuple[tuple[str, int | None], ...],
             fits: bool, unit: str, loc: str) -> str:
    from .calculator_results import sentence

    g = catalog.gpu(gpu_id)
    if cards is None:
        cards_cell = td_fig(f"cards.{g.id}", None, tx("ui.no_cards", loc))
    else:
        cards_cell = td_fig(f"cards.{g.id}", cards, fmt(cards, "number", loc))
    other_cells = " · ".join(
        '<span class="calc-strategy">' + sentence(
            "ui.strategy_cards", loc, strategy=e(SHORT[s]),
            cards=html.figure(f"cards.{s}.{g.id}", "—" if n is None else fmt(n, "number", loc),
                          value=n, cls="calc-fig" if n is not None else None))  # "—": no figure
        + "</span>" for s, n in others)
    if g.price_per_hour is None or cards is None:
        cost_cell = f'<td data-calc="cost.{e(g.id)}" data-value="none">—</td>'
    else:
        c = engine.cost(EXAMPLE_HOURS, g.price_per_hour * cards)
        cost_cell = td_fig(f"cost.{g.id}", c, fmt(c, "USD", loc))
    name, memory, price_cell = _gpu_cells(g.id, unit, loc)
    return bidi(f"{_row_start(g.id, fits)}{name}{_fits_cell(g.id, fits, loc)}"
                f'{cards_cell}<td class="calc-others">{other_cells}</td>{memory}{price_cell}'
                f"{cost_cell}</tr>", loc)


@lru_cache(maxsize=256)
def _unified_table(groups: tuple[tuple[str, tuple[Row, ...]], ...], unit: str, loc: str,
                   wid: str) -> str:
    """The Macs (unified memory): one machine, fits or not."""
    rows = [f"{_row_start(r[0], r[3])}{_gpu_cells(r[0], unit, loc)[0]}"
            f"{_fits_cell(r[0], r[3], loc)}{_gpu_cells(r[0], unit, loc)[1]}</tr>"
            for _, items in groups for r in items]
    return bidi(html.scroll_table(wid, "unified", tx("ui.unified_usable", loc),
                                  _unified_heads(loc), rows, cls="calc-unified"), loc)


def _row_start(gpu_id: str, fits: bool) -> str:
    return (f'<tr class="{"calc-row-fits" if fits else "calc-row-nofit"}" '
            f'data-gpu="{e(gpu_id)}">')


@lru_cache(maxsize=None)
def _gpu_cells(gpu_id: str, unit: str, loc: str) -> tuple[str, str, str]:
    """(name cell; memory and usable cells; price cell) of one catalog GPU. The verdict goes
    right after the name: on a phone the first columns are the ones in view."""
    g = catalog.gpu(gpu_id)
    usable = engine.usable_bytes(g)
    name = f'<th scope="row">{product_html(g.id, loc)}</th>'
    memory = (f"{td_fig(f'memory.{g.id}', g.memory_bytes, fmt(g.memory_bytes, unit, loc), 'bytes')}"
              f"{td_fig(f'usable.{g.id}', usable, fmt(usable, unit, loc), 'bytes')}")
    if g.price_per_hour is None:
        price = (f'<td data-calc="price.{e(g.id)}" data-value="none">'
                 f'{e(tx("ui.no_price", loc))}</td>')
    else:
        price = td_fig(f"price.{g.id}", g.price_per_hour, fmt(g.price_per_hour, "USD", loc))
    return name, memory, price


@lru_cache(maxsize=None)
def _fits_cell(gpu_id: str, fits: bool, loc: str) -> str:
    return (f'<td data-calc="fits.{e(gpu_id)}" data-value="{html.raw(fits)}">'
            f"{yes_no(fits, loc)}</td>")


@lru_cache(maxsize=None)
def _gpu_heads(chosen: str, gpus: int, loc: str) -> tuple[str, ...]:
    hours = fmt(EXAMPLE_HOURS, "hours", loc)
    share = fmt(dec_of(engine.DISCRETE_USABLE), "percent", loc)
    verdict = tx("ui.one_card", loc) if gpus == 1 else tx("ui.on_n_cards", loc, n=gpus)
    return (tx("field.gpu", loc), verdict,
            tx("ui.fewest_cards", loc, strategy=SHORT[chosen]),
            tx("ui.other_strategies", loc), tx("ui.memory", loc),
            tx("ui.usable", loc, share=share), tx("field.price", loc),
            f'{tx("ui.example_cost", loc)} ({hours})')


@lru_cache(maxsize=None)
def _unified_heads(loc: str) -> tuple[str, ...]:
    share = fmt(dec_of(engine.UNIFIED_USABLE), "percent", loc)
    return (tx("ui.machine", loc), tx("ui.fits", loc), tx("ui.memory", loc),
            tx("ui.usable", loc, share=share))


