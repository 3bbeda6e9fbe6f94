"""Plural forms per placeholder, the bare byte unit, prose multipliers and ranges.

The oracle for plural categories is Babel's CLDR data (`babel.core.Locale(loc).plural_form`),
never calc's `plural_category`. One deliberate difference, documented in calc.i18n and pinned
by tests/unit/test_fmt.py ("0 horas"): for Portuguese the site follows the common Brazilian
usage of writing the singular only for exactly one ("0 horas", "1,5 horas"), which is CLDR's
rule for European Portuguese; CLDR's pt (= pt_BR) rule `i = 0..1` would give "0 hora" and
"1,5 hora". So the Portuguese oracle is Babel's `pt_PT` rule.

The catalog syntax under test (i18n/WRITERS.md, "Plural forms"): words that agree with a
number are written beside its placeholder as `{{name: one токен | few токена | many токенов |
other токена}}`. This file parses that syntax itself (`BLOCK`, `forms`) and builds the expected
text from the raw catalog and Babel's category; only the number formatting (`calc.fmt`, tested
against Babel in test_fmt.py) is taken from calc.

The expected strings of the range and byte-unit tests are written by hand from each
language's typography, not copied from the code's output:
- en: closed-up en dash, "20–30%" (Chicago Manual of Style 6.78; "%" closed up as in CLDR en);
- ru: en dash without spaces and the sign once after the last number, "20–30 %" (Мильчин,
  «Справочник издателя и автора»: the % sign after a range is written once, after the second
  number, separated by a no-break space as in CLDR ru); multiplier "в 6–8 раз", the noun
  agreeing with the nearest (upper) number;
- tr: the percent sign before the number (TDK), once: "%20–30"; "6–8 kat";
- pt: "de 6 a 8 vezes"; percent sign repeated on each number, "de 20% a 30%" (Dad Squarisi,
  Correio Braziliense: "Os descontos vão de 10% a 50%", "nunca entre 5 e 7%");
- fa: «۶ تا ۸ برابر», «۲۰ تا ۳۰٪» with Persian digits.
"""

from __future__ import annotations

import json
import re
import string
from decimal import Decimal
from pathlib import Path

import pytest
from babel.core import Locale

from calc.errors import Problem
from calc.fmt import LOCALES, fmt, fmt_range
from calc.i18n import Counted, error_message, t

LOCALE_DIR = Path(__file__).resolve().parents[2] / "calc" / "locales"
ORACLE = {"en": "en", "tr": "tr", "pt": "pt_PT", "ru": "ru", "fa": "fa"}
NUMBERS = (0, 1, 2, 5, 11, 21, 22, 1024, Decimal("1.5"))
NBSP = "\u00a0"

# Placeholders that the callers fill with numbers (calc.render_accuracy, calc.__main__,
# build_tables, calc.i18n.error_message): counts, limits, positions.
NUMERIC = frozenset({"n", "max", "min", "line", "column", "limit", "rank", "seq", "batch", "steps"})

# Messages where a numeric placeholder is followed by a counted noun (or words agreeing with
# it) in languages that inflect: en, pt, ru. Turkish and Persian write the noun in the
# singular after any numeral ("21 token", «۲۱ توکن»), so they need no forms.
NEEDS_FORMS = {
    "ui.cards_needed": {"en": "n", "pt": "n"},  # Russian "GPU" is indeclinable
    "accuracy.settings.tokens": {"en": "seq", "pt": "seq", "ru": "seq"},
    "accuracy.summary.published": {"en": "n", "pt": "n", "ru": "n"},
    "accuracy.summary.truth": {"en": "n", "pt": "n", "ru": "n"},
    # ru writes "Шагов обучения в каждом запуске: {steps}", which agrees with any number
    "accuracy.note.truth": {"en": "steps", "pt": "steps"},
    "error.too_long": {"en": "max", "pt": "max", "ru": "max"},
    "error.json_too_deep": {"en": "max", "pt": "max", "ru": "max"},
}

BLOCK = re.compile(r"\{\{\s*(\w+)\s*:((?:[^{}]|\{\w+\})*)\}\}")
CATEGORIES = ("zero", "one", "two", "few", "many", "other")


def raw(loc: str) -> dict[str, str]:
    return json.loads((LOCALE_DIR / f"{loc}.json").read_text(encoding="utf-8"))


EN = raw("en")
CATALOGS = {loc: raw(loc) for loc in LOCALES}


def babel_category(number: int | Decimal, loc: str) -> str:
    return Locale.parse(ORACLE[loc]).plural_form(number)


def forms(body: str) -> dict[str, str]:
    """`one токен | few токена` -> {"one": "токен", "few": "токена"}; strict."""
    result: dict[str, str] = {}
    for alternative in body.split("|"):
        words = alternative.strip().split(None, 1)
        assert words, f"empty alternative in {body!r}"
        assert words[0] in CATEGORIES, f"{words[0]!r} is not a plural category, in {body!r}"
        assert words[0] not in result, f"{words[0]!r} twice in {body!r}"
        result[words[0]] = words[1] if len(words) > 1 else ""
    return result


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def message_text(key: str, loc: str) -> str:
    return CATALOGS[loc].get(key, EN[key])


def numeric_messages() -> list[str]:
    """Every message (not a unit word: those are fmt's, below) with a numeric placeholder."""
    keys = []
    for key, text in EN.items():
        if key.startswith("unit.") or key.rpartition(".")[2] in CATEGORIES:
            continue
        if placeholders(text) & NUMERIC:
            keys.append(key)
    return keys


MESSAGES = numeric_messages()


def test_the_numeric_messages_are_found():
    # a guard that the scan above sees the messages it should
    assert {"accuracy.settings.tokens", "error.json_too_deep", "ui.cards_needed", "table.cards_of",
            "error.json_syntax", "accuracy.note.truth"} <= set(MESSAGES)


# --- the catalogs' plural blocks --------------------------------------------------------------


@pytest.mark.parametrize("loc", LOCALES)
def test_blocks_are_well_formed_and_complete(loc):
    """Each block names a placeholder of its message, uses only categories the locale has,
    and gives every category that Babel assigns to the test numbers, and `other`."""
    tags = set(Locale.parse(ORACLE[loc]).plural_form.tags) | {"other"}
    used = {babel_category(x, loc) for x in NUMBERS} | {"other"}
    for key, text in CATALOGS[loc].items():
        outside = BLOCK.sub("", text)
        assert "{{" not in outside and "}}" not in outside, (loc, key, "malformed plural block")
        for name, body in BLOCK.findall(text):
            f = forms(body)
            assert name in placeholders(outside), (loc, key, f"block on {{{name}}}, not in the message")
            assert set(f) <= tags, (loc, key, set(f) - tags)
            assert used <= set(f), (loc, key, "missing", used - set(f))


@pytest.mark.parametrize("key", sorted(NEEDS_FORMS))
def test_counted_nouns_have_forms(key):
    for loc, name in NEEDS_FORMS[key].items():
        names = [n for n, _ in BLOCK.findall(CATALOGS[loc][key])]
        assert name in names, (loc, key, f"needs a plural block on {{{name}}}")


@pytest.mark.parametrize("loc", LOCALES)
def test_only_unit_words_have_variant_keys(loc):
    """`<key>.one` variant keys are for fmt's unit words only; t() reads plural blocks."""
    for key in CATALOGS[loc]:
        base, _, last = key.rpartition(".")
        if last in CATEGORIES and base in EN:
            assert base.startswith("unit."), (loc, key, "use a plural block {{name: one ... | other ...}}")


# --- every numeric message, every locale, the test numbers ------------------------------------


def expected(key: str, loc: str, params: dict[str, object]) -> str:
    text = message_text(key, loc)

    def choose(m: re.Match[str]) -> str:
        f = forms(m.group(2))
        return f[babel_category(params[m.group(1)], loc)]  # type: ignore[arg-type]

    text = BLOCK.sub(choose, text)
    shown = {k: fmt(v, "number", loc) if isinstance(v, (int, Decimal)) else v for k, v in params.items()}
    return text.format(**shown)


@pytest.mark.parametrize("loc", LOCALES)
@pytest.mark.parametrize("key", MESSAGES)
def test_every_numeric_message_takes_the_cldr_form(key, loc):
    names = placeholders(EN[key])
    numeric = sorted(names & NUMERIC)
    for varied in numeric:
        for background in (1, 7):  # the other numbers sit in another category, or the same
            for x in NUMBERS:
                params: dict[str, object] = {n: f"<{n}>" for n in names - NUMERIC}
                params.update({n: background for n in numeric})
                params[varied] = x
                out = t(key, loc, **params)
                assert "{" not in out and "}" not in out, (key, loc, out)
                assert out == expected(key, loc, params), (key, loc, varied, x)


WORDED = ("params", "hours", "bpp", "bytes", "times", "x", "billions", "GiB", "GB", "MiB")


@pytest.mark.parametrize("loc", LOCALES)
@pytest.mark.parametrize("unit", WORDED)
def test_unit_words_take_the_cldr_form(unit, loc):
    """fmt's unit words: the variant key of Babel's category (or the bare key)."""
    cat = CATALOGS[loc]
    bytes_scale = {"GiB": 2**30, "GB": 10**9, "MiB": 2**20}.get(unit)
    for x in NUMBERS:
        if bytes_scale and isinstance(x, Decimal):
            continue  # byte units take integer bytes
        value = x * bytes_scale if bytes_scale else x
        word = cat.get(f"unit.{unit}.{babel_category(x, loc)}", cat[f"unit.{unit}"])
        number = fmt(x, "number", loc)
        want = word.replace("{n}", number) if "{n}" in word else number + NBSP + word
        out = fmt(value, unit, loc, 2)
        if loc == "fa" and word.isascii() and "{n}" not in word:
            want = number + NBSP + "\u2066" + word + "\u2069"
        assert out == want, (unit, loc, x)


# --- by hand ----------------------------------------------------------------------------------


def test_russian_by_hand():
    tok = lambda n: t("accuracy.settings.tokens", "ru", seq=n, batch=4)  # noqa: E731
    assert tok(1) == "1 токен × микробатч 4"
    assert tok(2) == "2 токена × микробатч 4"
    assert tok(5) == "5 токенов × микробатч 4"
    assert tok(11) == "11 токенов × микробатч 4"
    assert tok(21) == "21 токен × микробатч 4"
    assert tok(1024) == "1\u00a0024 токена × микробатч 4"
    assert tok(8192) == "8\u00a0192 токена × микробатч 4"
    assert tok(Decimal("1.5")) == "1,5 токена × микробатч 4"
    summary = dict(p_median="a", p_worst="b", d_median="c", d_worst="d")
    assert t("accuracy.summary.published", "ru", n=21, **summary).startswith(
        "На 21 опубликованном запуске медианная")
    assert t("accuracy.summary.published", "ru", n=6, **summary).startswith(
        "На 6 опубликованных запусках медианная")
    deep = lambda n: error_message(Problem.of("config", "json_too_deep", max=str(n)), "ru")  # noqa: E731
    assert "(больше 21 уровня)" in deep(21)
    assert "(больше 64 уровней)" in deep(64)
    assert "(больше 22 уровней)" in deep(22)


def test_other_languages_by_hand():
    assert t("ui.cards_needed", "en", n=1) == "1 GPU with ZeRO-3/FSDP"
    assert t("ui.cards_needed", "en", n=21) == "21 GPUs with ZeRO-3/FSDP"
    assert t("ui.cards_needed", "pt", n=1) == "1 GPU com ZeRO-3/FSDP"
    assert t("ui.cards_needed", "pt", n=0) == "0 GPUs com ZeRO-3/FSDP"
    assert t("accuracy.settings.tokens", "en", seq=1, batch=2) == "1 token × batch of 2"
    assert t("accuracy.settings.tokens", "pt", seq=1024, batch=1) == "1.024 tokens × micro-batch de 1"
    summary = dict(p_median="a", p_worst="b", d_median="c", d_worst="d")
    assert t("accuracy.summary.published", "pt", n=1, **summary).startswith("No 1 treino publicado,")
    assert t("accuracy.summary.published", "pt", n=6, **summary).startswith("Nos 6 treinos publicados,")
    assert t("accuracy.settings.tokens", "tr", seq=21, batch=4) == "21 token × 4 örneklik mikro yığın"
    too_long = error_message(Problem.of("config", "too_long", max="1"), "en")
    assert too_long.endswith("at most 1 character.")


def test_counted_and_text_values():
    # a Counted value is inserted as its text and chooses by its number
    out = t("accuracy.settings.tokens", "ru", seq=Counted("<b>21</b>", "21"), batch=Counted("<b>4</b>", "4"))
    assert out == "<b>21</b> токен × микробатч <b>4</b>"
    # text without a number (a marker to be replaced later): the general plural
    assert t("accuracy.settings.tokens", "ru", seq="@", batch="@") == "@ токенов × микробатч @"
    assert t("accuracy.settings.tokens", "en", seq="@", batch="@") == "@ tokens × batch of @"
    assert t("ui.cards_needed", "en", n="3") == "3 GPUs with ZeRO-3/FSDP"
    # no parameters at all: blocks resolved, placeholders left visible
    assert t("accuracy.settings.tokens", "ru") == "{seq} токенов × микробатч {batch}"


def test_the_accuracy_pages_sentences_agree_with_their_figures():
    """calc.render_accuracy puts figures (HTML) into its sentences: the plural form is still
    the one of the figure's number (before, these took the general plural: "4 микробатчей")."""
    import re

    from calc.render_accuracy import _counted, _tpl

    plain = lambda html: re.sub(r"<[^>]+>", "", html)  # noqa: E731
    accum = lambda n: plain(_tpl("accuracy.settings.accum", "ru", n=_counted("grad_accum", n, "ru")))  # noqa: E731
    assert accum(4) == "накопление градиентов за 4 микробатча"
    assert accum(5) == "накопление градиентов за 5 микробатчей"
    assert accum(21) == "накопление градиентов за 21 микробатч"
    tokens = plain(_tpl("accuracy.settings.tokens", "ru", seq=_counted("seq", 21, "ru"), batch="4"))
    assert tokens == "21 токен × микробатч 4"
    assert plain(_tpl("accuracy.settings.accum", "en", n=_counted("grad_accum", 1, "en"))) == \
        "gradients accumulated over 1 micro-batch"


# --- the bare byte unit and prose multipliers ------------------------------------------------


def test_bare_bytes():
    assert fmt(2, "bytes", "ru") == "2\u00a0байта"
    assert fmt(16, "bytes", "ru") == "16\u00a0байт"
    assert fmt(1, "bytes", "ru") == "1\u00a0байт"
    assert fmt(Decimal("0.516"), "bytes", "ru") == "0,516\u00a0байта"
    assert fmt(2, "bytes", "en") == "2\u00a0bytes"
    assert fmt(1, "bytes", "en") == "1\u00a0byte"
    assert fmt(Decimal("0.516"), "bytes", "pt") == "0,516\u00a0bytes"
    assert fmt(1, "bytes", "pt") == "1\u00a0byte"
    assert fmt(16, "bytes", "tr") == "16\u00a0bayt"
    assert fmt(16, "bytes", "fa") == "۱۶\u00a0بایت"
    # the table/heading unit keeps "per parameter"
    assert fmt(2, "bpp", "ru") == "2\u00a0байта на параметр"


def test_prose_multipliers():
    assert fmt(4, "times", "ru") == "в\u00a04\u00a0раза"
    assert fmt(5, "times", "ru") == "в\u00a05\u00a0раз"
    assert fmt(Decimal("1.5"), "times", "ru") == "в\u00a01,5\u00a0раза"
    assert fmt(4, "times", "pt") == "4\u00a0vezes"
    assert fmt(4, "times", "tr") == "4\u00a0kat"
    assert fmt(4, "times", "fa") == "۴\u00a0برابر"
    assert fmt(4, "times", "en") == "4\u00a0times"
    assert fmt(4, "x", "ru") == "4×"  # the table symbol is unchanged


# --- ranges -----------------------------------------------------------------------------------


def test_percent_ranges():
    assert fmt_range(0.2, 0.3, "percent", "ru") == "20–30\u00a0%"
    assert fmt_range(0.2, 0.3, "percent", "en") == "20–30%"
    assert fmt_range(0.2, 0.3, "percent", "tr") == "%20–30"
    assert fmt_range(0.2, 0.3, "percent", "pt") == "de 20% a 30%"
    assert fmt_range(0.2, 0.3, "percent", "fa") == "۲۰ تا ۳۰٪"


def test_multiplier_ranges():
    assert fmt_range(6, 8, "times", "ru") == "в\u00a06–8\u00a0раз"
    assert fmt_range(2, 3, "times", "ru") == "в\u00a02–3\u00a0раза"
    assert fmt_range(6, 8, "times", "tr") == "6–8\u00a0kat"
    assert fmt_range(6, 8, "times", "pt") == "de 6 a 8\u00a0vezes"
    assert fmt_range(6, 8, "times", "fa") == "۶ تا ۸\u00a0برابر"
    assert fmt_range(6, 8, "times", "en") == "6–8\u00a0times"
    assert fmt_range(6, 8, "x", "en") == "6–8×"
    assert fmt_range(6, 8, "x", "pt") == "de 6× a 8×"


def test_ranges_of_words_and_memory():
    assert fmt_range(2, 4, "hours", "ru") == "2–4\u00a0часа"
    assert fmt_range(5, 6, "hours", "ru") == "5–6\u00a0часов"
    assert fmt_range(20, 21, "hours", "ru") == "20–21\u00a0час"
    assert fmt_range(Decimal("0.5"), 1, "hours", "pt") == "de 0,5 a 1\u00a0hora"
    assert fmt_range(1, 2, "hours", "en") == "1–2\u00a0hours"
    assert fmt_range(20 * 10**9, 30 * 10**9, "GB", "ru") == "20–30\u00a0ГБ"
    assert fmt_range(20 * 10**9, 30 * 10**9, "GB", "pt") == "de 20 a 30\u00a0GB"
    assert fmt_range(20 * 10**9, 30 * 10**9, "GB", "fa") == "۲۰ تا ۳۰\u00a0\u2066GB\u2069"
    assert fmt_range(27, 32, "billions", "fa") == "۲۷ تا ۳۲\u00a0میلیارد"
    assert fmt_range(2, 4, "bytes", "ru") == "2–4\u00a0байта"


def test_range_edges():
    # bounds that round to the same figure are that figure
    assert fmt_range(0.2, 0.2004, "percent", "ru") == "20\u00a0%"
    assert fmt_range(1, 1, "hours", "ru") == "1\u00a0час"
    with pytest.raises(ValueError):
        fmt_range(0.3, 0.2, "percent", "en")
    with pytest.raises(ValueError):
        fmt_range(-1, 2, "number", "en")
    with pytest.raises(ValueError):
        fmt_range(1, 2, "furlongs", "en")
    with pytest.raises(ValueError):
        fmt_range(1, float("nan"), "number", "en")
    with pytest.raises(TypeError):
        fmt_range("1", 2, "number", "en")
