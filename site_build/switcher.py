"""The theme's language switcher without its sitemap downloads.

Material (9.8.2; its repository's `src/templates/assets/javascripts/bundle.ts` calls
`setupAlternateHijacking` from `integrations/alternate/index.ts`) fetches, on every page load,
`sitemap.xml` beside each `<link rel="alternate">` of the page's head (our five hreflang links:
five requests, five XML documents parsed and walked on the main thread), so that a click on a
link into another language can be sent to the same page there. This site needs none of it: the
build points every entry of the language menu at the translated page already (static-i18n),
and overrides/assets/javascripts/lang-switch.js takes those clicks first (capture phase, and
stops them), keeping the reader's anchor and calculator query. Material's click handler never
saw one of them; its downloads were paid for on every page.

The build takes that one call out of the theme's bundle. Traced at the mobile preset's 4 x CPU
slowdown (412 x 823, 2 x 2 interleaved loads, bench/ideas.md): main-thread time over 50 ms per
task at load tr choosing-a-gpu 488-506 -> 431-453 ms, fa home 361-396 -> 308-339 ms.
The per-page sitemaps (pages.py) stay: harmless, and what an older cached bundle still asks for.
"""

from __future__ import annotations

from pathlib import Path

from .common import patch_bundle

__all__ = ["SWITCHER_PATCHES", "patch_switcher_js"]

#: (Material's call, ours) in its minified bundle (9.8.2):
#: `setupAlternateHijacking({ document$ })`.
SWITCHER_PATCHES = (
    ("ui({document$:ct});", "/* site: no alternate sitemaps (site_build/switcher.py) */"),
)


def patch_switcher_js(site_dir: Path) -> None:
    """Take Material's sitemap-fetching language hijack out of the theme's bundle, once; the
    build fails when the bundle does not call it exactly once as expected."""
    patch_bundle(site_dir, SWITCHER_PATCHES, "language switcher (setupAlternateHijacking)")
