"""The detailed calculator: a model (a preset, a custom architecture or a pasted config.json),
the method and its settings -> the total, its breakdown (table and stacked bar), the trainable
share, and which GPUs hold it (one card, or how many with ZeRO-3), with an example cost.

Its parser is the engine's interface itself (`calc.fields.parse` / `to_query`).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Mapping

from .. import catalog, engine, html
from ..chart import stacked_bar, swatch
from ..engine import Estimate, estimate
from ..errors import CalcError
from ..fields import ARCH_FIELDS, CUSTOM, parse, to_query
from ..fmt import fmt, fmt_memo
from ..types import Architecture, GpuKind, Method, Mode, Optimizer, Targets, Unit
from .base import Form, Outcome, bidi, dec_of, e, fig, form_layout, iso, summary, td_fig, \
    text, tx, txc, yes_no

__all__ = ["NAME", "DEFAULT_QUERY", "FORM_FIELDS", "NUMERIC_FIELDS", "EXAMPLE_HOURS", "parse",
           "run", "form"]

NAME = "calculator"
DEFAULT_QUERY: Mapping[str, str] = {}
FORM_FIELDS = ("model", "method", "rank", "targets", "seq", "batch", "ckpt", "unit",
               "optimizer", "mode", "flash", "dquant", "lora_experts", *ARCH_FIELDS, "config")
NUMERIC_FIELDS = frozenset({"rank", "seq", "batch", "params", "layers", "hidden", "ffn",
                            "heads", "kv_heads", "head_dim", "vocab"})
#: Hours of the example cost column of the GPU table.
EXAMPLE_HOURS = 10


# --- run --------------------------------------------------------------------------------------


def run(q: dict[str, str], loc: str, wid: str) -> Outcome:
    inputs = parse(q, loc)
    est = estimate(inputs)
    canonical = to_query(inputs)
    placeholders = dict(_placeholders(inputs.arch, loc))
    line = summary("component.total", fmt_memo(est.total, inputs.unit.value, loc), loc)
    form_values = {**canonical, "flash": str(inputs.flash).lower(),
                   "dquant": str(inputs.dquant).lower(),
                   "lora_experts": str(inputs.lora_experts).lower()}
    return Outcome(_results(est, loc, wid), canonical, form_values, placeholders, line)


@lru_cache(maxsize=256)
def _placeholders(arch: Architecture, loc: str) -> tuple[tuple[str, str], ...]:
    """The architecture fields' placeholders: the model's own values."""
    return tuple((n, fmt(getattr(arch, n), "number", loc)) for n in ARCH_FIELDS if n != "tied")


# --- results ----------------------------------------------------------------------------------


def _results(est: Estimate, loc: str, wid: str) -> str:
    """The results region (isolated on RTL pages piece by piece: `bidi` is not applied again)."""
    i = est.inputs
    unit = i.unit.value
    try:
        model_name = catalog.model(i.model).name if i.model != CUSTOM else txc("ui.custom_model", loc)
    except CalcError:
        model_name = i.model
    total, sharded = est.total, est.sharded
    discrete = tuple((gpu_id, *engine.fits_on(total, sharded, usable, False))
                     for gpu_id, usable in _usable(GpuKind.DISCRETE))
    unified = tuple((gpu_id, total <= usable) for gpu_id, usable in _usable(GpuKind.UNIFIED))
    return "".join((
        _config_line(model_name, i.method.value, i.arch.params, loc),
        iso(_total_label(loc), loc),
        fig("total", total, fmt_memo(total, unit, loc), kind="bytes", tag="strong",
            cls="calc-fig calc-total-value"),
        "</p>",
        # SVG: isolate_latin leaves it as it is
        stacked_bar(est.components, unit, loc, id_prefix=f"{wid}-chart"),
        _breakdown(est.components, total, unit, loc, wid),
        _trainable_line(est.trainable_params, i.arch.params, loc),
        iso(_smallest_line(discrete, loc), loc),
        _gpu_table(discrete, unit, loc, wid),
        _unified_table(unified, unit, loc, wid),
        iso(f'<p class="calc-note">{e(txc("ui.prices_note", loc))}</p>', loc),
    ))


@lru_cache(maxsize=1024)
def _config_line(model_name: str, method: str, params: int, loc: str) -> str:
    return bidi(f'<p class="calc-config">{e(model_name)} · {e(txc(f"method.{method}", loc))} · '
                f'{fig("params", params, fmt_memo(params, "params", loc))}</p>', loc)


def _total_label(loc: str) -> str:
    return (f'<p class="calc-total"><span class="calc-total-label">'
            f'{e(txc("component.total", loc))}</span> ')


@lru_cache(maxsize=8192)
def _share_text(value: int, total: int, loc: str) -> str:
    """A component's share of the total in the breakdown table (one fraction digit)."""
    share = Fraction(value, total) if total else Fraction(0)
    return text(dec_of(share), "percent", loc, 1)


def _breakdown(components: tuple[tuple[str, int], ...], total: int, unit: str, loc: str,
               wid: str) -> str:
    rows = "".join(f'{_breakdown_head(n, name, loc)}{value}">{text(value, unit, loc)}</td>'
                   f"<td>{_share_text(value, total, loc)}</td></tr>"
                   for n, (name, value) in enumerate(components))  # values: int bytes
    foot = (f'{iso(_breakdown_foot_head(loc), loc)}{text(total, unit, loc)}</td>'
            f"<td>{text(1, 'percent', loc)}</td></tr></tfoot>")
    head = (txc("ui.component", loc), txc("ui.memory", loc), txc("ui.share", loc))
    opening = html.table_open(wid, "breakdown", txc("ui.breakdown", loc), head, "calc-breakdown")
    return f"{iso(opening, loc)}{rows}</tbody>{foot}</table></div>"


@lru_cache(maxsize=None)
def _breakdown_head(n: int, name: str, loc: str) -> str:
    """A breakdown row up to its bytes value."""
    head = f'<tr><th scope="row">{swatch(n)}{e(txc(f"component.{name}", loc))}</th>'
    return f'{bidi(head, loc)}<td data-calc="{e(name)}" data-bytes="'


def _breakdown_foot_head(loc: str) -> str:
    return f'<tfoot><tr><th scope="row">{e(txc("component.total", loc))}</th><td>'


@lru_cache(maxsize=1024)
def _trainable_line(trainable: int, params: int, loc: str) -> str:
    share = Fraction(trainable, params)
    return bidi(
        f'<p class="calc-trainable"><span>{e(txc("component.trainable_params", loc))}:</span> '
        f'{fig("trainable_params", trainable, fmt_memo(trainable, "params", loc))} '
        f'({fig("trainable_share", share, fmt(dec_of(share), "percent", loc, 2))})</p>', loc)


@lru_cache(maxsize=None)
def _usable(kind: GpuKind) -> tuple[tuple[str, int], ...]:
    """(id, usable bytes) of the catalog's GPUs of one kind, in the catalog's order."""
    return tuple((g.id, engine.usable_bytes(g)) for g in catalog.gpus() if g.kind is kind)


def _smallest_line(discrete: tuple[tuple[str, bool, int | None], ...], loc: str) -> str:
    """The smallest card that fits alone, from (id, fits, cards) of each discrete GPU."""
    one = [catalog.gpu(gpu_id) for gpu_id, fits, _ in discrete if fits]
    if one:
        smallest = min(one, key=lambda g: g.memory_bytes)
        line = tx("ui.smallest_fit", loc, gpu=catalog.gpu_label(smallest, loc))
        return (f'<p class="calc-smallest" data-calc="smallest_gpu" '
                f'data-value="{e(smallest.id)}">{e(line)}</p>')
    return (f'<p class="calc-smallest" data-calc="smallest_gpu" data-value="none">'
            f'{e(tx("ui.none_fit", loc))}</p>')


# --- the GPU tables ---------------------------------------------------------------------------
#
# Rows are memoized by their state (card, fits, cards) and whole tables by their rows' states;
# the parts that do not depend on the input are rendered once per unit and locale.


@lru_cache(maxsize=512)
def _gpu_table(states: tuple[tuple[str, bool, int | None], ...], unit: str, loc: str,
               wid: str) -> str:
    """The table of discrete cards: (id, fits on one, fewest cards) of each."""
    head = iso(html.table_open(wid, "gpus", txc("ui.which_gpus", loc), _gpu_heads(loc),
                               "calc-gpus"), loc)
    rows = "".join(_gpu_row(gpu_id, fits, cards, unit, loc) for gpu_id, fits, cards in states)
    return f"{head}{rows}</tbody></table></div>"


@lru_cache(maxsize=4096)
def _gpu_row(gpu_id: str, fits: bool, cards: int | None, unit: str, loc: str) -> str:
    g = catalog.gpu(gpu_id)
    if cards is None:
        cards_cell = td_fig(f"cards.{g.id}", None, tx("ui.no_cards", loc))
    else:
        cards_cell = td_fig(f"cards.{g.id}", cards, fmt(cards, "number", loc))
    if g.price_per_hour is None or cards is None:
        cost_cell = f'<td data-calc="cost.{e(g.id)}" data-value="none">—</td>'
    else:
        c = engine.cost(EXAMPLE_HOURS, g.price_per_hour * cards)
        cost_cell = td_fig(f"cost.{g.id}", c, fmt(c, "USD", loc))
    name, memory, price_cell = _gpu_cells(g.id, unit, loc)
    return bidi(f"{_row_start(g.id, fits)}{name}{_fits_cell(g.id, fits, loc)}"
                f"{cards_cell}{memory}{price_cell}{cost_cell}</tr>", loc)


@lru_cache(maxsize=256)
def _unified_table(states: tuple[tuple[str, bool], ...], unit: str, loc: str, wid: str) -> str:
    """The table of unified-memory machines: (id, fits) of each."""
    rows = [f"{_row_start(gpu_id, fits)}{_gpu_cells(gpu_id, unit, loc)[0]}"
            f"{_fits_cell(gpu_id, fits, loc)}{_gpu_cells(gpu_id, unit, loc)[1]}</tr>"
            for gpu_id, fits in states]
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
    name = f'<th scope="row">{e(catalog.gpu_label(g, loc))}</th>'
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
def _gpu_heads(loc: str) -> tuple[str, ...]:
    hours = fmt(EXAMPLE_HOURS, "hours", loc)
    share = fmt(dec_of(engine.DISCRETE_USABLE), "percent", loc)
    return (tx("field.gpu", loc), tx("ui.one_card", loc), tx("ui.cards_sharded", loc),
            tx("ui.memory", loc), tx("ui.usable", loc, share=share), tx("field.price", loc),
            f'{tx("ui.example_cost", loc)} ({hours})')


@lru_cache(maxsize=None)
def _unified_heads(loc: str) -> tuple[str, ...]:
    share = fmt(dec_of(engine.UNIFIED_USABLE), "percent", loc)
    return (tx("ui.machine", loc), tx("ui.fits", loc), tx("ui.memory", loc),
            tx("ui.usable", loc, share=share))


# --- form -------------------------------------------------------------------------------------


def form(f: Form, loc: str, placeholders: Mapping[str, str]) -> str:
    wid = f.wid
    models = "".join(f'<option value="{e(m.id)}">{e(m.name)}</option>' for m in catalog.models())
    models += f'<option value="{CUSTOM}">{e(tx("ui.custom_model", loc))}</option>'
    datalist = f'<datalist id="{wid}-models">{models}</datalist>'
    common = [
        f.text("model", inputmode="", datalist=f"{wid}-models", ltr=True, cls="calc-field-wide"),
        datalist,
        f.radios("method", [(m.value, tx(f"method.{m.value}", loc)) for m in Method]),
        f.text("rank", inputmode="numeric"),
        f.select("targets", [(x.value, tx(f"targets.{x.value}", loc)) for x in Targets]),
        f.text("seq", inputmode="numeric"),
        f.text("batch", inputmode="numeric"),
        f.checkbox("ckpt"),
        f.radios("unit", [(u.value, u.value) for u in (Unit.GIB, Unit.GB)]),
    ]
    arch = []
    for n in ARCH_FIELDS:
        if n == "tied":
            arch.append(f.select("tied", [("", tx("ui.from_model", loc)),
                                          ("true", tx("bool.true", loc)),
                                          ("false", tx("bool.false", loc))]))
        else:
            arch.append(f.text(n, inputmode="text" if n == "params" else "numeric", ltr=True,
                               placeholder=placeholders.get(n, "")))
    advanced = [
        f.select("optimizer", [(o.value, tx(f"optimizer.{o.value}", loc)) for o in Optimizer]),
        f.select("mode", [(m.value, tx(f"mode.{m.value}", loc)) for m in Mode]),
        f.checkbox("flash"),
        f.checkbox("dquant"),
        f.checkbox("lora_experts"),
        f'<fieldset class="calc-group"><legend>{e(tx("ui.custom_model", loc))}</legend>'
        f'<p class="calc-help">{e(tx("ui.arch_help", loc))}</p>'
        f'<div class="calc-grid">{"".join(arch)}</div></fieldset>',
        f.textarea("config"),
    ]
    return form_layout(wid, loc, common, advanced)
