"""calc.fmt against Babel (CLDR) and the spec's figures.

The oracle is Babel's `format_decimal` / `format_percent` / `format_currency` with the locale's
default numbering system, fed a value already rounded half-up (fmt's rounding; Babel itself
rounds half-even). For `fa`, Babel keeps ASCII digits and the pattern's ASCII `-` and `%`;
CLDR (and ICU, and the browsers) use Persian digits, U+200E U+2212 and U+066A there, so the
oracle applies those three substitutions, taking the symbols from Babel's own CLDR data.
"""

from __future__ import annotations

import decimal
import unicodedata
from decimal import ROUND_HALF_UP, Decimal

import pytest
from babel import Locale
from babel.numbers import format_currency, format_decimal, format_percent
from hypothesis import given, settings
from hypothesis import strategies as st

from calc.fmt import LOCALES, UNITS, fmt
from calc.i18n import locale_dir
from calc.types import Unit

BABEL = {"en": "en", "tr": "tr", "pt": "pt_BR", "ru": "ru", "fa": "fa"}
NBSP = "\u00a0"
PERSIAN = "۰۱۲۳۴۵۶۷۸۹"
TO_PERSIAN = str.maketrans("0123456789", PERSIAN)
ISOLATES = "\u2066\u2069"


def _symbols(loc: str) -> dict[str, str]:
    locale = Locale.parse(BABEL[loc])
    return locale.number_symbols[locale.default_numbering_system]


def _cldr(text: str, loc: str) -> str:
    """Babel's output with the CLDR symbols Babel leaves out (a no-op except for fa)."""
    sym = _symbols(loc)
    if text.startswith("-"):
        text = sym["minusSign"] + text[1:]
    text = text.replace("%", sym["percentSign"])
    return text.translate(TO_PERSIAN) if loc == "fa" else text


# The oracle works with big numbers too (Babel uses the current decimal context).
BIG = decimal.Context(prec=1000, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def _q(value: Decimal, digits: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP, context=BIG)


def _dec(value) -> Decimal:
    if isinstance(value, Decimal):
        return value
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def babel_number(value, loc: str, digits: int) -> str:
    pattern = "#,##0" + ("." + "#" * digits if digits else "")
    q = _q(_dec(value), digits)
    with decimal.localcontext(BIG):
        text = format_decimal(q, format=pattern, locale=BABEL[loc], numbering_system="default")
    if text.startswith("-") and q.is_zero():  # fmt never writes "-0"
        text = text[1:]
    return _cldr(text, loc)


def number_part(text: str) -> str:
    """The number of a `<number> NBSP <unit word>` output (ru groups with NBSP too)."""
    return text.rsplit(NBSP, 1)[0]


NUMBERS = [
    0, 1, 7, 42, 999, 1000, 1001, 9999, 10000, 65536, 131072, 1000000, 8030261248, 10**15,
    123456789012345678901234567890,
    0.004, 0.005, 0.5, 0.25, 1.5, 14.9, 14.95, 43.25, 43.29, 104.3, 999.95, 999.999, 1234.5,
    9999.99, 1e6, 1e16, 3.14159, 1234567.891,
    Decimal("0.125"), Decimal("1234.5"), Decimal("1234567.125"), Decimal("14.80"), Decimal("2.675"),
    -3.5, -1234.5, -42, Decimal("-0.5"),
]


@pytest.mark.parametrize("loc", LOCALES)
@pytest.mark.parametrize("value", NUMBERS, ids=repr)
def test_number_matches_babel_default_digits(value, loc):
    digits = 0 if isinstance(value, int) else 2
    assert fmt(value, "number", loc) == babel_number(value, loc, digits)
    assert fmt(value, "count", loc) == babel_number(value, loc, digits)


@pytest.mark.parametrize("loc", LOCALES)
@pytest.mark.parametrize("digits", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("value", NUMBERS, ids=repr)
def test_number_matches_babel_any_digits(value, loc, digits):
    assert fmt(value, "number", loc, digits) == babel_number(value, loc, digits)


BYTES = [
    0, 1, 1023, 2**20, 262144, 2**30, 4128000000, 7 * 10**9, 16 * 10**9, 46478379264,
    112 * 10**9, 132 * 10**9, 80 * 2**30, 10**15, 10**18, 1234567890123456789,
]
SIZES = {"GiB": 2**30, "GB": 10**9, "MiB": 2**20}


@pytest.mark.parametrize("loc", LOCALES)
@pytest.mark.parametrize("unit", ["GiB", "GB", "MiB"])
@pytest.mark.parametrize("value", BYTES)
def test_bytes_match_babel(value, unit, loc):
    exact = BIG.divide(Decimal(value), Decimal(SIZES[unit]))
    out = fmt(value, unit, loc)
    assert number_part(out) == babel_number(exact, loc, 1)
    word = {"ru": {"GiB": "ГиБ", "GB": "ГБ", "MiB": "МиБ"}[unit], "fa": f"\u2066{unit}\u2069"}.get(loc, unit)
    assert out == number_part(out) + NBSP + word
    expected2 = babel_number(exact, loc, 2)
    assert number_part(fmt(value, unit, loc, 2)) == expected2


@pytest.mark.parametrize("loc", LOCALES)
@pytest.mark.parametrize(
    "value", [0, 0.95, 0.955, 0.5, 1, 1.0, 0.0749, 0.005, 0.004, 12.5, 1234.56, Decimal("0.745"), -0.25]
)
def test_percent_matches_babel(value, loc):
    q = _q(_dec(value).scaleb(2), 0)
    expected = _cldr(format_percent(q.scaleb(-2), locale=BABEL[loc], numbering_system="default"), loc)
    assert fmt(value, "percent", loc) == expected


@pytest.mark.parametrize("loc", LOCALES)
@pytest.mark.parametrize(
    "value",
    [Decimal("14.80"), Decimal("14.8"), Decimal("0"), Decimal("0.745"), Decimal("0.005"), Decimal("1234.5"),
     Decimal("1000000"), Decimal("99999.999"), 20 * Decimal("0.74"), Decimal("-1234.5"), 3, 2.5],
    ids=repr,
)
def test_usd_matches_babel(value, loc):
    q = _q(_dec(value), 2)
    expected = _cldr(format_currency(q, "USD", locale=BABEL[loc], numbering_system="default"), loc)
    assert fmt(value, "USD", loc) == expected


# --- the spec's figures ---------------------------------------------------------------


def test_spec_figures_en():
    assert fmt(46478379264, "GiB", "en") == "43.3\u00a0GiB"  # QLoRA 65B on one 48 GB card
    assert fmt(16 * 10**9, "GiB", "en") == "14.9\u00a0GiB"  # 8B in BF16
    assert fmt(4_128_000_000, "GiB", "en") == "3.8\u00a0GiB"  # 8B in NF4
    assert fmt(7 * 10**9 * 16, "GiB", "en") == "104.3\u00a0GiB"
    assert fmt(7 * 10**9 * 16, "GB", "en") == "112\u00a0GB"
    assert fmt(132 * 10**9, "GB", "en") == "132\u00a0GB"
    assert fmt(262144, "MiB", "en", 2) == "0.25\u00a0MiB"
    assert fmt(131072, "params", "en") == "131,072\u00a0parameters"
    assert fmt(131072, "count", "en") == "131,072"
    assert fmt(Decimal("14.80"), "USD", "en") == "$14.80"
    assert fmt(20 * Decimal("0.74"), "USD", "en") == "$14.80"
    assert fmt(4, "x", "en") == "4×"
    assert fmt(16, "bpp", "en") == "16\u00a0bytes per parameter"
    assert fmt(0.95, "percent", "en") == "95%"


@pytest.mark.parametrize("loc", LOCALES)
def test_spec_figures_every_locale(loc):
    sep = {"en": ".", "tr": ",", "pt": ",", "ru": ",", "fa": "\u066b"}[loc]
    digits = (lambda s: s.translate(TO_PERSIAN)) if loc == "fa" else (lambda s: s)
    assert number_part(fmt(46478379264, "GiB", loc)) == digits(f"43{sep}3")
    assert number_part(fmt(16 * 10**9, "GiB", loc)) == digits(f"14{sep}9")
    assert number_part(fmt(4_128_000_000, "GiB", loc)) == digits(f"3{sep}8")
    assert number_part(fmt(262144, "MiB", loc, 2)) == digits(f"0{sep}25")


def test_locale_examples():
    assert fmt(1234.5, "number", "tr") == "1.234,5"
    assert fmt(1234.5, "number", "pt") == "1.234,5"
    assert fmt(1234.5, "number", "ru") == "1\u00a0234,5"
    assert fmt(1234.5, "number", "fa") == "۱٬۲۳۴٫۵"
    assert fmt(46478379264, "GiB", "ru") == "43,3\u00a0ГиБ"
    assert fmt(112 * 10**9, "GB", "ru") == "112\u00a0ГБ"
    assert fmt(262144, "MiB", "ru", 2) == "0,25\u00a0МиБ"
    assert fmt(46478379264, "GiB", "fa") == "۴۳٫۳\u00a0\u2066GiB\u2069"
    assert fmt(Decimal("14.8"), "USD", "tr") == "$14,80"
    assert fmt(Decimal("14.8"), "USD", "pt") == "US$\u00a014,80"
    assert fmt(Decimal("14.8"), "USD", "ru") == "14,80\u00a0$"
    assert fmt(Decimal("14.8"), "USD", "fa") == "\u200e$\u00a0۱۴٫۸۰"
    assert fmt(0.95, "percent", "tr") == "%95"
    assert fmt(0.95, "percent", "ru") == "95\u00a0%"
    assert fmt(0.95, "percent", "fa") == "۹۵٪"
    assert fmt(-3.5, "number", "fa") == "\u200e\u2212۳٫۵"
    assert fmt(-3.5, "number", "ru") == "-3,5"


def test_billions():
    assert fmt(7, "billions", "en") == "7B"
    assert fmt(0.5, "billions", "en") == "0.5B"
    assert fmt(0.5, "billions", "tr") == "0,5B"
    assert fmt(7, "billions", "ru") == "7B"
    assert fmt(1.5, "billions", "pt") == "1,5B"
    assert fmt(7, "billions", "fa") == "۷\u00a0میلیارد"
    assert fmt(405, "billions", "fa") == "۴۰۵\u00a0میلیارد"


def test_plural_unit_words():
    assert fmt(1, "hours", "en") == "1\u00a0hour"
    assert fmt(20, "hours", "en") == "20\u00a0hours"
    assert fmt(1.5, "hours", "en") == "1.5\u00a0hours"
    assert fmt(1, "hours", "pt") == "1\u00a0hora"
    assert fmt(0, "hours", "pt") == "0\u00a0horas"
    assert fmt(20, "hours", "tr") == "20\u00a0saat"
    ru = {1: "час", 2: "часа", 4: "часа", 5: "часов", 11: "часов", 12: "часов", 21: "час", 22: "часа",
          100: "часов", 101: "час", 111: "часов", 1.5: "часа"}
    for n, word in ru.items():
        assert fmt(n, "hours", "ru").endswith("\u00a0" + word), n
    assert fmt(131072, "params", "ru") == "131\u00a0072\u00a0параметра"
    assert fmt(7 * 10**9, "params", "ru") == "7\u00a0000\u00a0000\u00a0000\u00a0параметров"
    assert fmt(1, "params", "ru") == "1\u00a0параметр"
    assert fmt(16, "bpp", "ru") == "16\u00a0байт на параметр"
    assert fmt(2, "bpp", "ru") == "2\u00a0байта на параметр"
    assert fmt(0.516, "bpp", "ru") == "0,516\u00a0байта на параметр"
    assert fmt(16, "bpp", "tr") == "parametre başına 16\u00a0bayt"
    assert fmt(20, "hours", "fa") == "۲۰\u00a0ساعت"
    # the plural follows the number as shown: 1.04 hours rounds to "1"
    assert fmt(1.04, "hours", "en", 1) == "1\u00a0hour"


def test_rounding_is_half_up():
    assert fmt(43.25, "number", "en", 1) == "43.3"
    assert fmt(0.125, "number", "en") == "0.13"
    assert fmt(2.5, "number", "en", 0) == "3"
    assert fmt(Decimal("2.675"), "number", "en") == "2.68"
    assert fmt(Decimal("0.745"), "USD", "en") == "$0.75"
    assert fmt(-2.5, "number", "en", 0) == "-3"  # away from zero
    assert fmt(0.955, "percent", "en") == "96%"


def test_trailing_zeros_dropped_except_money():
    assert fmt(2**30 * 14, "GiB", "en") == "14\u00a0GiB"
    assert fmt(1.50, "number", "en") == "1.5"
    assert fmt(Decimal("14.00"), "number", "en") == "14"
    assert fmt(Decimal("14"), "USD", "en") == "$14.00"
    assert fmt(Decimal("14.8"), "USD", "en", 0) == "$15"
    assert fmt(0.955, "percent", "en", 1) == "95.5%"


def test_negative_and_zero():
    assert fmt(-0.04, "number", "en", 1) == "0"  # never "-0"
    assert fmt(Decimal("-0"), "number", "fa") == "۰"
    assert fmt(-1234.5, "number", "en") == "-1,234.5"
    assert fmt(Decimal("-1234.5"), "USD", "en") == "-$1,234.50"
    assert fmt(-2**30, "GiB", "tr") == "-1\u00a0GiB"
    assert fmt(0, "GiB", "en") == "0\u00a0GiB"


@pytest.mark.parametrize(
    "bad", [float("nan"), float("inf"), float("-inf"), Decimal("NaN"), Decimal("Infinity"), Decimal("sNaN")]
)
def test_nan_and_inf_raise(bad):
    for unit in UNITS:
        with pytest.raises(ValueError):
            fmt(bad, unit, "en")


def test_bad_arguments():
    with pytest.raises(ValueError):
        fmt(1, "furlongs", "en")
    with pytest.raises(ValueError):
        fmt(1, "number", "en", -1)
    with pytest.raises(TypeError):
        fmt("12", "number", "en")
    with pytest.raises(TypeError):
        fmt(True, "number", "en")
    with pytest.raises(TypeError):
        fmt(None, "number", "en")


def test_enum_units_and_locale_spellings():
    assert fmt(16 * 10**9, Unit.GIB, "en") == fmt(16 * 10**9, "GiB", "en")
    assert fmt(16 * 10**9, Unit.GB, "ru") == "16\u00a0ГБ"
    for spelling in ("pt_BR", "pt-BR", "PT", "pt-br"):
        assert fmt(1234.5, "number", spelling) == "1.234,5"
    assert fmt(1234.5, "number", "de") == "1,234.5"  # unknown locale: English
    assert fmt(1234.5, "number", "") == "1,234.5"


def test_fa_uses_only_persian_digits():
    outputs = [fmt(v, u, "fa") for u in UNITS for v in (0, 7, 1234567, 46478379264, Decimal("14.80"), 0.95)]
    for text in outputs:
        digits = [c for c in text if c.isdigit()]
        assert digits and all(c in PERSIAN for c in digits), text
        assert not any("0" <= c <= "9" for c in text), text


def test_fa_latin_units_are_isolated():
    for unit in ("GiB", "GB", "MiB"):
        out = fmt(2**40, unit, "fa")
        assert out.endswith("\u00a0\u2066" + unit + "\u2069")
    for loc in (loc for loc in LOCALES if locale_dir(loc) == "ltr"):
        assert not any(c in ISOLATES for c in fmt(2**40, "GiB", loc))


# --- properties -------------------------------------------------------------------------

finite_values = st.one_of(
    st.integers(min_value=0, max_value=10**40),
    st.floats(min_value=0, allow_nan=False, allow_infinity=False),
    st.decimals(min_value=0, max_value=Decimal("1e30"), allow_nan=False, allow_infinity=False, places=6),
)


def _delocalize(number: str, loc: str) -> Decimal:
    sym = _symbols(loc)
    s = number.translate(str.maketrans(PERSIAN, "0123456789"))
    s = s.replace(sym["group"], "").replace(sym["decimal"], ".")
    return Decimal(s)


@settings(max_examples=400, deadline=None)
@given(value=finite_values, unit=st.sampled_from(UNITS), loc=st.sampled_from(LOCALES),
       digits=st.one_of(st.none(), st.integers(min_value=0, max_value=6)))
def test_any_finite_value_formats(value, unit, loc, digits):
    out = fmt(value, unit, loc, digits)
    assert out and out.strip()
    assert "nan" not in out.lower() and "inf" not in out.lower() and "∞" not in out
    assert "-" not in out and "\u2212" not in out  # non-negative input, no minus (not even "-0")
    digit_chars = [c for c in out if unicodedata.category(c) == "Nd"]
    assert digit_chars
    if loc == "fa":
        assert all(c in PERSIAN for c in digit_chars), out
    else:
        assert all("0" <= c <= "9" for c in digit_chars), out


@settings(max_examples=300, deadline=None)
@given(value=finite_values, loc=st.sampled_from(LOCALES), digits=st.integers(min_value=0, max_value=6))
def test_number_round_trips(value, loc, digits):
    out = fmt(value, "number", loc, digits)
    assert _delocalize(out, loc) == _q(_dec(value), digits)
    assert out == babel_number(value, loc, digits)


def test_huge_values_stay_exact():
    assert fmt(10**200 * 2**30 + 2**29, "GiB", "en").endswith(",000.5\u00a0GiB")
    assert fmt(10**50 + 1, "number", "en").endswith(",001")
