"""Search, one index per locale: Material's search plugin (with static-i18n) writes a single
`search/search_index.json` of every locale's pages; after each language build the locale gets
its own, `search/search_index.json` for the default locale and `<locale>/search/
search_index.json` for the others, holding only that locale's pages (locations relative to
the locale's root) with the locale's lunr languages (`calc.i18n.SEARCH_LANGS`). Each locale's
pages fetch theirs (`site_build.pages.point_search_at_locale`). lunr has no Persian: the
Persian letters are added to its Arabic (`patch_lunr_persian`)."""

from __future__ import annotations

import json
from pathlib import Path

from calc.i18n import SEARCH_LANGS

from .common import DEFAULT_LOCALE, LOCALES, fail, locale_root, patch_bundle, site_locale

#: The index's `config.pipeline`: Material removes from lunr's pipeline the functions not named
#: here (of the languages in `lang`). The trimmer stays, so that the default locale's lone
#: `en` keeps lunr's own trimmer (punctuation off the words' ends: "(LoRA)" is found as
#: "LoRA"); the stemmers go, as Material's default (`stopWordFilter` alone) has them go.
#: Why English is in every locale's languages: with two or more, Material's worker builds
#: lunr.multiLanguage, whose trimmer keeps the word characters of all of them (Latin ones
#: included) and strips punctuation, as the single index with all five languages did; a lone
#: non-English language's trimmer (Cyrillic only for `ru`) would cut the Latin words away.
SEARCH_PIPELINE = ("stopWordFilter", "trimmer")


def locale_search_index(index: dict, locale: str) -> dict:
    """The search index of one locale from the search plugin's: only the locale's documents,
    their locations relative to the locale's root, and the locale's lunr languages."""
    root = locale_root(locale)
    others = tuple(locale_root(loc) for loc in LOCALES if loc not in (locale, DEFAULT_LOCALE))
    docs = []
    for doc in index["docs"]:
        location = doc["location"]
        if location.startswith(others) or not location.startswith(root):
            continue
        docs.append({**doc, "location": location[len(root):]})
    config = {**index["config"], "lang": list(SEARCH_LANGS[locale]),
              "pipeline": list(SEARCH_PIPELINE)}
    return {**index, "config": config, "docs": docs}


def write_locale_search_index(site_dir: Path, locale: str) -> Path:
    """Write the locale's own search index, `<locale root>/search/search_index.json`.

    Runs after every language build, after static-i18n's post-build. There,
    `search/search_index.json` is the search plugin's index of the build just done: in a
    language static-i18n builds, that language's pages alone; in the default language's build,
    which ends last (static-i18n builds the others inside it), static-i18n's merge of every
    build's pages, which is then cut down to the default locale's pages."""
    source = site_dir / "search" / "search_index.json"
    if not source.is_file():
        raise fail(f"{source} not found (is the search plugin on?)")
    index = json.loads(source.read_text(encoding="utf-8"))
    ours = locale_search_index(index, locale)
    if not ours["docs"]:
        raise fail(f"the search index of {locale!r} holds no page")
    lunr_dir = site_dir / "assets" / "javascripts" / "lunr" / "min"
    for lang in SEARCH_LANGS[locale]:
        if lang != "en" and not (lunr_dir / f"lunr.{lang}.min.js").is_file():
            raise fail(f"lunr has no language {lang!r} ({lunr_dir})")
    target = site_dir / locale_root(locale) / "search" / "search_index.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    # as compact as the search plugin writes it
    target.write_text(json.dumps(ours, ensure_ascii=False, separators=(",", ":")),
                      encoding="utf-8")
    return target


#: The locale of each build under way: static-i18n builds the other languages inside the
#: default language's post-build, and leaves the theme's language at the last one built.
_building: list[str] = []


# A language build starts (on_pre_build): remember its locale.
def start_build(config) -> None:
    _building.append(site_locale(config))


# A language build ends (on_post_build, after static-i18n's): write its locale's index.
def split_search_index(config) -> Path:
    locale = _building.pop() if _building else site_locale(config)
    return write_locale_search_index(Path(config.site_dir), locale)


# Whether the language build that just ended was the outermost one: the whole site is built.
def site_finished() -> bool:
    return not _building


# --- Persian words -------------------------------------------------------------------------

#: lunr has no Persian; `ar` in the search languages brings the Arabic letters, but not the
#: Persian-only ones (پ چ ژ ک گ ی, ۀ), Persian digits or the zero-width non-joiner, so the
#: combined trimmer of lunr.multiLanguage cut them off every word's ends while the query is not
#: trimmed: "کارت" was indexed as "ارت" and never found. lunr.multiLanguage reads each language's
#: `wordCharacters` when it is called, so extending Arabic's right after lunr.multi is loaded
#: (it is loaded last, for two or more languages only) makes the combined trimmer keep them.
LUNR_PERSIAN_MARK = "/* site: Persian word characters */"
LUNR_PERSIAN_PATCH = (
    "\n" + LUNR_PERSIAN_MARK + "\n"
    "(function (l) {\n"
    "  if (l && l.ar && l.ar.wordCharacters.indexOf(\"\\u06cc\") < 0) {\n"
    "    l.ar.wordCharacters += \"\\u067e\\u0686\\u0698\\u06a9\\u06af\\u06c0\\u06cc\\u06f0-\\u06f9\\u200c\";\n"
    "  }\n"
    "})(typeof lunr !== \"undefined\" ? lunr : self.lunr);\n"
)


# Add the Persian word characters to lunr's Arabic, once (every language build copies the
# theme's assets again).
def patch_lunr_persian(site_dir: Path) -> None:
    path = site_dir / "assets" / "javascripts" / "lunr" / "min" / "lunr.multi.min.js"
    if not path.is_file():
        raise fail(f"{path} not found (is the search plugin on?)")
    text = path.read_text(encoding="utf-8")
    if LUNR_PERSIAN_MARK not in text:
        path.write_text(text + LUNR_PERSIAN_PATCH, encoding="utf-8")


# --- the index when it is needed ------------------------------------------------------------

#: Material 9.8.2 asks for the search index on every page load, in two places of its bundle:
#: `setupSearchWorker` (integrations/search/worker/_/index.ts: `merge(of(location.protocol !==
#: "file:"), watchToggle("search")).pipe(first(active => active), switchMap(() => index$))`,
#: then the whole index posted to the search worker, which builds lunr's index from it) and
#: `mountSearchHiglight` (components/search/highlight: `combineLatest([index$,
#: location$.pipe(startWith(getLocation()), filter(url => !!url.searchParams.get("h")))])`).
#: So every page downloaded its locale's index (160-270 KB), parsed it and copied it to the
#: worker on the main thread, and had lunr index it on the other core while the page and the
#: calculator started. The build makes both wait for a use, as Material itself does for a
#: site opened from files: the worker gets the index when the reader opens search (the search
#: toggle, set when the box takes focus or the search button is pressed; a query typed meanwhile
#: waits for the worker's ready message, as before), and the highlighting asks for it only on a
#: page reached from a search result (`?h=`). Measured (bench/ideas.md, row "The search index
#: downloaded only when search is used"): Lighthouse mobile, 3 interleaved runs, median total
#: blocking time tr calculator 143 -> 94 ms, ru calculator 240 -> 91, fa choosing-a-gpu
#: 385 -> 110 ms.
#: Minified names: L merge, $ of, Je watchToggle, z combineLatest, Q startWith, we getLocation,
#: g filter, Re first, b switchMap; t is index$, r location$.
SEARCH_MARK = "/* site: the index when search is used (site_build/search.py) */"
_WITH_H = 'Q(we()),g(o=>!!o.searchParams.get("h"))'  # the location, while it has ?h=
SEARCH_PATCHES = (
    ('L($(location.protocol!=="file:"),Je("search"))',
     f'L($(!1){SEARCH_MARK},Je("search"))'),
    (f"z([t,r.pipe({_WITH_H})])",
     f"z([r.pipe({_WITH_H},Re(),b(()=>t)){SEARCH_MARK},r.pipe({_WITH_H})])"),
)


def patch_search_js(site_dir: Path) -> None:
    """Make the theme's bundle ask for the search index only when search is used, once; the
    build fails when Material's code is not as expected."""
    patch_bundle(site_dir, SEARCH_PATCHES, "search index (setupSearchWorker, search highlight)")
