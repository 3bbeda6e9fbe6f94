"""What the build's modules share: the checkout, the locale being built, errors, escaping."""

from __future__ import annotations

from pathlib import Path

from mkdocs.exceptions import PluginError

from calc.html import e as esc
from calc.i18n import DEFAULT_LOCALE, LOCALES

__all__ = ["ROOT", "DEFAULT_LOCALE", "LOCALES", "esc", "fail", "site_locale", "locale_root"]

#: The checkout: mkdocs.yml, calc/, docs/, node_modules/.
ROOT = Path(__file__).resolve().parents[1]


# A build error, named as the hook's (mkdocs prints it and stops the build).
def fail(message: str) -> PluginError:
    return PluginError(f"build_tables: {message}")


# The calc locale of the build: `config.theme["language"]` (set per build by static-i18n).
def site_locale(config) -> str:
    lang = str(config.theme["language"] or DEFAULT_LOCALE)
    loc = lang.replace("_", "-").split("-", 1)[0].lower()
    if loc not in LOCALES:
        raise fail(f"theme language {lang!r} is not one of {LOCALES}")
    return loc


# The locale's directory under the site's root: "" for the default locale, "tr/", ...
def locale_root(locale: str) -> str:
    return "" if locale == DEFAULT_LOCALE else f"{locale}/"
