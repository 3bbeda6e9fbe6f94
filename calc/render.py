"""HTML of the calculator widgets: the same code at build time (the static first paint) and in
the browser (the Pyodide worker, on every edit).

- `widget(name, locale, query=None)`: the whole widget (form, status line, copy-link button and
  the results region) for `name` in WIDGETS. The build hook calls it with the default query, so
  the page's first paint already shows the default result.
- `results(name, query, locale)`: what the worker returns on each edit: the results region's
  HTML, the translated message of every invalid field, the canonical query for the URL, the
  normalised form values and the placeholders of fields that default to a preset's value.
- `results_json(name, query_json, locale)`: `results` with JSON in and out (the worker's call).

Every text is escaped with `html.escape`; values from a URL or a form are never inserted
unescaped. Every engine figure is an element with `data-calc="<name>"` and its raw value in
`data-bytes` (integer bytes) or `data-value` (anything else) beside the formatted text.

Strings the page script shows (loading stages, errors, "link copied") are rendered here from the
catalogs into `data-msg-*` attributes of the widget root: the script types no text of its own.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from html import escape
from typing import Any, Callable, Iterable, Mapping

from . import catalog, engine, html
from .bidi import isolate_latin, isolate_text
from .chart import stacked_bar, swatch
from .engine import Estimate, QUICK_PRESETS, estimate
from .errors import CalcError
from .fields import ARCH_FIELDS, CUSTOM, first, parse, parse_adapter, parse_cost, \
    parse_quick, to_query
from .fmt import fmt, fmt_memo as _fmt
from .i18n import catalog as catalog_of, locale_dir, lookup, normalize_locale, t
from .types import Architecture, GpuKind, Method, Mode, Optimizer, Targets, Unit

__all__ = ["WIDGETS", "widget", "results", "results_json", "warm_queries", "DEFAULT_QUERY",
           "EXAMPLE_HOURS"]

WIDGETS = ("calculator", "adapter", "quick", "cost")

#: The query each widget starts from (its first paint). The cost widget starts from the spec's
#: example (an A40 for 20 hours).
DEFAULT_QUERY: dict[str, dict[str, str]] = {
    "calculator": {},
    "adapter": {},
    "quick": {},
    "cost": {"gpu": "a40"},
}
#: How long the page waits for Python before it says the calculator could not load (ms).
LOAD_TIMEOUT_MS = 20_000
#: Hours of the example cost column of the detailed calculator.
EXAMPLE_HOURS = 10
#: Keys each widget's form sends (and the URL may carry).
FORM_FIELDS: dict[str, tuple[str, ...]] = {
    "calculator": ("model", "method", "rank", "targets", "seq", "batch", "ckpt", "unit",
                   "optimizer", "mode", "flash", "dquant", *ARCH_FIELDS, "config"),
    "adapter": ("d_in", "d_out", "rank", "dtype"),
    "quick": ("n", "bpp", "bpp_custom", "act", "unit"),
    "cost": ("gpu", "hours", "price"),
}
BPP_CUSTOM = "custom"
#: Text fields that hold a number (shown in the locale's digits).
_NUMERIC_FIELDS = frozenset({"rank", "seq", "batch", "params", "layers", "hidden", "ffn", "heads",
                             "kv_heads", "head_dim", "vocab", "d_in", "d_out", "n", "bpp_custom",
                             "act", "hours", "price"})


# --- small helpers ----------------------------------------------------------------------------


def _e(text: object) -> str:
    return html.e(text)


def _has(key: str, loc: str) -> bool:
    return lookup(key, loc) != key


def _q(query: Mapping[str, Any] | None) -> dict[str, str]:
    """A query as {key: str}: repeated keys -> the last value (as `fields.first`), None dropped."""
    out: dict[str, str] = {}
    for k, v in (query or {}).items():
        v = first(v)
        if v is None:
            continue
        out[str(k)] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


def _fig(name: str, raw: object, text: str, *, kind: str = "value", tag: str = "span",
         cls: str = "calc-fig") -> str:
    """An engine figure (`calc.html.figure`)."""
    if kind == "bytes":
        return html.figure(name, text, bytes_=int(raw), tag=tag, cls=cls)  # type: ignore[arg-type]
    return html.figure(name, text, value=raw, tag=tag, cls=cls)


def _dec_of(x: Fraction) -> Decimal:
    """A Fraction as a Decimal (28 significant digits), the type `fmt` takes."""
    return Decimal(x.numerator) / Decimal(x.denominator)


def _td_fig(name: str, raw: object, text: str, kind: str = "value", cls: str = "") -> str:
    if kind == "bytes":
        return html.td_figure(name, text, bytes_=int(raw), cls=cls)  # type: ignore[arg-type]
    return html.td_figure(name, text, value=raw, cls=cls)


_scroll_table = html.scroll_table
_table_open = html.table_open


def _yes_no(value: bool, loc: str, yes: str = "ui.fits", no: str = "ui.does_not_fit") -> str:
    cls = "calc-yes" if value else "calc-no"
    mark = "✓" if value else "✗"
    return (f'<span class="{cls}"><span aria-hidden="true">{mark} </span>'
            f"{_e(_tx(yes if value else no, loc))}</span>")


def _tx(key: str, loc: str, **params: object) -> str:
    """`t` (the catalogs, English fallback)."""
    return t(key, loc, **params)


# --- memoized pieces --------------------------------------------------------------------------
#
# The worker renders the calculator's results on every edit, and most of them does not change
# from one edit to the next: texts of the catalogs, figures of the same value, GPU rows with the
# same number of cards. These pieces are pure functions of their arguments (the catalogs are
# read once), so they are memoized here; the snapshot holds what the build rendered.
#
# Right to left: `isolate_latin` on a whole region equals the concatenation of `isolate_latin`
# on its pieces when each piece starts and ends at a tag and no enclosing element is skipped
# (code, SVG, `calc-fig`, `dir`) or an `<option>`: the results region's blocks, table rows and
# cells are such pieces. So each piece is isolated once, when it is first made, and the region
# is never scanned as a whole (`tests`: the same bytes as isolating the whole).


@lru_cache(maxsize=None)
def _txc(key: str, loc: str) -> str:
    """`t` of a text without parameters, memoized."""
    return t(key, loc)


@lru_cache(maxsize=4096)
def _iso_rtl(html: str) -> str:
    return isolate_latin(html)


def _iso(html: str, loc: str) -> str:
    """`_bidi` of a piece of the results region, memoized by its text."""
    return _iso_rtl(html) if locale_dir(loc) == "rtl" else html


@lru_cache(maxsize=8192, typed=True)
def _text(value: int | Decimal, unit: str, loc: str, digits: int | None = None) -> str:
    """`fmt` as the text of an element that is not a `calc-fig`: escaped, isolated on RTL."""
    return _iso(_e(_fmt(value, unit, loc, digits)), loc)


@lru_cache(maxsize=8192)
def _share_text(value: int, total: int, loc: str) -> str:
    """A component's share of the total in the breakdown table (one fraction digit)."""
    share = Fraction(value, total) if total else Fraction(0)
    return _text(_dec_of(share), "percent", loc, 1)


# --- results of each widget --------------------------------------------------------------------


def _calculator_results(est: Estimate, loc: str, wid: str) -> str:
    """The results region (isolated on RTL pages: `_bidi` is not applied again)."""
    i = est.inputs
    unit = i.unit.value
    total = est.total
    try:
        model_name = catalog.model(i.model).name if i.model != CUSTOM else _txc("ui.custom_model", loc)
    except CalcError:
        model_name = i.model
    total, sharded = est.total, est.sharded
    discrete = tuple((gpu_id, *engine.fits_on(total, sharded, usable, False))
                     for gpu_id, usable in _usable(GpuKind.DISCRETE))
    unified = tuple((gpu_id, total <= usable) for gpu_id, usable in _usable(GpuKind.UNIFIED))
    return "".join((
        _config_line(model_name, i.method.value, i.arch.params, loc),
        _iso(_total_label(loc), loc),
        _fig("total", total, _fmt(total, unit, loc), kind="bytes", tag="strong",
             cls="calc-fig calc-total-value"),
        "</p>",
        # SVG: isolate_latin leaves it as it is
        stacked_bar(est.components, unit, loc, id_prefix=f"{wid}-chart"),
        _breakdown(est.components, total, unit, loc, wid),
        _trainable_line(est.trainable_params, i.arch.params, loc),
        _iso(_smallest_line(discrete, loc), loc),
        _gpu_table(discrete, unit, loc, wid),
        _unified_table(unified, unit, loc, wid),
        _iso(f'<p class="calc-note">{_e(_txc("ui.prices_note", loc))}</p>', loc),
    ))


@lru_cache(maxsize=1024)
def _config_line(model_name: str, method: str, params: int, loc: str) -> str:
    return _bidi(f'<p class="calc-config">{_e(model_name)} · {_e(_txc(f"method.{method}", loc))} · '
                 f'{_fig("params", params, _fmt(params, "params", loc))}</p>', loc)


def _total_label(loc: str) -> str:
    return (f'<p class="calc-total"><span class="calc-total-label">'
            f'{_e(_txc("component.total", loc))}</span> ')


def _breakdown(components: tuple[tuple[str, int], ...], total: int, unit: str, loc: str,
               wid: str) -> str:
    rows = "".join(f'{_breakdown_head(n, name, loc)}{value}">{_text(value, unit, loc)}</td>'
                   f"<td>{_share_text(value, total, loc)}</td></tr>"
                   for n, (name, value) in enumerate(components))  # values: int bytes
    foot = (f'{_iso(_breakdown_foot_head(loc), loc)}{_text(total, unit, loc)}</td>'
            f"<td>{_text(1, 'percent', loc)}</td></tr></tfoot>")
    head = (_txc("ui.component", loc), _txc("ui.memory", loc), _txc("ui.share", loc))
    return (f'{_iso(_table_open(wid, "breakdown", _txc("ui.breakdown", loc), head, "calc-breakdown"), loc)}'
            f"{rows}</tbody>{foot}</table></div>")


@lru_cache(maxsize=None)
def _breakdown_head(n: int, name: str, loc: str) -> str:
    """A breakdown row up to its bytes value."""
    head = f'<tr><th scope="row">{swatch(n)}{_e(_txc(f"component.{name}", loc))}</th>'
    return f'{_bidi(head, loc)}<td data-calc="{_e(name)}" data-bytes="'


def _breakdown_foot_head(loc: str) -> str:
    return f'<tfoot><tr><th scope="row">{_e(_txc("component.total", loc))}</th><td>'


@lru_cache(maxsize=1024)
def _trainable_line(trainable: int, params: int, loc: str) -> str:
    share = Fraction(trainable, params)
    return _bidi(
        f'<p class="calc-trainable"><span>{_e(_txc("component.trainable_params", loc))}:</span> '
        f'{_fig("trainable_params", trainable, _fmt(trainable, "params", loc))} '
        f'({_fig("trainable_share", share, fmt(_dec_of(share), "percent", loc, 2))})</p>', loc)


@lru_cache(maxsize=None)
def _usable(kind: GpuKind) -> tuple[tuple[str, int], ...]:
    """(id, usable bytes) of the catalog's GPUs of one kind, in the catalog's order."""
    return tuple((g.id, engine.usable_bytes(g)) for g in catalog.gpus() if g.kind is kind)


def _smallest_line(discrete: tuple[tuple[str, bool, int | None], ...], loc: str) -> str:
    """The smallest card that fits alone, from (id, fits, cards) of each discrete GPU."""
    one = [catalog.gpu(gpu_id) for gpu_id, fits, _ in discrete if fits]
    if one:
        smallest = min(one, key=lambda g: g.memory_bytes)
        line = _tx("ui.smallest_fit", loc, gpu=catalog.gpu_label(smallest, loc))
        return (f'<p class="calc-smallest" data-calc="smallest_gpu" '
                f'data-value="{_e(smallest.id)}">{_e(line)}</p>')
    return (f'<p class="calc-smallest" data-calc="smallest_gpu" data-value="none">'
            f'{_e(_tx("ui.none_fit", loc))}</p>')


@lru_cache(maxsize=512)
def _gpu_table(states: tuple[tuple[str, bool, int | None], ...], unit: str, loc: str,
               wid: str) -> str:
    """The table of discrete cards: (id, fits on one, fewest cards) of each."""
    head = _iso(_table_open(wid, "gpus", _txc("ui.which_gpus", loc), _gpu_heads(loc), "calc-gpus"),
                loc)
    rows = "".join(_gpu_row(gpu_id, fits, cards, unit, loc) for gpu_id, fits, cards in states)
    return f"{head}{rows}</tbody></table></div>"


@lru_cache(maxsize=4096)
def _gpu_row(gpu_id: str, fits: bool, cards: int | None, unit: str, loc: str) -> str:
    g = catalog.gpu(gpu_id)
    if cards is None:
        cards_cell = _td_fig(f"cards.{g.id}", None, _tx("ui.no_cards", loc))
    else:
        cards_cell = _td_fig(f"cards.{g.id}", cards, fmt(cards, "number", loc))
    if g.price_per_hour is None or cards is None:
        cost_cell = f'<td data-calc="cost.{_e(g.id)}" data-value="none">—</td>'
    else:
        c = engine.cost(EXAMPLE_HOURS, g.price_per_hour * cards)
        cost_cell = _td_fig(f"cost.{g.id}", c, fmt(c, "USD", loc))
    name, memory, price_cell = _gpu_cells(g.id, unit, loc)
    return _bidi(f"{_row_start(g.id, fits)}{name}{_fits_cell(g.id, fits, loc)}"
                 f"{cards_cell}{memory}{price_cell}{cost_cell}</tr>", loc)


@lru_cache(maxsize=256)
def _unified_table(states: tuple[tuple[str, bool], ...], unit: str, loc: str, wid: str) -> str:
    """The table of unified-memory machines: (id, fits) of each."""
    rows = [f"{_row_start(gpu_id, fits)}{_gpu_cells(gpu_id, unit, loc)[0]}"
            f"{_fits_cell(gpu_id, fits, loc)}{_gpu_cells(gpu_id, unit, loc)[1]}</tr>"
            for gpu_id, fits in states]
    return _bidi(_scroll_table(wid, "unified", _tx("ui.unified_usable", loc), _unified_heads(loc),
                               rows, cls="calc-unified"), loc)


# Parts of the GPU tables that do not depend on the input: rendered once per unit and locale
# (the worker re-renders the tables on every edit).


def _row_start(gpu_id: str, fits: bool) -> str:
    return (f'<tr class="{"calc-row-fits" if fits else "calc-row-nofit"}" '
            f'data-gpu="{_e(gpu_id)}">')


@lru_cache(maxsize=None)
def _gpu_cells(gpu_id: str, unit: str, loc: str) -> tuple[str, str, str]:
    """(name cell; memory and usable cells; price cell) of one catalog GPU. The verdict goes
    right after the name: on a phone the first columns are the ones in view."""
    g = catalog.gpu(gpu_id)
    usable = engine.usable_bytes(g)
    name = f'<th scope="row">{_e(catalog.gpu_label(g, loc))}</th>'
    memory = (f"{_td_fig(f'memory.{g.id}', g.memory_bytes, fmt(g.memory_bytes, unit, loc), 'bytes')}"
              f"{_td_fig(f'usable.{g.id}', usable, fmt(usable, unit, loc), 'bytes')}")
    if g.price_per_hour is None:
        price = (f'<td data-calc="price.{_e(g.id)}" data-value="none">'
                 f'{_e(_tx("ui.no_price", loc))}</td>')
    else:
        price = _td_fig(f"price.{g.id}", g.price_per_hour, fmt(g.price_per_hour, "USD", loc))
    return name, memory, price


@lru_cache(maxsize=None)
def _fits_cell(gpu_id: str, fits: bool, loc: str) -> str:
    return f'<td data-calc="fits.{_e(gpu_id)}" data-value="{html.raw(fits)}">{_yes_no(fits, loc)}</td>'


@lru_cache(maxsize=None)
def _gpu_heads(loc: str) -> tuple[str, ...]:
    hours = fmt(EXAMPLE_HOURS, "hours", loc)
    share = fmt(_dec_of(engine.DISCRETE_USABLE), "percent", loc)
    return (_tx("field.gpu", loc), _tx("ui.one_card", loc), _tx("ui.cards_sharded", loc),
            _tx("ui.memory", loc), _tx("ui.usable", loc, share=share), _tx("field.price", loc),
            f'{_tx("ui.example_cost", loc)} ({hours})')


@lru_cache(maxsize=None)
def _unified_heads(loc: str) -> tuple[str, ...]:
    share = fmt(_dec_of(engine.UNIFIED_USABLE), "percent", loc)
    return (_tx("ui.machine", loc), _tx("ui.fits", loc), _tx("ui.memory", loc),
            _tx("ui.usable", loc, share=share))


def _adapter_results(d_in: int, d_out: int, rank: int, dtype: str, loc: str) -> str:
    params = engine.lora_layer_params(d_in, d_out, rank)
    size = engine.adapter_bytes(d_in, d_out, rank, dtype)
    size_label = f'{_tx("ui.adapter_size", loc)} ({dtype.upper()})'
    formula = (f"{fmt(rank, 'number', loc)} × ({fmt(d_in, 'number', loc)} + "
               f"{fmt(d_out, 'number', loc)})")
    return (
        f'<p class="calc-total"><span class="calc-total-label">{_e(_tx("ui.adapter_params", loc))}</span> '
        f'{_fig("adapter_params", params, fmt(params, "params", loc), tag="strong", cls="calc-fig calc-total-value")}'
        f"</p>"
        f'<p class="calc-formula"><span dir="ltr" lang="en">r × (d_in + d_out)</span> = '
        f'<bdi>{_e(formula)}</bdi></p>'
        f'<p><span>{_e(size_label)}</span> '
        f'{_fig("adapter_bytes", size, fmt(size, "MiB", loc, 2), kind="bytes")}</p>'
    )


def _quick_results(n: Decimal, bpp: Decimal, act: Decimal, unit: str, loc: str) -> str:
    states = engine.quick_full(n, bpp, 0)
    activations = engine.quick_full(0, 0, act)
    total = engine.quick_full(n, bpp, act)
    fits = [f for f in _discrete_usable() if total <= f[1]]
    if fits:
        g = min(fits, key=lambda f: f[0].memory_bytes)[0]
        fit_line = (f'<p class="calc-smallest" data-calc="smallest_gpu" data-value="{_e(g.id)}">'
                    f'{_e(_tx("ui.smallest_fit", loc, gpu=catalog.gpu_label(g, loc)))}</p>')
    else:
        fit_line = (f'<p class="calc-smallest" data-calc="smallest_gpu" data-value="none">'
                    f'{_e(_tx("ui.none_fit", loc))}</p>')
    formula = (f"{fmt(n, 'number', loc)} × {fmt(bpp, 'number', loc)} + "
               f"{fmt(act, 'number', loc)}")
    return (
        f'<p class="calc-total"><span class="calc-total-label">{_e(_tx("component.total", loc))}</span> '
        f'{_fig("quick_total", total, fmt(total, unit, loc), kind="bytes", tag="strong", cls="calc-fig calc-total-value")}'
        f"</p>"
        f'<p class="calc-formula"><span dir="ltr" lang="en">V = N × B + A</span> = <bdi>{_e(formula)}</bdi></p>'
        f'<ul class="calc-parts">'
        f'<li>{_e(_tx("ui.model_states", loc))}: {_fig("quick_states", states, fmt(states, unit, loc), kind="bytes")}</li>'
        f'<li>{_e(_tx("component.activations", loc))}: '
        f'{_fig("quick_activations", activations, fmt(activations, unit, loc), kind="bytes")}</li>'
        f"</ul>{fit_line}"
    )


def _discrete_usable() -> list[tuple[catalog.Gpu, int]]:
    return [(g, engine.usable_bytes(g)) for g in catalog.gpus() if g.kind is GpuKind.DISCRETE]


def _cost_results(hours: Decimal, price: Decimal, gpu_id: str | None, loc: str) -> str:
    total = engine.cost(hours, price)
    return (
        f'<p class="calc-total"><span class="calc-total-label">{_e(_tx("ui.cost", loc))}</span> '
        f'{_fig("cost", total, fmt(total, "USD", loc), tag="strong", cls="calc-fig calc-total-value")}'
        f"</p>"
        f'<p class="calc-formula">{_fig("hours", hours, fmt(hours, "hours", loc))} × '
        f'{_fig("price", price, fmt(price, "USD", loc))} = '
        f'<bdi>{_e(fmt(total, "USD", loc))}</bdi></p>'
        f'<p class="calc-note">{_e(_tx("ui.prices_note", loc))}</p>'
    )


# --- results(): parse, compute, render -------------------------------------------------------


def _summary(key: str, value: str, loc: str) -> str:
    return f"{_txc(key, loc)}: {value}"


class _Outcome:
    """What a runner returns: `html` is final (isolated on right-to-left pages)."""

    def __init__(self, html: str, query: dict[str, str], form: dict[str, str],
                 placeholders: dict[str, str], summary: str):
        self.html, self.query, self.form = html, query, form
        self.placeholders, self.summary = placeholders, summary


def _run_calculator(q: dict[str, str], loc: str, wid: str) -> _Outcome:
    inputs = parse(q, loc)
    est = estimate(inputs)
    canonical = to_query(inputs)
    placeholders = dict(_placeholders(inputs.arch, loc))
    summary = _summary("component.total", _fmt(est.total, inputs.unit.value, loc), loc)
    form = {**canonical, "flash": str(inputs.flash).lower(), "dquant": str(inputs.dquant).lower()}
    return _Outcome(_calculator_results(est, loc, wid), canonical, form, placeholders, summary)


@lru_cache(maxsize=256)
def _placeholders(arch: Architecture, loc: str) -> tuple[tuple[str, str], ...]:
    """The architecture fields' placeholders: the model's own values."""
    return tuple((n, fmt(getattr(arch, n), "number", loc)) for n in ARCH_FIELDS if n != "tied")


def _unit_of(q: dict[str, str], default: Unit) -> Unit:
    """The display unit of a small widget, validated by the engine's own parser."""
    if not q.get("unit", "").strip():
        return default
    return parse({"unit": q["unit"]}).unit


def _fail(field: str, code: str) -> None:
    raise CalcError.one(field, code)


def _collect(*steps: Callable[[], Any]) -> list[Any]:
    """Run independent parsers, merging every CalcError so each field gets its message."""
    out, problems = [], []
    for step in steps:
        try:
            out.append(step())
        except CalcError as err:
            problems.extend(err.problems)
            out.append(None)
    if problems:
        raise CalcError(problems)
    return out


def _run_adapter(q: dict[str, str], loc: str, wid: str) -> _Outcome:
    d_in, d_out, rank, dtype = parse_adapter(q, loc)
    canonical = {"d_in": str(d_in), "d_out": str(d_out), "rank": str(rank), "dtype": dtype}
    size = engine.adapter_bytes(d_in, d_out, rank, dtype)
    summary = _summary("ui.adapter_size", fmt(size, "MiB", loc, 2), loc)
    return _Outcome(_bidi(_adapter_results(d_in, d_out, rank, dtype, loc), loc), canonical,
                    dict(canonical), {}, summary)


def _dec(d: Decimal) -> str:
    """A Decimal as the shortest plain text (7, 0.5, 0.74): no exponent, no trailing zeros."""
    return format(d.copy_abs() if d.is_zero() else d.normalize(), "f")


def _run_quick(q: dict[str, str], loc: str, wid: str) -> _Outcome:
    q = dict(q)
    custom = q.get("bpp", "").strip().lower() == BPP_CUSTOM
    if custom:  # the select says "custom": the number is in bpp_custom
        q["bpp"] = q.get("bpp_custom", "")
    try:
        if custom and not q["bpp"].strip():
            _collect(lambda: parse_quick(q, loc), lambda: _unit_of(q, Unit.GB),
                     lambda: _fail("bpp", "required"))
        (n, bpp, act), unit = _collect(lambda: parse_quick(q, loc),
                                       lambda: _unit_of(q, Unit.GB))
    except CalcError as err:
        if custom:  # the message names "Bytes per parameter"; it belongs at the custom field
            err.remap = {"bpp": "bpp_custom"}  # type: ignore[attr-defined]
        raise
    canonical = {"n": _dec(n), "bpp": _dec(bpp), "act": _dec(act), "unit": unit.value}
    presets = {str(v) for v in QUICK_PRESETS.values()}
    form = dict(canonical)
    if form["bpp"] not in presets:
        form["bpp"], form["bpp_custom"] = BPP_CUSTOM, canonical["bpp"]
    else:
        form["bpp_custom"] = ""
    total = engine.quick_full(n, bpp, act)
    summary = _summary("component.total", fmt(total, unit.value, loc), loc)
    return _Outcome(_bidi(_quick_results(n, bpp, act, unit.value, loc), loc), canonical, form, {},
                    summary)


def _run_cost(q: dict[str, str], loc: str, wid: str) -> _Outcome:
    hours, price, gpu_id = parse_cost(q, loc)
    canonical = {"gpu": gpu_id or "", "hours": _dec(hours)}
    if q.get("price", "").strip():
        canonical["price"] = _dec(price)
    form = {"gpu": gpu_id or "", "hours": canonical["hours"], "price": canonical.get("price", "")}
    placeholders = {"price": fmt(price, "number", loc, 2)} if gpu_id else {"price": ""}
    summary = _summary("ui.cost", fmt(engine.cost(hours, price), "USD", loc), loc)
    return _Outcome(_bidi(_cost_results(hours, price, gpu_id, loc), loc), canonical, form,
                    placeholders, summary)


_RUNNERS: dict[str, Callable[[dict[str, str], str, str], _Outcome]] = {
    "calculator": _run_calculator,
    "adapter": _run_adapter,
    "quick": _run_quick,
    "cost": _run_cost,
}


def _check_name(name: str) -> str:
    if name not in WIDGETS:
        raise ValueError(f"unknown widget {name!r}; one of {', '.join(WIDGETS)}")
    return name


_WHOLE = re.compile(r"[1-9][0-9]{0,6}")


def warm_queries(name: str, locale: str, runs: int = 300) -> str:
    """The worker's warm-up (worker.js): a JSON list of `runs` queries of widget `name`, each
    a JSON text and a new state, as edits make them: from the widget's default query, one
    whole-number field stepped up (or a yes/no field toggled) after another. A snapshot
    restores Python cold (V8's baseline tier); calculating new states, not one memoized
    state again, is what gets the code an edit runs optimized before the reader's edits."""
    base: dict[str, str] = results(name, DEFAULT_QUERY.get(name), locale)["query"] or {}
    state = {k: v for k, v in base.items() if v in ("true", "false") or _WHOLE.fullmatch(v)}
    fields = list(state)
    out = []
    for run in range(runs if fields else 0):
        field = fields[run % len(fields)]
        value = state[field]
        state[field] = ({"true": "false", "false": "true"}.get(value)
                        or str(int(value) + 1 + run % 3))  # small steps: stays valid
        out.append(json.dumps({**base, **state}))
    return json.dumps(out)


def results(name: str, query: Mapping[str, Any] | None, locale: str, *,
            uid: str | None = None) -> dict[str, Any]:
    """The results of widget `name` for `query` (raw strings from a form or a URL).

    Returns {"ok", "html", "errors", "query", "form", "placeholders", "status"}:
    - valid input: ok True, html of the results region, errors {}, query the canonical query
      (what the URL shows), form the values the form should hold, placeholders of fields that
      default to a preset's value, status a one-line summary for the status line;
    - invalid input: ok False, errors {field: translated message}, query None, html the
      default result marked stale (the page keeps its last valid result instead), status the
      translated "fix the marked fields" line with the first message.
    """
    _check_name(name)
    loc = normalize_locale(locale)
    wid = uid or f"calc-{name}"
    q = _q(query)
    try:
        out = _RUNNERS[name](q, loc, wid)
    except CalcError as err:
        remap = getattr(err, "remap", {})
        errors = {remap.get(k, k): v for k, v in err.messages(loc).items()}
        default = _RUNNERS[name](dict(DEFAULT_QUERY[name]), loc, wid)
        first_msg = next(iter(errors.values()), "")
        return {
            "ok": False,
            "html": _stale(default.html),
            "errors": {k: _bidi_text(v, loc) for k, v in errors.items()},
            "query": None,
            "form": None,
            "placeholders": {},
            "status": _bidi_text(_tx("ui.stale", loc, message=first_msg), loc),
        }
    form = {k: _local_digits(v, loc) if k in _NUMERIC_FIELDS else v for k, v in out.form.items()}
    return {"ok": True, "html": out.html, "errors": {}, "query": out.query,
            "form": form, "placeholders": out.placeholders,
            "status": _bidi_text(out.summary, loc)}


def _bidi(markup: str, loc: str) -> str:
    return html.bidi(markup, loc)


def _bidi_text(text: str, loc: str) -> str:
    return html.bidi_text(text, loc)


def _stale(html: str) -> str:
    return f'<div class="calc-stale-mark" data-stale="true">{html}</div>'


def results_json(name: str, query_json: str, locale: str) -> str:
    """The worker's entry point: JSON text in, JSON text out."""
    try:
        query = json.loads(query_json) if query_json else {}
    except ValueError:
        query = {}
    if not isinstance(query, dict):
        query = {}
    query = {str(k): (v if isinstance(v, (str, list)) else ("" if v is None else str(v)))
             for k, v in query.items()}
    return json.dumps(results(name, query, locale), ensure_ascii=False)


# --- the form ---------------------------------------------------------------------------------


def _local_digits(value: str, loc: str) -> str:
    return html.local_digits(value, loc)


class _Form:
    """Renders labelled fields with help and an (empty) error slot, ids prefixed by the widget."""

    def __init__(self, wid: str, loc: str, values: Mapping[str, str],
                 errors: Mapping[str, str] | None = None):
        self.wid, self.loc, self.values = wid, loc, values
        self.errors = errors or {}

    def ids(self, name: str) -> tuple[str, str, str]:
        base = f"{self.wid}-{name}"
        return base, base + "-help", base + "-error"

    def label(self, name: str) -> str:
        if name == "bpp_custom":
            return f'{_tx("field.bpp", self.loc)}: {_tx("ui.custom_value", self.loc)}'
        return _tx(f"field.{name}", self.loc)

    def help(self, name: str, help_id: str) -> str:
        key = f"help.{name}"
        if not _has(key, self.loc):
            return ""
        return f'<p class="calc-help" id="{help_id}">{_e(_tx(key, self.loc))}</p>'

    def error_slot(self, name: str, err_id: str) -> str:
        message = self.errors.get(name)
        if message is None:
            return (f'<p class="calc-error" id="{err_id}" data-calc-error-for="{_e(name)}" '
                    f"hidden></p>")
        return (f'<p class="calc-error" id="{err_id}" data-calc-error-for="{_e(name)}">'
                f"{_e(message)}</p>")

    def _describedby(self, name: str, help_id: str) -> str:
        """aria-describedby (help text; the error message first when there is one) and
        aria-invalid."""
        ids = [help_id] if _has(f"help.{name}", self.loc) else []
        invalid = ""
        if name in self.errors:
            ids.insert(0, f"{self.wid}-{name}-error")
            invalid = ' aria-invalid="true"'
        return (f' aria-describedby="{" ".join(ids)}"' if ids else "") + invalid

    def wrap(self, name: str, label_html: str, control: str, help_html: str, err: str,
             cls: str = "", extra: str = "") -> str:
        cls = f"calc-field {cls}".strip()
        return (f'<div class="{cls}" data-field="{_e(name)}"{extra}>'
                f"{label_html}{control}{help_html}{err}</div>")

    def text(self, name: str, *, inputmode: str = "decimal", placeholder: str = "",
             datalist: str = "", ltr: bool = False, cls: str = "", extra: str = "") -> str:
        fid, hid, eid = self.ids(name)
        value = self.values.get(name, "")
        if inputmode in ("numeric", "decimal") or name == "params":
            value = _local_digits(value, self.loc)
        attrs = [f'id="{fid}"', f'name="{_e(name)}"', 'type="text"', f'value="{_e(value)}"',
                 'autocomplete="off"', 'spellcheck="false"']
        if inputmode:
            attrs.append(f'inputmode="{inputmode}"')
        if placeholder:
            attrs.append(f'placeholder="{_e(placeholder)}"')
        if datalist:
            attrs.append(f'list="{datalist}"')
        if ltr or inputmode in ("numeric", "decimal"):
            attrs.append('dir="ltr"')
        control = f"<input {' '.join(attrs)}{self._describedby(name, hid)}>"
        return self.wrap(name, f'<label for="{fid}">{_e(self.label(name))}</label>', control,
                         self.help(name, hid), self.error_slot(name, eid), cls, extra)

    def textarea(self, name: str, *, rows: int = 6) -> str:
        fid, hid, eid = self.ids(name)
        value = self.values.get(name, "")
        control = (f'<textarea id="{fid}" name="{_e(name)}" rows="{rows}" dir="ltr" '
                   f'spellcheck="false" autocomplete="off"{self._describedby(name, hid)}>'
                   f"{_e(value)}</textarea>")
        return self.wrap(name, f'<label for="{fid}">{_e(self.label(name))}</label>', control,
                         self.help(name, hid), self.error_slot(name, eid), "calc-field-wide")

    def select(self, name: str, options: Iterable[tuple[str, str]], *, extra: str = "") -> str:
        fid, hid, eid = self.ids(name)
        current = self.values.get(name, "")
        opts = "".join(
            f'<option value="{_e(v)}"{" selected" if v == current else ""}>{_e(label)}</option>'
            for v, label in options)
        control = (f'<select id="{fid}" name="{_e(name)}"{self._describedby(name, hid)}>'
                   f"{opts}</select>")
        return self.wrap(name, f'<label for="{fid}">{_e(self.label(name))}</label>', control,
                         self.help(name, hid), self.error_slot(name, eid), "", extra)

    def radios(self, name: str, options: Iterable[tuple[str, str]]) -> str:
        fid, hid, eid = self.ids(name)
        current = self.values.get(name, "")
        items = "".join(
            f'<label class="calc-choice"><input type="radio" name="{_e(name)}" value="{_e(v)}"'
            f'{" checked" if v == current else ""}> <span>{_e(label)}</span></label>'
            for v, label in options)
        described = self._describedby(name, hid)
        return (f'<fieldset class="calc-field calc-radios" data-field="{_e(name)}" id="{fid}" '
                f'role="radiogroup"{described}><legend>{_e(self.label(name))}</legend>'
                f'<div class="calc-choices">{items}</div>'
                f"{self.help(name, hid)}{self.error_slot(name, eid)}</fieldset>")

    def checkbox(self, name: str) -> str:
        fid, hid, eid = self.ids(name)
        checked = self.values.get(name, "").strip().lower() in ("true", "1", "yes", "on")
        control = (f'<input id="{fid}" name="{_e(name)}" type="checkbox" value="true"'
                   f'{" checked" if checked else ""}{self._describedby(name, hid)}>')
        label = f'<label for="{fid}">{_e(self.label(name))}</label>'
        return (f'<div class="calc-field calc-check" data-field="{_e(name)}">'
                f'<div class="calc-check-row">{control}{label}</div>'
                f"{self.help(name, hid)}{self.error_slot(name, eid)}</div>")


def _calculator_form(f: _Form, loc: str, placeholders: Mapping[str, str]) -> str:
    wid = f.wid
    models = "".join(f'<option value="{_e(m.id)}">{_e(m.name)}</option>' for m in catalog.models())
    models += f'<option value="{CUSTOM}">{_e(_tx("ui.custom_model", loc))}</option>'
    datalist = f'<datalist id="{wid}-models">{models}</datalist>'
    common = [
        f.text("model", inputmode="", datalist=f"{wid}-models", ltr=True, cls="calc-field-wide"),
        datalist,
        f.radios("method", [(m.value, _tx(f"method.{m.value}", loc)) for m in Method]),
        f.text("rank", inputmode="numeric"),
        f.select("targets", [(x.value, _tx(f"targets.{x.value}", loc)) for x in Targets]),
        f.text("seq", inputmode="numeric"),
        f.text("batch", inputmode="numeric"),
        f.checkbox("ckpt"),
        f.radios("unit", [(u.value, u.value) for u in (Unit.GIB, Unit.GB)]),
    ]
    arch = []
    for n in ARCH_FIELDS:
        if n == "tied":
            arch.append(f.select("tied", [("", _tx("ui.from_model", loc)),
                                          ("true", _tx("bool.true", loc)),
                                          ("false", _tx("bool.false", loc))]))
        else:
            arch.append(f.text(n, inputmode="text" if n == "params" else "numeric", ltr=True,
                               placeholder=placeholders.get(n, "")))
    advanced = [
        f.select("optimizer", [(o.value, _tx(f"optimizer.{o.value}", loc)) for o in Optimizer]),
        f.select("mode", [(m.value, _tx(f"mode.{m.value}", loc)) for m in Mode]),
        f.checkbox("flash"),
        f.checkbox("dquant"),
        f'<fieldset class="calc-group"><legend>{_e(_tx("ui.custom_model", loc))}</legend>'
        f'<p class="calc-help">{_e(_tx("ui.arch_help", loc))}</p>'
        f'<div class="calc-grid">{"".join(arch)}</div></fieldset>',
        f.textarea("config"),
    ]
    return _form_layout(wid, loc, common, advanced)


def _form_layout(wid: str, loc: str, common: list[str], advanced: list[str]) -> str:
    adv = ""
    if advanced:
        adv = (f'<details class="calc-advanced"><summary>{_e(_tx("ui.advanced", loc))}</summary>'
               f'<div class="calc-grid">{"".join(advanced)}</div></details>')
    return (f'<form class="calc-form" id="{wid}-form" data-calc-form novalidate>'
            f'<div class="calc-grid">{"".join(common)}</div>{adv}</form>')


def _adapter_form(f: _Form, loc: str) -> str:
    common = [
        f.text("d_in", inputmode="numeric"),
        f.text("d_out", inputmode="numeric"),
        f.text("rank", inputmode="numeric"),
        f.select("dtype", [(d, d.upper()) for d in engine.ADAPTER_DTYPE_BYTES]),
    ]
    return _form_layout(f.wid, loc, common, [])


def _quick_form(f: _Form, loc: str) -> str:
    presets = [(str(v), f'{fmt(v, "bpp", loc)} — {_tx(f"optimizer.{k}", loc)}')
               for k, v in QUICK_PRESETS.items()]
    presets.append((BPP_CUSTOM, _tx("ui.custom_value", loc)))
    custom_hidden = "" if f.values.get("bpp") == BPP_CUSTOM else " hidden"
    common = [
        f.text("n"),
        f.select("bpp", presets),
        f.text("bpp_custom", extra=f' data-show-when="bpp={BPP_CUSTOM}"{custom_hidden}'),
        f.text("act"),
        f.radios("unit", [(u.value, u.value) for u in (Unit.GB, Unit.GIB)]),
    ]
    return _form_layout(f.wid, loc, common, [])


def _cost_form(f: _Form, loc: str, placeholders: Mapping[str, str]) -> str:
    gpus = [(g.id, f"{catalog.gpu_label(g, loc)} — {fmt(g.price_per_hour, 'USD', loc)}")
            for g in catalog.gpus() if g.price_per_hour is not None]
    gpus.append(("", _tx("ui.custom_price", loc)))
    common = [
        f.select("gpu", gpus),
        f.text("hours"),
        f.text("price", placeholder=placeholders.get("price", "")),
    ]
    return _form_layout(f.wid, loc, common, [])


_MESSAGES = {
    # data-msg-* attribute -> catalog key (what page.js may show)
    "loading": "ui.loading",
    "ready": "ui.ready",
    "error": "ui.error_load",
    "timeout": "ui.error_timeout",
    "failure": "ui.error_worker",
    "copied": "ui.link_copied",
    "copy-failed": "ui.copy_failed",
}


def widget(name: str, locale: str, query: Mapping[str, Any] | None = None, *,
           uid: str | None = None) -> str:
    """The whole widget as one HTML block (no blank lines, so Markdown keeps it raw).

    `query` (optional) is applied as a URL would be; by default the widget's default query.
    `uid` prefixes every id (default `calc-<name>`): give one per widget if a page has two
    widgets of the same kind.
    """
    _check_name(name)
    loc = normalize_locale(locale)
    wid = uid or f"calc-{name}"
    q = _q(query) if query is not None else dict(DEFAULT_QUERY[name])
    res = results(name, q, loc, uid=wid)
    if res["ok"]:
        values = dict(res["form"])
        placeholders = res["placeholders"]
    else:  # show what was given, escaped; the engine's messages go at the fields
        values = {**_default_form(name, loc, wid), **q}
        placeholders = _RUNNERS[name](dict(DEFAULT_QUERY[name]), loc, wid).placeholders
    f = _Form(wid, loc, values, None if res["ok"] else res["errors"])
    if name == "calculator":
        form = _calculator_form(f, loc, placeholders)
    elif name == "adapter":
        form = _adapter_form(f, loc)
    elif name == "quick":
        form = _quick_form(f, loc)
    else:
        form = _cost_form(f, loc, placeholders)
    form = _bidi(form, loc)
    msgs = " ".join(f'data-msg-{k}="{_e(_bidi_text(_tx(key, loc), loc))}"'
                    for k, key in _MESSAGES.items())
    state_text = _tx("ui.loading", loc)
    stale = "" if res["ok"] else ' data-stale="true"'
    return (
        f'<div class="calc-widget" id="{wid}" data-calc-widget="{name}" data-state="loading" '
        f'data-locale="{loc}" dir="{locale_dir(loc)}" data-timeout-ms="{LOAD_TIMEOUT_MS}" {msgs}>'
        f"{form}"
        f'<div class="calc-bar">'
        f'<p class="calc-status" id="{wid}-status" role="status" data-calc-status>'
        f"{_e(state_text)}</p>"
        f'<noscript><p class="calc-noscript">{_e(_tx("ui.error_load", loc))}</p></noscript>'
        f'<button type="button" class="md-button calc-copy" data-calc-copy>'
        f'{_e(_tx("ui.copy_link", loc))}</button>'
        f'<button type="reset" form="{wid}-form" class="md-button calc-reset">'
        f'{_e(_tx("ui.reset", loc))}</button></div>'
        f'<section class="calc-results" id="{wid}-results" data-calc-results{stale} '
        f'aria-label="{_e(_tx("ui.results", loc))}">{res["html"]}</section>'
        f"</div>"
    )


def _default_form(name: str, loc: str, wid: str) -> dict[str, str]:
    return dict(_RUNNERS[name](dict(DEFAULT_QUERY[name]), loc, wid).form)

