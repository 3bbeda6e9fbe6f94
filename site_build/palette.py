"""The theme's palette stylesheet without its one costly rule, and its palette script without
its costly <meta>.

Material (9.8.2; its repository's `src/templates/assets/javascripts/components/palette/
index.ts` and `stylesheets/palette/_scheme.scss`) sets
`data-md-color-switching` on `<body>` whenever it applies a palette, on every page load too,
reads the header's computed style at once, and removes the attribute a task later. Its
stylesheet turns transitions off under that attribute with a universal selector
(`[data-md-color-switching] *`), so each change of the attribute makes the browser compute the
style of every element again: two whole-page style passes on every page load for nothing (no
colour changes then). On the pt calculator page (about 1,240 elements) Chromium traces at
the mobile preset's 4 x CPU slowdown show five such passes in Material's start-up with the
rule and three without (474 -> 194 ms); Lighthouse's score moves less than its own noise
(bench/ideas.md).

The build removes the rule from the copied stylesheet; site.css keeps its effect where it
matters, while a reader switches palettes: `[data-site-switching]` is set by the small inline
script of overrides/main.html for the frame of the switch only, never on page load.

The same component appends a new `<meta name="color-scheme">` to `<head>`, empty, then sets
its content each time it applies a palette, on every load too. Chromium restyles the whole page
for each change of a color-scheme meta, even one that leaves the page's scheme as it was (also
when another such meta comes first): the two whole-page passes left in the start-up. The
build patches the theme's bundle so that the component takes the page's own meta
(overrides/main.html, `data-site-color-scheme`, content `light`) and writes its content only
when it differs. fa how-it-works, 4 x CPU, traced: whole-page style passes at load 3 -> 1.
A reader's switch still writes the new scheme (one pass, as the switch restyles anyway).
The bundle's source map is not rewritten: after the patched spot its columns are off by the
patch's few characters (DevTools only).
"""

from __future__ import annotations

from pathlib import Path

from .common import fail, patch_bundle

__all__ = ["ATTR", "RULE", "MARK", "META_PATCHES", "patch_palette_css", "patch_palette_js"]

#: The attribute Material sets on <body> while it applies a palette.
ATTR = "data-md-color-switching"
#: Material's rule, as its minified palette stylesheet has it.
RULE = (f"[{ATTR}] *,[{ATTR}] :after,[{ATTR}] :before{{transition-duration:0s!important}}")
#: Left in its place (each language build copies the theme's assets again).
MARK = "/* site: switching rule removed (site_build/palette.py) */"


def patch_palette_css(site_dir: Path) -> None:
    """Remove RULE from the theme's palette stylesheet, once; the build fails when the theme's
    stylesheet is not there or no longer holds the rule as expected (a new Material version:
    look at its palette component again)."""
    found = sorted((site_dir / "assets" / "stylesheets").glob("palette.*.min.css"))
    if len(found) != 1:
        raise fail(f"expected one theme palette stylesheet, found {[p.name for p in found]}")
    path = found[0]
    text = path.read_text(encoding="utf-8")
    if MARK in text and RULE not in text:
        return
    if text.count(RULE) != 1 or text.count(ATTR) != RULE.count(ATTR):  # no other rule uses it
        raise fail(f"{path.name}: Material's [data-md-color-switching] rule is not as expected")
    path.write_text(text.replace(RULE, MARK), encoding="utf-8")


#: (Material's code, ours) in its minified bundle (9.8.2): the component's own meta, then its
#: write of the scheme, which the header's computed `color-scheme` gives.
META_PATCHES = (
    ('let o=x("meta",{name:"color-scheme"});document.head.appendChild(o);',
     'let o=document.querySelector("meta[data-site-color-scheme]")'
     '||document.head.appendChild(x("meta",{name:"color-scheme"}));'),
    ("return o.content=a.colorScheme,",
     "return o.content!==a.colorScheme&&(o.content=a.colorScheme),"),
)


def patch_palette_js(site_dir: Path) -> None:
    """Apply META_PATCHES to the theme's bundle, once; the build fails when the bundle is not
    there or holds Material's code other than exactly once (a new Material version)."""
    patch_bundle(site_dir, META_PATCHES, "color-scheme meta")
