"""mkdocs hook: the one bridge from `calc` to the pages.

Every page's Markdown is rendered as a Jinja2 template (in `on_page_markdown`) for the locale
being built, before Markdown sees it. Every figure on a page comes from a macro below, never
from a number typed into the prose, so that all five locales change together and each shows
the figure in its own number format (Persian digits on `fa` pages).

Template rules
--------------
- Undefined names fail the build (StrictUndefined); so does any error a macro raises, with the
  page and the line.
- The Markdown itself is not escaped; every value a macro inserts is HTML-escaped.
- Jinja comments are `{## ... ##}` (not `{# ... #}`), so attribute lists like `{#id}` are safe.
- Macros return inline HTML (`fig`, `est`, ...) or a Markdown table / an HTML block (tables,
  `widget`); put a table or a widget on a line of its own with blank lines around it.

Context: macros and values
--------------------------
`fig(name, value, unit, digits=None)`
    The single place that emits a figure:
    `<span class="calc-fig" data-calc="NAME" data-bytes="RAW">formatted</span>`; `data-bytes`
    (integer bytes) for the units GiB, GB and MiB, `data-value` (the raw number) otherwise.
    `unit` is one of `calc.fmt`'s units: GiB, GB, MiB (value: int bytes), params, number,
    count, USD, percent (a fraction), x, bpp, billions, hours. `digits` = maximum fraction
    digits (fmt's default per unit when None).
`est(component="total", unit="GiB", digits=None, name=None, **fields)`
    Runs the detailed engine on `fields` (the interface names of engine.md: model, method,
    rank, targets, seq, batch, ckpt, optimizer, params, layers, ...; values are converted to
    text and parsed by `calc.fields.parse`, so `ckpt=false` and `ckpt=False` both work) and
    emits one figure: a component (`base_weights`, `gradients`, `optimizer`, `activations`,
    `overhead`), `total`, or `trainable_params` (then the unit defaults to `params`).
    `data-calc` is the component's name unless `name` is given.
    Example: `{{ est(model="llama-3.1-8b", method="qlora", unit="GB") }}`.
`rot(method, billions, digits=None, name="rule_of_thumb")`
    Rule of thumb in GB (`calc.engine.rule_of_thumb`); method: lora, qlora, full, full-master.
`quick(n, bpp, act, digits=None, name="quick_full")`
    Quick full fine-tuning calculator V = N x B + A, in GB (`calc.engine.quick_full`).
`adapter(d_in, d_out, rank, dtype="bf16", unit="params", digits=None, name=None)`
    One LoRA-adapted layer: parameters (`unit="params"`, name `adapter_params`) or bytes in
    GiB/GB/MiB (name `adapter_bytes`).
`cost(hours, gpu=None, price=None, digits=None, name="cost")`
    hours x hourly price in USD (`calc.engine.cost`); the price is the catalog example of
    `gpu` (a catalog id such as "a40") unless `price` is given.
`num(x, unit="number", digits=None, name="value")`
    Any other number, e.g. an input or a constant from `C`: `{{ num(C.ACT_BYTES) }}`,
    `{{ num(C.DISCRETE_USABLE, "percent") }}`, `{{ num(7, "billions") }}`.
`card(gpu, what="memory", unit="GiB", digits=None, name=None)`
    A catalog GPU's `memory`, `usable` memory (95 % / 75 % rule, bytes) or example `price`
    per hour (USD). Names: gpu_memory, gpu_usable, gpu_price.
`model_name(id)`, `gpu_name(id)`
    Catalog names (escaped text), so that names with digits are never typed into prose.
    `gpu_name` is the card's display name in the page's locale (`calc.catalog.gpu_label`):
    the model name in Latin letters, the memory size in the page's digits where the name
    carries one ("NVIDIA A100 80 GB", "Mac with Apple silicon, 36 GB"), translated words.
`C`
    calc's constants: every upper-case name of `calc.engine` (ACT_BYTES, ACT_BYTES_CKPT,
    OVERHEAD_BYTES, DISCRETE_USABLE, UNIFIED_USABLE, NF4_BYTES_PER_PARAM, BF16_BYTES,
    GRAD_BYTES, OPTIMIZER_BYTES, QUICK_PRESETS, ...). Dicts keyed by calc's str-Enums are
    keyed by the plain id here: `C.OPTIMIZER_BYTES["adamw"]`. Plus
    `C.FULL_BYTES_PER_PARAM` = BF16 weight + gradient + AdamW state (the ZeRO 16 bytes).
`t(key, **params)`
    Text from calc's message catalogs (`calc.i18n.t`) in the page's locale, HTML-escaped. A
    key that the English catalog does not have fails the build.
`locale`, `dir`
    The locale being built (en, tr, pt, ru, fa) and its direction (ltr, rtl).
`table_rule_of_thumb()`
    Markdown table: model sizes 0.5B to 70B; rule-of-thumb LoRA, QLoRA and full (no FP32
    master copy) in GB beside the detailed engine's figure for a representative preset.
`table_gpu_choice()`
    Markdown table: 7/8B, 13/14B, 32/34B, 70B x full, LoRA, QLoRA: the engine's total and the
    smallest catalog cards that fit on one card, else the fewest cards with ZeRO-3 sharding
    (cards by their display names, as `gpu_name`).
`table_gpu_catalog()`
    Markdown table of the GPU catalog: display name (as `gpu_name`), memory, kind, example
    hourly price, typical use.
`widget(name)`
    A calculator widget ("calculator", "adapter", "quick", "cost") in its default state,
    rendered by `calc.render.widget(name, locale)`.
`accuracy_table()`
    The accuracy page's results (summary of both modes' median and worst error, plot, tables),
    built from calc/data/measurements.json and ground_truth.json by `calc.render_accuracy`.

Front matter values (`title:`, `description:`) may hold macros too (quote the YAML value);
they are rendered as plain text.

The digit check
---------------
A digit typed into prose fails the build (`digit_problems`), because it would not follow the
page's number format (Persian digits on `fa` pages) nor change with calc. Allowed: anything
inside `{{ }}` / `{% %}` / `{## ##}`, code spans and blocks, HTML tags and `<cite>` (titles of
cited works), attribute lists (`{ #13b-on-24gb }`), link targets, ordered-list markers, catalog
names of models and GPUs ("Llama 3.1 8B", "RTX 4090"; but not a GPU's memory size, such as
the "80 GB" of "A100 80 GB", which is a figure: write `gpu_name("a100-80")`), and words with
digits after a Latin letter (BF16, NF4, H100, Qwen2.5, ZeRO-3, Phi-3, S3). Prefer `model_name()` / `gpu_name()`.

Other duties of this hook
-------------------------
- The build fails when a page lacks a translation (`docs/<page>.<locale>.md` for every
  locale), instead of silently showing English.
- Pages with FAQ questions (`## Question { #id .faq }`) get schema.org FAQPage data (JSON-LD).
- On right-to-left pages, runs of Latin text are wrapped in `<span dir="ltr" lang="en">` so the
  bidi algorithm cannot reorder them ("ZeRO-3/FSDP", "Llama 3.1 8B") and screen readers read
  them in English (`calc.bidi.isolate_latin`, the same function as the widgets').
- `<html>` gets the page's `dir`; hreflang alternates are made absolute (site_url), and each
  page's directory gets a small sitemap.xml, which Material's language switcher fetches
  beside every alternate; 404.html exists per locale (`/<locale>/404.html`).
- Pages with a widget load `assets/calc/page.js` (module) and `calc.css` (overrides/main.html
  reads `page.meta.calc_js` / `calc_css`).
- Content-Security-Policy: overrides/main.html puts `<meta http-equiv="Content-Security-Policy"
  content="__CSP__">` first in every page's head; `on_post_page` (and `on_post_template` for
  404.html) replaces the placeholder with `CSP_DIRECTIVES` plus the SHA-256 of each inline
  script the page itself carries (Material's bootstrap scripts), so nothing else runs inline.
- Search, one index per locale: Material's search plugin (with static-i18n) writes a single
  `search/search_index.json` of every locale's pages; after the whole build
  (`write_locale_search_index`) each locale gets its own, `search/search_index.json` for the
  default one and `<locale>/search/search_index.json` for the others, holding only that
  locale's pages (locations relative to the locale's root) with the lunr languages of
  `SEARCH_LANGS`. Material fetches the index from `search/search_index.json` under `base` of
  the page's `__config`, so a locale's pages (and its 404 page) get `base` = the locale's root
  (`point_search_at_locale`); nothing else of the site reads `__config`'s `base` (Material
  uses it for search results' links and, with features this site leaves off, for instant
  navigation and versions). Persian-only letters, Persian digits and ZWNJ are made word
  characters of lunr's Arabic trimmer (`patch_lunr_persian`), so Persian words are found; the
  search dialog gets an accessible name.
- After the default-language build (once per `mkdocs build`), Pyodide's runtime files are
  copied from node_modules/pyodide into `assets/pyodide/` and a real wheel of `calc` is built
  from pyproject.toml into `assets/calc/` with `assets/calc/manifest.json` naming it. Then Node
  runs `make_snapshot.mjs`: a memory snapshot of Pyodide with calc imported and warmed up
  (`assets/calc/snapshot.bin`, named in the manifest), which the worker restores instead of
  booting Python (kept in `.cache/snapshot/`, or $CALC_SNAPSHOT_CACHE, keyed by the runtime
  files, the wheel and the script, so unchanged inputs are not snapshotted again).
"""

from __future__ import annotations

import copy
import hashlib
import html
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urljoin

from mkdocs.exceptions import PluginError
from mkdocs.plugins import CombinedEvent, event_priority

ROOT = Path(__file__).resolve().parent


def _ensure_path() -> None:
    """`calc` lives beside this file, which mkdocs keeps on sys.path only while it imports the
    hook; every event puts it back before importing calc."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


_ensure_path()

log = logging.getLogger("mkdocs.hooks.build_tables")

#: Locale ids of the site (calc's ids); the theme language of each.
LOCALES = ("en", "tr", "pt", "ru", "fa")
DEFAULT_LOCALE = "en"
BYTE_UNITS = frozenset({"GiB", "GB", "MiB"})

#: Runtime files of the pinned Pyodide that the site serves itself (plus every *.map file).
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
    "package.json",
)

# Representative presets of the tables (catalog ids; a missing id fails the build).
ROT_ROWS = (
    (Decimal("0.5"), "qwen2.5-0.5b"),
    (Decimal("1.5"), "qwen2.5-1.5b"),
    (Decimal("3"), "qwen2.5-3b"),
    (Decimal("7"), "qwen2.5-7b"),
    (Decimal("8"), "llama-3.1-8b"),
    (Decimal("14"), "qwen2.5-14b"),
    (Decimal("32"), "qwen2.5-32b"),
    (Decimal("70"), "llama-3.1-70b"),
)
GPU_CHOICE_ROWS = (
    ("7/8B", "llama-3.1-8b"),
    ("13/14B", "qwen2.5-14b"),
    ("32/34B", "qwen2.5-32b"),
    ("70B", "llama-3.1-70b"),
)
METHODS = ("full", "lora", "qlora")
#: How many fewest-cards options a row of the GPU choice table lists.
MULTI_GPU_OPTIONS = 3


# --- locale ---------------------------------------------------------------------------------


def site_locale(config) -> str:
    """The calc locale of the build: `config.theme["language"]` (set per build by static-i18n)."""
    _ensure_path()
    lang = str(config.theme["language"] or DEFAULT_LOCALE)
    loc = lang.replace("_", "-").split("-", 1)[0].lower()
    if loc not in LOCALES:
        raise PluginError(f"build_tables: theme language {lang!r} is not one of {LOCALES}")
    return loc


# --- the macros -----------------------------------------------------------------------------


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _raw_number(value: object) -> object:
    """A number for data-value (`calc.html.raw` writes it): fractions as exact decimals."""
    if isinstance(value, bool) or not isinstance(value, (int, Fraction, float, Decimal)):
        raise TypeError(f"a number is needed, not {type(value).__name__}")
    return _fmt_value(value)


def _fmt_value(value: object) -> object:
    """What calc.fmt accepts: Fractions become Decimals."""
    if isinstance(value, Fraction):
        return Decimal(value.numerator) / Decimal(value.denominator)
    return value


def _field_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "value") and isinstance(getattr(value, "value"), str):  # str-Enum
        return value.value
    return str(value)


@lru_cache(maxsize=None)
def _estimate(fields: tuple[tuple[str, str], ...]):
    from calc import engine
    from calc.fields import parse

    return engine.estimate(parse(dict(fields)))


def estimate_of(**fields: object):
    """calc.engine.estimate of interface fields (values of any type, converted to text)."""
    return _estimate(tuple(sorted((k, _field_text(v)) for k, v in fields.items())))


class Macros:
    """The template context of one locale."""

    def __init__(self, locale: str):
        self.locale = locale

    # - figures -

    def fig(self, name: str, value: object, unit: str, digits: int | None = None) -> str:
        from calc import html as kit
        from calc.fmt import fmt

        text = fmt(_fmt_value(value), unit, self.locale, digits)
        if unit in BYTE_UNITS:
            if isinstance(value, bool) or not isinstance(value, (int, Decimal, Fraction, float)):
                raise TypeError(f"fig({name!r}): {unit} needs integer bytes, not {value!r}")
            if value != int(value):
                raise ValueError(f"fig({name!r}): {unit} needs integer bytes, not {value!r}")
            return kit.figure(name, text, bytes_=int(value))
        return kit.figure(name, text, value=_raw_number(value))

    def est(self, component: str = "total", unit: str = "GiB", digits: int | None = None,
            name: str | None = None, **fields: object) -> str:
        e = estimate_of(**fields)
        value = e.get(component)
        if component == "trainable_params" and unit in BYTE_UNITS:
            unit = "params"
        return self.fig(name or component, value, unit, digits)

    def rot(self, method: str, billions: object, digits: int | None = None,
            name: str = "rule_of_thumb") -> str:
        from calc.engine import rule_of_thumb

        return self.fig(name, rule_of_thumb(_number(billions), method), "GB", digits)

    def quick(self, n: object, bpp: object, act: object, digits: int | None = None,
              name: str = "quick_full") -> str:
        from calc.engine import quick_full

        return self.fig(name, quick_full(_number(n), _number(bpp), _number(act)), "GB", digits)

    def adapter(self, d_in: int, d_out: int, rank: int, dtype: str = "bf16",
                unit: str = "params", digits: int | None = None, name: str | None = None) -> str:
        from calc.engine import adapter_bytes, lora_layer_params

        if unit == "params":
            return self.fig(name or "adapter_params", lora_layer_params(d_in, d_out, rank),
                            "params", digits)
        return self.fig(name or "adapter_bytes", adapter_bytes(d_in, d_out, rank, dtype), unit,
                        digits)

    def cost(self, hours: object, gpu: str | None = None, price: object = None,
             digits: int | None = None, name: str = "cost") -> str:
        from calc import catalog, engine

        if price is None:
            if gpu is None:
                raise ValueError("cost(): give gpu= (a catalog id) or price=")
            price = catalog.gpu(gpu).price_per_hour
            if price is None:
                raise ValueError(f"cost(): the catalog has no example price for {gpu!r}")
        return self.fig(name, engine.cost(_number(hours), _number(price)), "USD", digits)

    def num(self, x: object, unit: str = "number", digits: int | None = None,
            name: str = "value") -> str:
        return self.fig(name, _number(x), unit, digits)

    def card(self, gpu: str, what: str = "memory", unit: str = "GiB",
             digits: int | None = None, name: str | None = None) -> str:
        from calc import catalog, engine

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

    # - text -

    def t(self, key: str, **params: object) -> str:
        from calc import i18n

        if key not in i18n.catalog(DEFAULT_LOCALE):
            raise KeyError(f"t(): calc's English catalog has no key {key!r}")
        return _esc(i18n.t(key, self.locale, **params))

    def model_name(self, preset_id: str) -> str:
        from calc import catalog

        return _esc(catalog.model(preset_id).name)

    def gpu_name(self, gpu_id: str) -> str:
        from calc import catalog

        return _esc(catalog.gpu_label(catalog.gpu(gpu_id), self.locale))

    # - tables -

    def _table(self, header: list[str], aligns: list[str], rows: list[list[str]]) -> str:
        def cell(text: str) -> str:
            return text.replace("|", "&#124;").replace("\n", " ")

        lines = ["| " + " | ".join(cell(h) for h in header) + " |",
                 "| " + " | ".join(aligns) + " |"]
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
        return "\n".join(lines)

    def table_rule_of_thumb(self) -> str:
        """Rule of thumb (GB) beside the detailed engine (GB) for a preset of each size."""
        from calc import catalog

        t = self.t
        header = [t("table.model_size"), t("table.preset")]
        aligns = [":--", ":--"]
        for method in ("lora", "qlora", "full"):
            header += [t("table.rot." + method), t("table.engine." + method)]
            aligns += ["--:", "--:"]
        rows = []
        for billions, preset in ROT_ROWS:
            row = [self.num(billions, "billions", name="model_size"),
                   _esc(catalog.model(preset).name)]
            for method in ("lora", "qlora", "full"):
                row.append(self.rot(method, billions, name=f"rule_of_thumb.{method}"))
                fields = {"model": preset, "method": method}
                if method == "full":  # the rule's "full" has no FP32 master copy
                    fields["optimizer"] = "adamw-no-master"
                row.append(self.est(unit="GB", name=f"total.{method}", **fields))
            rows.append(row)
        return self._table(header, aligns, rows)

    def table_gpu_choice(self) -> str:
        """Engine total per size and method; the smallest cards that fit, else fewest cards."""
        from calc import catalog, engine
        from calc.types import GpuKind

        t = self.t
        header = [t("table.model_size"), t("table.method"), t("table.total"),
                  t("table.one_card"), t("table.zero3")]
        aligns = [":--", ":--", "--:", ":--", ":--"]
        rows = []
        for size, preset in GPU_CHOICE_ROWS:
            for method in METHODS:
                e = estimate_of(model=preset, method=method)
                fits = [f for f in engine.gpu_fit(e) if f.gpu.kind is GpuKind.DISCRETE]
                one = sorted((f for f in fits if f.fits), key=lambda f: f.gpu.memory_bytes)
                if one:
                    smallest = one[0].gpu.memory_bytes
                    names = (t("list.separator") + " ").join(catalog.gpu_label(f.gpu, self.locale)
                                      for f in one if f.gpu.memory_bytes == smallest)
                    larger = any(f.gpu.memory_bytes > smallest for f in one)
                    one_text = t("table.and_larger", cards=names) if larger else _esc(names)
                    multi_text = "—"
                else:
                    one_text = "—"
                    multi = sorted((f for f in fits if f.cards is not None),
                                   key=lambda f: (f.cards, -f.gpu.memory_bytes))
                    multi_text = (t("list.separator") + " ").join(
                        t("table.cards_of", n=f.cards, card=catalog.gpu_label(f.gpu, self.locale))
                        for f in multi[:MULTI_GPU_OPTIONS]) or "—"
                rows.append([
                    self._size_label(size),
                    t("choice.method." + method),
                    self.est(unit="GiB", name="total", model=preset, method=method),
                    one_text,
                    multi_text,
                ])
        return self._table(header, aligns, rows)

    def _size_label(self, label: str) -> str:
        """"7/8B" -> the two sizes in the locale's billions format, joined by a slash."""
        parts = label.rstrip("B").split("/")
        return " / ".join(self.num(Decimal(p), "billions", name="model_size") for p in parts)

    def table_gpu_catalog(self) -> str:
        from calc import catalog

        t = self.t
        header = [t("table.gpu"), t("table.memory"), t("table.kind"), t("table.price"),
                  t("table.use")]
        aligns = [":--", "--:", ":--", "--:", ":--"]
        rows = []
        for g in catalog.gpus():
            price = (self.fig("gpu_price", g.price_per_hour, "USD")
                     if g.price_per_hour is not None else "—")
            rows.append([
                _esc(catalog.gpu_label(g, self.locale)),
                self.fig("gpu_memory", g.memory_bytes, "GiB", 0),
                t("gpu.kind." + g.kind.value),
                price,
                t("gpu.use." + g.use),
            ])
        return self._table(header, aligns, rows)

    # - widgets -

    def widget(self, name: str) -> str:
        from calc.render import widget as render_widget

        return render_widget(name, self.locale)

    def accuracy_table(self) -> str:
        """The accuracy page's results: summary, plot and tables (calc.render_accuracy)."""
        from calc.render_accuracy import accuracy_table

        return accuracy_table(self.locale)

    # - the context -

    def context(self) -> dict[str, Any]:
        from calc import i18n

        names = ("fig", "est", "rot", "quick", "adapter", "cost", "num", "card", "t",
                 "model_name", "gpu_name", "table_rule_of_thumb", "table_gpu_choice",
                 "table_gpu_catalog", "widget", "accuracy_table")
        ctx: dict[str, Any] = {n: getattr(self, n) for n in names}
        ctx["C"] = constants()
        ctx["locale"] = self.locale
        ctx["dir"] = i18n.locale_dir(self.locale)
        return ctx


def _number(x: object) -> object:
    """Template literals (floats such as 0.5) as exact Decimals; other numbers unchanged."""
    if isinstance(x, bool):
        raise TypeError(f"a number is needed, not {x!r}")
    if isinstance(x, float):
        return Decimal(repr(x))
    if isinstance(x, str):
        return Decimal(x)
    return x


@lru_cache(maxsize=None)
def constants() -> SimpleNamespace:
    """`C` in templates: calc.engine's upper-case constants, enum keys as plain ids."""
    from calc import engine

    values: dict[str, Any] = {}
    for key in dir(engine):
        if not key.isupper() or key.startswith("_"):
            continue
        value = getattr(engine, key)
        if isinstance(value, dict):
            value = {(k.value if hasattr(k, "value") else k): v for k, v in value.items()}
        values[key] = value
    values["FULL_BYTES_PER_PARAM"] = (
        engine.BF16_BYTES + engine.GRAD_BYTES + values["OPTIMIZER_BYTES"]["adamw"])
    return SimpleNamespace(**values)


# --- rendering ------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _jinja_env():
    import jinja2

    return jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        comment_start_string="{##",
        comment_end_string="##}",
    )


def render_markdown(markdown: str, locale: str, src: str = "<string>", offset: int = 0) -> str:
    """Render one page's Markdown as a Jinja2 template for `locale` (also used by tests)."""
    import jinja2

    _ensure_path()
    from calc.errors import CalcError

    try:
        template = _jinja_env().from_string(markdown)
        return template.render(Macros(locale).context())
    except jinja2.TemplateSyntaxError as exc:
        raise PluginError(f"{src}:{exc.lineno + offset}: template syntax error: {exc.message}") from exc
    except CalcError as exc:
        raise PluginError(f"{src} ({locale}): calc rejected a macro's input: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - any macro failure must fail the build, with context
        line = _template_line(exc)
        where = f"{src}:{line + offset}" if line else src
        raise PluginError(f"{where} ({locale}): {type(exc).__name__}: {exc}") from exc


def _template_line(exc: BaseException) -> int | None:
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


# --- mkdocs events --------------------------------------------------------------------------


@event_priority(-110)  # after static-i18n's on_config (-100), which sets the build's language
def on_config(config):
    locale = site_locale(config)
    from calc import i18n

    toc = config.mdx_configs.setdefault("toc", {})
    key = "site.permalink"
    if key in i18n.catalog(DEFAULT_LOCALE):
        toc["permalink_title"] = i18n.t(key, locale)
    return config


def on_files(files, config):
    check_translations(Path(config.docs_dir))
    return files


def check_translations(docs_dir: Path) -> None:
    """Every page exists in every locale (`x.md` and `x.<locale>.md`); nothing stray."""
    pages = sorted(p for p in docs_dir.rglob("*.md"))
    base: set[Path] = set()
    localized: dict[str, set[Path]] = {loc: set() for loc in LOCALES if loc != DEFAULT_LOCALE}
    problems = []
    for p in pages:
        rel = p.relative_to(docs_dir)
        parts = rel.name.split(".")
        if len(parts) == 2:
            base.add(rel)
        elif len(parts) == 3 and parts[1] in localized:
            localized[parts[1]].add(rel.with_name(parts[0] + ".md"))
        else:
            problems.append(f"{rel}: not <page>.md or <page>.<locale>.md with a site locale")
    for loc, have in localized.items():
        for rel in sorted(base - have):
            problems.append(f"{rel.with_suffix('')}.{loc}.md is missing (no {loc} translation)")
        for rel in sorted(have - base):
            problems.append(f"{rel.with_suffix('')}.{loc}.md has no English page {rel}")
    if problems:
        raise PluginError("build_tables: translations incomplete:\n  " + "\n  ".join(problems))


def on_page_markdown(markdown, page, config, files):
    locale = site_locale(config)
    src = page.file.src_uri
    file_locale = getattr(page.file, "locale", locale)
    if file_locale != locale:
        raise PluginError(f"{src}: built for {locale!r} from a {file_locale!r} file (fallback)")
    offset = _front_matter_lines(page.file.abs_src_path)
    problems = [f"{src}:{line + offset}: {text}" for line, text in digit_problems(markdown)]
    for key, value in page.meta.items():
        if isinstance(value, str):
            problems += [f"{src}: front matter {key}: {text}" for _, text in digit_problems(value)]
    if problems:
        raise PluginError(
            "build_tables: digits typed into prose. Write figures with the macros (see the "
            "docstring of build_tables.py), names with model_name()/gpu_name(), titles of "
            "cited works inside <cite>...</cite>:\n  " + "\n  ".join(problems))
    for key, value in list(page.meta.items()):  # title/description may hold macros too
        if isinstance(value, str) and "{{" in value:
            page.meta[key] = html.unescape(_TAGS.sub("", render_markdown(value, locale, src)))
    out = render_markdown(markdown, locale, src, offset)
    if "data-calc-widget" in out:  # load the widgets' script and styles on this page only
        assets = Path(config.docs_dir) / "assets" / "calc"
        page.meta["calc_js"] = (assets / "page.js").is_file()
        page.meta["calc_css"] = (assets / "calc.css").is_file()
    return out


def _front_matter_lines(path: str | None) -> int:
    """How many lines the YAML front matter (stripped before on_page_markdown) takes."""
    if not path:
        return 0
    lines = Path(path).read_text(encoding="utf-8-sig").split("\n")
    if not lines or lines[0].rstrip() != "---":
        return 0
    for i, line in enumerate(lines[1:], start=1):
        if line.rstrip() in ("---", "..."):
            n = i + 1
            while n < len(lines) and not lines[n].strip():  # mkdocs drops the blank lines too
                n += 1
            return n
    return 0


# --- the digit check ------------------------------------------------------------------------

_TAGS = re.compile(r"<[^>]*>")
_DIGITS = re.compile(r"[0-9\u0660-\u0669\u06f0-\u06f9]+")
_FOREIGN_DIGIT = re.compile(r"[\u0660-\u0669\u06f0-\u06f9]")
# What is not prose, removed before the check (newlines are kept, so line numbers stay).
_NOT_PROSE = (
    re.compile(r"^(?P<f>```|~~~).*?^(?P=f)[^\n]*$", re.M | re.S),  # fenced code
    re.compile(r"\{\{.*?\}\}", re.S),  # Jinja expressions
    re.compile(r"\{%.*?%\}", re.S),  # Jinja statements
    re.compile(r"\{##.*?##\}", re.S),  # Jinja comments
    re.compile(r"<!--.*?-->", re.S),  # HTML comments
    re.compile(r"<cite\b[^>]*>.*?</cite>", re.S),  # titles of cited works ("8-bit Optimizers ...")
    re.compile(r"(`+).+?\1", re.S),  # code spans
    re.compile(r"\{:?\s*[#.:][^}\n]*\}"),  # attribute lists { #id .class }
    re.compile(r"\]\([^)\n]*\)"),  # link and image destinations
    re.compile(r"^\s*\[[^\]\n]+\]:\s*\S+.*$", re.M),  # link reference definitions
    re.compile(r"<[^>\n]*>"),  # HTML tags and autolinks
    re.compile(r"^\s*\d+[.)](?=\s)", re.M),  # ordered-list markers
    re.compile(r"^\s*(?:!!!|\?\?\?\+?)[^\n]*$", re.M),  # admonition markers: type only
)


def _blank(m: re.Match) -> str:
    return " " + "\n" * m.group(0).count("\n")


@lru_cache(maxsize=None)
def _name_pattern() -> re.Pattern:
    """Catalog names (models; GPUs' model names) and their runs of words that start with a
    word and hold a digit ("Llama 3.1 8B", "RTX 4090"): digits inside names are not figures.
    A card's memory size ("A100 80 GB") is a figure (`gpu_name()` writes it in the page's
    digits), so it is not allowed typed."""
    from calc import catalog

    names = [m.name for m in catalog.models()] + [g.product for g in catalog.gpus()
                                                  if g.product is not None]
    found: set[str] = set()
    for name in names:
        words = name.split()
        for i in range(len(words)):
            if not words[i][0].isalpha():
                continue
            for j in range(i + 1, len(words) + 1):
                run = " ".join(words[i:j])
                if any(ch.isdigit() for ch in run):
                    found.add(run)
    alternatives = "|".join(re.escape(n) for n in sorted(found, key=len, reverse=True))
    return re.compile(rf"(?<![\w.-])(?:{alternatives})(?![\w])")


def digit_problems(markdown: str) -> list[tuple[int, str]]:
    """Digits typed into prose: (line number, the line) for each offending line.

    Allowed: digits inside `{{ ... }}` and other Jinja, code, attribute lists, link targets,
    HTML tags, `<cite>` (titles of cited works), ordered-list markers, catalog names and
    words that contain digits after a Latin letter (BF16, NF4, H100, Qwen2.5, ZeRO-3, S3). Everything else, including Persian digits,
    must come from a macro, which writes them in the page's own digits."""
    _ensure_path()
    text = markdown
    for pattern in _NOT_PROSE:
        text = pattern.sub(_blank, text)
    text = _name_pattern().sub(" ", text)
    bad: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        for m in _DIGITS.finditer(line):
            i = m.start()
            before = line[i - 1] if i else ""
            if _FOREIGN_DIGIT.search(m.group(0)):
                pass  # typed Persian/Arabic digits: always a problem
            elif before.isascii() and before.isalpha():
                continue  # BF16, H100, Qwen2
            elif before in ".," and i >= 2 and (line[i - 2].isdigit() or line[i - 2].isalpha()):
                continue  # the rest of a number already reported, or Qwen2.5
            elif before == "-" and i >= 2 and line[i - 2].isascii() and line[i - 2].isalpha():
                continue  # ZeRO-3, Phi-3
            original = markdown.split("\n")[number - 1].strip()
            bad.append((number, original))
            break
    return bad


# --- right to left: Latin runs ----------------------------------------------------------------

#: Start-tag markers of elements the prose pass leaves alone: any element with its own `dir`,
#: the widgets (calc.render isolates their text itself) and heading permalinks.
_BIDI_SKIP_MARKERS = (" dir=", "data-calc-widget", "headerlink")


def on_page_content(html_text, page, config, files):
    from calc import i18n

    faq = faq_structured_data(html_text)
    if faq is not None:
        # JSON-LD in a <script>: "</" must not close it
        page.meta["faq_jsonld"] = json.dumps(faq, ensure_ascii=False).replace("</", "<\\/")
    if i18n.locale_dir(site_locale(config)) == "rtl":
        from calc.bidi import isolate_latin
        return isolate_latin(html_text, _BIDI_SKIP_MARKERS)
    return html_text


_FAQ_HEADING = re.compile(r'<h2\b[^>]*\bclass="[^"]*\bfaq\b[^"]*"[^>]*>(.*?)</h2>', re.S)
_HEADERLINK = re.compile(r'<a\b[^>]*class="headerlink"[^>]*>.*?</a>', re.S)
_NEXT_SECTION = re.compile(r"<h[12]\b")


_BLOCK_END = re.compile(r"</(?:p|li|h[1-6]|td|th|tr|div|dd|dt|blockquote|pre|table)>|<br\s*/?>")


def _plain(fragment: str) -> str:
    """Text of an HTML fragment: inline tags vanish, block ends become spaces."""
    text = _BLOCK_END.sub(" ", _HEADERLINK.sub("", fragment))
    text = html.unescape(_TAGS.sub("", text))
    return re.sub(r"\s+", " ", text).strip()


def faq_structured_data(html_text: str) -> dict | None:
    """schema.org FAQPage of the questions (`## Question { #id .faq }`) and their answers, for
    search engines; None on a page without such questions."""
    questions = []
    for m in _FAQ_HEADING.finditer(html_text):
        rest = html_text[m.end():]
        nxt = _NEXT_SECTION.search(rest)
        answer = _plain(rest[:nxt.start()] if nxt else rest)
        question = _plain(m.group(1))
        if question and answer:
            questions.append({"@type": "Question", "name": question,
                              "acceptedAnswer": {"@type": "Answer", "text": answer}})
    if not questions:
        return None
    return {"@context": "https://schema.org", "@type": "FAQPage", "mainEntity": questions}


_HTML_TAG = re.compile(r"<html\b([^>]*)>")
_ALTERNATE = re.compile(r'<link rel="alternate" href="([^"]*)" hreflang="([^"]*)">')


def on_post_page(output, page, config):
    """`<html dir>`; absolute hreflang alternates; the page directory's own sitemap."""
    from calc import i18n

    direction = i18n.locale_dir(site_locale(config))

    def add_dir(m: re.Match) -> str:
        attrs = re.sub(r'\sdir="[^"]*"', "", m.group(1))
        return f'<html{attrs} dir="{direction}">'

    output = _HTML_TAG.sub(add_dir, output, count=1)
    output = label_search_dialog(output)
    output = point_search_at_locale(output, site_locale(config))
    page_url = page.canonical_url
    if not page_url:
        raise PluginError("build_tables: site_url must be set (hreflang alternates are absolute)")
    alternates: list[tuple[str, str]] = []

    def absolute(m: re.Match) -> str:
        href = urljoin(page_url, html.unescape(m.group(1)))
        alternates.append((m.group(2), href))
        return f'<link rel="alternate" href="{_esc(href)}" hreflang="{m.group(2)}">'

    output = _ALTERNATE.sub(absolute, output)
    write_page_sitemap(Path(config.site_dir), config.site_url, page_url, alternates)
    return apply_csp(output)  # last: the hashes are of the final inline scripts


# --- Content-Security-Policy -----------------------------------------------------------------

#: What overrides/main.html writes as the policy of its <meta http-equiv>, filled in per page.
CSP_PLACEHOLDER = "__CSP__"
#: The site's own origin and nothing else. 'wasm-unsafe-eval' lets Pyodide compile its
#: WebAssembly (it allows no JavaScript eval); the inline scripts of each page are allowed by
#: their SHA-256 (added by `content_security_policy`). `frame-ancestors` is not here: a <meta>
#: policy ignores it, so serve.py adds it to the header (FRAME_ANCESTORS there).
CSP_DIRECTIVES: tuple[tuple[str, str], ...] = (
    ("default-src", "'self'"),
    ("script-src", "'self' 'wasm-unsafe-eval'"),
    ("style-src", "'self'"),
    ("img-src", "'self' data:"),  # Material's icons are data: URIs in its CSS
    ("font-src", "'self'"),
    ("connect-src", "'self'"),
    ("worker-src", "'self'"),
    ("manifest-src", "'self'"),
    ("object-src", "'none'"),
    ("base-uri", "'self'"),
    ("form-action", "'self'"),
)
_INLINE_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)
_SCRIPT_SRC = re.compile(r"\ssrc\s*=", re.I)
_SCRIPT_TYPE = re.compile(r"""\stype\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
#: <script type> values that run (HTML's JavaScript MIME types, and modules); any other type is
#: a data block (JSON, JSON-LD) that never runs, so the policy need not allow it.
_JS_TYPES = frozenset({"", "module", "text/javascript", "application/javascript",
                       "application/ecmascript", "application/x-javascript",
                       "application/x-ecmascript", "text/ecmascript", "text/x-javascript",
                       "text/x-ecmascript", "text/jscript", "text/livescript",
                       "text/javascript1.0", "text/javascript1.1", "text/javascript1.2",
                       "text/javascript1.3", "text/javascript1.4", "text/javascript1.5"})


def inline_script_hashes(html_text: str) -> list[str]:
    """CSP source expressions ('sha256-...') of the inline scripts that run, in page order."""
    import base64

    out: list[str] = []
    for m in _INLINE_SCRIPT.finditer(html_text):
        attrs = m.group(1)
        if _SCRIPT_SRC.search(attrs):
            continue
        t = _SCRIPT_TYPE.search(attrs)
        kind = next((g for g in t.groups() if g is not None), "") if t else ""
        if kind.strip().lower() not in _JS_TYPES:
            continue
        body = m.group(2).replace("\r\n", "\n").replace("\r", "\n")  # as the parser sees it
        digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode()
        source = f"'sha256-{digest}'"
        if source not in out:
            out.append(source)
    return out


def content_security_policy(html_text: str) -> str:
    """The policy of one page: CSP_DIRECTIVES, script-src with the page's inline scripts."""
    hashes = inline_script_hashes(html_text)
    parts = []
    for name, value in CSP_DIRECTIVES:
        if name == "script-src" and hashes:
            value = f"{value} {' '.join(hashes)}"
        parts.append(f"{name} {value}")
    return "; ".join(parts)


def apply_csp(html_text: str) -> str:
    """Fill in the <meta http-equiv="Content-Security-Policy"> of overrides/main.html."""
    marker = f'content="{CSP_PLACEHOLDER}"'
    if html_text.count(marker) != 1:
        raise PluginError("build_tables: the page has no Content-Security-Policy placeholder "
                          f"({marker}, overrides/main.html) or more than one")
    policy = content_security_policy(html_text)
    assert not set(policy) & set('"<>&'), policy  # nothing to escape: readable in the page
    return html_text.replace(marker, f'content="{policy}"', 1)


_SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
_SEARCH_LABEL = re.compile(r'class="md-search__input" name="query" aria-label="([^"]*)"')


def label_search_dialog(output: str) -> str:
    """Material's search dialog has no accessible name; give it the search field's own
    (translated) label."""
    m = _SEARCH_LABEL.search(output)
    if not m or _SEARCH_DIALOG not in output:
        return output
    return output.replace(_SEARCH_DIALOG, _SEARCH_DIALOG[:-1] + f' aria-label="{m.group(1)}">', 1)


def write_page_sitemap(site_dir: Path, site_url: str, page_url: str,
                       alternates: list[tuple[str, str]]) -> None:
    """Material's language switcher fetches `sitemap.xml` beside every hreflang alternate, i.e.
    in each page's directory; give every page directory a valid sitemap of that page (with its
    alternates) so that no request 404s. The site root keeps static-i18n's full sitemap."""
    base = site_url if site_url.endswith("/") else site_url + "/"
    if not page_url.startswith(base) or page_url == base:
        return
    rel = page_url[len(base):]
    directory = site_dir / rel
    directory.mkdir(parents=True, exist_ok=True)
    links = "".join(
        f'\n    <xhtml:link rel="alternate" hreflang="{_esc(lang)}" href="{_esc(href)}"/>'
        for lang, href in alternates)
    (directory / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        ' xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
        f"  <url>\n    <loc>{_esc(page_url)}</loc>{links}\n  </url>\n</urlset>\n",
        encoding="utf-8")


def on_pre_template(template, template_name, config):
    """404.html is rendered after the pages, with the language menu static-i18n left pointing at
    the last page; point it at each language's home page instead."""
    if template_name == "404.html":
        i18n_plugin = config.plugins.get("i18n")
        roots = getattr(i18n_plugin, "extra_alternate", None)
        if roots:
            # static-i18n sets it as an attribute of config.extra (which Jinja reads first)
            config.extra.alternate = copy.deepcopy(roots)
            config.extra["alternate"] = copy.deepcopy(roots)
    return template


def not_found_heading(locale: str) -> str:
    """The 404 page's heading (overrides/404.html) in the locale's words and digits."""
    from calc import i18n
    from calc.fmt import fmt

    return f"{fmt(404, 'number', locale)} – {i18n.t('site.not_found', locale)}"


#: The default language's 404 page: every later language build rewrites site/404.html.
_root_404: str | None = None


def on_post_template(output_content, template_name, config):
    """404.html per locale: `<html dir>`, absolute alternates; `/404.html` stays the default
    language's, each other locale gets `/<locale>/404.html` (serve.py uses them)."""
    global _root_404
    if template_name != "404.html":
        return output_content
    from calc import i18n

    locale = site_locale(config)
    direction = i18n.locale_dir(locale)
    out = _HTML_TAG.sub(lambda m: f'<html{m.group(1)} dir="{direction}">', output_content, count=1)
    out = label_search_dialog(out)
    out = point_search_at_locale(out, locale)
    base = config.site_url or "/"
    out = _ALTERNATE.sub(
        lambda m: (f'<link rel="alternate" href="{_esc(urljoin(base, html.unescape(m.group(1))))}"'
                   f' hreflang="{m.group(2)}">'), out)
    out = out.replace("__NOT_FOUND__", _esc(not_found_heading(locale)), 1)
    out = apply_csp(out)
    if locale == DEFAULT_LOCALE:
        _root_404 = out
        return out
    target = Path(config.site_dir) / locale / "404.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(out, encoding="utf-8")
    return _root_404 if _root_404 is not None else out


def _ship_runtime(config):
    """Once per full build (the default language is built first, then static-i18n builds the
    others into the same directory without cleaning it): ship Pyodide and the calc wheel."""
    site_dir = Path(config.site_dir)
    patch_lunr_persian(site_dir)  # every language build copies the theme's assets again
    if site_locale(config) != DEFAULT_LOCALE:
        return
    copy_pyodide(ROOT / "node_modules" / "pyodide", site_dir / "assets" / "pyodide")
    wheel = build_wheel(ROOT, site_dir / "assets" / "calc")
    build_snapshot(site_dir / "assets" / "pyodide", wheel, site_dir / "assets" / "calc")


#: The locale of each build under way: static-i18n builds the other languages inside the
#: default language's post-build, and leaves the theme's language at the last one built.
_building: list[str] = []


def on_pre_build(config):
    _building.append(site_locale(config))


@event_priority(-200)  # after static-i18n's on_post_build (-100): see write_locale_search_index
def _split_search_index(config):
    locale = _building.pop() if _building else site_locale(config)
    write_locale_search_index(Path(config.site_dir), locale)


#: Every language build's post-build: `_ship_runtime` at the default priority, then (last of
#: all) `_split_search_index`.
on_post_build = CombinedEvent(_ship_runtime, _split_search_index)


# --- search: one index per locale ------------------------------------------------------------

#: lunr languages of each locale's search index (its `config.lang`). English is in every list
#: but the default locale's, for the Latin words every page has (LoRA, GPU, model names): with
#: two or more languages Material's worker builds lunr.multiLanguage, whose trimmer keeps the
#: word characters of all of them (Latin ones included) and strips punctuation, as the single
#: index with all five languages did; a lone non-English language's trimmer (Cyrillic only for
#: `ru`) would cut the Latin words away. lunr has no Persian: `fa` uses Arabic, with the
#: Persian letters added (`patch_lunr_persian`, in lunr.multi, which is loaded for two or more
#: languages only).
SEARCH_LANGS: dict[str, tuple[str, ...]] = {
    "en": ("en",),
    "tr": ("en", "tr"),
    "pt": ("en", "pt"),
    "ru": ("en", "ru"),
    "fa": ("en", "ar"),
}
#: The index's `config.pipeline`: Material removes from lunr's pipeline the functions not named
#: here (of the languages in `lang`). The trimmer stays, so that the default locale's lone
#: `en` keeps lunr's own trimmer (punctuation off the words' ends: "(LoRA)" is found as
#: "LoRA"); the stemmers go, as Material's default (`stopWordFilter` alone) has them go.
SEARCH_PIPELINE = ("stopWordFilter", "trimmer")


def locale_root(locale: str) -> str:
    """The locale's directory under the site's root: "" for the default locale, "tr/", ..."""
    return "" if locale == DEFAULT_LOCALE else f"{locale}/"


def locale_search_index(index: dict, locale: str) -> dict:
    """The search index of one locale from the search plugin's: only the locale's documents,
    their locations relative to the locale's root, and the locale's lunr languages."""
    root = locale_root(locale)
    others = tuple(locale_root(loc) for loc in LOCALES if loc not in (locale, DEFAULT_LOCALE))
    docs = []
    for doc in index["docs"]:
        location = doc["location"]
        if location.startswith(others) or not location.startswith(root):
            continue
        docs.append({**doc, "location": location[len(root):]})
    config = {**index["config"], "lang": list(SEARCH_LANGS[locale]),
              "pipeline": list(SEARCH_PIPELINE)}
    return {**index, "config": config, "docs": docs}


def write_locale_search_index(site_dir: Path, locale: str) -> Path:
    """Write the locale's own search index, `<locale root>/search/search_index.json`.

    Runs after every language build, after static-i18n's post-build. There,
    `search/search_index.json` is the search plugin's index of the build just done: in a
    language static-i18n builds, that language's pages alone; in the default language's build,
    which ends last (static-i18n builds the others inside it), static-i18n's merge of every
    build's pages, which is then cut down to the default locale's pages."""
    source = site_dir / "search" / "search_index.json"
    if not source.is_file():
        raise PluginError(f"build_tables: {source} not found (is the search plugin on?)")
    index = json.loads(source.read_text(encoding="utf-8"))
    ours = locale_search_index(index, locale)
    if not ours["docs"]:
        raise PluginError(f"build_tables: the search index of {locale!r} holds no page")
    lunr_dir = site_dir / "assets" / "javascripts" / "lunr" / "min"
    for lang in SEARCH_LANGS[locale]:
        if lang != "en" and not (lunr_dir / f"lunr.{lang}.min.js").is_file():
            raise PluginError(f"build_tables: lunr has no language {lang!r} ({lunr_dir})")
    target = site_dir / locale_root(locale) / "search" / "search_index.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    # as compact as the search plugin writes it
    target.write_text(json.dumps(ours, ensure_ascii=False, separators=(",", ":")),
                      encoding="utf-8")
    return target


_CONFIG_SCRIPT = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)',
                            re.S)


def point_search_at_locale(output: str, locale: str) -> str:
    """Set `base` of Material's `__config` to the locale's root (from the site's root that
    Material's template gives it), so that its search fetches the locale's own index and
    resolves the index's locations against the locale's root. The default locale's pages keep
    theirs."""
    if locale == DEFAULT_LOCALE:
        return output
    m = _CONFIG_SCRIPT.search(output)
    if not m:
        raise PluginError("build_tables: the page has no Material __config script")
    base = json.loads(m.group(2))["base"]
    old = '"base": ' + json.dumps(base)
    if m.group(2).count(old) != 1:
        raise PluginError(f"build_tables: unexpected __config of Material: {m.group(2)[:200]}")
    new = '"base": ' + json.dumps((base if base.endswith("/") else base + "/") + locale_root(locale))
    return output[:m.start(2)] + m.group(2).replace(old, new, 1) + output[m.end(2):]


# --- search: Persian words -------------------------------------------------------------------

#: lunr has no Persian; `ar` in the search languages brings the Arabic letters, but not the
#: Persian-only ones (پ چ ژ ک گ ی, ۀ), Persian digits or the zero-width non-joiner, so the
#: combined trimmer of lunr.multiLanguage cut them off every word's ends while the query is not
#: trimmed: "کارت" was indexed as "ارت" and never found. lunr.multiLanguage reads each language's
#: `wordCharacters` when it is called, so extending Arabic's right after lunr.multi is loaded
#: (it is loaded last) makes the combined trimmer keep them.
LUNR_PERSIAN_MARK = "/* site: Persian word characters */"
LUNR_PERSIAN_PATCH = (
    "\n" + LUNR_PERSIAN_MARK + "\n"
    "(function (l) {\n"
    "  if (l && l.ar && l.ar.wordCharacters.indexOf(\"\\u06cc\") < 0) {\n"
    "    l.ar.wordCharacters += \"\\u067e\\u0686\\u0698\\u06a9\\u06af\\u06c0\\u06cc\\u06f0-\\u06f9\\u200c\";\n"
    "  }\n"
    "})(typeof lunr !== \"undefined\" ? lunr : self.lunr);\n"
)


def patch_lunr_persian(site_dir: Path) -> None:
    path = site_dir / "assets" / "javascripts" / "lunr" / "min" / "lunr.multi.min.js"
    if not path.is_file():
        raise PluginError(f"build_tables: {path} not found (is the search plugin on?)")
    text = path.read_text(encoding="utf-8")
    if LUNR_PERSIAN_MARK not in text:
        path.write_text(text + LUNR_PERSIAN_PATCH, encoding="utf-8")


# --- Pyodide and the wheel ------------------------------------------------------------------


def copy_pyodide(src: Path, dest: Path) -> list[str]:
    missing = [name for name in PYODIDE_FILES if not (src / name).is_file()]
    if missing:
        raise PluginError(
            f"build_tables: Pyodide's runtime is missing from {src} ({', '.join(missing)}). "
            "Run `make site` (or `npm ci`) first: the calculators need it.")
    dest.mkdir(parents=True, exist_ok=True)
    names = list(PYODIDE_FILES) + sorted(p.name for p in src.glob("*.map"))
    for name in names:
        s, d = src / name, dest / name
        if d.is_file() and d.stat().st_size == s.stat().st_size and d.stat().st_mtime >= s.stat().st_mtime:
            continue
        shutil.copy2(s, d)
    return names


def _sources_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted([root / "pyproject.toml", *(root / "calc").rglob("*")]):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def build_wheel(root: Path, dest: Path) -> Path:
    """A real `py3-none-any` wheel of calc from pyproject.toml (setuptools, no network), built
    in a scratch copy of the sources so no build/ or egg-info/ lands in the checkout. The
    timestamps are fixed (SOURCE_DATE_EPOCH), so the same sources give the same bytes."""
    dest.mkdir(parents=True, exist_ok=True)
    digest = _sources_digest(root)
    manifest_path = dest / "manifest.json"
    if manifest_path.is_file():
        try:
            old = json.loads(manifest_path.read_text(encoding="utf-8"))
            if old.get("sources") == digest and (dest / old["wheel"]).is_file():
                return dest / old["wheel"]
        except (ValueError, KeyError, TypeError):
            pass
    with tempfile.TemporaryDirectory(prefix="calc-wheel-") as tmp:
        work = Path(tmp) / "src"
        work.mkdir()
        shutil.copy2(root / "pyproject.toml", work / "pyproject.toml")
        shutil.copytree(root / "calc", work / "calc",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        out = Path(tmp) / "dist"
        env = dict(os.environ, SOURCE_DATE_EPOCH="315532800", PIP_NO_INPUT="1")
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
               "--no-index", "--quiet", "--wheel-dir", str(out), str(work)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise PluginError("build_tables: building the calc wheel failed "
                              f"({' '.join(cmd)}):\n{proc.stdout}\n{proc.stderr}")
        wheels = sorted(out.glob("*.whl"))
        if len(wheels) != 1:
            raise PluginError(f"build_tables: expected one wheel, found {wheels}")
        for old_wheel in dest.glob("*.whl"):
            old_wheel.unlink()
        wheel = dest / wheels[0].name
        shutil.copy2(wheels[0], wheel)
    data = wheel.read_bytes()
    manifest = {
        "wheel": wheel.name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "sources": digest,
    }
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return wheel


#: The memory snapshot the worker restores (assets/calc/SNAPSHOT_NAME, named in the manifest).
SNAPSHOT_NAME = "snapshot.bin"
SNAPSHOT_SCRIPT = ROOT / "make_snapshot.mjs"


def _snapshot_key(pyodide_dir: Path, wheel: Path) -> str:
    h = hashlib.sha256()
    for p in (SNAPSHOT_SCRIPT, pyodide_dir / "pyodide.asm.wasm", pyodide_dir / "pyodide.asm.mjs",
              pyodide_dir / "pyodide.mjs", pyodide_dir / "python_stdlib.zip", wheel):
        h.update(p.name.encode())
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def build_snapshot(pyodide_dir: Path, wheel: Path, dest: Path) -> Path:
    """Pyodide's memory with calc imported and warmed up, made by Node (`make_snapshot.mjs`),
    cached by the hash of its inputs; named in dest/manifest.json (`snapshot`, its size and
    SHA-256)."""
    cache = Path(os.environ.get("CALC_SNAPSHOT_CACHE") or ROOT / ".cache" / "snapshot")
    key = _snapshot_key(pyodide_dir, wheel)
    cached = cache / f"{key}.bin"
    if not cached.is_file():
        node = shutil.which("node")
        if node is None:
            raise PluginError("build_tables: Node.js is needed to make the Pyodide snapshot")
        cache.mkdir(parents=True, exist_ok=True)
        tmp = cache / f"{key}.tmp"
        proc = subprocess.run([node, str(SNAPSHOT_SCRIPT), str(pyodide_dir), str(wheel), str(tmp)],
                              capture_output=True, text=True)
        if proc.returncode != 0 or not tmp.is_file():
            tmp.unlink(missing_ok=True)
            raise PluginError("build_tables: making the Pyodide snapshot failed:\n"
                              f"{proc.stdout}\n{proc.stderr}")
        for old in cache.glob("*.bin"):
            old.unlink()  # one snapshot is kept: the current one
        tmp.replace(cached)
    target = dest / SNAPSHOT_NAME
    shutil.copyfile(cached, target)
    data = target.read_bytes()
    manifest_path = dest / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest.update({"snapshot": SNAPSHOT_NAME, "snapshot_size": len(data),
                     "snapshot_sha256": hashlib.sha256(data).hexdigest()})
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return target
