"""The one number formatter: CLDR symbols and patterns for the site's five locales.

`fmt(value, unit, locale, digits=None)` renders every figure the site shows, at build time
(CPython) and on each keystroke in the browser (Pyodide), so it is table-driven, uses only
`decimal` and `str.translate`, and never touches Babel. Its numbers equal Babel's
`format_decimal` / `format_percent` / `format_currency` (Babel 2.19, CLDR 49; locales en, tr,
pt_BR, ru, fa, each with its default numbering system) once the value is rounded the same
way, with deliberate differences for `fa`, where Babel does not apply CLDR fully:

- digits are Persian (U+06F0..U+06F9, the `arabext` numbering system that CLDR makes the
  default for `fa`); Babel keeps ASCII digits while using the arabext separators U+066B
  (decimal) and U+066C (group);
- the minus sign is CLDR's U+200E U+2212 (LRM, MINUS SIGN) and the percent sign U+066A, as
  ICU and the browsers' `Intl.NumberFormat("fa")` print them; Babel copies the pattern's
  ASCII `-` and `%`.

The `fa` currency keeps Babel's pattern (LRM, `$`, no-break space, number).

Rounding: half-up (away from zero) on the decimal value, after converting binary floats with
their shortest repr (as Babel does): 43.25 -> 43.3, 0.125 -> 0.13.

`digits` is the maximum number of fraction digits; trailing zeros are dropped ("112 GB",
"14.9 GiB", "0.25 MiB"), like a CLDR `#,##0.#` pattern. Money is the exception: USD always shows
exactly 2 (or `digits`) fraction digits, "$14.80".

Units (the `unit` argument) and what `value` is:

| unit | value | default digits | example (en) |
| --- | --- | --- | --- |
| GiB, GB, MiB | integer bytes (divided by 2**30, 10**9, 2**20) | 1 | 14.9 GiB |
| params | parameter count | 0 | 131,072 parameters |
| count, number | a plain number | 0 for int, 2 otherwise | 131,072 |
| USD | money (Decimal) | 2, fixed | $14.80 |
| percent | a fraction (0.95 is 95 %) | 0 | 95% |
| x | a multiplier (tables) | 2 | 4× |
| times | a multiplier in words (prose) | 2 | 4 times, в 4 раза, 4 vezes |
| bpp | bytes per parameter (tables, headings) | 3 | 16 bytes per parameter |
| bytes | bytes, the bare unit (prose that says "per parameter" itself) | 3 | 2 bytes, 2 байта |
| billions | model size in billions of parameters | 2 | 7B |
| hours | hours | 2 | 20 hours |

The words come from the message catalog (`unit.<unit>` in `calc/locales/*.json`), with plural
forms chosen by the CLDR rules of the locale (`unit.hours.one`, `.few`, `.many`, see
`calc.i18n.plural_category`). A unit text is joined to the number by a no-break space, unless
it contains `{n}`, in which case it is a pattern (`{n}B`, `{n}×`). In right-to-left locales
(`fa`) a unit word written in Latin letters (GiB, GB, MiB) is wrapped in Unicode isolates
(U+2066 LRI ... U+2069 PDI) so it can never be reordered with neighbouring text; `fa` writes
model sizes and multipliers in words ("۷ میلیارد", "۴ برابر").

Ranges: `fmt_range(lo, hi, unit, locale)` writes two values as one figure, the unit once, in
each language's own form: "20–30%" (en), "20–30 %" (ru), "%20–30" (tr), "de 20% a 30%" (pt,
which repeats the percent sign on each number), "۲۰ تا ۳۰٪" (fa); multipliers in words
("times"): "6–8 times", "в 6–8 раз", "6–8 kat", "de 6 a 8 vezes", "۶ تا ۸ برابر". The unit's
plural form agrees with the upper bound ("2–4 часа", "5–6 часов").
"""

from __future__ import annotations

import decimal
import math
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

from .bidi import LRI, PDI
from .i18n import LOCALES, locale_dir, lookup, normalize_locale, plural_category

__all__ = ["fmt", "fmt_memo", "fmt_range", "LOCALES", "UNITS"]

NBSP = "\u00a0"

_PERSIAN_DIGITS = "۰۱۲۳۴۵۶۷۸۹"


class _Symbols:
    """What a locale does to an ASCII-rendered number `1,234.5`."""

    __slots__ = ("table", "group", "minus", "percent", "currency")

    def __init__(self, group: str, decimal_sep: str, minus: str, percent: str, currency: str,
                 digits: str = "0123456789"):
        self.group = group
        self.table = str.maketrans({",": group, ".": decimal_sep, **{str(i): digits[i] for i in range(10)}})
        self.minus = minus
        self.percent = percent  # pattern, {n} = the number
        self.currency = currency  # pattern for USD


# CLDR 49 (Babel 2.19 locale data): number symbols of the default numbering system, the
# standard percent pattern and the standard currency pattern with the USD symbol filled in.
_SYMBOLS: dict[str, _Symbols] = {
    "en": _Symbols(",", ".", "-", "{n}%", "${n}"),
    "tr": _Symbols(".", ",", "-", "%{n}", "${n}"),
    "pt": _Symbols(".", ",", "-", "{n}%", "US$" + NBSP + "{n}"),  # pt_BR
    "ru": _Symbols(NBSP, ",", "-", "{n}" + NBSP + "%", "{n}" + NBSP + "$"),
    "fa": _Symbols("\u066c", "\u066b", "\u200e\u2212", "{n}\u066a", "\u200e$" + NBSP + "{n}",
                   _PERSIAN_DIGITS),
}

def group_symbol(locale: str) -> str:
    """The locale's group separator (what a reader may type between thousands)."""
    return _SYMBOLS[normalize_locale(locale)].group


_BYTES = {"GiB": Decimal(2**30), "GB": Decimal(10**9), "MiB": Decimal(2**20)}

# unit -> default maximum fraction digits (None: 0 for int input, 2 otherwise)
_DEFAULT_DIGITS: dict[str, int | None] = {
    "GiB": 1, "GB": 1, "MiB": 1,
    "params": 0,
    "count": None, "number": None,
    "USD": 2,
    "percent": 0,
    "x": 2,
    "times": 2,
    "bpp": 3,
    "bytes": 3,
    "billions": 2,
    "hours": 2,
}
UNITS: tuple[str, ...] = tuple(_DEFAULT_DIGITS)
_WORDED = frozenset({"GiB", "GB", "MiB", "params", "x", "times", "bpp", "bytes", "billions", "hours"})

_CTX = decimal.Context(prec=120, rounding=ROUND_HALF_UP, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
_QUANTA = [Decimal(1).scaleb(-i) for i in range(21)]


def _to_decimal(value: object) -> Decimal:
    if isinstance(value, bool):
        raise TypeError(f"fmt: a number is needed, not {value!r}")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"fmt: {value!r} is not a finite number")
        return Decimal(repr(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"fmt: {value!r} is not a finite number")
        return value
    raise TypeError(f"fmt: a number is needed, not {type(value).__name__}")


def _context(digits_needed: int) -> decimal.Context:
    """A context exact enough for a result with this many significant digits (huge inputs)."""
    if digits_needed < 100:
        return _CTX
    return decimal.Context(prec=digits_needed + 20, rounding=ROUND_HALF_UP,
                           Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def _ascii(d: Decimal, digits: int, fixed: bool) -> tuple[str, bool]:
    """`d` rounded half-up to `digits` fraction digits, as ASCII `1,234.5`; and its sign."""
    quantum = _QUANTA[digits] if digits < len(_QUANTA) else Decimal(1).scaleb(-digits)
    q = d.quantize(quantum, context=_context(d.adjusted() + digits))
    negative = q.is_signed() and not q.is_zero()  # never print "-0"
    s = format(q.copy_abs(), ",f")
    if not fixed and digits and "." in s:
        s = s.rstrip("0").rstrip(".")
    return s, negative


def number_ascii(value: int | float | Decimal, digits: int | None = None) -> str:
    """`value` as `fmt(value, "number", ...)` rounds it, in ASCII (`1,234.5`, minus `-`):
    what plural rules read."""
    d = _to_decimal(value)
    if digits is None:
        digits = 0 if isinstance(value, int) else 2
    s, negative = _ascii(d, digits, fixed=False)
    return "-" + s if negative else s


def _prepare(value: object, unit: str, digits: int | None) -> tuple[str, Decimal, int]:
    """The unit as plain text, the value in the unit's scale (GiB, percent) and the digits."""
    try:
        default = _DEFAULT_DIGITS[unit]
    except (KeyError, TypeError):
        raise ValueError(f"fmt: unknown unit {unit!r}; one of {', '.join(UNITS)}") from None
    unit = str.__str__(unit) if isinstance(unit, str) else unit  # a str-Enum member -> its value
    d = _to_decimal(value)
    if digits is None:
        digits = default if default is not None else (0 if isinstance(value, int) else 2)
    elif isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        raise ValueError(f"fmt: digits must be a non-negative integer, not {digits!r}")
    size = _BYTES.get(unit)
    if size is not None:
        d = _context(d.adjusted() + 40).divide(d, size)  # exact: 2**-30 has 30 decimals
    elif unit == "percent":
        d = d.scaleb(2, context=_CTX)
    return unit, d, digits


def _with_unit(number: str, ascii_number: str, unit: str, loc: str) -> str:
    """`number` (localized digits, or a range of them) with the unit's symbol or word; the
    word's plural form is that of `ascii_number`."""
    sym = _SYMBOLS[loc]
    if unit == "USD":
        return sym.currency.replace("{n}", number)
    if unit == "percent":
        return sym.percent.replace("{n}", number)
    if unit in _WORDED:
        word = lookup("unit." + unit, loc, plural_category(ascii_number, loc))
        if "{n}" in word:
            return word.replace("{n}", number)
        if locale_dir(loc) == "rtl" and word.isascii():
            word = LRI + word + PDI
        return number + NBSP + word
    return number


def fmt(value: int | float | Decimal, unit: str, locale: str, digits: int | None = None) -> str:
    """`value` in `unit`, written for `locale` (en, tr, pt, ru, fa; others fall back to en).

    Raises ValueError for NaN, infinities, an unknown unit or negative `digits`; TypeError
    for something that is not a number.
    """
    unit, d, digits = _prepare(value, unit, digits)
    loc = normalize_locale(locale)
    s, negative = _ascii(d, digits, fixed=unit == "USD")
    sym = _SYMBOLS[loc]
    text = _with_unit(s.translate(sym.table), s, unit, loc)
    return sym.minus + text if negative else text


#: How each locale joins the two numbers of a range: an en dash, closed up (en, ru, tr:
#: "20–30"), "de 20 a 30" (pt), "۲۰ تا ۳۰" (fa).
_RANGE = {
    "en": "{lo}\u2013{hi}",
    "tr": "{lo}\u2013{hi}",
    "ru": "{lo}\u2013{hi}",
    "pt": "de {lo} a {hi}",
    "fa": "{lo} تا {hi}",
}
#: Units that Portuguese writes on each number of a range ("de 20% a 30%", "de US$ 5,00 a
#: US$ 8,00", "de 7B a 8B"): symbols bound to the number. Word units come once ("de 6 a 8 vezes").
_PT_REPEATED = frozenset({"percent", "USD", "billions", "x"})


def fmt_range(lo: int | float | Decimal, hi: int | float | Decimal, unit: str, locale: str,
              digits: int | None = None) -> str:
    """The range `lo`..`hi` in `unit` as one figure, the way `locale` writes ranges, the unit
    once (see the module docstring): `fmt_range(0.2, 0.3, "percent", "ru")` is "20–30 %",
    `fmt_range(6, 8, "times", "pt")` is "de 6 a 8 vezes". The unit's plural form agrees with
    `hi`. Both bounds are rounded as `fmt` rounds them; when they round to the same text the
    result is that one figure.

    Raises ValueError (besides `fmt`'s) for a negative bound or `lo` > `hi`; TypeError for
    something that is not a number.
    """
    unit, d_lo, digits = _prepare(lo, unit, digits)
    _, d_hi, _ = _prepare(hi, unit, digits)
    if d_lo < 0 or d_hi < 0:
        raise ValueError(f"fmt_range: the bounds must not be negative, not {lo!r}, {hi!r}")
    if d_lo > d_hi:
        raise ValueError(f"fmt_range: lo must not exceed hi, not {lo!r} > {hi!r}")
    loc = normalize_locale(locale)
    fixed = unit == "USD"
    s_lo, _ = _ascii(d_lo, digits, fixed)
    s_hi, _ = _ascii(d_hi, digits, fixed)
    table = _SYMBOLS[loc].table
    if s_lo == s_hi:
        return _with_unit(s_hi.translate(table), s_hi, unit, loc)
    if loc == "pt" and unit in _PT_REPEATED:
        return _RANGE["pt"].format(lo=_with_unit(s_lo.translate(table), s_lo, unit, loc),
                                   hi=_with_unit(s_hi.translate(table), s_hi, unit, loc))
    joined = _RANGE[loc].format(lo=s_lo.translate(table), hi=s_hi.translate(table))
    return _with_unit(joined, s_hi, unit, loc)


def small_bytes_unit(value: int, unit: str) -> tuple[str, int]:
    """Unit and fraction digits for a byte figure that may be small beside the totals: two
    digits, and MiB where a GiB figure would still round to zero."""
    if unit == "GiB" and value < 2**30 // 200:
        return "MiB", 0
    return unit, 2


@lru_cache(maxsize=8192, typed=True)
def fmt_memo(value: int | Decimal, unit: str, locale: str, digits: int | None = None) -> str:
    """`fmt`, memoized: the widgets write the same figures again on every edit (the worker).
    For engine figures (int, finite Decimal). `typed`: 1 and Decimal(1) are written
    differently; equal Decimals (1.0, 1.00) are written alike."""
    return fmt(value, unit, locale, digits)
