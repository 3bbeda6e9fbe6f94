"""HTML of the calculator widgets: the same code at build time (the static first paint) and in
the browser (the Pyodide worker, on every edit). The entry points and the registry; each
widget is one module of `calc.widgets` (`calc.widgets.base` says what a module holds).

- `REGISTRY`: every widget {name: module}, in page order (`WIDGETS`: their names). Adding a
  widget: one new module in `calc/widgets/` and its name in the tuple of `REGISTRY` here.
- `widget(name, locale, query=None)`: the whole widget (form, status line, copy-link button and
  the results region). The build hook calls it with the default query, so the page's first
  paint already shows the default result.
- `results(name, query, locale)`: what the worker returns on each edit: the results region's
  HTML, the translated message of every invalid field, the canonical query for the URL, the
  normalised form values and the placeholders of fields that default to a preset's value.
- `results_json(name, query_json, locale)`: `results` with JSON in and out (the worker's call).
- `warm_queries(name, locale)`: the worker's warm-up states; `prime()`: every widget once in
  every locale (what the build's memory snapshot runs, make_snapshot.mjs).

Every text is escaped (`calc.html`); values from a URL or a form are never inserted
unescaped. Every engine figure is an element with `data-calc="<name>"` and its raw value in
`data-bytes` (integer bytes) or `data-value` (anything else) beside the formatted text.

Strings the page script shows (loading stages, errors, "link copied") are rendered here from the
catalogs into `data-msg-*` attributes of the widget root: the script types no text of its own.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any, Mapping

from .errors import CalcError
from .fields import first
from .fmt import fmt
from .html import bidi, bidi_text, e, local_digits
from .i18n import LOCALES, locale_dir, normalize_locale, t
from .widgets import adapter, calculator, cost, quick
from .widgets.base import Form, Widget

__all__ = ["REGISTRY", "WIDGETS", "widget", "results", "results_json", "warm_queries", "prime",
           "DEFAULT_QUERY", "FORM_FIELDS", "EXAMPLE_HOURS"]

#: The registry: every widget, by name, in page order.
REGISTRY: dict[str, Widget] = {m.NAME: m for m in (calculator, adapter, quick, cost)}
#: The widgets' names.
WIDGETS: tuple[str, ...] = tuple(REGISTRY)

#: The query each widget starts from (its first paint).
DEFAULT_QUERY: dict[str, dict[str, str]] = {n: dict(m.DEFAULT_QUERY) for n, m in REGISTRY.items()}
#: Keys each widget's form sends (and the URL may carry).
FORM_FIELDS: dict[str, tuple[str, ...]] = {n: m.FORM_FIELDS for n, m in REGISTRY.items()}
#: Hours of the example cost column of the detailed calculator.
EXAMPLE_HOURS = calculator.EXAMPLE_HOURS
#: How long the page waits for Python before it says the calculator could not load (ms).
LOAD_TIMEOUT_MS = 20_000

_MESSAGES = {
    # data-msg-* attribute -> catalog key (what page.js may show)
    "loading": "ui.loading",
    "ready": "ui.ready",
    "error": "ui.error_load",
    "timeout": "ui.error_timeout",
    "failure": "ui.error_worker",
    "copied": "ui.link_copied",
    "copy-failed": "ui.copy_failed",
    "text-copied": "ui.config_copied",  # a [data-calc-copy=ID] button (an export's text)
    "loading-stale": "ui.loading_stale",  # an edit before Python is ready
    "loading-link": "ui.loading_link",  # a link's inputs shown before Python computed them
    "stalled": "ui.error_stalled",  # no bytes for data-timeout-ms
    "network": "ui.error_network",  # a download cut or incomplete
}


def _progress_messages(loc: str) -> str:
    """data-msg-progress ("{n}% downloaded." with {n} where the page puts the whole percent,
    in the locale's percent pattern) and data-msg-digits (the digits page.js writes it in)."""
    mark = "\ufffc"  # stands for {n} while the text is isolated (no Latin run to wrap)
    pattern = fmt(Decimal(42) / 100, "percent", loc).replace(local_digits("42", loc), mark)
    progress = bidi_text(t("ui.loading_progress", loc, percent=pattern), loc).replace(mark, "{n}")
    return (f' data-msg-progress="{e(progress)}"'
            f' data-msg-digits="{e(local_digits("0123456789", loc))}"')


def _module(name: str) -> Widget:
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown widget {name!r}; one of {', '.join(WIDGETS)}") from None


def _q(query: Mapping[str, Any] | None) -> dict[str, str]:
    """A query as {key: str}: repeated keys -> the last value (as `fields.first`), None dropped."""
    out: dict[str, str] = {}
    for k, v in (query or {}).items():
        v = first(v)
        if v is None:
            continue
        out[str(k)] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


def _stale(markup: str) -> str:
    return f'<div class="calc-stale-mark" data-stale="true">{markup}</div>'


def results(name: str, query: Mapping[str, Any] | None, locale: str, *,
            uid: str | None = None) -> dict[str, Any]:
    """The results of widget `name` for `query` (raw strings from a form or a URL).

    Returns {"ok", "html", "errors", "query", "form", "placeholders", "status"}:
    - valid input: ok True, html of the results region, errors {}, query the canonical query
      (what the URL shows), form the values the form should hold, placeholders of fields that
      default to a preset's value, status a one-line summary for the status line;
    - invalid input: ok False, errors {field: translated message}, query None, html the
      default result marked stale (the page keeps its last valid result instead), status the
      translated "fix the marked fields" line with every field's message.
    """
    w = _module(name)
    loc = normalize_locale(locale)
    wid = uid or f"calc-{name}"
    q = _q(query)
    try:
        out = w.run(q, loc, wid)
    except CalcError as err:
        remap = getattr(err, "remap", {})
        errors = {remap.get(k, k): v for k, v in err.messages(loc).items()}
        default = w.run(dict(w.DEFAULT_QUERY), loc, wid)
        every = " ".join(dict.fromkeys(errors.values()))  # each invalid field's message
        return {
            "ok": False,
            "html": _stale(default.html),
            "errors": {k: bidi_text(v, loc) for k, v in errors.items()},
            "query": None,
            "form": None,
            "placeholders": {},
            "status": bidi_text(t("ui.stale", loc, message=every), loc),
        }
    form = {k: local_digits(v, loc) if k in w.NUMERIC_FIELDS else v for k, v in out.form.items()}
    return {"ok": True, "html": out.html, "errors": {}, "query": out.query,
            "form": form, "placeholders": out.placeholders,
            "status": bidi_text(out.summary, loc)}


def results_json(name: str, query_json: str, locale: str) -> str:
    """The worker's entry point: JSON text in, JSON text out."""
    try:
        query = json.loads(query_json) if query_json else {}
    except ValueError:
        query = {}
    if not isinstance(query, dict):
        query = {}
    query = {str(k): (v if isinstance(v, (str, list)) else ("" if v is None else str(v)))
             for k, v in query.items()}
    return json.dumps(results(name, query, locale), ensure_ascii=False)


def widget(name: str, locale: str, query: Mapping[str, Any] | None = None, *,
           uid: str | None = None) -> str:
    """The whole widget as one HTML block (no blank lines, so Markdown keeps it raw).

    `query` (optional) is applied as a URL would be; by default the widget's default query.
    `uid` prefixes every id (default `calc-<name>`): give one per widget if a page has two
    widgets of the same kind.
    """
    w = _module(name)
    loc = normalize_locale(locale)
    wid = uid or f"calc-{name}"
    q = _q(query) if query is not None else dict(w.DEFAULT_QUERY)
    res = results(name, q, loc, uid=wid)
    if res["ok"]:
        values = dict(res["form"])
        placeholders = res["placeholders"]
    else:  # show what was given, escaped; the engine's messages go at the fields
        default = w.run(dict(w.DEFAULT_QUERY), loc, wid)
        values = {**default.form, **q}
        placeholders = default.placeholders
    f = Form(wid, loc, values, None if res["ok"] else res["errors"])
    form = bidi(w.form(f, loc, placeholders), loc)
    msgs = " ".join(f'data-msg-{k}="{e(bidi_text(t(key, loc), loc))}"'
                    for k, key in _MESSAGES.items()) + _progress_messages(loc)
    stale = "" if res["ok"] else ' data-stale="true"'
    return (
        f'<div class="calc-widget" id="{wid}" data-calc-widget="{name}" data-state="loading" '
        f'data-locale="{loc}" dir="{locale_dir(loc)}" data-timeout-ms="{LOAD_TIMEOUT_MS}" {msgs}>'
        f"{form}"
        f'<div class="calc-bar">'
        f'<p class="calc-status" id="{wid}-status" role="status" data-calc-status>'
        f'{e(t("ui.loading", loc))}</p>'
        f'<noscript><p class="calc-noscript">{e(t("ui.error_load", loc))}</p></noscript>'
        f'<button type="button" class="md-button calc-copy" data-calc-copy>'
        f'{e(t("ui.copy_link", loc))}</button>'
        f'<button type="reset" form="{wid}-form" class="md-button calc-reset">'
        f'{e(t("ui.reset", loc))}</button></div>'
        f'<section class="calc-results" id="{wid}-results" data-calc-results{stale} '
        f'aria-label="{e(t("ui.results", loc))}">{res["html"]}</section>'
        f"</div>"
    )


#: A whole number the warm-up steps: up to twelve digits (the cost widget's tokens per epoch,
#: 50000000, among them; one step up stays within every field's bound).
_WHOLE = re.compile(r"[1-9][0-9]{0,11}")
_TOGGLE = {"true": "false", "false": "true"}  # a yes/no field as the canonical query has it


def warm_queries(name: str, locale: str, runs: int = 300) -> str:
    """The worker's warm-up (worker.js): a JSON list of `runs` queries of widget `name`, each
    a JSON text and a new state, as edits make them: from the widget's default query, one
    whole-number field stepped up (or a yes/no field toggled) after another. A snapshot
    restores Python cold (V8's baseline tier); calculating new states, not one memoized
    state again, is what gets the code an edit runs optimized before the reader's edits."""
    base: dict[str, str] = results(name, DEFAULT_QUERY.get(name), locale)["query"] or {}
    state = {k: v for k, v in base.items() if v in _TOGGLE or _WHOLE.fullmatch(v)}
    fields = list(state)
    out = []
    for run in range(runs if fields else 0):
        field = fields[run % len(fields)]
        value = state[field]
        state[field] = (_TOGGLE.get(value)
                        or str(int(value) + 1 + run % 3))  # small steps: stays valid
        out.append(json.dumps({**base, **state}))
    return json.dumps(out)


def prime() -> int:
    """Every widget's default in every locale, once, as the worker asks for it: the catalogs,
    the message catalogs and the memoized pieces are then loaded (make_snapshot.mjs runs this
    before it takes Pyodide's memory snapshot). Returns how many results were rendered."""
    n = 0
    for loc in LOCALES:
        for name, w in REGISTRY.items():
            json.loads(results_json(name, json.dumps(dict(w.DEFAULT_QUERY)), loc))
            n += 1
    return n
