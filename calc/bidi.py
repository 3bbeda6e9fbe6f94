"""Right-to-left pages: Latin runs kept whole and read in English.

One place for the rule, used by the widgets (`calc.render`, at build time and in the worker)
and by the site build for the guide's prose (`site_build.prose.isolate_prose`):

- `isolate_latin(html)`: each run of Latin text ("Llama 3.1 8B", "ZeRO-3/FSDP", "flash
  attention", "config.json") goes into `<span dir="ltr" lang="en">`, so the Unicode bidi
  algorithm never reorders it with its Persian neighbours and a screen reader reads it with an
  English voice. `<option>` holds text only: there the run goes between the isolate marks LRI
  and PDI, unless the option has a `dir` of its own (`option_dir`: the form gives each option
  the direction its text needs and no marks, since a select's type-ahead matches an option's
  text from its first character). Code, SVG, figures (`calc-fig`: `fmt` isolates their units
  itself) and elements with their own `dir="ltr"`/`dir="auto"` are left alone, as is any
  element whose start tag contains one of `skip_markers`.
- `isolate_text(text)`: the same for plain text shown by `textContent` (messages, the status
  line), with LRI/PDI.
- `option_dir(text)`: an `<option>`'s text on a right-to-left page without isolate marks, and
  the attributes it needs: `dir="ltr"` (`lang="en"` when it is plain Latin text) for a name
  with no right-to-left letter ("Llama 3.1 8B", "NVIDIA A100 ۸۰ GB"), `dir="rtl"` for a text
  of the locale with Latin runs in it (the bidi algorithm's paired brackets, N0, keep
  "AdamW (…FP32)" in order without marks).

Runs already between isolate marks (a unit `fmt` isolated, a quoted value) are left as they are.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Callable

__all__ = ["LRI", "PDI", "isolate_latin", "isolate_text", "option_dir"]

LRI, PDI = "\u2066", "\u2069"

#: A run of Latin words with the digits and joiners inside it.
_LATIN_RUN = re.compile(
    r"[A-Za-z][A-Za-z0-9]*(?:(?:[ .,\-/+_:'\u2019]|\u00a0)+[A-Za-z0-9][A-Za-z0-9]*)*")
_TOKEN = re.compile(r"(<!--.*?-->|<[^>]*>)", re.S)
_TAG_NAME = re.compile(r"</?\s*([A-Za-z][\w-]*)")
_ENTITY = re.compile(r"(&#?\w+;)")
_ISOLATED = re.compile("([\u2066-\u2068][^\u2069]*\u2069)")
#: Elements whose text is left alone.
_SKIP_TAGS = frozenset({"code", "pre", "kbd", "samp", "script", "style", "svg", "math",
                        "textarea", "bdi", "bdo"})
_OWN_DIR = re.compile(r'\sdir="(?:ltr|auto)"')
_ANY_DIR = re.compile(r'\sdir="(?:ltr|rtl|auto)"')
#: The isolate and embedding marks (LRE..RLO, LRI..PDI) an option's text must not start with.
_MARKS = re.compile("[\u202a-\u202e\u2066-\u2069]")
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                   "source", "track", "wbr"})


def _span(run: re.Match[str]) -> str:
    return f'<span dir="ltr" lang="en">{run.group(0)}</span>'


def _marks(run: re.Match[str]) -> str:
    return f"{LRI}{run.group(0)}{PDI}"


def isolate_latin(html: str, skip_markers: tuple[str, ...] = ()) -> str:
    """`html` with each Latin run of its text isolated (see the module's docstring)."""
    out: list[str] = []
    stack: list[tuple[str, str]] = []  # open elements: (name, "skip" | "option" | "")
    for token in _TOKEN.split(html):
        if not token:
            continue
        if token.startswith("<"):
            out.append(token)
            m = None if token.startswith("<!--") else _TAG_NAME.match(token)
            if not m:
                continue
            name = m.group(1).lower()
            if token.startswith("</"):
                for i in range(len(stack) - 1, -1, -1):
                    if stack[i][0] == name:
                        del stack[i:]
                        break
            elif name not in _VOID and not token.endswith("/>"):
                skip = (name in _SKIP_TAGS or _OWN_DIR.search(token) is not None
                        or (name == "option" and _ANY_DIR.search(token) is not None)
                        or "calc-fig" in token or any(s in token for s in skip_markers))
                stack.append((name, "skip" if skip else "option" if name == "option" else ""))
            continue
        modes = {mode for _, mode in stack}
        if "skip" in modes:
            out.append(token)
            continue
        wrap = _marks if "option" in modes else _span
        for part in _ENTITY.split(token):
            out.append(part if part.startswith("&") and part.endswith(";")
                       else _isolate_runs(part, wrap))
    return "".join(out)


def _isolate_runs(text: str, wrap: Callable[[re.Match[str]], str]) -> str:
    """Each Latin run of `text` wrapped, except inside runs already isolated (a figure's unit
    from `fmt`, a quoted value)."""
    return "".join(part if _ISOLATED.fullmatch(part) else _LATIN_RUN.sub(wrap, part)
                   for part in _ISOLATED.split(text))


def isolate_text(text: str) -> str:
    """Plain text with each Latin run between LRI and PDI (runs already isolated kept)."""
    return _isolate_runs(text, _marks)


def _rtl_letter(ch: str) -> bool:
    """A right-to-left letter (bidi class R or AL, a letter): not a Persian digit, not the
    Arabic decimal separator or comma."""
    return unicodedata.bidirectional(ch) in ("R", "AL") and unicodedata.category(ch)[0] == "L"


def option_dir(text: str) -> tuple[str, str]:
    """(attributes, text) of an `<option>` on a right-to-left page: the text without isolate
    marks, `dir` (and `lang`) as the module's docstring says. The attributes start with a
    space; the text is not escaped."""
    bare = _MARKS.sub("", text)
    if any(_rtl_letter(ch) for ch in bare):
        return ' dir="rtl"', bare
    if bare.isascii() and _LATIN_RUN.search(bare):
        return ' dir="ltr" lang="en"', bare
    return ' dir="ltr"', bare
