"""A range of two values is one `range()` macro, never two figures joined by hand.

Two figures joined by a dash ("{{ num(7, "billions") }}–{{ num(8, "billions") }}") print the unit
twice ("7B–8B", «20 %–30 %») and follow no locale's convention for ranges; `range(lo, hi, unit)`
(site_build/run_macros.py, `calc.fmt.fmt_range`) writes the range once, the way each language
writes it: "7–8B", «20–30 %», "de 7B a 8B", «۲۰ تا ۳۰٪».

Flagged, on every page (docs/*.md, every locale):

- a dash between two template expressions on the same line: `}}–{{`, `}} – {{`, `}}-{{`,
  `}} - {{`, `}}—{{` (an unspaced em dash). A spaced em dash is a sentence dash, not a range
  (Russian «{{ model_name(...) }} — {{ params(...) }}»: "the model has so many parameters"), and a
  hyphen at the start of the next line is a list item, so neither counts;
- the locale's range word between two `num()` figures with literal values in the same unit, which
  `range()` can always replace: English "to" ("{{ num(27, "billions") }} to {{ num(32, "billions")
  }}"), Russian «от … до …», Portuguese "de … a …". A change from one value to another ("from
  14.9 GiB to 3.8 GiB", "passar de 16 para 64") is two figures by meaning and is not a range: it
  is written with other words ("from", "maps … to", "para") or with engine figures (`est`,
  `rot`), which this check leaves alone; so are two equal values or a falling pair ("the query
  projection maps 4096 to 4096"), which no range is.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md"))

#: Two template expressions joined by a dash on one line.
DASHED = re.compile(r"\}\}(?:[ \t]*[\u2013-][ \t]*|\u2014)\{\{")
#: A `num()` figure with a literal value: its value and its unit ("" for the default unit).
def num_figure(bound: str) -> str:
    return (r"\{\{\s*num\(\s*(?P<%s>[0-9.e]+)\s*(?:,\s*[\"'](?P<%s_unit>\w+)[\"']\s*)?\)\s*\}\}"
            % (bound, bound))


FIRST, SECOND = num_figure("lo"), num_figure("hi")
#: Range words between two such figures, by locale ("" is English, the pages without a suffix).
WORDED = {
    "": re.compile(r"(?<![A-Za-z])(?<!from )(?<!maps )(?<!map )" + FIRST + r"\s+to\s+" + SECOND),
    "ru": re.compile(r"(?i:\bот)\s+" + FIRST + r"\s+до\s+" + SECOND),
    "pt": re.compile(r"(?i:\bde)\s+" + FIRST + r"\s+a\s+" + SECOND),
}


def locale_of(page: Path) -> str:
    parts = page.name.split(".")
    return parts[1] if len(parts) == 3 else ""


#: Two rule-of-thumb figures joined by the locale's range word: `rot_range()` writes them.
ROT = r"\{\{\s*rot\(\s*[\"'](?P<%s>[\w-]+)[\"']\s*,\s*[0-9.]+\s*\)\s*\}\}"
ROT_WORDED = re.compile(ROT % "m1" + r"\s+(?:to|تا|ile|до|a)\s+" + ROT % "m2")


def problems(text: str, locale: str) -> list[tuple[int, str]]:
    """(line, offending text) for every range joined by hand on a page of `locale`."""
    found = [(text.count("\n", 0, m.start()) + 1, m.group()) for m in DASHED.finditer(text)]
    found += [(text.count("\n", 0, m.start()) + 1, " ".join(m.group().split()))
              for m in ROT_WORDED.finditer(text) if m.group("m1") == m.group("m2")]
    worded = WORDED.get(locale)
    if worded is not None:
        for m in worded.finditer(text):
            same_unit = (m.group("lo_unit") or "") == (m.group("hi_unit") or "")
            if same_unit and float(m.group("lo")) < float(m.group("hi")):
                found.append((text.count("\n", 0, m.start()) + 1, " ".join(m.group().split())))
    return sorted(found)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_ranges_come_from_the_range_macro(page: Path) -> None:
    found = problems(page.read_text(encoding="utf-8"), locale_of(page))
    assert not found, (
        f"{page.name}: two figures joined by hand; write one range(lo, hi, unit) macro instead:\n"
        + "\n".join(f"  line {line}: {snippet}" for line, snippet in found)
    )


# The check itself, on the lines that it exists for and on the ones it must let through.
@pytest.mark.parametrize("text, locale", [
    ('модели ({{ num(7, "billions") }}–{{ num(8, "billions") }})', "ru"),
    ("{{ num(0.2, \"percent\") }} – {{ num(0.3, \"percent\") }}", "pt"),
    ("{{ rot(\"qlora\", 27) }}-{{ rot(\"qlora\", 32) }}", ""),
    ("{{ est(a) }} - {{ est(b) }}", "tr"),
    ("{{ num(6) }}\u2014{{ num(8) }}", "fa"),
    ('Models of {{ num(27, "billions") }} to {{ num(32, "billions") }} fit', ""),
    ('моделях от {{ num(27, "billions") }} до\n{{ num(32, "billions") }}', "ru"),
    ('modelos de {{ num(27, "billions") }} a {{ num(32, "billions") }}', "pt"),
    ('({{ rot("qlora", 27) }} to {{ rot("qlora", 32) }})', ""),
    ('({{ rot("qlora", 27) }} تا {{ rot("qlora", 32) }})', "fa"),
])
def test_hand_made_ranges_are_found(text: str, locale: str) -> None:
    assert len(problems(text, locale)) == 1


@pytest.mark.parametrize("text, locale", [
    ('{{ model_name("qwen3-30b-a3b") }} — {{ params("qwen3-30b-a3b") }}', "ru"),
    ("{{ est(a) }}\n- {{ est(b) }}", ""),
    ('{{ num(7, "billions") }}-модель и {{ num(8, "billions") }}-модель', "ru"),
    ('from {{ est(model="x", method="lora") }} to {{ est(model="x", method="qlora") }}', ""),
    ("passar de {{ num(16) }} para {{ num(64) }}", "pt"),
    ("{{ num(4096) }} × {{ num(4096) }}", "ru"),
    ("the query projection maps {{ num(4096) }} to\n{{ num(4096) }}", ""),
    ("goes from {{ num(16) }} to {{ num(64) }}", ""),
    ("от {{ num(64) }} до {{ num(16) }}", "ru"),
    ('{{ range(7, 8, "billions") }}', "ru"),
    ("de {{ num(16) }} a {{ num(64, \"percent\") }}", "pt"),
])
def test_other_pairs_of_figures_pass(text: str, locale: str) -> None:
    assert problems(text, locale) == []
