"""The one HTML kit of `calc`: escaping, the one figure emitter, tables, local digits and
right-to-left isolation. The widgets (`calc.widgets`), the accuracy page (`calc.render_accuracy`)
and the build's macros (`site_build.macros`) all emit their markup through it, so a figure is
written the same way everywhere:

    <span class="calc-fig" data-calc="NAME" data-bytes="RAW">formatted</span>

`data-bytes` carries integer bytes; `data-value` any other raw value (a count, a price, a
fraction, yes/no), in the machine-readable form of `raw()`.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from html import escape
from typing import Iterable, Mapping, Sequence

from .bidi import isolate_latin, isolate_text
from .i18n import locale_dir

__all__ = ["e", "raw", "figure", "td_figure", "table_open", "scroll_table", "table", "row",
           "local_digits", "bidi", "bidi_text"]


def e(text: object) -> str:
    """HTML-escaped text (quotes too: safe in attributes)."""
    return escape(str(text), quote=True)


def raw(value: object) -> str:
    """A value as `data-value` carries it: yes/no as true/false, integers as they are,
    decimals without exponent and never "-0", fractions as the shortest float that reads back."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, Fraction):
        return repr(float(value))
    if isinstance(value, float):
        value = Decimal(repr(value))
    if isinstance(value, Decimal):
        return format(value.copy_abs() if value.is_zero() else value, "f")
    return str(value)


def figure(name: str, text: str, *, bytes_: int | None = None, value: object = None,
           tag: str = "span", cls: str | None = "calc-fig",
           extra: Mapping[str, object] | None = None) -> str:
    """An engine figure: the element `tag` with `data-calc=name` and its raw value beside the
    formatted `text`; `bytes_` (integer bytes) gives `data-bytes`, anything else `data-value`;
    `extra`: more raw values as attributes (a range's upper bound, `data-value-hi`)."""
    if bytes_ is not None:
        attr = f'data-bytes="{int(bytes_)}"'
    else:
        attr = f'data-value="{e(raw(value))}"'
    more = "".join(f' {e(k)}="{e(raw(v))}"' for k, v in (extra or {}).items())
    c = f' class="{cls}"' if cls else ""
    return f'<{tag}{c} data-calc="{e(name)}"{more} {attr}>{e(text)}</{tag}>'


def td_figure(name: str, text: str, *, bytes_: int | None = None, value: object = None,
              cls: str = "") -> str:
    """A table cell that is itself the figure."""
    return figure(name, text, bytes_=bytes_, value=value, tag="td", cls=cls or None)


def table_open(wid: str, key: str, caption: str, head: tuple[str, ...], cls: str = "") -> str:
    """`scroll_table` up to its first row."""
    cap_id = f"{wid}-{key}-caption"
    ths = "".join(f'<th scope="col">{e(h)}</th>' for h in head)
    return (
        f'<div class="calc-table-wrap" role="region" tabindex="0" aria-labelledby="{cap_id}">'
        f'<table class="calc-table {cls}"><caption id="{cap_id}">{e(caption)}</caption>'
        f"<thead><tr>{ths}</tr></thead><tbody>"
    )


def scroll_table(wid: str, key: str, caption: str, head: Iterable[str], rows: Iterable[str],
                 foot: str = "", cls: str = "") -> str:
    """A table in a keyboard-scrollable region (narrow screens), labelled by its caption."""
    return f"{table_open(wid, key, caption, tuple(head), cls)}{''.join(rows)}</tbody>{foot}</table></div>"


def table(tid: str, caption: str, head: Sequence[str], rows: Iterable[str],
          col_cls: Mapping[int, str] | None = None) -> str:
    """A plain table with an id (the theme styles it as it styles a Markdown table): its
    caption, a header row of `head` (column i with the class `col_cls[i]`), the `rows` (`row`)."""
    classes = col_cls or {}
    ths = "".join(f'<th scope="col"{_cls(classes.get(i))}>{e(h)}</th>' for i, h in enumerate(head))
    return (f'<table id="{tid}"><caption>{e(caption)}</caption><thead><tr>{ths}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def row(head: str, cells: Iterable[str]) -> str:
    """A body row: its header cell, then its cells (markup: escaped by the caller)."""
    return f'<tr><th scope="row">{head}</th>' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _cls(name: str | None) -> str:
    return f' class="{e(name)}"' if name else ""


_FA_DIGITS = str.maketrans("0123456789.", "۰۱۲۳۴۵۶۷۸۹٫")


def local_digits(value: str, loc: str) -> str:
    """A plain number in a form field, in the locale's digits (Persian on fa pages; the engine
    reads them back). Anything else (what a reader typed, an invalid value) stays as it is."""
    if loc == "fa" and _is_plain_number(value):
        return value.translate(_FA_DIGITS)
    return value


def _is_plain_number(value: str) -> bool:
    """`[0-9]+(\\.[0-9]+)?`"""
    head, dot, tail = value.partition(".")
    return (head.isascii() and head.isdigit()
            and (not dot or (tail.isascii() and tail.isdigit())))


def bidi(html: str, loc: str) -> str:
    """Markup for a page in `loc`: on a right-to-left page each Latin run isolated."""
    return isolate_latin(html) if locale_dir(loc) == "rtl" else html


def bidi_text(text: str, loc: str) -> str:
    """Plain text the page shows by textContent (messages, the status line): on a right-to-left
    page each Latin run between LRI and PDI, as in `<option>` (plain text can carry no `dir`
    or `lang`)."""
    return isolate_text(text) if locale_dir(loc) == "rtl" else text
