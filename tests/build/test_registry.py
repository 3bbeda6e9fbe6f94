"""One locale registry: `calc.i18n.LOCALES` (with DEFAULT_LOCALE, the right-to-left locales and
each locale's search languages beside it) is the only list of locales in code; mkdocs.yml,
which static-i18n builds the languages from, must agree with it, and so must the theme's own
idea of each language's direction."""

from __future__ import annotations

import re
from pathlib import Path

import material
import pytest

from calc import i18n
from sitepaths import MKDOCS, PAGES, ROOT

MATERIAL_LANGUAGES = Path(material.__file__).parent / "templates" / "partials" / "languages"


def i18n_plugin() -> dict:
    (plugin,) = [p["i18n"] for p in MKDOCS["plugins"] if isinstance(p, dict) and "i18n" in p]
    return plugin


def search_plugin() -> dict:
    (plugin,) = [p["search"] for p in MKDOCS["plugins"] if isinstance(p, dict) and "search" in p]
    return plugin


def material_direction(locale: str) -> str:
    """The text direction Material's translation of `locale` sets (English's when it has
    none: Material falls back to English for every key a translation lacks)."""
    for name in (locale, "en"):
        text = (MATERIAL_LANGUAGES / f"{name}.html").read_text(encoding="utf-8")
        m = re.search(r'"direction":\s*"(\w+)"', text)
        if m:
            return m.group(1)
    raise AssertionError("Material's English translation has no direction")


def test_mkdocs_languages_are_the_registrys():
    languages = i18n_plugin()["languages"]
    assert [lang["locale"] for lang in languages] == list(i18n.LOCALES)
    assert all(lang.get("build") is True for lang in languages)


def test_default_locale_agrees():
    defaults = [lang["locale"] for lang in i18n_plugin()["languages"] if lang.get("default")]
    assert defaults == [i18n.DEFAULT_LOCALE]
    assert MKDOCS["theme"]["language"] == i18n.DEFAULT_LOCALE
    assert i18n_plugin()["docs_structure"] == "suffix"  # <page>.<locale>.md beside <page>.md


def test_persian_is_the_one_right_to_left_locale():
    assert i18n.locale_dir("fa") == "rtl"
    assert sorted(i18n.RTL_LOCALES) == ["fa"]


@pytest.mark.parametrize("locale", i18n.LOCALES)
def test_theme_direction_agrees_with_calc(locale):
    assert material_direction(locale) == i18n.locale_dir(locale)


def test_every_locale_has_its_facts():
    assert sorted(i18n.SEARCH_LANGS) == sorted(i18n.LOCALES)
    assert sorted(i18n.PLURAL_CATEGORIES) == sorted(i18n.LOCALES)
    for locale in i18n.LOCALES:
        assert (ROOT / "calc" / "locales" / f"{locale}.json").is_file(), locale
        assert i18n.SEARCH_LANGS[locale][0] == "en", locale  # the Latin terms of every page


def test_search_plugin_loads_every_language_the_locales_use():
    used = {lang for langs in i18n.SEARCH_LANGS.values() for lang in langs}
    assert sorted(search_plugin()["lang"]) == sorted(used)


def test_every_other_locale_translates_the_whole_nav():
    titles = [title for item in MKDOCS["nav"] for title in item]
    assert len(titles) == len(PAGES)
    for lang in i18n_plugin()["languages"]:
        if lang["locale"] != i18n.DEFAULT_LOCALE:
            assert sorted(lang["nav_translations"]) == sorted(titles), lang["locale"]
