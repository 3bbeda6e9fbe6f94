"""The theme's palette stylesheet without its universal switching rule (site_build/palette.py),
and the site's own rule for a reader's switch in its place (site.css, overrides/main.html)."""

from __future__ import annotations

import re

import pytest
from mkdocs.exceptions import PluginError

from site_build import palette

#: Material's rule (its repository's src/templates/assets/stylesheets/palette/_scheme.scss:
#: `[data-md-color-switching] *` and its ::before, ::after), as Material 9.8.2's minified
#: palette stylesheet has it.
MATERIAL_RULE = ("[data-md-color-switching] *,[data-md-color-switching] :after,"
                 "[data-md-color-switching] :before{transition-duration:0s!important}")


@pytest.fixture
def sheet(theme_asset):
    return lambda text: theme_asset("stylesheets", "palette.0123abcd.min.css", text)


def test_the_rule_is_removed_once_and_the_rest_kept(tmp_path, sheet):
    before = "a{color:red}@media screen{b{x:1}" + MATERIAL_RULE + "}c{y:2}"
    path = sheet(before)
    palette.patch_palette_css(tmp_path)
    after = path.read_text(encoding="utf-8")
    assert "data-md-color-switching" not in after
    assert after.replace(palette.MARK, "") == "a{color:red}@media screen{b{x:1}}c{y:2}"
    palette.patch_palette_css(tmp_path)  # the next language build: nothing more
    assert path.read_text(encoding="utf-8") == after


@pytest.mark.parametrize("text", [
    "a{color:red}",  # a theme without the rule
    MATERIAL_RULE.replace("0s", "0ms"),  # a changed rule
    MATERIAL_RULE + "[data-md-color-switching] a{color:red}",  # another rule under it
])
def test_a_theme_not_as_expected_fails_the_build(tmp_path, sheet, text):
    sheet(text)
    with pytest.raises(PluginError, match="data-md-color-switching"):
        palette.patch_palette_css(tmp_path)


def test_no_palette_stylesheet_fails_the_build(tmp_path):
    (tmp_path / "assets" / "stylesheets").mkdir(parents=True)
    with pytest.raises(PluginError, match="palette stylesheet"):
        palette.patch_palette_css(tmp_path)


def test_the_built_site(built_site):
    sheets = list((built_site / "assets" / "stylesheets").glob("palette.*.min.css"))
    assert len(sheets) == 1
    text = sheets[0].read_text(encoding="utf-8")
    assert "data-md-color-switching" not in text and palette.MARK in text
    site_css = (built_site / "assets" / "css" / "site.css").read_text(encoding="utf-8")
    assert re.search(r"\[data-site-switching\] \*,\s*\[data-site-switching\] ::before,\s*"
                     r"\[data-site-switching\] ::after \{\s*transition-duration: 0s !important",
                     site_css)


def test_every_page_with_the_toggle_has_the_switch_script(site_pages):
    for rel, page in site_pages.items():
        html = page.path.read_text(encoding="utf-8")
        if 'data-md-component="palette"' in html:
            assert 'setAttribute("data-site-switching"' in html, rel


#: Material 9.8.2's palette component as its minified bundle has it (src/templates/assets/
#: javascripts/components/palette/index.ts: `h("meta", { name: "color-scheme" })` appended to
#: <head>, then `meta.content = getComputedStyle(header).colorScheme` for each palette), written
#: out here, not taken from palette.py.
MATERIAL_META = ('let o=x("meta",{name:"color-scheme"});document.head.appendChild(o);'
                 "let n=Wt();")
MATERIAL_SET = "i.pipe(m(()=>{let s=Ce(\"header\"),a=window.getComputedStyle(s);" \
               "return o.content=a.colorScheme,a.backgroundColor}))"


def test_the_bundle_takes_the_pages_meta_and_writes_only_a_change(tmp_path, bundle):
    path = bundle("a();" + MATERIAL_META + "b();" + MATERIAL_SET + "c();")
    palette.patch_palette_js(tmp_path)
    after = path.read_text(encoding="utf-8")
    assert 'document.head.appendChild(o);' not in after
    assert ('let o=document.querySelector("meta[data-site-color-scheme]")'
            '||document.head.appendChild(x("meta",{name:"color-scheme"}));let n=Wt();') in after
    assert "return o.content!==a.colorScheme&&(o.content=a.colorScheme),a.backgroundColor" in after
    assert after.startswith("a();") and after.endswith("c();")
    palette.patch_palette_js(tmp_path)  # the next language build: nothing more
    assert path.read_text(encoding="utf-8") == after


@pytest.mark.parametrize("text", [
    "a();",  # a theme without the component's code
    MATERIAL_META,  # only half of it
    MATERIAL_META + MATERIAL_SET.replace("colorScheme", "colorScheme||'light'"),  # changed
    MATERIAL_META + MATERIAL_META + MATERIAL_SET,  # twice
])
def test_a_bundle_not_as_expected_fails_the_build(tmp_path, bundle, text):
    bundle(text)
    with pytest.raises(PluginError, match="color-scheme"):
        palette.patch_palette_js(tmp_path)


def test_every_page_has_the_meta_the_bundle_writes(built_site, site_pages):
    bundles = list((built_site / "assets" / "javascripts").glob("bundle.*.min.js"))
    assert len(bundles) == 1
    text = bundles[0].read_text(encoding="utf-8")
    assert 'querySelector("meta[data-site-color-scheme]")' in text
    assert "o.content!==a.colorScheme" in text
    for rel, page in site_pages.items():
        html = page.path.read_text(encoding="utf-8")
        head = html[:html.index("</head>")]
        metas = re.findall(r'<meta name="color-scheme"[^>]*>', head)
        assert metas == ['<meta name="color-scheme" content="light" data-site-color-scheme>'], rel
