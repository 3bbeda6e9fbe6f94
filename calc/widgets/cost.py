"""The cost widget: hours x hourly price, the price a catalog GPU's example price or typed."""

from __future__ import annotations

from decimal import Decimal
from typing import Mapping

from .. import catalog, engine
from ..fields import Collector, Query, read_decimal_max, read_positive_decimal, read_text
from ..fmt import fmt
from .base import Form, Outcome, bidi, dec, e, fig, form_layout, summary, total_line, tx

__all__ = ["NAME", "DEFAULT_QUERY", "FORM_FIELDS", "NUMERIC_FIELDS", "parse", "run", "form"]

NAME = "cost"
#: The first paint is the spec's example: an A40 (for the default 20 hours).
DEFAULT_QUERY: Mapping[str, str] = {"gpu": "a40"}
FORM_FIELDS = ("gpu", "hours", "price")
NUMERIC_FIELDS = frozenset({"hours", "price"})


def parse(query: Query, locale: str = "en") -> tuple[Decimal, Decimal, str | None]:
    """hours, hourly price and the catalog GPU whose example price was taken (if any)."""
    c = Collector(query)
    gpu_id = c.read("gpu", lambda v: catalog.gpu(read_text(v).lower()).id, None)
    price_default = None
    if gpu_id:
        price_default = catalog.gpu(gpu_id).price_per_hour
    hours = c.read("hours", lambda v: read_positive_decimal(v, locale, 1_000_000), Decimal(20))
    price = c.read("price", lambda v: read_decimal_max(v, locale, 100_000), price_default)
    if price is None and not c.problems:
        c.add("price", "required")
    c.done()
    return hours, price, gpu_id  # type: ignore[return-value]


def run(q: dict[str, str], loc: str, wid: str) -> Outcome:
    hours, price, gpu_id = parse(q, loc)
    canonical = {"gpu": gpu_id or "", "hours": dec(hours)}
    if q.get("price", "").strip():
        canonical["price"] = dec(price)
    values = {"gpu": gpu_id or "", "hours": canonical["hours"], "price": canonical.get("price", "")}
    placeholders = {"price": fmt(price, "number", loc, 2)} if gpu_id else {"price": ""}
    line = summary("ui.cost", fmt(engine.cost(hours, price), "USD", loc), loc)
    return Outcome(bidi(_results(hours, price, loc), loc), canonical, values, placeholders, line)


def _results(hours: Decimal, price: Decimal, loc: str) -> str:
    total = engine.cost(hours, price)
    shown = fig("cost", total, fmt(total, "USD", loc), tag="strong",
                cls="calc-fig calc-total-value")
    return (
        f'{total_line(tx("ui.cost", loc), shown)}'
        f'<p class="calc-formula">{fig("hours", hours, fmt(hours, "hours", loc))} × '
        f'{fig("price", price, fmt(price, "USD", loc))} = '
        f'<bdi>{e(fmt(total, "USD", loc))}</bdi></p>'
        f'<p class="calc-note">{e(tx("ui.prices_note", loc))}</p>'
    )


def form(f: Form, loc: str, placeholders: Mapping[str, str]) -> str:
    gpus = [(g.id, f"{catalog.gpu_label(g, loc)} — {fmt(g.price_per_hour, 'USD', loc)}")
            for g in catalog.gpus() if g.price_per_hour is not None]
    gpus.append(("", tx("ui.custom_price", loc)))
    common = [
        f.select("gpu", gpus),
        f.text("hours"),
        f.text("price", placeholder=placeholders.get("price", "")),
    ]
    return form_layout(f.wid, loc, common, [])
