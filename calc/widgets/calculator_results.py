"""The calculator's answer: the summary first (headline total per GPU with the host RAM, the
verdict for the reader's card with its margin, the other model's figure), then the details
(configuration line, stacked bar with the reader's card marked, breakdown table, trainable
share, the experts' share of a mixture-of-experts model).

Each piece is memoized on the values it shows and isolated once on RTL pages (`iso`).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING

from .. import arch as arch_mod, catalog, engine, html
from ..chart import stacked_bar, swatch
from ..errors import CalcError
from ..fields import CUSTOM
from ..fmt import fmt, fmt_memo, small_bytes_unit
from ..i18n import t
from ..scale import Scale, ScaledEstimate
from ..types import Architecture, GpuKind, Mode
from .base import bidi, dec_of, e, fig, iso, product_html, text, txc

if TYPE_CHECKING:  # pragma: no cover
    from .calculator import State

__all__ = ["summary_block", "details_block", "custom_prompt", "prompt_text", "scaled_view",
           "sentence", "verdict"]


def scaled_view(sc: Scale) -> bool:
    """Whether the figures are per GPU of a run that differs from one card doing everything."""
    return sc != Scale() and sc != Scale(sharding=sc.sharding)


def sentence(key: str, loc: str, **markup: str) -> str:
    """A catalog sentence with markup (figures, product names) in its placeholders: the text
    around them escaped. Placeholders used in a plural block must not be passed here."""
    marks = {k: f"\x00{k}\x00" for k in markup}
    parts = t(key, loc, **marks).split("\x00")
    return "".join(markup[p] if i % 2 else e(p) for i, p in enumerate(parts))


# --- the summary ------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _usable_of(gpu_id: str) -> int:
    return engine.usable_bytes(catalog.gpu(gpu_id))


def verdict(state: "State", s: ScaledEstimate) -> tuple[str, int, int] | None:
    """(card id, bytes the card must hold, usable bytes) of the reader's card, or None. A Mac is
    one machine: the run on one of them (gpus = 1)."""
    from .calculator import scaled_of

    gpu_id = state.plan.gpu
    if gpu_id is None:
        return None
    g = catalog.gpu(gpu_id)
    need = s.per_gpu_total
    if g.kind is GpuKind.UNIFIED and state.scale.gpus > 1:
        need = scaled_of(state.inputs, Scale(1, state.scale.sharding, state.scale.offload,
                                             state.scale.objective)).per_gpu_total
    return gpu_id, need, _usable_of(gpu_id)


def summary_block(state: "State", s: ScaledEstimate, other: int, loc: str, wid: str) -> str:
    i, sc = state.inputs, state.scale
    unit = i.unit.value
    per_gpu = scaled_view(sc)
    name = "per_gpu_total" if per_gpu else "total"
    head = _headline(name, s.per_gpu_total, s.cpu_bytes, unit, per_gpu, loc)
    v = verdict(state, s)
    mine = _my_gpu_line(*v, sc.gpus, unit, loc) if v else _smallest_hint(loc)
    return (f'<div class="calc-summary" id="{wid}-summary">{head}{mine}'
            f"{_other_line(i.mode, other, s.per_gpu_total, unit, loc)}</div>")


@lru_cache(maxsize=1024)
def _headline(name: str, total: int, cpu: int, unit: str, per_gpu: bool, loc: str) -> str:
    label = txc("ui.per_gpu_total" if per_gpu else "component.total", loc)
    figure = fig(name, total, fmt_memo(total, unit, loc), kind="bytes", tag="strong",
                 cls="calc-fig calc-total-value")
    host = ""
    if cpu:
        host = (f' <span class="calc-host"><span class="calc-total-label">'
                f'{e(txc("ui.host_total", loc))}</span> '
                f'{fig("cpu_bytes", cpu, fmt_memo(cpu, unit, loc), kind="bytes")}</span>')
    return iso(f'<p class="calc-total"><span class="calc-total-label">{e(label)}</span> '
               f"{figure}{host}</p>", loc)


@lru_cache(maxsize=1024)
def _my_gpu_line(gpu_id: str, need: int, usable: int, gpus: int, unit: str, loc: str) -> str:
    g = catalog.gpu(gpu_id)
    fits = need <= usable
    margin = abs(usable - need)
    card = product_html(gpu_id, loc)
    if gpus > 1 and g.kind is GpuKind.DISCRETE:
        card = f"{e(fmt(gpus, 'number', loc))} × {card}"
    cls = "calc-yes" if fits else "calc-no"
    mark = "✓" if fits else "✗"
    body = sentence("ui.my_gpu_fits" if fits else "ui.my_gpu_short", loc, gpu=card,
                    margin=fig("margin", margin, fmt_memo(margin, unit, loc), kind="bytes"))
    return iso(f'<p class="calc-verdict {cls}" data-calc="my_gpu_fits" '
               f'data-value="{html.raw(fits)}"><span aria-hidden="true">{mark} </span>'
               f"{body}</p>", loc)


@lru_cache(maxsize=None)
def _smallest_hint(loc: str) -> str:
    return iso(f'<p class="calc-verdict-hint">{e(txc("ui.choose_gpu", loc))}</p>', loc)


@lru_cache(maxsize=1024)
def _other_line(mode: Mode, other: int, total: int, unit: str, loc: str) -> str:
    """Beside a realistic headline the textbook figure (one short sentence: the summary stays
    in view on a phone, calc.css); beside a textbook headline (mode=planning) the realistic
    figure."""
    if mode is Mode.DETAILED:  # why runs need more: under the breakdown (`_why_line`)
        name, key = "textbook_total", "ui.textbook_gives_plain"
    else:
        name, key = "realistic_total", "ui.planning_headline"
    body = sentence(key, loc, figure=fig(name, other, fmt_memo(other, unit, loc), kind="bytes"))
    return iso(f'<p class="calc-other-model">{body}</p>', loc)


# --- the details ------------------------------------------------------------------------------


def details_block(state: "State", s: ScaledEstimate, loc: str, wid: str) -> str:
    i = state.inputs
    unit = i.unit.value
    try:
        model_name = catalog.model_label(catalog.model(i.model), loc) if i.model != CUSTOM else txc("ui.custom_model", loc)
    except CalcError:
        model_name = i.model
    components = s.gpu_components
    total = s.per_gpu_total
    v = verdict(state, s)
    marker = None
    if v is not None:
        marker = (v[2], catalog.gpu_label(v[0], loc))
    from .calculator import textbook_of

    why = i.mode is Mode.DETAILED and textbook_of(i, state.scale) < total
    return "".join((
        _config_line(model_name, i.method.value, i.arch.params, loc),
        stacked_bar(components, unit, loc, id_prefix=f"{wid}-chart", marker=marker),
        _breakdown(components, total, unit, loc, wid),
        _why_line(loc) if why else "",
        _off_peak_line(s.estimate.off_peak_bytes, s.estimate.off_peak_side, unit, loc)
        if s.estimate.off_peak_side else "",
        _host_breakdown(s.cpu_components, unit, loc, wid) if s.cpu_components else "",
        _trainable_line(s.trainable_params, i.arch.params, loc),
        _experts_line(i.model, i.arch, loc),
    ))


@lru_cache(maxsize=None)
def _why_line(loc: str) -> str:
    """Why the realistic total exceeds the textbook formula's (its rows are the breakdown's)."""
    return iso(f'<p class="calc-note calc-why">{e(txc("ui.textbook_why", loc))}</p>', loc)


@lru_cache(maxsize=1024)
def _off_peak_line(value: int, side: str, unit: str, loc: str) -> str:
    """With gradient checkpointing, the moment that is not the peak (Estimate.off_peak): the
    recomputed layer or the loss's buffers, whichever holds less."""
    unit, digits = small_bytes_unit(value, unit)
    body = sentence(f"ui.off_peak.{side}", loc, figure=fig("off_peak", value, fmt_memo(value, unit, loc, digits),
                                         kind="bytes"))
    return iso(f'<p class="calc-note calc-off-peak">{body}</p>', loc)


@lru_cache(maxsize=1024)
def _config_line(model_name: str, method: str, params: int, loc: str) -> str:
    return bidi(f'<p class="calc-config">{e(model_name)} · {e(txc(f"method.{method}", loc))} · '
                f'{fig("params", params, fmt_memo(params, "params", loc))}</p>', loc)


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


@lru_cache(maxsize=256)
def _host_breakdown(components: tuple[tuple[str, int], ...], unit: str, loc: str, wid: str) -> str:
    """What the host RAM holds (offload, activation offloading): figures named cpu.<part>."""
    rows = [bidi(f'<tr><th scope="row">{e(txc(f"component.{name}", loc))}</th>', loc)
            + html.td_figure(f"cpu.{name}", fmt_memo(value, unit, loc), bytes_=value) + "</tr>"
            for name, value in components]
    head = (txc("ui.component", loc), txc("ui.memory", loc))
    return bidi(html.scroll_table(wid, "host", txc("ui.host_total", loc), head, rows,
                                  cls="calc-host-table"), loc)


@lru_cache(maxsize=1024)
def _trainable_line(trainable: int, params: int, loc: str) -> str:
    share = Fraction(trainable, params)
    return bidi(
        f'<p class="calc-trainable"><span>{e(txc("component.trainable_params", loc))}:</span> '
        f'{fig("trainable_params", trainable, fmt_memo(trainable, "params", loc))} '
        f'({fig("trainable_share", share, fmt(dec_of(share), "percent", loc, 2))})</p>', loc)


@lru_cache(maxsize=256)
def _experts_line(model: str, arch: Architecture, loc: str) -> str:
    """A mixture-of-experts model: the routed experts' share of the weights (calc.arch), and
    the parameters a token passes through. Nothing for a dense model."""
    if not arch_mod.is_moe(arch):
        return ""
    try:
        layout = catalog.model(model).layout
    except CalcError:
        layout = arch_mod.PLAIN
    routed = arch_mod.moe_layers(arch) * arch.experts * arch_mod.expert_params(arch, layout)
    active = arch_mod.active_params(arch, layout)
    share = Fraction(routed, arch.params)
    return iso(f'<p class="calc-experts">'
               + sentence("ui.experts_share", loc,
                          share=fig("experts_share", share, fmt(dec_of(share), "percent", loc, 1)),
                          active=fig("active_params", active, fmt_memo(active, "params", loc)))
               + "</p>", loc)


# --- custom model, nothing typed yet ----------------------------------------------------------


@lru_cache(maxsize=None)
def custom_prompt(loc: str) -> str:
    return iso(f'<div class="calc-summary calc-prompt"><p>{e(txc("ui.custom_prompt", loc))}</p>'
               f"</div>", loc)


def prompt_text(loc: str) -> str:
    return txc("ui.custom_prompt", loc)
