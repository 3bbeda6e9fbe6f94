"""The search index downloaded only when search is used (site_build/search.py): the theme's
bundle no longer asks for it on every page load. tests/browser/test_search_box.py checks that
search still finds the locale's pages and that a page reached from a result highlights the
query; this module checks the patch itself and that the build fails on another bundle."""

from __future__ import annotations

import pytest
from mkdocs.exceptions import PluginError

from site_build import search


# Material 9.8.2's setupSearchWorker and mountSearchHiglight as its minified bundle has them
# (abridged around the two expressions), written out here.
WORKER = ('function Ei(e,t){let r=Mn(e);return L($(location.protocol!=="file:"),Je("search"))'
          '.pipe(Re(o=>o),b(()=>t)).subscribe(({config:o,docs:n})=>r.next({type:0})),r}')
HIGHLIGHT = ('function Ai(e,{index$:t,location$:r}){return z([t,r.pipe(Q(we()),'
             'g(o=>!!o.searchParams.get("h")))]).pipe(m(([o,n])=>xi(o.config)))}')


def test_the_bundle_asks_for_the_index_only_when_search_is_used(tmp_path, bundle):
    path = bundle(WORKER + ";" + HIGHLIGHT)
    search.patch_search_js(tmp_path)
    after = path.read_text(encoding="utf-8")
    # the worker's index: on the search toggle only (the file: branch, always false now)
    assert 'L($(!1)' in after and "location.protocol" not in after
    assert after.count('Je("search"))') == 1
    # the highlight: the index only after a location with ?h=, then both as before
    has_h = 'r.pipe(Q(we()),g(o=>!!o.searchParams.get("h"))'
    assert f"z([{has_h},Re(),b(()=>t))" in after
    assert after.count(has_h) == 2 and "z([t," not in after
    assert after.count(search.SEARCH_MARK) == 2
    search.patch_search_js(tmp_path)  # the next language build: nothing more
    assert path.read_text(encoding="utf-8") == after


@pytest.mark.parametrize("text", [
    "a();",
    WORKER,  # the highlight's code missing
    HIGHLIGHT,  # the worker's code missing
    (WORKER + HIGHLIGHT) * 2,
    WORKER.replace('"file:"', '"https:"') + HIGHLIGHT,
])
def test_a_bundle_with_other_code_fails_the_build(tmp_path, bundle, text):
    bundle(text)
    with pytest.raises(PluginError, match="search index"):
        search.patch_search_js(tmp_path)


def test_the_built_bundle_asks_for_the_index_only_on_use(built_site):
    (bundle,) = (built_site / "assets" / "javascripts").glob("bundle.*.min.js")
    text = bundle.read_text(encoding="utf-8")
    assert 'location.protocol!=="file:"),Je("search")' not in text
    assert text.count(search.SEARCH_MARK) == 2
