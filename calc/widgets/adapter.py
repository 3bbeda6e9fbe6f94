"""The adapter-size widget: one LoRA layer's extra parameters, r x (d_in + d_out), and their
size in the chosen precision."""

from __future__ import annotations

from typing import Mapping

from .. import engine
from ..engine import ADAPTER_DTYPE_BYTES
from ..fields import Collector, Query, read_int, read_one_of
from ..fmt import fmt
from .base import Form, Outcome, bidi, e, fig, form_layout, summary, total_line, tx

__all__ = ["NAME", "DEFAULT_QUERY", "FORM_FIELDS", "NUMERIC_FIELDS", "parse", "run", "form"]

NAME = "adapter"
DEFAULT_QUERY: Mapping[str, str] = {}
FORM_FIELDS = ("d_in", "d_out", "rank", "dtype")
NUMERIC_FIELDS = frozenset({"d_in", "d_out", "rank"})


def parse(query: Query, locale: str = "en") -> tuple[int, int, int, str]:
    """d_in, d_out, rank, dtype (defaults: 4096 x 4096, r = 16, BF16)."""
    c = Collector(query)
    d_in = c.read("d_in", lambda v: read_int(v, "d_in", locale), 4096)
    d_out = c.read("d_out", lambda v: read_int(v, "d_out", locale), 4096)
    rank = c.read("rank", lambda v: read_int(v, "rank", locale), 16)
    dtype = c.read("dtype", lambda v: read_one_of(v, tuple(ADAPTER_DTYPE_BYTES)), "bf16")
    if d_in and d_out and rank and rank > min(d_in, d_out):
        c.add("rank", "rank_too_large", max=min(d_in, d_out))
    c.done()
    return d_in, d_out, rank, dtype  # type: ignore[return-value]


def run(q: dict[str, str], loc: str, wid: str) -> Outcome:
    d_in, d_out, rank, dtype = parse(q, loc)
    canonical = {"d_in": str(d_in), "d_out": str(d_out), "rank": str(rank), "dtype": dtype}
    size = engine.adapter_bytes(d_in, d_out, rank, dtype)
    line = summary("ui.adapter_size", fmt(size, "MiB", loc, 2), loc)
    return Outcome(bidi(_results(d_in, d_out, rank, dtype, loc), loc), canonical,
                   dict(canonical), {}, line)


def _results(d_in: int, d_out: int, rank: int, dtype: str, loc: str) -> str:
    params = engine.lora_layer_params(d_in, d_out, rank)
    size = engine.adapter_bytes(d_in, d_out, rank, dtype)
    size_label = f'{tx("ui.adapter_size", loc)} ({dtype.upper()})'
    formula = (f"{fmt(rank, 'number', loc)} × ({fmt(d_in, 'number', loc)} + "
               f"{fmt(d_out, 'number', loc)})")
    total = fig("adapter_params", params, fmt(params, "params", loc), tag="strong",
                cls="calc-fig calc-total-value")
    return (
        f'{total_line(tx("ui.adapter_params", loc), total)}'
        f'<p class="calc-formula"><span dir="ltr" lang="en">r × (d_in + d_out)</span> = '
        f'<bdi>{e(formula)}</bdi></p>'
        f'<p><span>{e(size_label)}</span> '
        f'{fig("adapter_bytes", size, fmt(size, "MiB", loc, 2), kind="bytes")}</p>'
    )


def form(f: Form, loc: str, placeholders: Mapping[str, str]) -> str:
    common = [
        f.text("d_in", inputmode="numeric"),
        f.text("d_out", inputmode="numeric"),
        f.text("rank", inputmode="numeric"),
        f.select("dtype", [(d, d.upper()) for d in ADAPTER_DTYPE_BYTES]),
    ]
    return form_layout(f.wid, loc, common, [])
