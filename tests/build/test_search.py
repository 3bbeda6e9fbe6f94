"""Search: one index per locale, holding only that locale's pages, and the words of every
language (Persian included) found in it, with Material's real search worker (lunr + its
language files) run under Node on the built indexes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from urllib.parse import urljoin

import pytest

from sitepaths import DEFAULT_LOCALE, LOCALES, PAGES

HERE = Path(__file__).resolve().parent
PERSIAN_ONLY = "پچژکگیۀ"  # letters Arabic lacks: lunr's Arabic trimmer used to cut them off
WORD = {
    "fa": re.compile(r"[\u0621-\u064a\u067e\u0686\u0698\u06a9\u06af\u06c0\u06cc\u200c]{5,}"),
    "ru": re.compile(r"[а-яё]{7,}", re.I),
    "tr": re.compile(r"[a-zçğıöşü]{7,}", re.I),
    "pt": re.compile(r"[a-zà-ú]{7,}", re.I),
    "en": re.compile(r"[a-z]{7,}", re.I),
}
#: lunr languages each locale's index must have (calc.i18n.SEARCH_LANGS, written out here):
#: English for the Latin terms every page has, plus the locale's own; Arabic for Persian.
LANGS = {"en": ["en"], "tr": ["en", "tr"], "pt": ["en", "pt"], "ru": ["en", "ru"],
         "fa": ["en", "ar"]}
#: Terms every locale's pages use.
SHARED = ["LoRA", "QLoRA", "GPU"]
ORIGIN = "http://site.test/"


def root(locale: str) -> str:
    return "" if locale == DEFAULT_LOCALE else f"{locale}/"


def index_path(locale: str) -> str:
    return f"{root(locale)}search/search_index.json"


def load_index(site: Path, locale: str) -> dict:
    return json.loads((site / index_path(locale)).read_text(encoding="utf-8"))


def page_file(site: Path, locale: str, location: str) -> Path:
    """The built page a location of `locale`'s index names (relative to the locale's root)."""
    return site / root(locale) / location.split("#", 1)[0] / "index.html"


def frequent_words(site: Path, locale: str, n: int, keep=lambda w: True) -> list[str]:
    """The n most frequent words of a locale's pages that appear in no other locale."""
    counts: Counter[str] = Counter()
    elsewhere: set[str] = set()
    for loc in LOCALES:
        for doc in load_index(site, loc)["docs"]:
            text = re.sub(r"<[^>]+>", " ", doc["title"] + " " + doc["text"])
            words = {w.lower().strip("\u200c") for w in WORD[locale].findall(text)}
            if loc == locale:
                counts.update(words)
            else:
                elsewhere |= words
    return [w for w, _ in counts.most_common() if w not in elsewhere and keep(w)][:n]


def search(site: Path, locale: str, queries: list[str]) -> dict[str, list[str]]:
    """What each query finds in the locale's index: locations relative to the locale's root."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed (make test installs it)")
    proc = subprocess.run([node, str(HERE / "search_site.cjs"), str(site), index_path(locale),
                           *queries], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("locale", LOCALES)
def test_each_locale_has_its_own_index(built_site, locale):
    index = load_index(built_site, locale)
    assert index["config"]["lang"] == LANGS[locale]
    assert "trimmer" in index["config"]["pipeline"]
    docs = index["docs"]
    articles = [d for d in docs if "#" not in d["location"]]
    assert len(articles) == len(PAGES), sorted(d["location"] for d in articles)
    lang = re.compile(r'<html[^>]*\slang="([^"]+)"')
    for doc in docs:
        location = doc["location"]
        assert location.split("/", 1)[0] not in LOCALES, location  # relative to the locale
        page = page_file(built_site, locale, location)
        assert page.is_file(), (locale, location)
        text = page.read_text(encoding="utf-8")
        assert lang.search(text).group(1).split("-")[0] == locale, (locale, location)
        if "#" in location:
            assert f'id="{location.split("#", 1)[1]}"' in text, (locale, location)


def test_no_index_holds_another_locales_text(built_site):
    """The default locale's index is no longer the merge of all five."""
    sizes = {loc: (built_site / index_path(loc)).stat().st_size for loc in LOCALES}
    total = sum(sizes.values())
    assert all(size < total / 2 for size in sizes.values()), sizes
    en = load_index(built_site, "en")
    assert not any(re.search(r"[\u0400-\u04ff\u0600-\u06ff]", d["title"]) for d in en["docs"])


def test_pages_point_search_at_their_locale(built_site):
    """Material fetches `search/search_index.json` under `base` of the page's __config and
    resolves the index's locations against it: every page's `base` is its locale's root."""
    config = re.compile(r'<script id="__config" type="application/json">(.*?)</script>', re.S)
    pages = sorted(built_site.rglob("*.html"))
    assert len(pages) >= len(LOCALES) * len(PAGES)
    for page in pages:
        rel = page.relative_to(built_site).as_posix()
        first = rel.split("/", 1)[0]
        locale = first if first in LOCALES else DEFAULT_LOCALE
        m = config.search(page.read_text(encoding="utf-8"))
        assert m, rel
        base = json.loads(m.group(1))["base"]
        url = urljoin(ORIGIN, rel[: -len("index.html")] if rel.endswith("index.html") else rel)
        assert urljoin(url, base) == ORIGIN + root(locale), (rel, base)


def test_persian_index_holds_persian_text(built_site):
    docs = load_index(built_site, "fa")["docs"]
    assert any(re.search(r"[\u0600-\u06ff]{3,}", d["text"]) for d in docs)


def test_persian_words_with_persian_only_letters_are_found(built_site):
    edge = frequent_words(built_site, "fa", 8,
                          lambda w: w[0] in PERSIAN_ONLY or w[-1] in PERSIAN_ONLY)
    inner = frequent_words(built_site, "fa", 4,
                           lambda w: not (w[0] in PERSIAN_ONLY or w[-1] in PERSIAN_ONLY))
    assert len(edge) >= 4, edge
    found = search(built_site, "fa", edge + inner)
    missing = [w for w, hits in found.items() if not hits]
    assert not missing, f"Persian words search does not find: {missing}"


@pytest.mark.parametrize("locale", LOCALES)
def test_each_language_is_searchable(built_site, locale):
    words = frequent_words(built_site, locale, 5)
    assert len(words) >= 3, words
    found = search(built_site, locale, words)
    missing = [w for w, hits in found.items() if not hits]
    assert not missing, f"{locale}: search does not find {missing}"


@pytest.mark.parametrize("locale", LOCALES)
def test_shared_terms_find_the_locales_pages_only(built_site, locale):
    found = search(built_site, locale, SHARED)
    for term, hits in found.items():
        assert len({h.split("#", 1)[0] for h in hits}) >= 2, (locale, term, hits)
        for hit in hits:
            assert hit.split("/", 1)[0] not in LOCALES, (locale, term, hit)
            assert page_file(built_site, locale, hit).is_file(), (locale, term, hit)
