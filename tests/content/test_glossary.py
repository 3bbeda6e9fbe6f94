"""Each locale's glossary is enforced on that locale's pages and catalog.

`i18n/glossary-<loc>.md` (every locale but en) has a section titled exactly `## Rejected
variants`, running to the next `#` or `##` heading, with one line per rejected form:

    - `rejected form` → `preferred form`

A rejected form may not appear in `docs/*.<loc>.md` nor in any value of
`calc/locales/<loc>.json`. How it is matched:

- case-insensitively, after NFC normalisation of both sides (a decomposed "é" is an "é");
- as a whole word or phrase: the characters just before and after the match are not word
  characters, which are Unicode letters and digits, "_", combining marks (category M: the
  Persian hamza of "خانهٔ") and the zero-width non-joiner and joiner (Persian "می‌شود" is one
  word). So "lote" is not found in "lotes", "atualiza" not in "atualização", "شود" not in
  "می‌شود". Hyphens and apostrophes are boundaries: "batch" is found in "micro-batch", and a
  Turkish stem in "checkpoint'i";
- the words of a phrase may be separated by any white space, line breaks included.

What is not prose, and so not checked: on pages, code spans and fenced code blocks, Jinja
(`{{ }}`, `{% %}`, `{## ##}`), HTML tags and comments (the text between tags is checked),
`<cite>` (titles of cited works, in their own language), heading attribute lists
(`{ #full-fine-tuning-vram .faq }`), link targets and bare URLs; in the catalog, placeholders
(`{gpu}`). The front matter (title, description) is prose and is checked.

A glossary without the section, an empty section, a malformed entry, or an entry whose
preferred form itself contains a rejected form fails its locale: the check can never pass
because there was nothing to check.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

from calc.i18n import DEFAULT_LOCALE, LOCALES as ALL_LOCALES

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CATALOGS = ROOT / "calc" / "locales"
I18N = ROOT / "i18n"

SECTION = "## Rejected variants"
#: Every locale but en: each must enforce its glossary.
LOCALES = tuple(loc for loc in ALL_LOCALES if loc != DEFAULT_LOCALE)
#: Locales whose `## Rejected variants` section is written on another branch (issue 17: one
#: helper per language). Remove a locale from here once its branch is merged; strict=True
#: makes the test fail as soon as the locale passes, as a reminder.
SECTION_ON_ITS_OWN_BRANCH: tuple[str, ...] = ()

ENTRY = re.compile(r"^\s*[-*+]\s+`([^`]+)`\s*→\s*`([^`]+)`\s*$")
BULLET = re.compile(r"^\s*[-*+]\s")
SECTION_END = re.compile(r"^#{1,2}\s")


class GlossaryError(ValueError):
    pass


@dataclass(frozen=True)
class Hit:
    line: int
    rejected: str
    preferred: str
    found: str


# --- the glossary ------------------------------------------------------------------------

def rejected_variants(glossary: str) -> list[tuple[str, str]]:
    """The (rejected, preferred) pairs of the glossary's `## Rejected variants` section."""
    lines = glossary.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == SECTION]
    if not starts:
        raise GlossaryError(f"no section {SECTION!r}")
    if len(starts) > 1:
        raise GlossaryError(f"{len(starts)} sections {SECTION!r}")
    entries: list[tuple[str, str]] = []
    for line in lines[starts[0] + 1:]:
        if SECTION_END.match(line):
            break
        if BULLET.match(line):
            m = ENTRY.match(line)
            if not m:
                raise GlossaryError(f"malformed entry (expected - `rejected` → `preferred`): "
                                    f"{line.strip()!r}")
            entries.append((_norm(m[1].strip()), _norm(m[2].strip())))
    if not entries:
        raise GlossaryError(f"section {SECTION!r} lists no rejected form")
    seen: set[str] = set()
    for rejected, preferred in entries:
        key = rejected.casefold()
        if not any(_is_word_char(c) for c in rejected):
            raise GlossaryError(f"rejected form without a letter: {rejected!r}")
        if key in seen:
            raise GlossaryError(f"rejected form listed twice: {rejected!r}")
        seen.add(key)
    for rejected, preferred in entries:
        clash = find_rejected(preferred, entries, markdown=False)
        if clash:
            raise GlossaryError(f"preferred form {preferred!r} (for {rejected!r}) contains the "
                                f"rejected form {clash[0].rejected!r}")
    return entries


# --- the matcher -------------------------------------------------------------------------

JOINERS = {"\u200c", "\u200d"}
MASK = "\x00"  # neither a word character nor white space: no phrase matches across it


def _norm(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_" or c in JOINERS or unicodedata.category(c).startswith("M")


def _phrase(rejected: str) -> re.Pattern[str]:
    return re.compile(r"\s+".join(re.escape(w) for w in rejected.split()), re.IGNORECASE)


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + re.sub(r"[^\n]", MASK, text[start:end]) + text[end:]


def _mask_all(text: str, pattern: re.Pattern[str], group: int = 0) -> str:
    for m in reversed(list(pattern.finditer(text))):
        text = _blank(text, m.start(group), m.end(group))
    return text


JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{##.*?##\}", re.S)
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)\1(?!`)", re.S)
CITE = re.compile(r"<cite\b[^>]*>.*?</cite\s*>", re.S | re.I)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
ATTR_LIST = re.compile(r"\{\s*[:#.][^{}\n]*\}")
LINK_TARGET = re.compile(r"\]\(([^)]*)\)")
LINK_DEFINITION = re.compile(r"^[ \t]*\[[^\]\n]+\]:[^\n]*", re.M)
URL = re.compile(r"https?://\S+")
PLACEHOLDER = re.compile(r"\{[A-Za-z_]\w*\}")


def _mask_fences(text: str) -> str:
    out, fence = [], None
    for line in text.splitlines(keepends=True):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m[1]
            out.append(re.sub(r"[^\n]", MASK, line))
        elif fence is not None:
            out.append(re.sub(r"[^\n]", MASK, line))
            if m and m[1][0] == fence[0] and len(m[1]) >= len(fence) and \
                    not line.strip().strip(fence[0]):
                fence = None
        else:
            out.append(line)
    return "".join(out)


def markdown_prose(text: str) -> str:
    """The page with everything that is not prose blanked out, offsets and lines kept."""
    text = _norm(text)
    text = _mask_all(text, JINJA)
    text = _mask_fences(text)
    text = _mask_all(text, CODE_SPAN)
    text = _mask_all(text, CITE)
    text = _mask_all(text, HTML_COMMENT)
    text = _mask_all(text, HTML_TAG)
    text = _mask_all(text, ATTR_LIST)
    text = _mask_all(text, LINK_TARGET, 1)
    text = _mask_all(text, LINK_DEFINITION)
    text = _mask_all(text, URL)
    return text


def find_rejected(text: str, entries: list[tuple[str, str]], markdown: bool = True,
                  first_line: int = 1) -> list[Hit]:
    """Every whole-word occurrence of a rejected form in `text` (Markdown unless
    `markdown=False`, then only catalog placeholders are left out)."""
    text = markdown_prose(text) if markdown else _mask_all(_norm(text), PLACEHOLDER)
    hits = []
    for rejected, preferred in entries:
        for m in _phrase(_norm(rejected)).finditer(text):
            before = text[m.start() - 1] if m.start() else " "
            after = text[m.end()] if m.end() < len(text) else " "
            if _is_word_char(before) or _is_word_char(after):
                continue
            line = first_line + text.count("\n", 0, m.start())
            hits.append(Hit(line, rejected, preferred, " ".join(m[0].split())))
    return sorted(hits, key=lambda h: (h.line, h.rejected))


def catalog_hits(raw: str, entries: list[tuple[str, str]]) -> list[Hit]:
    """Rejected forms in the values of a flat catalog, each with its key's line."""
    catalog = json.loads(raw)
    assert isinstance(catalog, dict), "a catalog is one JSON object"
    key_line: dict[str, int] = {}
    for no, line in enumerate(raw.splitlines(), 1):
        m = re.match(r'\s*("(?:[^"\\]|\\.)*")\s*:', line)
        if m:
            key_line.setdefault(json.loads(m[1]), no)
    hits = []
    for key, value in catalog.items():
        assert isinstance(value, str), f"catalog value of {key!r} is not a string"
        assert key in key_line, f"catalog key {key!r} not found on a line of its own"
        hits += [Hit(h.line, h.rejected, h.preferred, f"{key}: {h.found}")
                 for h in find_rejected(value, entries, markdown=False,
                                        first_line=key_line[key])]
    return hits


# --- the locales -------------------------------------------------------------------------

def test_every_translated_locale_is_checked():
    catalogs = {p.stem for p in CATALOGS.glob("*.json")} - {"en"}
    assert catalogs == set(LOCALES)
    assert set(SECTION_ON_ITS_OWN_BRANCH) <= set(LOCALES)


def _locale_params() -> list:
    pending = pytest.mark.xfail(strict=True, reason="section added on its own branch")
    return [pytest.param(loc, marks=[pending] if loc in SECTION_ON_ITS_OWN_BRANCH else [], id=loc)
            for loc in LOCALES]


@pytest.mark.parametrize("locale", _locale_params())
def test_no_rejected_variant_on_pages_and_catalog(locale):
    glossary = I18N / f"glossary-{locale}.md"
    try:
        entries = rejected_variants(glossary.read_text(encoding="utf-8"))
    except GlossaryError as e:
        pytest.fail(f"{glossary.relative_to(ROOT)}: {e}")
    pages = sorted(DOCS.glob(f"*.{locale}.md"))
    assert len(pages) >= 9, f"only {len(pages)} pages for {locale}"
    problems = []
    for page in pages:
        for h in find_rejected(page.read_text(encoding="utf-8"), entries):
            problems.append(f"{page.relative_to(ROOT)}:{h.line}: `{h.rejected}` "
                            f"(use `{h.preferred}`): {h.found!r}")
    catalog = CATALOGS / f"{locale}.json"
    for h in catalog_hits(catalog.read_text(encoding="utf-8"), entries):
        problems.append(f"{catalog.relative_to(ROOT)}:{h.line}: `{h.rejected}` "
                        f"(use `{h.preferred}`): {h.found!r}")
    assert not problems, "rejected glossary variants:\n" + "\n".join(problems)


# --- the check itself --------------------------------------------------------------------

BOLSO = [("regra de bolso", "regra prática")]


def test_a_planted_rejected_term_is_found_with_its_line():
    text = "---\ntitle: A regra de bolso\n---\n\nUma Regra De\nBolso para planejar.\n"
    hits = find_rejected(text, BOLSO)
    assert [(h.line, h.found) for h in hits] == [(2, "regra de bolso"), (5, "Regra De Bolso")]
    assert {h.preferred for h in hits} == {"regra prática"}


@pytest.mark.parametrize("text", [
    "Escreva `regra de bolso` no código.",
    "Escreva ``a regra de bolso` aqui`` no código.",
    "```text\nregra de bolso\n```\n",
    "~~~\nregra de bolso\n~~~\n",
    '{{ t("regra de bolso") }} e {## regra de bolso ##}',
    "<cite>A regra de bolso</cite>, de Fulano.",
    "Ver [a regra](regra%20de%20bolso.md) e https://x.org/regra-de-bolso",
    "regra {{ num(1) }} de bolso",
])
def test_code_jinja_citations_and_links_are_not_prose(text):
    assert find_rejected(text, BOLSO) == []


def test_code_spans_and_fences_hide_only_themselves():
    text = "`regra de bolso` é código; a regra de bolso não.\n```\nx\n```\nregra de bolso\n"
    assert [h.line for h in find_rejected(text, BOLSO)] == [1, 5]


@pytest.mark.parametrize("rejected, text, found", [
    ("lote", "dois lotes e um pilote", False),
    ("lote", "o lote.", True),
    ("atualiza", "a atualização dos pesos", False),
    ("atualiza", "o otimizador atualiza.", True),
    ("batch", "o micro-batch", True),
    ("батч", "большие батчи", False),
    ("батч", "Батч мал", True),
    ("شود", "می\u200cشود", False),
    ("شود", "شود.", True),
    ("خانه", "خانهٔ ما", False),
    ("memória", "memo\u0301ria da GPU", True),
    ("fine-tuning", "## Título { #full-fine-tuning-vram .faq }", False),
])
def test_whole_words_by_unicode_rules(rejected, text, found):
    assert bool(find_rejected(text, [(rejected, "x")])) is found


def test_the_section_is_parsed():
    glossary = ("# G\n\n## Termos\n\n- `não` → `isto`\n\n## Rejected variants\n\n"
                "Formas que não usamos:\n\n- `regra de bolso` → `regra prática`\n"
                "- `acúmulo de gradientes` → `acumulação de gradientes`\n\n## Depois\n\n"
                "- `outra` → `coisa`\n")
    assert rejected_variants(glossary) == [("regra de bolso", "regra prática"),
                                           ("acúmulo de gradientes", "acumulação de gradientes")]


@pytest.mark.parametrize("glossary, message", [
    ("# G\n\n## Termos\n\n- `a` → `b`\n", "no section"),
    ("## Rejected variants\n\nNada ainda.\n", "lists no rejected form"),
    ("## Rejected variants\n\n- `regra de bolso` -> `regra prática`\n", "malformed"),
    ("## Rejected variants\n\n- `bolso` → `b`\n- `Bolso` → `c`\n", "twice"),
    ("## Rejected variants\n\n- `checkpointing` → `gradient checkpointing`\n", "contains"),
])
def test_a_glossary_that_would_check_nothing_fails(glossary, message):
    with pytest.raises(GlossaryError, match=message):
        rejected_variants(glossary)


def test_catalog_values_are_checked_with_the_keys_line():
    raw = ('{\n  "a.title": "Regra prática",\n  "a.help": "A regra de bolso de {n}",\n'
           '  "a.other": "Nada com {regra}"\n}\n')
    assert [(h.line, h.found) for h in catalog_hits(raw, BOLSO)] == [
        (3, "a.help: regra de bolso")]
    assert catalog_hits(raw, [("regra", "x")]) == [
        Hit(2, "regra", "x", "a.title: Regra"), Hit(3, "regra", "x", "a.help: regra")]
