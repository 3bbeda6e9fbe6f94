"""Material's language switcher without its sitemap downloads (site_build/switcher.py): the
bundle's `setupAlternateHijacking` call is taken out; lang-switch.js does the switching
(tests/browser/test_widgets.py checks the menu still goes to the same page in the other locale)."""

from __future__ import annotations

import pytest
from mkdocs.exceptions import PluginError

from site_build import switcher


#: Material 9.8.2's bundle.ts `setupAlternateHijacking({ document$ })`, as its minified bundle
#: has it, written out here.
MATERIAL_HIJACK = "fo=new T;di({alert$:fo});ui({document$:ct});var uo=new T;"


def test_the_bundle_no_longer_fetches_the_alternates_sitemaps(tmp_path, bundle):
    path = bundle("function ui({document$:e}){}" + MATERIAL_HIJACK)
    switcher.patch_switcher_js(tmp_path)
    after = path.read_text(encoding="utf-8")
    assert "ui({document$:ct})" not in after
    assert after.startswith("function ui({document$:e}){}fo=new T;di({alert$:fo});")
    assert after.endswith("var uo=new T;")
    switcher.patch_switcher_js(tmp_path)  # the next language build: nothing more
    assert path.read_text(encoding="utf-8") == after


@pytest.mark.parametrize("text", ["a();", MATERIAL_HIJACK * 2, "ui({document$:ct,x:1});"])
def test_a_bundle_without_the_call_fails_the_build(tmp_path, bundle, text):
    bundle(text)
    with pytest.raises(PluginError, match="language switcher"):
        switcher.patch_switcher_js(tmp_path)


def test_the_built_bundle_calls_no_sitemap_hijack(built_site):
    (bundle,) = (built_site / "assets" / "javascripts").glob("bundle.*.min.js")
    text = bundle.read_text(encoding="utf-8")
    assert "ui({document$:ct})" not in text
    assert text.count("site_build/switcher.py") == 1
