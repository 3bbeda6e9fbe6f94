"""The small calculators: rule of thumb, quick full fine-tuning, cost (engine.md sections 2-5)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Union

from .constants import GB, RULE_OF_THUMB
from .textbook import _round

Number = Union[int, float, str, Decimal, Fraction]


def _fraction(x: Number) -> Fraction:
    return Fraction(str(x)) if isinstance(x, float) else Fraction(x)


def rule_of_thumb(billions: Number, method: str) -> int:
    """Rule-of-thumb memory in bytes (the rule is stated in GB = 10**9 bytes)."""
    per_b, fixed = RULE_OF_THUMB[method]
    return _round((per_b * _fraction(billions) + fixed) * GB)


def quick_full(n_billion: Number, bpp: Number, act_gb: Number) -> int:
    """V [GB] = N [billions] x B [bytes per parameter] + A [GB], returned in bytes."""
    return _round((_fraction(n_billion) * _fraction(bpp) + _fraction(act_gb)) * GB)


def cost(hours: Number, price: Number) -> Decimal:
    """hours x hourly price, to the cent (prices are examples, without VAT)."""
    value = Decimal(str(hours)) * Decimal(str(price))
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
