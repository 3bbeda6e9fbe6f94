"""A stacked horizontal bar chart of an estimate's components, as an SVG string.

The same code draws the chart at build time (CPython, in the static page) and on every edit in
the browser (Pyodide, in the worker), so the first paint and the live chart are identical.

- Accessible: `role="img"` with `aria-labelledby` pointing at the SVG's own `<title>` and
  `<desc>`; the description lists every part with its formatted size, so a screen reader gets
  the figures the bar shows. Each segment also has a `<title>` (a tooltip for pointer users).
- Colours are not in the SVG: each segment carries the classes `calc-seg` and `calc-c<i>` (its
  position) plus `calc-seg--<name>`, and the page's CSS (`docs/assets/calc/css/`) fills
  them from custom properties with a light and a dark palette. `swatch(i)` gives the matching
  legend square for a table row.
- Right to left: in an RTL locale the bar starts at the right edge (the first component is
  drawn rightmost), computed here rather than left to a CSS transform.
- Every text is escaped with `html.escape`.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from html import escape
from typing import Iterable, Sequence

from .fmt import fmt_memo as fmt
from .i18n import locale_dir, normalize_locale, t

__all__ = ["stacked_bar", "swatch", "WIDTH", "HEIGHT", "MIN_SEGMENT"]

#: viewBox units. The SVG stretches to its container's width (preserveAspectRatio="none"): it
#: holds no text, so nothing is distorted.
WIDTH = 1000
HEIGHT = 40
#: A non-zero part is never drawn narrower than this (viewBox units), so a small overhead stays
#: visible; the others shrink in proportion to make room.
MIN_SEGMENT = 4

_LIST_SEP = {"fa": "؛ "}


@lru_cache(maxsize=None)
def _label(name: str, locale: str) -> str:
    key = f"component.{name}"
    text = t(key, locale)
    return name.replace("_", " ") if text == key else text


def _share(value: int, total: int) -> Decimal:
    """value / total as a Decimal (what `fmt(..., "percent", ...)` takes)."""
    return Decimal(value) / Decimal(total) if total else Decimal(0)


def _widths(values: Sequence[int]) -> tuple[list[int], int]:
    """Segment widths in viewBox units: proportional, with MIN_SEGMENT for small parts; exact,
    as numerators over one common denominator (integers: the worker draws on every edit)."""
    total = sum(values)
    if total <= 0:
        return [0] * len(values), 1
    small = [0 < v * WIDTH < MIN_SEGMENT * total for v in values]
    if not any(small):
        return [v * WIDTH for v in values], total
    rest = WIDTH - MIN_SEGMENT * sum(small)
    big = sum(v for v, is_small in zip(values, small) if not is_small)
    if not big:
        return [MIN_SEGMENT if is_small else 0 for is_small in small], 1
    return [MIN_SEGMENT * big if is_small else v * rest for v, is_small in zip(values, small)], big


def _num(numerator: int, denominator: int) -> str:
    """A viewBox coordinate (an exact ratio) with at most 2 decimals, no trailing zeros
    (locale-independent). `int / int` is correctly rounded, as `float(Fraction)` is."""
    s = f"{numerator / denominator:.2f}".rstrip("0").rstrip(".")
    return s or "0"


def stacked_bar(parts: Iterable[tuple[str, int]], unit: str, locale: str, *,
                id_prefix: str = "calc-chart", title: str | None = None,
                marker: tuple[int, str] | None = None) -> str:
    """SVG of a stacked horizontal bar: one segment per (component name, bytes), in order.

    `unit` is the display unit of the sizes in the text alternative ("GiB", "GB", "MiB");
    `id_prefix` makes the ids of the title and description unique on the page. `marker`
    (bytes, label): a vertical line at that size (the reader's card's usable memory); the bar's
    scale is then the larger of the total and the marker, so both are in view.
    """
    loc = normalize_locale(locale)
    items = [(str(name), int(value)) for name, value in parts]
    total = sum(v for _, v in items)
    rtl = locale_dir(loc) == "rtl"
    pid = escape(id_prefix, quote=True)
    if title is None:
        title = f'{_title_start(loc)}: {fmt(total, unit, loc)}'
    described = [_part_text(name, value, total, unit, loc) for name, value in items]
    desc = t("ui.chart_alt", loc, parts=_LIST_SEP.get(loc, "; ").join(described))

    out = [
        f'<svg class="calc-chart" role="img" aria-labelledby="{pid}-title {pid}-desc" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" preserveAspectRatio="none" width="100%" '
        f'height="{HEIGHT}" focusable="false" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{pid}-title">{escape(title)}</title>',
        f'<desc id="{pid}-desc">{escape(desc)}</desc>',
    ]
    full = max(total, marker[0]) if marker else total
    span = WIDTH if not marker or full == total else None
    widths, den = _widths([v for _, v in items])
    if span is None:  # the segments take total / full of the width
        widths, den = [w * total for w in widths], den * full
    x = 0  # numerators over den
    for i, ((name, value), w, text) in enumerate(zip(items, widths, described)):
        if value <= 0 or w <= 0:
            continue
        left = WIDTH * den - x - w if rtl else x
        out.append(
            f'<rect class="calc-seg calc-c{i} calc-seg--{_attr(name)}" x="{_num(left, den)}" '
            f'y="0" width="{_num(w, den)}" height="{HEIGHT}" '
            f'data-part="{_attr(name)}" data-bytes="{value}">'
            f"<title>{_escaped(text)}</title></rect>"
        )
        x += w
    if marker:
        at = WIDTH * marker[0] * den // full if full else 0
        pos = WIDTH * den - at if rtl else at
        note = t("ui.chart_marker", loc, gpu=marker[1], usable=fmt(marker[0], unit, loc))
        out.append(f'<line class="calc-marker" x1="{_num(pos, den)}" x2="{_num(pos, den)}" '
                   f'y1="0" y2="{HEIGHT}" data-bytes="{int(marker[0])}">'
                   f"<title>{_escaped(note)}</title></line>")
        out[2] = f'<desc id="{pid}-desc">{escape(desc + " " + note)}</desc>'
    out.append("</svg>")
    return "".join(out)


@lru_cache(maxsize=None)
def _attr(name: str) -> str:
    return escape(name, quote=True)


@lru_cache(maxsize=4096)
def _escaped(text: str) -> str:
    return escape(text)


@lru_cache(maxsize=None)
def _title_start(loc: str) -> str:
    return f'{t("ui.breakdown", loc)} — {t("component.total", loc)}'


@lru_cache(maxsize=4096)
def _part_text(name: str, value: int, total: int, unit: str, loc: str) -> str:
    """One part in the text alternative: its name, size and share (memoized: the worker
    draws the chart on every edit, and most parts keep their size)."""
    share = fmt(_share(value, total), "percent", loc)
    return f"{_label(name, loc)}: {fmt(value, unit, loc)} ({share})"


def swatch(index: int) -> str:
    """The legend square of the `index`-th segment (decorative: the row's text names it)."""
    return f'<span class="calc-swatch calc-c{int(index)}" aria-hidden="true"></span>'
