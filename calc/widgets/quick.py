"""The quick full-fine-tuning calculator: V = N x B + A (billions of parameters, bytes per
parameter, gigabytes of activations), its two parts, and the smallest card that holds it."""

from __future__ import annotations

from decimal import Decimal
from typing import Mapping

from .. import catalog, engine
from ..engine import QUICK_PRESETS
from ..errors import CalcError
from ..fields import Collector, Query, read_decimal_max, read_positive_decimal
from ..fmt import fmt
from ..types import GpuKind, Unit
from .base import Form, Outcome, bidi, collect, dec, e, fail, fig, form_layout, summary, \
    total_line, tx, unit_of

__all__ = ["NAME", "DEFAULT_QUERY", "FORM_FIELDS", "NUMERIC_FIELDS", "BPP_CUSTOM", "parse",
           "run", "form"]

NAME = "quick"
DEFAULT_QUERY: Mapping[str, str] = {}
FORM_FIELDS = ("n", "bpp", "bpp_custom", "act", "unit")
NUMERIC_FIELDS = frozenset({"n", "bpp_custom", "act"})
#: The bytes-per-parameter choice whose number is typed in `bpp_custom`.
BPP_CUSTOM = "custom"


def parse(query: Query, locale: str = "en") -> tuple[Decimal, Decimal, Decimal]:
    """N (billions), B (bytes per parameter), A (GB of activations)."""
    c = Collector(query)
    n = c.read("n", lambda v: read_positive_decimal(v, locale, 100_000), Decimal(7))
    bpp = c.read("bpp", lambda v: read_positive_decimal(v, locale, 1_000), Decimal(16))
    act = c.read("act", lambda v: read_decimal_max(v, locale, 1_000_000), Decimal(0))
    c.done()
    return n, bpp, act  # type: ignore[return-value]


def run(q: dict[str, str], loc: str, wid: str) -> Outcome:
    q = dict(q)
    custom = q.get("bpp", "").strip().lower() == BPP_CUSTOM
    if custom:  # the select says "custom": the number is in bpp_custom
        q["bpp"] = q.get("bpp_custom", "")
    try:
        if custom and not q["bpp"].strip():
            collect(lambda: parse(q, loc), lambda: unit_of(q, Unit.GB),
                    lambda: fail("bpp", "required"))
        (n, bpp, act), unit = collect(lambda: parse(q, loc), lambda: unit_of(q, Unit.GB))
    except CalcError as err:
        if custom:  # the message names "Bytes per parameter"; it belongs at the custom field
            err.remap = {"bpp": "bpp_custom"}  # type: ignore[attr-defined]
        raise
    canonical = {"n": dec(n), "bpp": dec(bpp), "act": dec(act), "unit": unit.value}
    presets = {str(v) for v in QUICK_PRESETS.values()}
    values = dict(canonical)
    if values["bpp"] not in presets:
        values["bpp"], values["bpp_custom"] = BPP_CUSTOM, canonical["bpp"]
    else:
        values["bpp_custom"] = ""
    total = engine.quick_full(n, bpp, act)
    line = summary("component.total", fmt(total, unit.value, loc), loc)
    return Outcome(bidi(_results(n, bpp, act, unit.value, loc), loc), canonical, values, {},
                   line)


def _results(n: Decimal, bpp: Decimal, act: Decimal, unit: str, loc: str) -> str:
    states = engine.quick_full(n, bpp, 0)
    activations = engine.quick_full(0, 0, act)
    total = engine.quick_full(n, bpp, act)
    fits = [f for f in _discrete_usable() if total <= f[1]]
    if fits:
        g = min(fits, key=lambda f: f[0].memory_bytes)[0]
        fit_line = (f'<p class="calc-smallest" data-calc="smallest_gpu" data-value="{e(g.id)}">'
                    f'{e(tx("ui.smallest_fit", loc, gpu=catalog.gpu_label(g, loc)))}</p>')
    else:
        fit_line = (f'<p class="calc-smallest" data-calc="smallest_gpu" data-value="none">'
                    f'{e(tx("ui.none_fit", loc))}</p>')
    formula = (f"{fmt(n, 'number', loc)} × {fmt(bpp, 'number', loc)} + "
               f"{fmt(act, 'number', loc)}")
    shown = fig("quick_total", total, fmt(total, unit, loc), kind="bytes", tag="strong",
                cls="calc-fig calc-total-value")
    return (
        f'{total_line(tx("component.total", loc), shown)}'
        f'<p class="calc-formula"><span dir="ltr" lang="en">V = N × B + A</span> = '
        f'<bdi>{e(formula)}</bdi></p>'
        f'<ul class="calc-parts">'
        f'<li>{e(tx("ui.model_states", loc))}: '
        f'{fig("quick_states", states, fmt(states, unit, loc), kind="bytes")}</li>'
        f'<li>{e(tx("component.activations", loc))}: '
        f'{fig("quick_activations", activations, fmt(activations, unit, loc), kind="bytes")}</li>'
        f"</ul>{fit_line}"
    )


def _discrete_usable() -> list[tuple[catalog.Gpu, int]]:
    return [(g, engine.usable_bytes(g)) for g in catalog.gpus() if g.kind is GpuKind.DISCRETE]


def form(f: Form, loc: str, placeholders: Mapping[str, str]) -> str:
    presets = [(str(v), f'{fmt(v, "bpp", loc)} — {tx(f"optimizer.{k}", loc)}')
               for k, v in QUICK_PRESETS.items()]
    presets.append((BPP_CUSTOM, tx("ui.custom_value", loc)))
    custom_hidden = "" if f.values.get("bpp") == BPP_CUSTOM else " hidden"
    custom_label = f'{tx("field.bpp", loc)}: {tx("ui.custom_value", loc)}'
    common = [
        f.text("n"),
        f.select("bpp", presets),
        f.text("bpp_custom", extra=f' data-show-when="bpp={BPP_CUSTOM}"{custom_hidden}',
               label=custom_label),
        f.text("act"),
        f.radios("unit", [(u.value, u.value) for u in (Unit.GB, Unit.GIB)]),
    ]
    return form_layout(f.wid, loc, common, [])
