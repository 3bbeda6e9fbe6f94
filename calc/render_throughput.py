"""The accuracy page's time section: calc's time estimate against published throughput
(`calc.flops.calibration`: the utilisation per method is the median its runs imply; each run's
error is estimated time / measured time - 1). Markup through `calc/html.py`, texts from the
catalogs (`accuracy.*`)."""

from __future__ import annotations

from fractions import Fraction

from . import catalog, html
from .flops import calibration, train_flops
from .fmt import fmt
from .i18n import t


def _rate(name: str, x: Fraction, loc: str) -> str:
    return html.figure(name, fmt(round(x), "count", loc), value=round(x))


def throughput_block(loc: str, pct, tpl, count) -> str:
    """The summary sentence and the table; `pct`, `tpl` and `count` are the accuracy page's
    own helpers (signed percentages, templates with figures, counts)."""
    cal = calibration()
    errors = cal.errors()
    worst = max((e for _, e in errors), key=abs)
    summary = tpl("accuracy.summary.throughput", loc, n=count("throughput_runs", len(errors), loc),
                  median=pct("throughput.median", cal.median_abs_error(), loc, signed=False),
                  worst=pct("throughput.worst", worst, loc))
    rows = []
    for i, ((run, u), (_, err)) in enumerate(zip(cal.runs, errors), 1):
        link = (f'<a href="{html.e(run.source)}" rel="noopener">'
                f'{html.e(t("accuracy.source", loc, n=i))}</a>')
        per_token = train_flops(run.inputs).per_token
        peak = catalog.gpu(run.gpu).peak_flops
        estimated = Fraction(peak) * cal.get(run.inputs.method) / per_token
        config = t("accuracy.throughput.config", loc, model=catalog.model_label(catalog.model(run.inputs.model), loc),
                   method=t("method." + run.inputs.method.value, loc), n=run.cards,
                   gpu=catalog.gpu_label(catalog.gpu(run.gpu), loc), seq=run.inputs.seq,
                   batch=run.inputs.batch)
        rows.append(html.row(link, [html.e(config), _rate("tokens_per_s.measured",
                                                          run.tokens_per_s, loc),
                                    _rate("tokens_per_s.estimated", estimated, loc),
                                    pct("error.time", err, loc)]))
    head = [t("accuracy.col.source", loc), t("accuracy.col.settings", loc),
            t("accuracy.col.tps_measured", loc), t("accuracy.col.tps_estimated", loc),
            t("accuracy.col.time_error", loc)]
    table = html.table("accuracy-throughput", t("accuracy.caption.throughput", loc), head, rows,
                       {1: "calc-acc-wide"})
    return f"<p>{summary}</p>{table}"
