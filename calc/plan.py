"""From an estimate to a plan: hours and cost on every card that fits, and the most that fits.

    hours = tokens x epochs x FLOPs per token / (cards x peak dense BF16 FLOP/s x utilisation)
    cost  = hours x cards x hourly price      (engine.cost: to the cent, half up)

FLOPs per token and the calibrated utilisation come from `calc.flops`; the peak from the GPU
catalog (the vendors' datasheets). A reader's measured `tokens_per_s` (per card, on the card
named by `gpu`) replaces the estimate there; the utilisation it implies then stands in for the
calibrated one on the other cards, scaled by their peaks (the same stack on other hardware).
`cards` is the reader's `gpus`, or the fewest that hold the run when that is more, counted by
the scale layer exactly as the calculator's fit table counts them (`calc.scale.cards_needed`:
the reader's sharding, offload and objective, ZeRO-3/FSDP with no offload and SFT by default;
the working set of gathered layers included); a Mac is one machine.

The inverse questions (`max_fit`) search the same engine: the longest `seq`, the largest
`batch` and the largest preset of the model's family that fit a card (and count), each by
bisection over the scale layer's count of cards (`fits_cards`, the fit table's rule), which never falls
when the length, the micro-batch or the
model grows. Never a separate formula.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Context, Decimal
from fractions import Fraction
from typing import Callable

from .engine import Estimate, Inputs, max_rank, usable_bytes
from .errors import CalcError
from .fields import Collector, Query, _Bad, read_cards, read_count, read_decimal, read_text, \
    read_positive_decimal
from .flops import TrainFlops, train_flops, utilisation
from .scale import Scale, cards_needed, fewest, layout, single_card, sums, supports
from .types import GpuKind, Method

__all__ = ["PLAN_FIELDS", "PlanInputs", "CardPlan", "Plan", "MaxFit", "parse_plan", "plan",
           "max_fit", "fits_cards", "fewest_cards", "MAX_TOKENS", "MAX_EPOCHS", "MAX_TOKENS_PER_S", "MAX_PRICE", "MAX_SEQ",
           "MAX_BATCH"]

PLAN_FIELDS = ("tokens", "epochs", "gpu", "tokens_per_s", "price", "gpus")
#: Bounds that reject absurd sizes: 10^14 tokens per epoch (a hundred times the largest
#: published pre-training run), a thousand epochs, 10^8 tokens per second on one card, an
#: hourly price of 100,000.
MAX_TOKENS = 10**14
MAX_EPOCHS = 1_000
MAX_TOKENS_PER_S = 10**8
MAX_PRICE = 100_000
#: The searches' bounds: a million tokens of context, a micro-batch of 4096.
MAX_SEQ = 1_048_576
MAX_BATCH = 4_096
_SECONDS_PER_HOUR = 3600
_HOURS_CONTEXT = Context(prec=28)
#: Wide enough for the largest cost the bounds allow (about 10^50), to the cent.
_MONEY_CONTEXT = Context(prec=80)
_CENT = Decimal("0.01")


@dataclass(frozen=True)
class PlanInputs:
    tokens: int | None = None  # training tokens per epoch
    epochs: Decimal = Decimal(1)
    gpu: str | None = None  # catalog id the measured rate, the price and max_fit refer to
    tokens_per_s: Decimal | None = None  # measured, per card
    price: Decimal | None = None  # hourly price of one `gpu` card
    gpus: int = 1


def _tokens(value: object, locale: str) -> int:
    d = read_decimal(value, locale) if isinstance(value, (int, Decimal)) else \
        read_count(read_text(value), locale)  # type: ignore[arg-type]
    if d != d.to_integral_value():
        raise _Bad("not_integer")
    if d == 0:
        raise _Bad("zero")
    if d > MAX_TOKENS:
        raise _Bad("too_large", max=MAX_TOKENS)
    return int(d)


def parse_plan(query: Query, locale: str = "en") -> PlanInputs:
    """The plan's fields from raw values (a URL, a form, the CLI). Raises CalcError naming
    every invalid field: zero, negative, non-finite or absurd values, an unknown card, and a
    measured rate or a price without the card they belong to."""
    from . import catalog

    c = Collector(query)
    tokens = c.read("tokens", lambda v: _tokens(v, locale), None)
    epochs = c.read("epochs", lambda v: read_positive_decimal(v, locale, MAX_EPOCHS), Decimal(1))
    gpu = c.read("gpu", lambda v: catalog.gpu(read_text(v).lower()).id, None)
    tps = c.read("tokens_per_s", lambda v: read_positive_decimal(v, locale, MAX_TOKENS_PER_S))
    price = c.read("price", lambda v: read_positive_decimal(v, locale, MAX_PRICE))
    gpus = c.read("gpus", lambda v: read_cards(v, locale), 1)
    if (c.has("tokens_per_s") or c.has("price")) and not c.has("gpu"):
        c.add("gpu", "required")
    c.done()
    return PlanInputs(tokens, epochs, gpu, tps, price, gpus)  # type: ignore[arg-type]


# --- time and cost ----------------------------------------------------------------------


@dataclass(frozen=True)
class CardPlan:
    gpu: str
    fits: bool  # the run fits with `cards` cards
    cards: int | None
    tokens_per_s: Decimal | None  # per card
    source: str | None  # "measured", "scaled" (from the measured card's utilisation), "estimate"
    hours: Decimal | None
    price: Decimal | None  # hourly, one card
    cost: Decimal | None
    cheapest: bool = False
    fastest: bool = False

    def to_json(self) -> dict[str, object]:
        num = (lambda d: None if d is None else float(d))
        return {"gpu": self.gpu, "fits": self.fits, "cards": self.cards,
                "tokens_per_s": num(self.tokens_per_s), "rate": self.source,
                "hours": num(self.hours), "price": None if self.price is None else str(self.price),
                "cost": None if self.cost is None else str(self.cost),
                "cheapest": self.cheapest, "fastest": self.fastest}


@dataclass(frozen=True)
class Plan:
    flops: TrainFlops
    utilisation: Fraction  # used on cards without a measurement
    calibrated: bool  # False: implied by the reader's measured tokens per second
    tokens: int | None
    epochs: Decimal
    cards: tuple[CardPlan, ...]

    @property
    def by_cost(self) -> tuple[CardPlan, ...]:
        """The cards that fit and have a price, cheapest first (then faster first)."""
        ok = [c for c in self.cards if c.cost is not None and c.hours is not None]
        return tuple(sorted(ok, key=lambda c: (c.cost, c.hours)))

    @property
    def by_time(self) -> tuple[CardPlan, ...]:
        """The cards that fit and have a time, fastest first (then cheaper first)."""
        ok = [c for c in self.cards if c.hours is not None]
        return tuple(sorted(ok, key=lambda c: (c.hours, c.cost is None, c.cost or 0)))

    def card(self, gpu_id: str) -> CardPlan:
        return next(c for c in self.cards if c.gpu == gpu_id)

    def to_json(self) -> dict[str, object]:
        total = None if self.tokens is None else \
            float(self.flops.per_token * self.tokens * Fraction(self.epochs))
        return {
            "train_flops": {**self.flops.to_json(), "total": total},
            "utilisation": float(self.utilisation), "utilisation_calibrated": self.calibrated,
            "tokens": self.tokens, "epochs": float(self.epochs),
            "by_cost": [c.gpu for c in self.by_cost], "by_time": [c.gpu for c in self.by_time],
        }


def _decimal(x: Fraction) -> Decimal:
    return _HOURS_CONTEXT.divide(Decimal(x.numerator), Decimal(x.denominator))


def _cost(card_hours: Fraction, price: Decimal) -> Decimal:
    """card-hours x hourly price, to the cent, half up: the rule of `engine.cost`, in a context
    wide enough for any bounded input (the default 28 digits would overflow)."""
    value = card_hours * Fraction(price)
    exact = _MONEY_CONTEXT.divide(Decimal(value.numerator), Decimal(value.denominator))
    return exact.quantize(_CENT, rounding=ROUND_HALF_UP, context=_MONEY_CONTEXT)


def _scale(p: PlanInputs, scale: Scale | None) -> Scale:
    """The scale the cards are counted with: the reader's, or the interface's defaults
    (ZeRO-3/FSDP, no offload, SFT) with the plan's `gpus`."""
    return Scale(gpus=p.gpus) if scale is None else scale


def plan(inputs: Inputs, p: PlanInputs, est: Estimate | None = None,
         scale: Scale | None = None) -> Plan:
    """Hours and cost of training `p.tokens` x `p.epochs` tokens on every catalog card, each
    with the cards the fit table counts for `scale` (`calc.scale.cards_needed`; `est`, the
    single-card estimate, is accepted from the callers that hold one and not needed)."""
    from .catalog import gpu as catalog_gpu, gpus as catalog_gpus

    sc = _scale(p, scale)
    flops = train_flops(inputs)
    f = flops.per_token
    u, calibrated = utilisation(inputs), True
    chosen = catalog_gpu(p.gpu) if p.gpu else None
    if chosen is not None and p.tokens_per_s is not None and chosen.peak_flops:
        u, calibrated = Fraction(p.tokens_per_s) * f / chosen.peak_flops, False
    work = None if p.tokens is None else Fraction(p.tokens) * Fraction(p.epochs)
    needed = cards_needed(inputs, sc)
    rows = []
    for g in catalog_gpus():
        need = needed[g.id].get(sc.sharding.value)
        cards = None if need is None else 1 if g.kind is GpuKind.UNIFIED else max(p.gpus, need)
        if chosen is not None and g.id == chosen.id and p.tokens_per_s is not None:
            rate, source = Fraction(p.tokens_per_s), "measured"
        elif g.peak_flops:
            rate, source = g.peak_flops * u / f, "estimate" if calibrated else "scaled"
        else:
            rate, source = None, None
        price = p.price if chosen is not None and g.id == chosen.id and p.price else \
            g.price_per_hour
        hours = total_cost = None
        if work is not None and rate is not None and cards is not None:
            exact = work / (cards * rate) / _SECONDS_PER_HOUR
            hours = _decimal(exact)
            if price is not None:
                total_cost = _cost(exact * cards, price)
        rows.append(CardPlan(g.id, cards is not None, cards,
                             None if rate is None else _decimal(rate), source, hours, price,
                             total_cost))
    costs = [r.cost for r in rows if r.cost is not None and r.hours is not None]
    times = [r.hours for r in rows if r.hours is not None]
    low_cost, low_time = min(costs, default=None), min(times, default=None)
    rows = [replace(r, cheapest=r.cost is not None and r.cost == low_cost and r.hours is not None,
                    fastest=r.hours is not None and r.hours == low_time) for r in rows]
    return Plan(flops, u, calibrated, p.tokens, p.epochs, tuple(rows))


# --- the most that fits -----------------------------------------------------------------


@dataclass(frozen=True)
class MaxFit:
    gpu: str
    cards: int
    seq: int | None  # longest sequence at the inputs' micro-batch; None: not even 1 token
    batch: int | None  # largest micro-batch at the inputs' length; None: not even 1
    seq_at_bound: bool  # the search stopped at MAX_SEQ: longer may fit too
    batch_at_bound: bool
    model: str | None  # the largest preset of the same family that fits, if any

    def to_json(self) -> dict[str, object]:
        return {"gpu": self.gpu, "cards": self.cards, "seq": self.seq, "batch": self.batch,
                "seq_at_bound": self.seq_at_bound, "batch_at_bound": self.batch_at_bound,
                "model": self.model, "bounds": {"seq": MAX_SEQ, "batch": MAX_BATCH}}


def fewest_cards(inputs: Inputs, gpu_id: str, scale: Scale = Scale()) -> int | None:
    """The fewest cards of `gpu_id` that hold `inputs` under `scale` (its sharding, offload and
    objective), or None: one entry of `calc.scale.cards_needed`, computed for the one
    strategy (the searches ask it dozens of times)."""
    from .catalog import gpu as catalog_gpu

    g = catalog_gpu(gpu_id)
    if not supports(scale.sharding, scale.offload):
        return None
    est, components = single_card(inputs, scale.objective)
    one = layout(inputs, est, components, scale.sharding, scale.offload, False)
    many = layout(inputs, est, components, scale.sharding, scale.offload, True)
    return fewest(sums(one, many), usable_bytes(g), g.kind is GpuKind.UNIFIED)


def fits_cards(inputs: Inputs, gpu_id: str, cards: int = 1, scale: Scale | None = None) -> bool:
    """Whether `inputs` fit on `cards` cards of `gpu_id`: the fit table's verdict (the fewest
    cards under `scale`, ZeRO-3/FSDP by default, are no more than `cards`)."""
    n = fewest_cards(inputs, gpu_id, Scale() if scale is None else scale)
    return n is not None and n <= cards


def largest(ok: Callable[[int], bool], lo: int, hi: int) -> int | None:
    """The largest n in [lo, hi] with ok(n), for ok true up to some point and false after."""
    if not ok(lo):
        return None
    if ok(hi):
        return hi
    while hi - lo > 1:  # ok(lo), not ok(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def _largest_model(inputs: Inputs, gpu_id: str, cards: int, scale: Scale | None
                   ) -> str | None:
    from . import catalog

    try:
        family = catalog.model(inputs.model).family
    except CalcError:
        return None  # a custom model has no family
    best = None
    for preset in sorted((m for m in catalog.models() if m.family == family),
                         key=lambda m: m.params):
        if inputs.method is not Method.FULL and inputs.rank > max_rank(preset.arch, inputs.targets):
            continue
        if fits_cards(replace(inputs, model=preset.id, arch=preset.arch), gpu_id, cards, scale):
            best = preset.id
    return best


def max_fit(inputs: Inputs, gpu_id: str, cards: int = 1, scale: Scale | None = None) -> MaxFit:
    """The longest `seq`, the largest `batch` and the largest preset of the family that fit
    `cards` cards of `gpu_id` (the fit table's rule, `fits_cards`), the other inputs as given."""
    def ok(changed: Inputs) -> bool:
        return fits_cards(changed, gpu_id, cards, scale)

    seq = largest(lambda s: ok(replace(inputs, seq=s)), 1, MAX_SEQ)
    batch = largest(lambda b: ok(replace(inputs, batch=b)), 1, MAX_BATCH)
    return MaxFit(gpu_id, cards, seq, batch, seq == MAX_SEQ, batch == MAX_BATCH,
                  _largest_model(inputs, gpu_id, cards, scale))
