"""Message catalogs: labels, help texts, unit words, choices and error messages.

Catalogs are flat JSON objects in `calc/locales/<locale>.json`, read with importlib.resources
and cached. Texts use `str.format` placeholders (`{field}`, `{max}`); a locale that lacks a key
falls back to English, an unknown locale is English.

Plural forms in messages: a message writes the words that agree with a number as a plural
block beside the number's placeholder, `{seq} {{seq: one токен | few токена | many токенов |
other токена}}` (see i18n/WRITERS.md, "Plural forms"). `t` replaces each block by the form of
the CLDR plural category (`plural_category`) of the number given for that placeholder, for any
placeholder and any number of blocks per message; the doubled braces keep the block plain text
to `str.format`. Unit words (`unit.<unit>` for `calc.fmt`) keep variant keys instead:
`unit.hours.one`, `.few`, `.many`, `.other`, chosen by `fmt` (`lookup(key, locale, category)`);
the bare `unit.<unit>` is the form used when no variant matches (and on its own, e.g. as a
column header).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .errors import Problem

__all__ = [
    "LOCALES", "DEFAULT_LOCALE", "RTL_LOCALES", "SEARCH_LANGS", "t", "error_message",
    "locale_dir", "normalize_locale", "catalog", "lookup", "plural_category",
    "PLURAL_CATEGORIES",
]

LOCALES: tuple[str, ...] = ("en", "tr", "pt", "ru", "fa")
DEFAULT_LOCALE = "en"
RTL_LOCALES = frozenset({"fa"})

#: lunr languages of each locale's search index (the site's search; site_build/search.py). English
#: is in every list, for the Latin words every page has (LoRA, GPU, model names): with two or
#: more languages the search builds lunr.multiLanguage, whose trimmer keeps the word characters
#: of all of them. lunr has no Persian: `fa` uses Arabic, with the Persian letters added.
SEARCH_LANGS: dict[str, tuple[str, ...]] = {
    "en": ("en",),
    "tr": ("en", "tr"),
    "pt": ("en", "pt"),
    "ru": ("en", "ru"),
    "fa": ("en", "ar"),
}

# CLDR plural categories each locale distinguishes for cardinal numbers.
PLURAL_CATEGORIES: dict[str, tuple[str, ...]] = {
    "en": ("one", "other"),
    "tr": ("one", "other"),
    "pt": ("one", "other"),
    "ru": ("one", "few", "many", "other"),
    "fa": ("one", "other"),
}

FSI, PDI = "\u2068", "\u2069"

# Problem params that are numbers (Problem.of stores every param as text): shown with fmt.
_NUMERIC_PARAMS = frozenset({"max", "min", "line", "column", "n", "limit"})
# Params that echo what the reader typed or a JSON key: isolated in right-to-left messages.
_VERBATIM_PARAMS = frozenset({"value", "key", "choices"})
_NUMBER_RE = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


@lru_cache(maxsize=None)
def normalize_locale(locale: object) -> str:
    """`pt_BR`, `pt-BR`, `PT` -> `pt`; anything unknown (or empty) -> `en`."""
    if not isinstance(locale, str) or not locale:
        return DEFAULT_LOCALE
    base = locale.replace("_", "-").split("-", 1)[0].lower()
    return base if base in LOCALES else DEFAULT_LOCALE


def locale_dir(locale: str) -> str:
    """Text direction of a locale: "rtl" for Persian, "ltr" otherwise."""
    return "rtl" if normalize_locale(locale) in RTL_LOCALES else "ltr"


@lru_cache(maxsize=None)
def catalog(locale: str) -> dict[str, str]:
    """The catalog of one locale as stored (no fallback). Unknown locale: English."""
    loc = normalize_locale(locale)
    text = (resources.files(__package__) / "locales" / f"{loc}.json").read_text(encoding="utf-8")
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"calc/locales/{loc}.json is not a JSON object")
    return data


def plural_category(number: str, locale: str) -> str:
    """CLDR cardinal plural category of a number as displayed, given in ASCII (`1,234.5`).

    The visible fraction digits count (1 vs 1.0), as in CLDR. For Portuguese the site follows
    common Brazilian usage ("0 horas", "1,5 horas") rather than CLDR's `i = 0..1`.
    """
    s = number.replace(",", "").lstrip("+-")
    int_part, _, frac = s.partition(".")
    try:
        i = int(int_part or "0")
    except ValueError:
        return "other"
    v = len(frac)
    loc = normalize_locale(locale)
    if loc == "ru":
        if v:
            return "other"
        if i % 10 == 1 and i % 100 != 11:
            return "one"
        if 2 <= i % 10 <= 4 and not 12 <= i % 100 <= 14:
            return "few"
        return "many"
    if loc == "tr":  # n = 1 (1.0 too)
        return "one" if i == 1 and not frac.strip("0") else "other"
    if loc == "fa":  # i = 0 or n = 1
        return "one" if i == 0 or (i == 1 and not frac.strip("0")) else "other"
    return "one" if i == 1 and v == 0 else "other"  # en, pt


def lookup(key: str, locale: str, category: str | None = None) -> str:
    """The text of `key` (its plural variant `category` if the catalog has one), with English
    as the fallback. A key no catalog has is returned as is."""
    loc = normalize_locale(locale)
    for cat_loc in (loc, DEFAULT_LOCALE) if loc != DEFAULT_LOCALE else (loc,):
        cat = catalog(cat_loc)
        if key in cat:
            if category is not None:
                variant = cat.get(f"{key}.{category}")
                if variant is not None:
                    return variant
            return cat[key]
    return key


class _Params(dict):
    """format_map mapping that leaves an unknown placeholder visible instead of failing."""

    def __missing__(self, name: str) -> str:
        return "{" + name + "}"


@dataclass(frozen=True)
class Counted:
    """A placeholder's value given as ready-made text (a figure with its unit, an HTML
    fragment, an escaped marker) together with the number it stands for, so that `t` inserts
    `text` as it is and still chooses the plural forms that agree with it. `number` is the
    number as displayed, in ASCII (`1,234.5`), as `plural_category` reads it."""

    text: str
    number: str

    def __str__(self) -> str:
        return self.text


#: `{{name: category form | category form | ...}}`; a form may hold `{placeholders}`.
_PLURAL_BLOCK = re.compile(
    r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:((?:[^{}]|\{[A-Za-z_][A-Za-z0-9_]*\})*)\}\}")
_CATEGORY_NAMES = frozenset({"zero", "one", "two", "few", "many", "other"})
#: The number whose category stands for a count the message is not told (a placeholder given
#: as plain text): a general plural, "tokens" / "токенов" / "horas".
_GENERAL_COUNT = "5"


def plural_forms(body: str) -> dict[str, str]:
    """The forms of one plural block's body (`one токен | few токена`), by category. An
    alternative that does not start with a category name is ignored (the catalog tests
    reject it)."""
    forms: dict[str, str] = {}
    for alternative in body.split("|"):
        category, _, form = alternative.strip().partition(" ")
        if category in _CATEGORY_NAMES:
            forms.setdefault(category, form.strip())
    return forms


def _choose(forms: dict[str, str], category: str) -> str:
    if category in forms:
        return forms[category]
    return forms.get("other", next(iter(forms.values()), ""))


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def _number_text(value: int | float | Decimal, loc: str) -> str:
    from .fmt import fmt

    return fmt(value, "number", loc)


def _resolve_plurals(text: str, numbers: dict[str, str], loc: str) -> str:
    """Each plural block of `text` replaced by the form its placeholder's number selects."""

    def form(match: re.Match[str]) -> str:
        number = numbers.get(match.group(1), _GENERAL_COUNT)
        return _choose(plural_forms(match.group(2)), plural_category(number, loc))

    return _PLURAL_BLOCK.sub(form, text)


def t(key: str, locale: str, /, **params: object) -> str:
    """The text of `key` in `locale`, with `{name}` placeholders filled from `params`.

    Numbers (int, float, Decimal) are written with `fmt(..., "number", locale)`; a `Counted`
    is inserted as its text. Each plural block `{{name: one ... | other ...}}` takes the form
    of the CLDR category of the number given for `name` (a number or a `Counted`); for a
    placeholder given as plain text, or not given, the form of a general plural (the category
    of 5: `many` in Russian, `other` elsewhere).
    """
    loc = normalize_locale(locale)
    from .fmt import number_ascii

    values: dict[str, object] = {}
    numbers: dict[str, str] = {}
    for name, value in params.items():
        if _is_number(value):
            values[name] = _number_text(value, loc)  # type: ignore[arg-type]
            numbers[name] = number_ascii(value)  # type: ignore[arg-type]
        elif isinstance(value, Counted):
            values[name] = value.text
            numbers[name] = value.number
        else:
            values[name] = value
    text = lookup(key, loc)
    if "{{" in text:
        text = _resolve_plurals(text, numbers, loc)
    if not values or "{" not in text:
        return text
    return text.format_map(_Params(values))


def _numeric_param(text: str, loc: str) -> str | Counted:
    """A number stored as text in a Problem, written for the locale (with the number, for the
    message's plural forms); other text unchanged."""
    from .fmt import fmt, number_ascii

    if not _NUMBER_RE.fullmatch(text.strip()):
        return text
    try:
        d = Decimal(text.strip())
    except InvalidOperation:
        return text
    if not d.is_finite():
        return text
    if d == d.to_integral_value():
        return Counted(fmt(int(d), "number", loc), number_ascii(int(d)))
    digits = max(0, -d.normalize().as_tuple().exponent)
    return Counted(fmt(d, "number", loc, digits), number_ascii(d, digits))


def error_message(problem: Problem, locale: str) -> str:
    """The message of one Problem: `error.<code>` with its params and the field's label."""
    loc = normalize_locale(locale)
    field_key = f"field.{problem.field}"
    label = lookup(field_key, loc)
    if label == field_key:  # a field without a label: show its name
        label = problem.field
    key = f"error.{problem.code}"
    if key not in catalog(DEFAULT_LOCALE):
        key = "error.generic"
    rtl = locale_dir(loc) == "rtl"
    params: dict[str, object] = {}
    for name, value in problem.params:
        if name == "field":
            continue
        if isinstance(value, str):
            if name in _NUMERIC_PARAMS:
                value = _numeric_param(value, loc)
            elif rtl and name in _VERBATIM_PARAMS:
                value = FSI + value + PDI
        params[name] = value
    params["field"] = label
    return t(key, loc, **params)
