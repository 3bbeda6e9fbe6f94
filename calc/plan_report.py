"""The plan for the command line: JSON keys and a readable section in the reader's language.

`python -m calc` calls `run_plan` with the parsed inputs; the figures are `calc.plan`'s, the
words the message catalogs', the numbers `calc.fmt`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from .engine import Estimate, Inputs
from .plan import MaxFit, Plan, PlanInputs, max_fit, plan
from .scale import Scale

__all__ = ["PlanResult", "run_plan", "add_json", "breakdown"]


@dataclass(frozen=True)
class PlanResult:
    inputs: Inputs
    plan: Plan
    max_fit: MaxFit | None  # only for a named card


def run_plan(inputs: Inputs, p: PlanInputs, est: Estimate | None = None,
             scale: Scale | None = None) -> PlanResult:
    """The plan and, for a named card, the most that fits, both counting cards with `scale`
    (the reader's sharding, offload and objective; ZeRO-3 by default), as the JSON's `cards`."""
    mf = max_fit(inputs, p.gpu, p.gpus, scale) if p.gpu else None
    return PlanResult(inputs, plan(inputs, p, est, scale), mf)


def add_json(out: dict[str, object], r: PlanResult) -> None:
    """Adds `train_flops`, `plan`, `max_fit` and per card `hours`, `cost`, `cards` (with the
    rate behind the hours and the cheapest/fastest marks) to the CLI's JSON object."""
    data = r.plan.to_json()
    out["train_flops"] = data.pop("train_flops")
    out["plan"] = data
    rows = {c.gpu: c.to_json() for c in r.plan.cards}
    fits = out.get("fits")
    if isinstance(fits, list):
        for entry in fits:
            row = rows.get(entry.get("gpu")) if isinstance(entry, dict) else None
            if row:
                entry.update({k: v for k, v in row.items() if k not in ("gpu", "fits")})
    if r.max_fit is not None:
        out["max_fit"] = r.max_fit.to_json()


def _digits(hours: Decimal | None) -> int:
    """One decimal from ten hours up, two from a tenth, three below: a short run keeps a digit."""
    h = hours or Decimal(0)
    return 1 if h >= 10 else 2 if h >= Decimal("0.1") else 3


def _upto(n: int, at_bound: bool, locale: str) -> str:
    """A search's result; at the search's bound, "N or more"."""
    from .fmt import fmt
    from .i18n import t

    text = fmt(n, "number", locale)
    return t("ui.or_more", locale, n=text) if at_bound else text


def breakdown(r: PlanResult, locale: str = "en") -> list[str]:
    """The readable lines: compute per token, utilisation, cards by time, the most that fits."""
    from .catalog import gpu_label, model, model_label
    from .fmt import fmt
    from .i18n import t

    p = r.plan
    gflop = fmt(Decimal(p.flops.per_token) / 10**9, "number", locale, 1)
    u = fmt(float(p.utilisation), "percent", locale)
    key = "ui.utilisation_calibrated" if p.calibrated else "ui.utilisation_measured"
    lines = ["", f"{t('ui.time_cost', locale)}:",
             f"  {t('ui.train_flops', locale)}: {t('ui.gflop_per_token', locale, n=gflop)}",
             f"  {t(key, locale, u=u)}"]
    if p.tokens is not None:
        lines.append(f"  {t('ui.by_time', locale)}:")
        for c in p.by_time:
            marks = [t("ui.fastest", locale)] if c.fastest else []
            if c.cheapest:
                marks.append(t("ui.cheapest", locale))
            price = fmt(c.cost, "USD", locale) if c.cost is not None else t("ui.no_price", locale)
            label = gpu_label(c.gpu, locale)
            rate = t(f"ui.rate_{c.source}", locale) if c.source else ""
            sep = t("list.separator", locale)
            lines.append(f"    {fmt(c.cards or 0, 'number', locale)} × {label}: "
                         f"{fmt(c.hours, 'hours', locale, _digits(c.hours))}{sep} {price}"
                         f" ({rate}){' · ' + ', '.join(marks) if marks else ''}")
    mf = r.max_fit
    if mf is not None:
        lines.append(f"  {gpu_label(mf.gpu, locale)} × {fmt(mf.cards, 'number', locale)}:")
        i = r.inputs
        if mf.seq is None:
            lines.append(f"    {t('ui.max_none', locale)}")
        else:
            lines.append("    " + t("ui.max_fit", locale, seq=_upto(mf.seq, mf.seq_at_bound, locale),
                                    batch=fmt(i.batch, "number", locale)))
        if mf.batch is not None:
            lines.append("    " + t("ui.max_batch", locale, seq=fmt(i.seq, "number", locale),
                                    batch=_upto(mf.batch, mf.batch_at_bound, locale)))
        if mf.model:
            lines.append("    " + t("ui.max_model", locale, model=model_label(model(mf.model), locale)))
    return lines
