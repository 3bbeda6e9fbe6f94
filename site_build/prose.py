"""The guide's prose: every page translated, no digit typed into prose, Latin runs isolated on
right-to-left pages, and the FAQ's questions as schema.org data. The rules, for the writers:
i18n/WRITERS.md ("The digit check")."""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from pathlib import Path

from calc import catalog, i18n
from calc.bidi import isolate_latin

from .common import DEFAULT_LOCALE, LOCALES, fail

# --- translations ---------------------------------------------------------------------------


# Every page exists in every locale (`x.md` and `x.<locale>.md`); nothing stray.
def check_translations(docs_dir: Path) -> None:
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
        raise fail("translations incomplete:\n  " + "\n  ".join(problems))


# A page built from another locale's file (static-i18n's fallback) fails the build.
def check_page_locale(page, locale: str) -> None:
    file_locale = getattr(page.file, "locale", locale)
    if file_locale != locale:
        raise fail(f"{page.file.src_uri}: built for {locale!r} from a {file_locale!r} file "
                   "(fallback)")


# How many lines the YAML front matter (stripped before on_page_markdown) takes.
def front_matter_lines(path: str | None) -> int:
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


# What is not prose becomes a space, its newlines kept (so line numbers stay).
def _blank(m: re.Match) -> str:
    return " " + "\n" * m.group(0).count("\n")


# Catalog names (models; GPUs' model names) and their runs of words that start with a word and
# hold a digit ("Llama 3.1 8B", "RTX 4090"): digits inside names are not figures. A card's
# memory size ("A100 80 GB") is a figure (`gpu_name()` writes it in the page's digits).
@lru_cache(maxsize=None)
def _name_pattern() -> re.Pattern:
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
    HTML tags, `<cite>` (titles of cited works), ordered-list markers, catalog names and words
    that contain digits after a Latin letter (BF16, NF4, H100, Qwen2.5, ZeRO-3, S3). Everything
    else, including Persian digits, must come from a macro, which writes them in the page's own
    digits."""
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


# The digit check of one page, its Markdown and its front matter's texts; fails the build.
def check_digits(markdown: str, meta: dict, src: str, offset: int) -> None:
    problems = [f"{src}:{line + offset}: {text}" for line, text in digit_problems(markdown)]
    for key, value in meta.items():
        if isinstance(value, str):
            problems += [f"{src}: front matter {key}: {text}" for _, text in digit_problems(value)]
    if problems:
        raise fail(
            "digits typed into prose. Write figures with the macros (see i18n/WRITERS.md), "
            "names with model_name()/gpu_name(), titles of cited works inside "
            "<cite>...</cite>:\n  " + "\n  ".join(problems))


# --- right to left: Latin runs ----------------------------------------------------------------

#: Start-tag markers of elements the prose pass leaves alone: any element with its own `dir`,
#: the widgets (calc isolates their text itself) and heading permalinks.
_BIDI_SKIP_MARKERS = (" dir=", "data-calc-widget", "headerlink")


# On right-to-left pages, Latin runs of the prose in `<span dir="ltr" lang="en">`.
def isolate_prose(html_text: str, locale: str) -> str:
    if i18n.locale_dir(locale) == "rtl":
        return isolate_latin(html_text, _BIDI_SKIP_MARKERS)
    return html_text


# --- FAQ structured data --------------------------------------------------------------------

_TAGS = re.compile(r"<[^>]*>")
_FAQ_HEADING = re.compile(r'<h2\b[^>]*\bclass="[^"]*\bfaq\b[^"]*"[^>]*>(.*?)</h2>', re.S)
_HEADERLINK = re.compile(r'<a\b[^>]*class="headerlink"[^>]*>.*?</a>', re.S)
_NEXT_SECTION = re.compile(r"<h[12]\b")
_BLOCK_END = re.compile(r"</(?:p|li|h[1-6]|td|th|tr|div|dd|dt|blockquote|pre|table)>|<br\s*/?>")


# Text of an HTML fragment: inline tags vanish, block ends become spaces.
def _plain(fragment: str) -> str:
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


# The FAQPage data as the text of a JSON-LD <script> (overrides/main.html), or None.
def faq_jsonld(html_text: str) -> str | None:
    faq = faq_structured_data(html_text)
    if faq is None:
        return None
    return json.dumps(faq, ensure_ascii=False).replace("</", "<\\/")  # "</" must not close it
