"""mkdocs hook (`hooks:` in mkdocs.yml): the one bridge from `calc` to the pages.

It only wires mkdocs' events to the build's concerns, one module each under `site_build/`:

- `macros` (and `tables`): every page's Markdown is a Jinja2 template rendered for the locale
  being built; every figure comes from a macro run by calc, never from a number typed into the
  prose. The macros, for the writers: i18n/WRITERS.md.
- `prose`: every page translated, the digit check, right-to-left prose, the FAQ's JSON-LD.
- `pages`: one finish for every built page and template (`<html dir>`, absolute hreflang,
  search pointed at the locale's index, the Content-Security-Policy), per-directory sitemaps,
  the 404 page per locale.
- `search`: one search index per locale, Persian words in lunr, the index downloaded only when
  search is used.
- `runtime`: Pyodide, the calc wheel and the memory snapshot the calculators run on.
- `palette`: the theme's palette stylesheet and script without what restyled every element on
  each page load (a universal rule, a color-scheme meta written unchanged).
- `switcher`: the theme's language switcher without its sitemap downloads on every page.
- `styles`: the widgets' stylesheet, written in parts, served as one file.
- `hosting`: what a real host needs beside the pages (policies for nginx and `_headers`,
  precompressed Brotli and gzip files).

The locale being built is `config.theme["language"]` (static-i18n sets it per build); the
site's locales are `calc.i18n.LOCALES`.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.plugins import CombinedEvent, event_priority

from site_build import hosting, macros, pages, palette, prose, runtime, search, styles, switcher
from site_build.common import site_locale
from site_build.pages import not_found_heading  # noqa: F401 - tests/browser import it from here


# The heading permalinks' title in the locale's words.
@event_priority(-110)  # after static-i18n's on_config (-100), which sets the build's language
def on_config(config):
    pages.localize_config(config)
    return config


# Every page exists in every locale, or the build fails; the widgets' stylesheet parts are
# served joined, not one by one.
def on_files(files, config):
    prose.check_translations(Path(config.docs_dir))
    styles.drop_parts(files)
    return files


# A language build starts: search remembers its locale.
def on_pre_build(config):
    search.start_build(config)


# The page's checks (its own locale's file, no typed digits), then its macros.
def on_page_markdown(markdown, page, config, files):
    locale = site_locale(config)
    src = page.file.src_uri
    prose.check_page_locale(page, locale)
    offset = prose.front_matter_lines(page.file.abs_src_path)
    prose.check_digits(markdown, page.meta, src, offset)
    macros.render_meta(page.meta, locale, src)
    out = macros.render_markdown(markdown, locale, src, offset)
    pages.mark_widget_assets(page, out, config)
    return out


# The FAQ's structured data; Latin runs isolated on right-to-left pages.
def on_page_content(html, page, config, files):
    faq = prose.faq_jsonld(html)
    if faq is not None:
        page.meta["faq_jsonld"] = faq
    return prose.isolate_prose(html, site_locale(config))


# Every page finished (the same finish as the 404 page's), with its directory's sitemap.
def on_post_page(output, page, config):
    return pages.finish_page(output, page, config)


# The 404 page's language menu points at each language's home page.
def on_pre_template(template, template_name, config):
    if template_name == "404.html":
        pages.prepare_404(config)
    return template


# The 404 page finished as the pages are, one per locale.
def on_post_template(output_content, template_name, config):
    if template_name != "404.html":
        return output_content
    return pages.finish_404(output_content, config)


# Every language build: the widgets' stylesheet joined from its parts, Persian words in lunr,
# the search index when it is used, the palette's patches and the language switcher's (the
# theme's assets were copied again), then, after the default language's, the runtime.
def _ship(config):
    styles.write_calc_css(config)
    search.patch_lunr_persian(Path(config.site_dir))
    search.patch_search_js(Path(config.site_dir))
    palette.patch_palette_css(Path(config.site_dir))
    palette.patch_palette_js(Path(config.site_dir))
    switcher.patch_switcher_js(Path(config.site_dir))
    runtime.ship_runtime(config)


# Last of all, after static-i18n's on_post_build (-100): the locale's own search index.
@event_priority(-200)
def _split_search_index(config):
    search.split_search_index(config)


# After the whole site (the outermost language build ends last): what a real host needs beside
# the pages (each page's policy for nginx and `_headers`, precompressed files).
@event_priority(-300)
def _host_files(config):
    if search.site_finished():
        hosting.finish_site(Path(config.site_dir))


on_post_build = CombinedEvent(_ship, _split_search_index, _host_files)
