"""Search finds words in every language, Persian included, with Material's real search worker
(lunr + its language files) run under Node on the built index."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from sitepaths import LOCALES

HERE = Path(__file__).resolve().parent
PERSIAN_ONLY = "پچژکگیۀ"  # letters Arabic lacks: lunr's Arabic trimmer used to cut them off
WORD = {
    "fa": re.compile(r"[\u0621-\u064a\u067e\u0686\u0698\u06a9\u06af\u06c0\u06cc\u200c]{5,}"),
    "ru": re.compile(r"[а-яё]{7,}", re.I),
    "tr": re.compile(r"[a-zçğıöşü]{7,}", re.I),
    "pt": re.compile(r"[a-zà-ú]{7,}", re.I),
    "en": re.compile(r"[a-z]{7,}", re.I),
}


def index_docs(site: Path) -> list[dict]:
    return json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]


def locale_of(location: str) -> str:
    first = location.split("/", 1)[0]
    return first if first in LOCALES else "en"


def frequent_words(docs: list[dict], locale: str, n: int, keep=lambda w: True) -> list[str]:
    """The n most frequent words of a locale's pages that appear in no other locale."""
    counts: Counter[str] = Counter()
    elsewhere: set[str] = set()
    for doc in docs:
        text = re.sub(r"<[^>]+>", " ", doc["title"] + " " + doc["text"])
        words = {w.lower().strip("\u200c") for w in WORD[locale].findall(text)}
        if locale_of(doc["location"]) == locale:
            counts.update(words)
        else:
            elsewhere |= words
    return [w for w, _ in counts.most_common() if w not in elsewhere and keep(w)][:n]


def search(site: Path, queries: list[str]) -> dict[str, list[str]]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is needed (make test installs it)")
    proc = subprocess.run([node, str(HERE / "search_site.cjs"), str(site), *queries],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_search_index_holds_persian_text(built_site):
    docs = [d for d in index_docs(built_site) if d["location"].startswith("fa/")]
    assert docs
    assert any(re.search(r"[\u0600-\u06ff]{3,}", d["text"]) for d in docs)
    config = json.loads((built_site / "search/search_index.json").read_text())["config"]
    assert "ar" in config["lang"]


def test_persian_words_with_persian_only_letters_are_found(built_site):
    docs = index_docs(built_site)
    edge = frequent_words(docs, "fa", 8, lambda w: w[0] in PERSIAN_ONLY or w[-1] in PERSIAN_ONLY)
    inner = frequent_words(docs, "fa", 4, lambda w: not (w[0] in PERSIAN_ONLY or w[-1] in PERSIAN_ONLY))
    assert len(edge) >= 4, edge
    found = search(built_site, edge + inner)
    missing = [w for w, hits in found.items() if not any(h.startswith("fa/") for h in hits)]
    assert not missing, f"Persian words search does not find: {missing}"


@pytest.mark.parametrize("locale", ["en", "tr", "pt", "ru"])
def test_each_language_is_searchable(built_site, locale):
    words = frequent_words(index_docs(built_site), locale, 5)
    assert len(words) >= 3, words
    found = search(built_site, words)
    missing = [w for w, hits in found.items() if not any(locale_of(h) == locale for h in hits)]
    assert not missing, f"{locale}: search does not find {missing}"
