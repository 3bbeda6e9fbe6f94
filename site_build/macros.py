"""The pages' Jinja context: every figure on a page comes from a macro here, run by calc for the
locale being built. What each macro does, for the writers: i18n/WRITERS.md ("Macros")."""

from __future__ import annotations

import dataclasses
import html
import re
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache, partial
from types import SimpleNamespace
from typing import Any

import jinja2
from mkdocs.exceptions import PluginError

from calc import catalog, engine, i18n
from calc import html as kit
from calc.errors import CalcError
from calc.fields import parse
from calc.fmt import fmt
from calc.render import widget as render_widget
from calc.render_accuracy import accuracy_table as render_accuracy_table

from . import tables
from .run_macros import RunMacros
from .common import DEFAULT_LOCALE, esc

#: Units whose value is integer bytes (`data-bytes`); every other unit gets `data-value`.
BYTE_UNITS = frozenset({"GiB", "GB", "MiB"})


# --- values ---------------------------------------------------------------------------------


# What calc.fmt accepts: Fractions become Decimals.
def _fmt_value(value: object) -> object:
    if isinstance(value, Fraction):
        return Decimal(value.numerator) / Decimal(value.denominator)
    return value


# A number for data-value (`calc.html.raw` writes it): fractions as exact decimals.
def _raw_number(value: object) -> object:
    if isinstance(value, bool) or not isinstance(value, (int, Fraction, float, Decimal)):
        raise TypeError(f"a number is needed, not {type(value).__name__}")
    return _fmt_value(value)


# Template literals (floats such as 0.5) as exact Decimals; other numbers unchanged.
def _number(x: object) -> object:
    if isinstance(x, bool):
        raise TypeError(f"a number is needed, not {x!r}")
    if isinstance(x, float):
        return Decimal(repr(x))
    if isinstance(x, str):
        return Decimal(x)
    return x


# An interface field's value as the text `calc.fields.parse` reads.
def _field_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "value") and isinstance(getattr(value, "value"), str):  # str-Enum
        return value.value
    return str(value)


# A value of calc as templates see it: str-Enums as their plain ids.
def _plain(value: object) -> object:
    return value.value if hasattr(value, "value") and isinstance(value.value, str) else value


# One estimate per set of fields, however many pages ask for it.
@lru_cache(maxsize=None)
def _estimate(fields: tuple[tuple[str, str], ...]):
    return engine.estimate(parse(dict(fields)))


# calc.engine.estimate of interface fields (values of any type, converted to text).
def estimate_of(**fields: object):
    return _estimate(tuple(sorted((k, _field_text(v)) for k, v in fields.items())))


# `C` in templates: calc.engine's upper-case constants (enum keys as plain ids), the ZeRO
# 16 bytes, and the calculator's default inputs (`C.DEFAULT_RANK`, from `engine.Inputs`).
@lru_cache(maxsize=None)
def constants() -> SimpleNamespace:
    values: dict[str, Any] = {}
    for key in dir(engine):
        if not key.isupper() or key.startswith("_"):
            continue
        value = getattr(engine, key)
        if isinstance(value, dict):
            value = {_plain(k): v for k, v in value.items()}
        values[key] = value
    values["FULL_BYTES_PER_PARAM"] = (
        engine.BF16_BYTES + engine.GRAD_BYTES + values["OPTIMIZER_BYTES"]["adamw"])
    for f in dataclasses.fields(engine.Inputs):
        if f.default is not dataclasses.MISSING:
            name = f"DEFAULT_{f.name.upper()}"
            # an engine constant of that name (DEFAULT_GRAD_ACCUM) is the same default
            assert values.get(name, _plain(f.default)) == _plain(f.default), name
            values[name] = _plain(f.default)
    return SimpleNamespace(**values)


# --- the macros -----------------------------------------------------------------------------


class Macros:
    """The template context of one locale."""

    def __init__(self, locale: str):
        self.locale = locale

    # The single place a page's figure is made (through calc.html.figure).
    def fig(self, name: str, value: object, unit: str, digits: int | None = None) -> str:
        text = fmt(_fmt_value(value), unit, self.locale, digits)
        if unit in BYTE_UNITS:
            if isinstance(value, bool) or not isinstance(value, (int, Decimal, Fraction, float)):
                raise TypeError(f"fig({name!r}): {unit} needs integer bytes, not {value!r}")
            if value != int(value):
                raise ValueError(f"fig({name!r}): {unit} needs integer bytes, not {value!r}")
            return kit.figure(name, text, bytes_=int(value))
        return kit.figure(name, text, value=_raw_number(value))

    # The detailed engine's estimate of interface fields (cached); for the tables.
    def estimate(self, **fields: object):
        return estimate_of(**fields)

    # One component (or the total, or the trainable parameters) of the detailed engine.
    def est(self, component: str = "total", unit: str = "GiB", digits: int | None = None,
            name: str | None = None, **fields: object) -> str:
        value = estimate_of(**fields).get(component)
        if component == "trainable_params" and unit in BYTE_UNITS:
            unit = "params"
        return self.fig(name or component, value, unit, digits)

    # The rule of thumb, in GB.
    def rot(self, method: str, billions: object, digits: int | None = None,
            name: str = "rule_of_thumb") -> str:
        return self.fig(name, engine.rule_of_thumb(_number(billions), method), "GB", digits)

    # The quick full fine-tuning calculator V = N x B + A, in GB.
    def quick(self, n: object, bpp: object, act: object, digits: int | None = None,
              name: str = "quick_full") -> str:
        value = engine.quick_full(_number(n), _number(bpp), _number(act))
        return self.fig(name, value, "GB", digits)

    # One LoRA-adapted layer: its parameters, or its bytes.
    def adapter(self, d_in: int, d_out: int, rank: int, dtype: str = "bf16",
                unit: str = "params", digits: int | None = None, name: str | None = None) -> str:
        if unit == "params":
            return self.fig(name or "adapter_params", engine.lora_layer_params(d_in, d_out, rank),
                            "params", digits)
        return self.fig(name or "adapter_bytes", engine.adapter_bytes(d_in, d_out, rank, dtype),
                        unit, digits)

    # Hours x hourly price in USD (the catalog card's example price unless `price` is given).
    def cost(self, hours: object, gpu: str | None = None, price: object = None,
             digits: int | None = None, name: str = "cost") -> str:
        if price is None:
            if gpu is None:
                raise ValueError("cost(): give gpu= (a catalog id) or price=")
            price = catalog.gpu(gpu).price_per_hour
            if price is None:
                raise ValueError(f"cost(): the catalog has no example price for {gpu!r}")
        return self.fig(name, engine.cost(_number(hours), _number(price)), "USD", digits)

    # Any other number: an input of an example or a constant of `C`.
    def num(self, x: object, unit: str = "number", digits: int | None = None,
            name: str = "value") -> str:
        return self.fig(name, _number(x), unit, digits)

    # A catalog card's memory, usable memory or example hourly price.
    def card(self, gpu: str, what: str = "memory", unit: str = "GiB",
             digits: int | None = None, name: str | None = None) -> str:
        g = catalog.gpu(gpu)
        if what == "memory":
            return self.fig(name or "gpu_memory", g.memory_bytes, unit, digits)
        if what == "usable":
            return self.fig(name or "gpu_usable", engine.usable_bytes(g), unit, digits)
        if what == "price":
            if g.price_per_hour is None:
                raise ValueError(f"card(): the catalog has no example price for {gpu!r}")
            return self.fig(name or "gpu_price", g.price_per_hour, "USD", digits)
        raise ValueError(f"card(): what must be memory, usable or price, not {what!r}")

    # Text of calc's catalogs in the page's locale, escaped; a key English lacks fails.
    def t(self, key: str, **params: object) -> str:
        return esc(self.t_plain(key, **params))

    # The same text, not escaped (for the figure emitter, which escapes it).
    def t_plain(self, key: str, **params: object) -> str:
        if key not in i18n.catalog(DEFAULT_LOCALE):
            raise KeyError(f"t(): calc's English catalog has no key {key!r}")
        return i18n.t(key, self.locale, **params)

    # A model preset's name (escaped), so that names with digits are never typed.
    def model_name(self, preset_id: str) -> str:
        return esc(catalog.model_label(catalog.model(preset_id), self.locale))

    # A card's display name in the page's locale (its memory size in the page's digits).
    def gpu_name(self, gpu_id: str) -> str:
        return esc(catalog.gpu_label(catalog.gpu(gpu_id), self.locale))

    # A calculator widget in its default state.
    def widget(self, name: str) -> str:
        return render_widget(name, self.locale)

    # The accuracy page's results: summary, plot and tables.
    def accuracy_table(self) -> str:
        return render_accuracy_table(self.locale)

    # The names a page's template sees.
    def context(self) -> dict[str, Any]:
        names = ("fig", "est", "rot", "quick", "adapter", "cost", "num", "card", "t",
                 "model_name", "gpu_name", "widget", "accuracy_table")
        ctx: dict[str, Any] = {n: getattr(self, n) for n in names}
        run = RunMacros(self)
        ctx.update((n, getattr(run, n)) for n in RunMacros.NAMES)
        for name, table in tables.TABLES.items():
            ctx[name] = partial(table, self)
        ctx["C"] = constants()
        ctx["locale"] = self.locale
        ctx["dir"] = i18n.locale_dir(self.locale)
        return ctx


# --- rendering ------------------------------------------------------------------------------


# The pages' Jinja environment: strict, unescaped Markdown, `{## ##}` comments.
@lru_cache(maxsize=None)
def _jinja_env() -> jinja2.Environment:
    return jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        comment_start_string="{##",
        comment_end_string="##}",
    )


# Render one page's Markdown as a Jinja2 template for `locale`; any failure names the page.
def render_markdown(markdown: str, locale: str, src: str = "<string>", offset: int = 0) -> str:
    try:
        template = _jinja_env().from_string(markdown)
        return template.render(Macros(locale).context())
    except jinja2.TemplateSyntaxError as exc:
        raise PluginError(f"{src}:{exc.lineno + offset}: template syntax error: "
                          f"{exc.message}") from exc
    except CalcError as exc:
        raise PluginError(f"{src} ({locale}): calc rejected a macro's input: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - any macro failure must fail the build, with context
        line = _template_line(exc)
        where = f"{src}:{line + offset}" if line else src
        raise PluginError(f"{where} ({locale}): {type(exc).__name__}: {exc}") from exc


# The line of the template where an exception was raised, if it came from one.
def _template_line(exc: BaseException) -> int | None:
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


_TAGS = re.compile(r"<[^>]*>")


# Front matter values (`title:`, `description:`) that hold macros, rendered as plain text.
def render_meta(meta: dict, locale: str, src: str) -> None:
    for key, value in list(meta.items()):
        if isinstance(value, str) and "{{" in value:
            meta[key] = html.unescape(_TAGS.sub("", render_markdown(value, locale, src)))
