"""The accuracy page's tables and plot: calc's two modes against measured peak memory.

`accuracy_table(locale)` returns one HTML block (no blank line inside, so Markdown passes it
through): a summary of the median and worst error of each mode, an SVG scatter plot (estimate
against measurement, both modes), the table of published runs and the table of our own
ground-truth runs, then the ground truth component by component against the detailed mode.

- Every figure is formatted by `calc.fmt.fmt` in the page's locale and wrapped as
  `<span class="calc-fig" data-calc="..." data-bytes|data-value="...">` (`calc.html.figure`).
- Every text comes from the message catalogs (`accuracy.*` keys) and is escaped; the tables
  are `calc.html.table`, the markup kit of every figure and table of calc.
- The tables carry no class, so the theme styles them like any Markdown table; the plot has
  `role="img"` and a text alternative listing every point. No inline `style` anywhere (the
  Content-Security-Policy refuses style attributes): the markers carry presentation attributes
  and classes that site.css colours with the theme's custom properties (the two modes also
  differ by marker shape); the plot's size comes from its width/height attributes, capped at
  the column's width by the theme.
- Right to left (`fa`): the plot keeps its axes (a scatter plot is not mirrored), its text
  alternative is in the page's language.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from . import accuracy, catalog, html
from .render_throughput import throughput_block
from .accuracy import MODES, Run
from .engine import DEFAULT_GRAD_ACCUM
from .fmt import fmt
from .i18n import Counted, normalize_locale, t

__all__ = ["accuracy_table", "TARGET"]

#: engine.md section 0: the realistic estimate within a median 7 % of the published runs.
TARGET = Fraction(7, 100)
GIB = 2**30

_LIST_SEP = {"fa": "؛ "}
_COMMA = {"fa": "، "}


_e = html.e


def _dec(x: Fraction) -> Decimal:
    return Decimal(x.numerator) / Decimal(x.denominator)


def _raw_fraction(x: Fraction) -> str:
    d = _dec(x).quantize(Decimal("0.000001"))
    return format(d.copy_abs() if d.is_zero() else d, "f")


def _fig(name: str, text: str, *, bytes_: int | None = None, value: str | None = None) -> str:
    return html.figure(name, text, bytes_=bytes_, value=value)


def _gib(name: str, b: int, loc: str) -> str:
    return _fig(name, fmt(b, "GiB", loc), bytes_=b)


#: Plus sign of a signed percentage (CLDR plusSign; fa: with a left-to-right mark, like fmt's
#: minus sign).
_PLUS = {"fa": "\u200e+"}


def _pct(name: str, x: Fraction, loc: str, signed: bool = True) -> str:
    """A relative error (a fraction) as a percentage; when `signed`, '+' marks an estimate
    above the measurement."""
    text = fmt(_dec(x), "percent", loc)
    if signed and x > 0 and _dec(x).quantize(Decimal("0.01")) != 0:
        text = _PLUS.get(loc, "+") + text
    return _fig(name, text, value=_raw_fraction(x))


def _count(name: str, n: int, loc: str) -> str:
    return _fig(name, fmt(n, "count", loc), value=str(n))


def _counted(name: str, n: int, loc: str) -> Counted:
    """`_count`'s figure with its number, for a sentence whose plural forms agree with it."""
    return Counted(_count(name, n, loc), str(n))


def _tpl(key: str, loc: str, **html: str | Counted) -> str:
    """A catalog sentence with HTML fragments (figures) in its placeholders: the sentence is
    escaped, the fragments are inserted as they are; a `Counted` fragment's number chooses the
    sentence's plural forms."""
    marks = {k: f"\x00{k}\x00" for k in html}
    given = {k: Counted(marks[k], v.number) if isinstance(v, Counted) else marks[k]
             for k, v in html.items()}
    text = _e(t(key, loc, **given))
    for k, frag in html.items():
        text = text.replace(_e(marks[k]), str(frag))
    return text


# --- cells ------------------------------------------------------------------------------------


def _model_name(run: Run, loc: str) -> str:
    """The preset's catalog name (escaped), or "Custom model" with its parameter count."""
    try:
        return _e(catalog.model_label(catalog.model(run.fields.get("model", "")), loc))
    except Exception:  # noqa: BLE001 - a custom architecture has no catalog name
        params = run.planning.inputs.arch.params
        return (f'{_e(t("ui.custom_model", loc))} ('
                f'{_fig("params", fmt(params, "params", loc), value=str(params))})')


def _settings(run: Run, loc: str) -> str:
    f = run.fields
    parts = []
    method = f.get("method", "lora")
    if method != "full":
        parts.append(_tpl("accuracy.settings.adapter", loc,
                          rank=_count("rank", int(f.get("rank", "16")), loc),
                          targets=_e(t("targets." + f.get("targets", "all-linear"), loc))))
    parts.append(_tpl("accuracy.settings.tokens", loc,
                      seq=_counted("seq", int(f.get("seq", "2048")), loc),
                      batch=_count("batch", int(f.get("batch", "1")), loc)))
    accum = int(f.get("grad_accum", DEFAULT_GRAD_ACCUM))  # the query leaves the default out
    if accum != DEFAULT_GRAD_ACCUM:
        parts.append(_tpl("accuracy.settings.accum", loc, n=_counted("grad_accum", accum, loc)))
    ckpt = f.get("ckpt", "true") == "true"
    parts.append(_e(t("accuracy.settings.ckpt_on" if ckpt else "accuracy.settings.ckpt_off", loc)))
    if f.get("flash", "true") == "false":
        parts.append(_e(t("accuracy.settings.no_flash", loc)))
    parts.append(_e(t("optimizer." + f.get("optimizer", "adamw"), loc)))
    return _e(_LIST_SEP.get(loc, "; ")).join(parts)


def _measured(run: Run, loc: str) -> str:
    kind = _e(t("accuracy.kind." + run.kind, loc))
    return f'{_gib("measured", run.measured, loc)}<br><small>{kind}</small>'


def _estimate_cells(run: Run, loc: str) -> list[str]:
    cells = []
    for mode in MODES:
        cells.append(_gib(f"estimate.{mode}", run.compared(mode), loc))
        cells.append(_pct(f"error.{mode}", run.error(mode), loc))
    return cells


def _table(caption: str, header: list[str], rows: list[str], tid: str,
           wide: int | None = None) -> str:
    """`wide`: index of a column given room for its text (the settings)."""
    return html.table(tid, caption, header, rows, {} if wide is None else {wide: _WIDE})


#: The class of the column that gets room for its text (site.css).
_WIDE = "calc-acc-wide"


def _header(loc: str, first: str) -> list[str]:
    return [t(first, loc), t("accuracy.col.settings", loc), t("accuracy.col.measured", loc),
            t("accuracy.col.planning", loc), t("accuracy.col.error", loc),
            t("accuracy.col.detailed", loc), t("accuracy.col.error", loc)]


def _config(run: Run, gpu: str, loc: str) -> str:
    """Model, method and GPU on the first line, the settings below in small type."""
    method = _e(t("method." + run.fields.get("method", "lora"), loc))
    return (f"{_model_name(run, loc)}{_COMMA.get(loc, ', ')}{method} · {gpu}"
            f"<br><small>{_settings(run, loc)}</small>")


def _published_table(runs: tuple[Run, ...], loc: str, caption: str = "accuracy.caption.published",
                     tid: str = "accuracy-published") -> str:
    rows = []
    for i, run in enumerate(runs, 1):
        link = (f'<a href="{_e(run.source)}" rel="noopener">'
                f'{_e(t("accuracy.source", loc, n=i))}</a>')
        reasons = "".join(f"<br><small>{_e(t('accuracy.reason.' + r, loc))}</small>"
                          for r in _reasons(run))
        cells = [_config(run, _gpus(run, loc), loc) + reasons, _measured(run, loc),
                 *_estimate_cells(run, loc)]
        rows.append(html.row(link, cells))
    return _table(t(caption, loc), _header(loc, "accuracy.col.source"), rows, tid, wide=1)


def _gpus(run: Run, loc: str) -> str:
    """The run's card, or for a multi-GPU run its count, strategy and offload."""
    f = run.fields
    if "gpus" not in f:
        return _e(run.gpu)
    text = t("accuracy.multi.config", loc, n=int(f["gpus"]), gpu=run.gpu,
             sharding=t("sharding." + f.get("sharding", "zero3"), loc))
    if f.get("offload", "none") != "none":
        text += _COMMA.get(loc, ", ") + t("offload." + f["offload"], loc)
    return _e(text)


def _truth_table(runs: tuple[Run, ...], loc: str) -> str:
    rows = []
    for i, run in enumerate(runs, 1):
        reasons = "".join(f"<br><small>{_e(t('accuracy.reason.' + r, loc))}</small>"
                          for r in _reasons(run))
        cells = [_config(run, _e(t("accuracy.gpu.cpu", loc)), loc) + reasons, _measured(run, loc),
                 *_estimate_cells(run, loc)]
        rows.append(html.row(_count("run", i, loc), cells))
    return _table(t("accuracy.caption.truth", loc), _header(loc, "accuracy.col.run"), rows,
                  "accuracy-truth", wide=1)


def _components_table(runs: tuple[Run, ...], loc: str) -> str:
    groups = tuple(accuracy.COMPONENT_MAP)
    header = [t("accuracy.col.run", loc)]
    for g in groups:
        header += [t("accuracy.group." + g, loc), t("accuracy.col.detailed", loc)]
    rows = []
    for i, run in enumerate(runs, 1):
        cells = []
        for g, (measured, detailed) in accuracy.component_errors(run).items():
            cells.append(_gib(f"measured.{g}", measured, loc))
            cells.append(_gib(f"detailed.{g}", detailed, loc))
        rows.append(html.row(_count("run", i, loc), cells))
    return _table(t("accuracy.caption.components", loc), header, rows, "accuracy-components")


def _reasons(run: Run) -> tuple[str, ...]:
    return _REASONS.get(run.id, ())


#: Why a run departs from the detailed mode (catalog keys accuracy.reason.*), read from the rows'
#: `reasons` in calc/data/measurements.json and calc/data/ground_truth.json.
_REASONS: dict[str, tuple[str, ...]] = {}


def _load_reasons() -> None:
    import json
    from importlib import resources

    doc = json.loads((resources.files(__package__) / "data" / "measurements.json")
                     .read_text(encoding="utf-8"))
    for row in doc["runs"]:
        _REASONS[row["id"]] = tuple(row.get("reasons", ()))
    # our MemTracker runs, by the name calc.accuracy gives them
    for run, row in zip(accuracy.ground_truth_runs(), accuracy.ground_truth()["runs"]):
        if row.get("reasons"):
            _REASONS[run.id] = tuple(row["reasons"])


# --- summary ----------------------------------------------------------------------------------


def _summary_sentence(key: str, runs: tuple[Run, ...], loc: str) -> str:
    s = {m: accuracy.summary(runs, m) for m in MODES}
    return _tpl(key, loc, n=_counted("runs", s["planning"].n, loc),
                p_median=_pct("median.planning", s["planning"].median_abs, loc, signed=False),
                p_worst=_pct("worst.planning", s["planning"].worst, loc),
                d_median=_pct("median.detailed", s["detailed"].median_abs, loc, signed=False),
                d_worst=_pct("worst.detailed", s["detailed"].worst, loc))


def _target_sentence(runs: tuple[Run, ...], loc: str) -> str:
    s = accuracy.summary(runs, "detailed")
    key = "accuracy.target.met" if s.median_abs <= TARGET else "accuracy.target.missed"
    return _tpl(key, loc, target=_pct("target", TARGET, loc, signed=False))


# --- plot -------------------------------------------------------------------------------------

W, H = 640, 400
#: The two modes' markers: presentation attributes (the colours without any stylesheet), and
#: classes that site.css colours with the theme's palette.
_PLANNING_MARK = 'class="calc-acc-planning" fill="none" stroke="#888" stroke-width="1.5"'
_DETAILED_MARK = 'class="calc-acc-detailed" fill="#4051b5"'
PAD_L, PAD_B, PAD_T, PAD_R = 76, 44, 12, 28


def _n(x: float) -> str:
    s = f"{x:.1f}".rstrip("0").rstrip(".")
    return s or "0"


def _plot(published: tuple[Run, ...], truth: tuple[Run, ...], loc: str) -> str:
    runs = published + truth
    top = max(max(r.measured, *(r.compared(m) for m in MODES)) for r in runs)
    step = 10 * GIB if top > 40 * GIB else 5 * GIB
    top = -(-top // step) * step
    pw, ph = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def x(b: int) -> float:
        return PAD_L + pw * b / top

    def y(b: int) -> float:
        return PAD_T + ph * (1 - b / top)

    title = t("accuracy.plot.title", loc)
    described = []
    for r in runs:
        described.append(t("accuracy.plot.point", loc, run=r.id,
                           measured=fmt(r.measured, "GiB", loc),
                           planning=fmt(r.compared("planning"), "GiB", loc),
                           detailed=fmt(r.compared("detailed"), "GiB", loc)))
    desc = t("accuracy.plot.desc", loc) + " " + _LIST_SEP.get(loc, "; ").join(described)
    out = [f'<svg class="calc-accuracy-plot" role="img" aria-labelledby="accuracy-plot-title '
           f'accuracy-plot-desc" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
           f'xmlns="http://www.w3.org/2000/svg" focusable="false">',
           f'<title id="accuracy-plot-title">{_e(title)}</title>',
           f'<desc id="accuracy-plot-desc">{_e(desc)}</desc>',
           '<g fill="none" stroke="currentColor" stroke-opacity="0.5" stroke-width="1">',
           f'<line x1="{PAD_L}" y1="{_n(y(0))}" x2="{W - PAD_R}" y2="{_n(y(0))}"/>',
           f'<line x1="{PAD_L}" y1="{_n(y(0))}" x2="{PAD_L}" y2="{PAD_T}"/>',
           f'<line x1="{_n(x(0))}" y1="{_n(y(0))}" x2="{_n(x(top))}" y2="{_n(y(top))}" '
           f'stroke-dasharray="4 4"/></g>',
           '<g fill="currentColor" font-size="12">']
    tick = 0
    while tick <= top:
        label = _e(fmt(tick, "GiB", loc, 0))
        out.append(f'<text x="{_n(x(tick))}" y="{_n(y(0) + 16)}" text-anchor="middle">{label}</text>')
        out.append(f'<text x="{PAD_L - 6}" y="{_n(y(tick) + 4)}" text-anchor="end">{label}</text>')
        tick += step
    out.append(f'<text x="{_n(PAD_L + pw / 2)}" y="{H - 6}" text-anchor="middle">'
               f'{_e(t("accuracy.plot.x", loc))}</text>')
    out.append(f'<text transform="translate(14 {_n(PAD_T + ph / 2)}) rotate(-90)" '
               f'text-anchor="middle">{_e(t("accuracy.plot.y", loc))}</text>')
    out.append("</g>")
    for r in runs:
        mx = x(r.measured)
        py, dy = y(r.compared("planning")), y(r.compared("detailed"))
        out.append(f'<circle cx="{_n(mx)}" cy="{_n(py)}" r="4" {_PLANNING_MARK}>'
                   f'<title>{_e(r.id)}: {_e(t("accuracy.col.planning", loc))}</title></circle>')
        out.append(f'<rect x="{_n(mx - 4)}" y="{_n(dy - 4)}" width="8" height="8" '
                   f'{_DETAILED_MARK}>'
                   f'<title>{_e(r.id)}: {_e(t("accuracy.col.detailed", loc))}</title></rect>')
    out.append("</svg>")
    legend = (f'<figcaption><svg width="12" height="12" aria-hidden="true"><circle cx="6" cy="6" '
              f'r="4" {_PLANNING_MARK}/></svg> {_e(t("accuracy.col.planning", loc))} '
              f'<svg width="12" height="12" aria-hidden="true"><rect x="2" y="2" width="8" '
              f'height="8" {_DETAILED_MARK}/></svg> '
              f'{_e(t("accuracy.col.detailed", loc))} — {_e(t("accuracy.plot.legend", loc))}'
              f"</figcaption>")
    return f'<figure class="calc-accuracy-figure">{"".join(out)}{legend}</figure>'


def _truth_note(loc: str) -> str:
    doc = accuracy.ground_truth()
    ranks = {r["rank"] for r in doc["runs"] if r.get("rank")}
    rank = _count("rank", min(ranks), loc) if ranks else ""
    return _tpl("accuracy.note.truth", loc, rank=rank,
                steps=_count("steps", int(doc["_about"]["steps"]), loc))


# --- the block --------------------------------------------------------------------------------


def accuracy_table(locale: str = "en") -> str:
    """The whole results block of the accuracy page, in `locale`."""
    loc = normalize_locale(locale)
    if not _REASONS:
        _load_reasons()
    published = accuracy.measurements()
    truth = accuracy.ground_truth_runs()
    multi = accuracy.multi_gpu_runs()
    summary = (f'<p>{_summary_sentence("accuracy.summary.published", published, loc)} '
               f'{_target_sentence(published, loc)}</p>'
               f'<p>{_summary_sentence("accuracy.summary.multi", multi, loc)}</p>'
               f'<p>{_summary_sentence("accuracy.summary.truth", truth, loc)}</p>')
    notes = f'<p><small>{_e(t("accuracy.note.error", loc))}</small></p>'
    return (f'<div class="calc-accuracy">{summary}{_plot(published, truth, loc)}'
            f'{_published_table(published, loc)}{notes}'
            f'{_published_table(multi, loc, "accuracy.caption.multi", "accuracy-multi")}'
            f'{throughput_block(loc, _pct, _tpl, _count)}'
            f'{_truth_table(truth, loc)}'
            f'<p><small>{_truth_note(loc)}</small></p>'
            f'{_components_table(truth, loc)}</div>')
