"""What the widgets share: the `Widget` contract each module fulfils, the `Outcome` of a run,
the form renderer (`Form`) and the memoized text helpers.

A widget module (`calc.widgets.calculator`, ...) is registered in `calc.render.WIDGETS` and
holds, as module attributes (the `Widget` protocol):

- NAME: its name (`data-calc-widget`, the build's `widget()` macro);
- DEFAULT_QUERY: the query of its first paint;
- FORM_FIELDS: the keys its form sends (and a URL may carry);
- NUMERIC_FIELDS: the form values shown in the locale's digits;
- parse(query, locale): the raw fields read (raises CalcError naming every invalid field);
- run(query, locale, wid) -> Outcome: parse, compute, render the results region;
- form(f, locale, placeholders): its form's fields, laid out by `form_layout`.

Memoized pieces: the worker renders the results on every edit, and most of them do not
change from one edit to the next (catalog texts, figures of the same value). They are pure
functions of their arguments (the catalogs are read once), so they are memoized; the
snapshot holds what the build rendered.

Right to left: `isolate_latin` on a whole region equals the concatenation of `isolate_latin`
on its pieces when each piece starts and ends at a tag and no enclosing element is skipped
(code, SVG, `calc-fig`, `dir`) or an `<option>`: the results region's blocks, table rows and
cells are such pieces. So each piece is isolated once, when it is first made (`iso`), and the
region is never scanned as a whole (`tests/unit/test_render.py`: the same bytes as isolating
the whole).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping, Protocol

import re

from .. import catalog, html
from ..bidi import isolate_latin, option_dir
from ..errors import CalcError
from ..fields import TRUE_WORDS, parse as parse_calculator
from ..fmt import fmt_memo
from ..i18n import locale_dir, lookup, t
from ..types import GpuKind, Unit


class Widget(Protocol):
    """What `calc.render` needs of a widget module (see the module's docstring)."""

    NAME: str
    DEFAULT_QUERY: Mapping[str, str]
    FORM_FIELDS: tuple[str, ...]
    NUMERIC_FIELDS: frozenset[str]

    def parse(self, query: Mapping[str, Any], locale: str = "en") -> Any: ...

    def run(self, q: dict[str, str], loc: str, wid: str) -> "Outcome": ...

    def form(self, f: "Form", loc: str, placeholders: Mapping[str, str]) -> str: ...


@dataclass(frozen=True)
class Outcome:
    """What a runner returns: `html` is final (isolated on right-to-left pages); `query` the
    canonical query (the URL), `form` the values the form should hold, `placeholders` the
    fields that default to a preset's value, `summary` the status line."""

    html: str
    query: dict[str, str]
    form: dict[str, str]
    placeholders: dict[str, str]
    summary: str


# --- text ---------------------------------------------------------------------------------------

e = html.e
bidi = html.bidi
bidi_text = html.bidi_text
local_digits = html.local_digits


def has(key: str, loc: str) -> bool:
    """Whether the catalogs have `key` (in `loc` or English)."""
    return lookup(key, loc) != key


def tx(key: str, loc: str, **params: object) -> str:
    """`t` (the catalogs, English fallback)."""
    return t(key, loc, **params)


@lru_cache(maxsize=None)
def txc(key: str, loc: str) -> str:
    """`t` of a text without parameters, memoized."""
    return t(key, loc)


@lru_cache(maxsize=4096)
def _iso_rtl(markup: str) -> str:
    return isolate_latin(markup)


def iso(markup: str, loc: str) -> str:
    """`bidi` of a piece of the results region, memoized by its text."""
    return _iso_rtl(markup) if locale_dir(loc) == "rtl" else markup


@lru_cache(maxsize=8192, typed=True)
def text(value: int | Decimal, unit: str, loc: str, digits: int | None = None) -> str:
    """`fmt` as the text of an element that is not a `calc-fig`: escaped, isolated on RTL."""
    return iso(e(fmt_memo(value, unit, loc, digits)), loc)


def summary(key: str, value: str, loc: str) -> str:
    """The status line: "<label>: <value>"."""
    return f"{txc(key, loc)}: {value}"


# --- figures --------------------------------------------------------------------------------


def fig(name: str, raw: object, shown: str, *, kind: str = "value", tag: str = "span",
        cls: str = "calc-fig") -> str:
    """An engine figure (`calc.html.figure`): `kind` "bytes" gives `data-bytes`."""
    if kind == "bytes":
        return html.figure(name, shown, bytes_=int(raw), tag=tag, cls=cls)  # type: ignore[arg-type]
    return html.figure(name, shown, value=raw, tag=tag, cls=cls)


def td_fig(name: str, raw: object, shown: str, kind: str = "value", cls: str = "") -> str:
    """A table cell that is itself the figure."""
    if kind == "bytes":
        return html.td_figure(name, shown, bytes_=int(raw), cls=cls)  # type: ignore[arg-type]
    return html.td_figure(name, shown, value=raw, cls=cls)


def total_line(label: str, figure: str) -> str:
    """The results' headline: a label and its figure (a `calc-total-value`)."""
    return (f'<p class="calc-total"><span class="calc-total-label">{e(label)}</span> '
            f"{figure}</p>")


def yes_no(value: bool, loc: str, yes: str = "ui.fits", no: str = "ui.does_not_fit") -> str:
    """A verdict: a mark (hidden from screen readers) and its word."""
    cls = "calc-yes" if value else "calc-no"
    mark = "✓" if value else "✗"
    return (f'<span class="{cls}"><span aria-hidden="true">{mark} </span>'
            f"{e(tx(yes if value else no, loc))}</span>")


# --- numbers ------------------------------------------------------------------------------------


def dec_of(x: Fraction) -> Decimal:
    """A Fraction as a Decimal (28 significant digits), the type `fmt` takes."""
    return Decimal(x.numerator) / Decimal(x.denominator)


def dec(d: Decimal) -> str:
    """A Decimal as the shortest plain text (7, 0.5, 0.74): no exponent, no trailing zeros."""
    return format(d.copy_abs() if d.is_zero() else d.normalize(), "f")


# --- parsing ------------------------------------------------------------------------------------


def unit_of(q: Mapping[str, str], default: Unit) -> Unit:
    """The display unit of a small widget, validated by the engine's own parser."""
    if not q.get("unit", "").strip():
        return default
    return parse_calculator({"unit": q["unit"]}).unit


def fail(field: str, code: str) -> None:
    raise CalcError.one(field, code)


def collect(*steps: Callable[[], Any]) -> list[Any]:
    """Run independent parsers, merging every CalcError so each field gets its message."""
    out, problems = [], []
    for step in steps:
        try:
            out.append(step())
        except CalcError as err:
            problems.extend(err.problems)
            out.append(None)
    if problems:
        raise CalcError(problems)
    return out


# --- the form -------------------------------------------------------------------------------


class Form:
    """Renders labelled fields with help and an (empty) error slot, ids prefixed by the widget."""

    def __init__(self, wid: str, loc: str, values: Mapping[str, str],
                 errors: Mapping[str, str] | None = None):
        self.wid, self.loc, self.values = wid, loc, values
        self.errors = errors or {}

    def ids(self, name: str) -> tuple[str, str, str]:
        base = f"{self.wid}-{name}"
        return base, base + "-help", base + "-error"

    def label(self, name: str) -> str:
        return tx(f"field.{name}", self.loc)

    def help(self, name: str, help_id: str) -> str:
        key = f"help.{name}"
        if not has(key, self.loc):
            return ""
        return f'<p class="calc-help" id="{help_id}">{help_text(key, self.loc)}</p>'

    def error_slot(self, name: str, err_id: str) -> str:
        message = self.errors.get(name)
        if message is None:
            return (f'<p class="calc-error" id="{err_id}" data-calc-error-for="{e(name)}" '
                    f"hidden></p>")
        return (f'<p class="calc-error" id="{err_id}" data-calc-error-for="{e(name)}">'
                f"{e(message)}</p>")

    def _describedby(self, name: str, help_id: str) -> str:
        """aria-describedby (help text; the error message first when there is one) and
        aria-invalid."""
        ids = [help_id] if has(f"help.{name}", self.loc) else []
        invalid = ""
        if name in self.errors:
            ids.insert(0, f"{self.wid}-{name}-error")
            invalid = ' aria-invalid="true"'
        return (f' aria-describedby="{" ".join(ids)}"' if ids else "") + invalid

    def wrap(self, name: str, label_html: str, control: str, help_html: str, err: str,
             cls: str = "", extra: str = "") -> str:
        cls = f"calc-field {cls}".strip()
        return (f'<div class="{cls}" data-field="{e(name)}"{extra}>'
                f"{label_html}{control}{help_html}{err}</div>")

    def text(self, name: str, *, inputmode: str = "decimal", placeholder: str = "",
             datalist: str = "", ltr: bool = False, cls: str = "", extra: str = "",
             label: str | None = None) -> str:
        """A text field; `label` replaces the catalog's `field.<name>`."""
        fid, hid, eid = self.ids(name)
        value = self.values.get(name, "")
        if inputmode in ("numeric", "decimal") or name == "params":
            value = local_digits(value, self.loc)
        attrs = [f'id="{fid}"', f'name="{e(name)}"', 'type="text"', f'value="{e(value)}"',
                 'autocomplete="off"', 'spellcheck="false"']
        if inputmode:
            attrs.append(f'inputmode="{inputmode}"')
        if placeholder:
            attrs.append(f'placeholder="{e(placeholder)}"')
        if datalist:
            attrs.append(f'list="{datalist}"')
        if ltr or inputmode in ("numeric", "decimal"):
            attrs.append('dir="ltr"')
        control = f"<input {' '.join(attrs)}{self._describedby(name, hid)}>"
        shown = self.label(name) if label is None else label
        return self.wrap(name, f'<label for="{fid}">{e(shown)}</label>', control,
                         self.help(name, hid), self.error_slot(name, eid), cls, extra)

    def textarea(self, name: str, *, rows: int = 6) -> str:
        fid, hid, eid = self.ids(name)
        value = self.values.get(name, "")
        control = (f'<textarea id="{fid}" name="{e(name)}" rows="{rows}" dir="ltr" '
                   f'spellcheck="false" autocomplete="off"{self._describedby(name, hid)}>'
                   f"{e(value)}</textarea>")
        return self.wrap(name, f'<label for="{fid}">{e(self.label(name))}</label>', control,
                         self.help(name, hid), self.error_slot(name, eid), "calc-field-wide")

    def select(self, name: str, options: Iterable[tuple[str, str]], *, extra: str = "",
               label: str | None = None, cls: str = "") -> str:
        return self.grouped_select(name, [("", list(options))], extra=extra, label=label,
                                   cls=cls)

    def grouped_select(self, name: str, groups: Iterable[tuple[str, Iterable[tuple[str, str]]]],
                       *, extra: str = "", label: str | None = None, cls: str = "") -> str:
        """A select of (group label, options) groups: an <optgroup> each, but for a group
        labelled "" (its options stand alone)."""
        fid, hid, eid = self.ids(name)
        current = self.values.get(name, "")
        rtl = locale_dir(self.loc) == "rtl"
        parts = []
        for group, options in groups:
            opts = "".join(_option(v, text, v == current, rtl) for v, text in options)
            parts.append(f'<optgroup label="{e(group)}">{opts}</optgroup>' if group else opts)
        control = (f'<select id="{fid}" name="{e(name)}"{self._describedby(name, hid)}>'
                   f'{"".join(parts)}</select>')
        shown = self.label(name) if label is None else label
        return self.wrap(name, f'<label for="{fid}">{e(shown)}</label>', control,
                         self.help(name, hid), self.error_slot(name, eid), cls, extra)

    def radios(self, name: str, options: Iterable[tuple[str, str]]) -> str:
        fid, hid, eid = self.ids(name)
        current = self.values.get(name, "")
        items = "".join(
            f'<label class="calc-choice"><input type="radio" name="{e(name)}" value="{e(v)}"'
            f'{" checked" if v == current else ""}> <span>{e(label)}</span></label>'
            for v, label in options)
        described = self._describedby(name, hid)
        return (f'<fieldset class="calc-field calc-radios" data-field="{e(name)}" id="{fid}" '
                f'role="radiogroup"{described}><legend>{e(self.label(name))}</legend>'
                f'<div class="calc-choices">{items}</div>'
                f"{self.help(name, hid)}{self.error_slot(name, eid)}</fieldset>")

    def checkbox(self, name: str) -> str:
        """A yes/no field: checked when its value reads as yes (`calc.fields.read_bool`)."""
        fid, hid, eid = self.ids(name)
        checked = self.values.get(name, "").strip().lower() in TRUE_WORDS
        control = (f'<input id="{fid}" name="{e(name)}" type="checkbox" value="true"'
                   f'{" checked" if checked else ""}{self._describedby(name, hid)}>')
        label = f'<label for="{fid}">{e(self.label(name))}</label>'
        return (f'<div class="calc-field calc-check" data-field="{e(name)}">'
                f'<div class="calc-check-row">{control}{label}</div>'
                f"{self.help(name, hid)}{self.error_slot(name, eid)}</div>")


def _option(value: str, text: str, selected: bool, rtl: bool) -> str:
    """An <option>. On a right-to-left page its text carries no isolate marks (a select's
    type-ahead matches an option's text from its first character: "L" must find "Llama 3.1
    8B", issue 19) and the option its own direction (`calc.bidi.option_dir`)."""
    attrs, shown = option_dir(text) if rtl else ("", text)
    return (f'<option value="{e(value)}"{" selected" if selected else ""}{attrs}>'
            f"{e(shown)}</option>")


def form_layout(wid: str, loc: str, common: list[str], advanced: list[str],
                middle: list[str] | None = None) -> str:
    """The form: the common fields in a grid, then `middle` (groups of their own), the advanced
    ones in a closed <details>."""
    adv = "".join(middle or [])
    if advanced:
        adv += (f'<details class="calc-advanced"><summary>{e(tx("ui.advanced", loc))}</summary>'
               f'<div class="calc-grid">{"".join(advanced)}</div></details>')
    return (f'<form class="calc-form" id="{wid}-form" data-calc-form novalidate>'
            f'<div class="calc-grid">{"".join(common)}</div>{adv}</form>')


# --- help texts and product names on right-to-left pages ---------------------------------------

#: An example value in a help text: 8e9, 0.5B, 350M, 50M, 4k (digits with a suffix letter or an
#: exponent). On a right-to-left page isolate_latin would isolate only its letters, and the
#: bidi algorithm would show "e98" or "B8" (issue 19): the whole token goes into one LTR isolate.
_EXAMPLE = re.compile(r"(?<![\w\u2066])([0-9]+(?:[.,][0-9]+)?(?:e[0-9]+|[kKMBGT]))(?![\w])")


@lru_cache(maxsize=None)
def help_text(key: str, loc: str) -> str:
    """A catalog help text, escaped; on RTL pages each example value one LTR isolate."""
    text = e(tx(key, loc))
    if locale_dir(loc) == "rtl":
        text = _EXAMPLE.sub(r'<bdi dir="ltr">\1</bdi>', text)
    return text


#: The GPU table's and the picker's groups, in order; a card's group from the catalog's `use`.
GROUPS = ("datacenter", "workstation", "consumer", "mac")
_GROUP_OF_USE = {"datacenter": "datacenter", "datacenter-training": "datacenter",
                 "inference": "datacenter", "workstation": "workstation", "consumer": "consumer"}


def gpu_group(g: "catalog.Gpu") -> str:
    if g.kind is GpuKind.UNIFIED:
        return "mac"
    return _GROUP_OF_USE.get(g.use, "consumer")


@lru_cache(maxsize=None)
def product_html(gpu_id: str, loc: str) -> str:
    """A card's display name as markup: a product name ("NVIDIA GeForce RTX 3060 12 GB") is one
    left-to-right run on RTL pages (<bdi dir="ltr">), so its memory size never moves before the
    model name; a Mac's label is a sentence of the locale and stays as it is."""
    g = catalog.gpu(gpu_id)
    label = e(catalog.gpu_label(g, loc))
    if locale_dir(loc) == "rtl" and g.product is not None:
        return f'<bdi dir="ltr" class="calc-product">{label}</bdi>'
    return label


@lru_cache(maxsize=None)
def gpu_option_text(gpu_id: str, loc: str) -> str:
    """A card's display name as the text of an <option>: on RTL pages the option, not the
    text, holds its direction (`_option`), so a product name is one left-to-right run there
    ("NVIDIA A100 ۸۰ GB") and type-ahead finds it by its first letter."""
    return catalog.gpu_label(catalog.gpu(gpu_id), loc)
