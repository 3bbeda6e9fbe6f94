"""The guide's prose in the built site: every page in every locale has substantial text of its
own language, and no English sentence is left on a localized page.

Text inside code, citations (<cite>: titles of cited works), the calculator widgets, tables
and figures is not prose and is left out; English terms of art (LoRA, GPU, model names) are
fine, an English *sentence* (a run of English function words) is not."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from sitepaths import DEFAULT_LOCALE, LOCALES, PAGES, page_path

#: Fewest words of prose a page must have (the calculator page is mostly its widget).
MIN_WORDS = {"calculator": 250, "accuracy": 250}
MIN_WORDS_DEFAULT = 400
SKIP = {"code", "pre", "cite", "script", "style", "table", "svg", "kbd"}
#: English function words that are not also words of Portuguese or Turkish ("a", "as", "do",
#: "for", "no", "se" are).
ENGLISH = set("""the and of to is are with that this which be by it its from or not can you
your what when how does than each only but more""".split())
#: Letters each locale's prose must be written in.
SCRIPT = {"ru": re.compile(r"[а-яё]", re.I), "fa": re.compile(r"[\u0600-\u06ff]"),
          "tr": re.compile(r"[çğışöü]", re.I), "pt": re.compile(r"[ãõçáéíóúâêô]", re.I)}


class Prose(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # per open element: is it skipped?
        self.article = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("br", "img", "input", "hr", "meta", "link", "source", "wbr"):
            return
        skip = (tag in SKIP or "data-calc-widget" in a or "calc-fig" in (a.get("class") or "")
                or "headerlink" in (a.get("class") or "") or (self.stack and self.stack[-1]))
        self.stack.append(bool(skip))
        if tag == "article":
            self.article += 1

    def handle_endtag(self, tag):
        if tag in ("br", "img", "input", "hr", "meta", "link", "source", "wbr"):
            return
        if self.stack:
            self.stack.pop()
        if tag == "article":
            self.article -= 1
        if tag in ("p", "li", "h1", "h2", "h3", "h4", "dd", "dt", "td"):
            self.parts.append("\n")

    def handle_data(self, data):
        if self.article and not (self.stack and self.stack[-1]):
            self.parts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.parts)


def prose(built_site, locale: str, page: str) -> str:
    p = Prose()
    p.feed(page_path(built_site, locale, page).read_text(encoding="utf-8"))
    return p.text


def english_sentences(text: str) -> list[str]:
    """Stretches of six or more Latin words of which at least three are English function
    words: an English sentence, not a term of art or a model name."""
    found = []
    for run in re.findall(r"[A-Za-z][A-Za-z'’\-]*(?:[\s,;:()]+[A-Za-z][A-Za-z'’\-]*){5,}", text):
        words = re.findall(r"[A-Za-z'’]+", run.lower())
        if sum(w in ENGLISH for w in words) >= 3:
            found.append(run)
    return found


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("page", PAGES)
def test_substantial_prose_in_the_pages_language(built_site, locale, page):
    text = prose(built_site, locale, page)
    words = re.findall(r"\w+", text)
    assert len(words) >= MIN_WORDS.get(page, MIN_WORDS_DEFAULT), (locale, page, len(words))
    if locale != DEFAULT_LOCALE:
        native = [w for w in words if SCRIPT[locale].search(w)]
        assert len(native) >= len(words) // (3 if locale in ("ru", "fa") else 12), (locale, page)


@pytest.mark.parametrize("locale", [loc for loc in LOCALES if loc != DEFAULT_LOCALE])
@pytest.mark.parametrize("page", PAGES)
def test_no_english_sentence_on_a_localized_page(built_site, locale, page):
    assert english_sentences(prose(built_site, locale, page)) == []


def test_every_other_locale_has_its_letters():
    assert sorted(SCRIPT) == sorted(loc for loc in LOCALES if loc != DEFAULT_LOCALE)


def test_the_english_detector_itself():
    assert english_sentences("LoRA, QLoRA and GPU: Llama 3.1 8B on an NVIDIA A40") == []
    assert english_sentences("Bu sayfa LoRA ve QLoRA için bellek tahminini anlatır.") == []
    assert english_sentences("Bu sayfa: the base weights are frozen, so only the adapters train.")
