"""Macros for a whole run, beyond one card's estimate: several GPUs, offload and DPO
(`calc.scale`), time and cost (`calc.plan`), the most that fits (`calc.plan.max_fit`), verdicts
and ranges in the page's words. Every value comes from calc; the writers' reference:
i18n/WRITERS.md ("Macros")."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from calc import catalog, engine
from calc import html as kit
from calc.arch import active_params
from calc.fields import parse
from calc.fmt import fmt_range
from calc.plan import max_fit, parse_plan, plan
from calc.scale import SCALE_FIELDS, Scale, cards_needed, parse_scale, scaled

from .common import esc

if TYPE_CHECKING:  # pragma: no cover
    from .macros import Macros

PLAN_ONLY = ("tokens", "epochs", "tokens_per_s", "price")


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(getattr(value, "value", value))


def _key(fields: dict[str, object]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, _text(v)) for k, v in fields.items()))


# Engine fields, scale fields and plan fields of one macro call, each parsed by calc.
@lru_cache(maxsize=None)
def _run(key: tuple[tuple[str, str], ...]):
    q = dict(key)
    scale_q = {k: v for k, v in q.items() if k in SCALE_FIELDS}
    plan_q = {k: v for k, v in q.items() if k in PLAN_ONLY or k == "gpu"}
    if "gpus" in scale_q:
        plan_q["gpus"] = scale_q["gpus"]
    engine_q = {k: v for k, v in q.items() if k not in SCALE_FIELDS and k not in plan_q}
    inputs = parse(engine_q, strict=True)
    return inputs, parse_scale(scale_q), parse_plan(plan_q)


class RunMacros:
    """Bound to the page's `Macros` (its locale and its one figure emitter)."""

    def __init__(self, m: "Macros"):
        self.m = m

    # Per-GPU (and host) memory of a run: gpus, sharding, offload, objective beside the
    # engine's fields. what: total (per GPU), cpu (host RAM), a component's name (per GPU).
    def run(self, what: str = "total", unit: str = "GiB", digits: int | None = None,
            name: str | None = None, **fields: object) -> str:
        inputs, scale, _ = _run(_key(fields))
        r = scaled(inputs, scale)
        if what == "total":
            value = r.per_gpu_total
        elif what == "cpu":
            value = r.cpu_bytes
        else:
            value = dict(r.gpu_components).get(what, 0)
        return self.m.fig(name or f"run.{what}", value, unit, digits)

    # The fewest cards of `gpu` a run needs under `sharding` (a count), or "—" when none do.
    def cards(self, gpu: str, sharding: str = "zero3", name: str = "cards",
              **fields: object) -> str:
        inputs, scale, _ = _run(_key(fields))
        n = cards_needed(inputs, scale, (catalog.gpu(gpu),))[gpu].get(sharding)
        return "—" if n is None else self.m.fig(name, n, "count")

    # Time and cost of a run on one card kind: what = hours, cost, cards, tokens_per_s,
    # flops (training FLOPs per token).
    def plan(self, what: str, gpu: str, digits: int | None = None, name: str | None = None,
             **fields: object) -> str:
        inputs, scale, p = _run(_key({**fields, "gpu": gpu}))
        result = plan(inputs, p, scale=scale)
        if what == "flops":
            return self.m.fig(name or "train_flops", int(result.flops.per_token), "number", digits)
        card = result.card(gpu)
        value = getattr(card, what)
        if value is None:
            return "—"
        unit = {"hours": "hours", "cost": "USD", "cards": "count", "tokens_per_s": "number"}[what]
        return self.m.fig(name or f"plan.{what}", value, unit, digits)

    # The longest sequence (what="seq") or largest micro-batch (what="batch") that fits `gpu`.
    def maxfit(self, what: str, gpu: str, cards: int = 1, name: str | None = None,
               **fields: object) -> str:
        inputs, scale, _ = _run(_key(fields))
        mf = max_fit(inputs, gpu, cards, scale)
        value = getattr(mf, what)
        if what == "model":
            return "—" if value is None else esc(catalog.model_label(catalog.model(value), self.m.locale))
        return "—" if value is None else self.m.fig(name or f"max_fit.{what}", value, "count")

    # A preset's stored (what="params") or active (what="active") parameter count.
    def params(self, model: str, what: str = "params", unit: str = "params",
               name: str | None = None) -> str:
        arch = catalog.model(model).arch
        value = arch.params if what == "params" else active_params(arch)
        return self.m.fig(name or f"{what}", value, unit)

    # Whether a run fits one card of `gpu`, in the page's words, from calc: "fits" / "does not
    # fit", as an element carrying the verdict (data-value true/false).
    def verdict(self, gpu: str, name: str = "verdict", **fields: object) -> str:
        inputs, scale, _ = _run(_key(fields))
        fits = scaled(inputs, scale).per_gpu_total <= engine.usable_bytes(catalog.gpu(gpu))
        text = self.m.t_plain("verdict.fits" if fits else "verdict.does_not_fit",
                              card=catalog.gpu_label(catalog.gpu(gpu), self.m.locale))
        return kit.figure(name, text, value=fits, cls="calc-verdict")

    # Two values as one range in the page's form ("20–30 %", "de 6 a 8 vezes"): one figure
    # whose data-value is the lower bound and data-value-hi the upper.
    def range(self, lo: object, hi: object, unit: str = "number", digits: int | None = None,
              name: str = "range") -> str:
        from .macros import _fmt_value, _number

        lo_v, hi_v = _fmt_value(_number(lo)), _fmt_value(_number(hi))
        text = fmt_range(lo_v, hi_v, unit, self.m.locale, digits)
        return kit.figure(name, text, value=lo_v, extra={"data-value-hi": hi_v})

    # The rule of thumb for two model sizes as one range ("20.2–23.2 GB", «۲۰٫۲ تا ۲۳٫۲ GB»).
    def rot_range(self, method: str, lo_billions: object, hi_billions: object,
                  digits: int | None = None, name: str = "rule_of_thumb") -> str:
        from .macros import _number

        lo, hi = (engine.rule_of_thumb(_number(b), method) for b in (lo_billions, hi_billions))
        return self.range(lo, hi, "GB", digits, name)

    NAMES = ("run", "cards", "plan", "maxfit", "params", "verdict", "range", "rot_range")
