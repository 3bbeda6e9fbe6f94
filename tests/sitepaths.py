"""Locales, pages and where each built page lives (shared by the build and content tests).

The locales are the site's registry, `calc.i18n.LOCALES`; the pages are mkdocs.yml's nav
(tests/build/test_registry.py checks that mkdocs.yml's languages agree with the registry)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from mkdocs.utils import yaml_load

from calc.i18n import DEFAULT_LOCALE, LOCALES

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["DEFAULT_LOCALE", "LOCALES", "MKDOCS", "PAGES", "mkdocs_config", "page_path"]


def mkdocs_config() -> dict:
    """mkdocs.yml as YAML (its `!ENV` tags read as mkdocs reads them)."""
    with open(ROOT / "mkdocs.yml", encoding="utf-8") as f:
        return yaml_load(f)


def _nav_files(nav) -> list[str]:
    """The Markdown files of a nav, in order (nested sections flattened)."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [f for value in nav.values() for f in _nav_files(value)]
    return [f for item in nav for f in _nav_files(item)]


MKDOCS = mkdocs_config()
#: The site's pages, as mkdocs.yml's nav lists them: "index", "calculator", ...
PAGES: tuple[str, ...] = tuple(str(PurePosixPath(f).with_suffix(""))
                               for f in _nav_files(MKDOCS["nav"]) if f.endswith(".md"))


def page_path(site: Path, locale: str, page: str) -> Path:
    """Built HTML of `page` ("index", "faq", ...) in `locale`."""
    base = site if locale == DEFAULT_LOCALE else site / locale
    return base / "index.html" if page == "index" else base / page / "index.html"
