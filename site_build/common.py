"""What the build's modules share: the checkout, the locale being built, errors, escaping, the
theme's bundle patched in place."""

from __future__ import annotations

from pathlib import Path

from mkdocs.exceptions import PluginError

from calc.html import e as esc
from calc.i18n import DEFAULT_LOCALE, LOCALES

__all__ = ["ROOT", "DEFAULT_LOCALE", "LOCALES", "esc", "fail", "site_locale", "locale_root",
           "patch_bundle"]

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


def patch_bundle(site_dir: Path, patches: tuple[tuple[str, str], ...], what: str) -> None:
    """Replace each (Material's code, ours) of `patches` in the theme's minified bundle, once
    (each language build copies the theme's assets again); the build fails when the bundle is
    not there or holds Material's code other than exactly once (a new Material version: read
    its code again). `what` names the code in that message."""
    found = sorted((site_dir / "assets" / "javascripts").glob("bundle.*.min.js"))
    if len(found) != 1:
        raise fail(f"expected one theme bundle, found {[p.name for p in found]}")
    path = found[0]
    text = path.read_text(encoding="utf-8")
    if all(theirs not in text and text.count(ours) == 1 for theirs, ours in patches):
        return
    for theirs, ours in patches:
        if text.count(theirs) != 1 or ours in text:
            raise fail(f"{path.name}: Material's {what} code is not as expected")
        text = text.replace(theirs, ours)
    path.write_text(text, encoding="utf-8")
