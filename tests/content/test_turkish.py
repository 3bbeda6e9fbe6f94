"""No Turkish suffix is glued to a figure.

A Turkish suffix follows the sound of the word it is attached to: %95'i but %90'ı, 16 GiB'lık
but 12 GiB'lik ("on iki gibibayt"). A figure that comes from calc (a `{{ ... }}` macro on a
page, a `{placeholder}` in a catalog message) changes with the data and the locale's number
format, so a suffix written after it is right for today's number only and wrong as soon as the
number changes. The suffix goes on a word instead: "{{ fig }} GB bellek", "{{ fig }} değerine",
"{max} değerini", "{line}. satır" (an ordinal dot is not a suffix).

Flagged, on the Turkish pages (docs/*.tr.md): an apostrophe (' or ’) or a letter right after
the `}}` that closes a template expression. In the Turkish catalog (calc/locales/tr.json): an
apostrophe or a letter right after a `{placeholder}` in any message. The one exception is a unit
symbol that belongs to the number itself, in the unit patterns listed in UNIT_SYMBOLS ("{n}B":
7B, an English abbreviation read as "yedi milyar", not a suffix).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.tr.md"))
CATALOG = ROOT / "calc" / "locales" / "tr.json"

APOSTROPHES = "'\u2019"  # the typewriter apostrophe and the typographic one (’)
#: A template expression; `{% %}` and `{## ##}` print nothing, so nothing can be glued to them.
MACRO = re.compile(r"\{\{.*?\}\}", re.S)
#: A catalog placeholder such as {n}, {field}, {p_median}.
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
#: What a glued suffix looks like from its first character on (for the failure message).
SUFFIX = re.compile(r"['\u2019]?[^\W\d_]*")
#: Catalog messages in which a letter after the placeholder is a unit symbol, not a suffix.
UNIT_SYMBOLS = {"unit.billions": "{n}B"}


def glued(ch: str) -> bool:
    """Would this character, right after a figure, start a suffix glued to it?"""
    return ch in APOSTROPHES or ch.isalpha()


def page_problems(text: str) -> list[tuple[int, str]]:
    """(line, offending text) for every template expression with a suffix glued to it; the
    line is the one where the expression ends (where the suffix is)."""
    found = []
    for m in MACRO.finditer(text):
        end = m.end()
        if end < len(text) and glued(text[end]):
            suffix = SUFFIX.match(text, end).group() or text[end]
            found.append((text.count("\n", 0, end) + 1, m.group() + suffix))
    return found


def message_problems(key: str, value: str) -> list[str]:
    """The offending texts (placeholder + suffix) in one catalog message."""
    if UNIT_SYMBOLS.get(key) == value:
        return []
    found = []
    for m in PLACEHOLDER.finditer(value):
        end = m.end()
        if end < len(value) and glued(value[end]):
            found.append(m.group() + (SUFFIX.match(value, end).group() or value[end]))
    return found


def catalog_problems(raw: str) -> list[tuple[int, str, str]]:
    """(line, key, offending text) for every message of a catalog file's text."""
    messages = json.loads(raw, object_pairs_hook=list)
    lines = raw.splitlines()
    found = []
    for key, value in messages:
        if not isinstance(value, str):
            continue
        quoted = json.dumps(key, ensure_ascii=False)
        line = next((i for i, text in enumerate(lines, 1) if text.lstrip().startswith(quoted)), 0)
        found += [(line, key, bad) for bad in message_problems(key, value)]
    return found


def test_the_pages_are_there():
    assert len(PAGES) >= 9, PAGES


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_suffix_glued_to_a_macro_figure(page):
    problems = page_problems(page.read_text(encoding="utf-8"))
    rel = page.relative_to(ROOT)
    assert not problems, "a suffix glued to a figure (write it on a word):\n" + "\n".join(
        f"{rel}:{line}: {bad}" for line, bad in problems)


def test_no_suffix_glued_to_a_placeholder():
    problems = catalog_problems(CATALOG.read_text(encoding="utf-8"))
    rel = CATALOG.relative_to(ROOT)
    assert not problems, "a suffix glued to a placeholder (write it on a word):\n" + "\n".join(
        f"{rel}:{line}: {key}: {bad}" for line, key, bad in problems)


# --- the checks themselves, on small strings with and without the fault ---------------------

@pytest.mark.parametrize("text, expected", [
    # faults: straight and typographic apostrophes, a suffix without apostrophe, Turkish letters
    ("yaklaşık {{ num(C.UNIFIED_USABLE, \"percent\") }}'i", [(1, "{{ num(C.UNIFIED_USABLE, \"percent\") }}'i")]),
    ("{{ card(\"t4\", \"memory\") }}’lık bir kart", [(1, "{{ card(\"t4\", \"memory\") }}’lık")]),
    ("{{ num(2048) }}lik dizi", [(1, "{{ num(2048) }}lik")]),
    ("{{ est(model=\"x\") }}ü aşar", [(1, "{{ est(model=\"x\") }}ü")]),
    ("{{ num(16) }}'", [(1, "{{ num(16) }}'")]),
    # the line is where the expression ends, here on the third line of the page
    ("Bir\n{{ est(model=\"llama-3.1-8b\",\n  method=\"qlora\") }}'dir.",
     [(3, "{{ est(model=\"llama-3.1-8b\",\n  method=\"qlora\") }}'dir")]),
    # two faults on one line, one good figure between them
    ("{{ a }}'ya, {{ b }} GB ve {{ c }}’ye", [(1, "{{ a }}'ya"), (1, "{{ c }}’ye")]),
    # no fault: the suffix is on a word, or punctuation / a space / a figure follows
    ("{{ num(16) }} GB bellek", []),
    ("yaklaşık {{ rot(\"lora\", 8) }} değerine", []),
    ("{{ num(7, \"billions\") }}–{{ num(8, \"billions\") }} parametreli", []),
    ("“{{ t(\"ui.advanced\") }}” bölümünde, {{ num(1) }}. adımda ({{ num(2) }}); {{ num(3) }}:", []),
    ("{% set ex = dict(a=1) %}ve {## not ##}de", []),
    ("GPU'ya, BF16'da, NF4'te", []),
])
def test_the_page_check_itself(text, expected):
    assert page_problems(text) == expected


@pytest.mark.parametrize("key, value, expected", [
    ("a", "{n}'lik bir kart", ["{n}'lik"]),
    ("a", "{memory}’lık bellek", ["{memory}’lık"]),
    ("a", "{gpu}da {hours}", ["{gpu}da"]),
    ("a", "{n}ü ve {m}'i", ["{n}ü", "{m}'i"]),
    ("table.and_larger", "{cards}'ler", ["{cards}'ler"]),
    ("a", "{n}B", ["{n}B"]),  # the unit-symbol exception is for its own key only
    ("unit.billions", "{n}B", []),
    ("a", "{field}: {line}. satır, {column}. sütunda", []),
    ("a", "{field}, {max} değerini aşamaz", []),
    ("a", "{n} × {card}", []),
    ("a", "{n}×", []),
    ("a", "Özel model’i seçin", []),
])
def test_the_catalog_check_itself(key, value, expected):
    assert message_problems(key, value) == expected


def test_the_catalog_check_names_the_line():
    raw = '{\n  "x.ok": "{n} saat",\n  "x.bad": "{gpu}’da",\n  "unit.billions": "{n}B"\n}\n'
    assert catalog_problems(raw) == [(3, "x.bad", "{gpu}’da")]
