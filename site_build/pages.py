"""Finishing the built HTML, written once for the pages and the templates (the 404 page):
`<html dir>`, the search dialog's name, search pointed at the locale's own index, absolute
hreflang alternates, preload links for the scripts (preload.py) and, last, the
Content-Security-Policy; then each page's directory gets a
sitemap, and every locale its 404 page."""

from __future__ import annotations

import base64
import copy
import hashlib
import html
import json
import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from calc import i18n
from calc.fmt import fmt

from . import styles
from .common import DEFAULT_LOCALE, esc, fail, locale_root, site_locale
from .preload import add_preloads

# --- the one finish ----------------------------------------------------------------------------

_HTML_TAG = re.compile(r"<html\b([^>]*)>")
_DIR_ATTR = re.compile(r'\sdir="[^"]*"')
_ALTERNATE = re.compile(r'<link rel="alternate" href="([^"]*)" hreflang="([^"]*)">')


def finish_html(output: str, locale: str, url: str | None,
                preload_from: tuple[Path, ...] | None) -> tuple[str, list[tuple[str, str]]]:
    """Every built HTML file of `locale`, page or template, finished the same way; `url` is its
    absolute address (hreflang alternates are made absolute against it); `preload_from` the
    directories the site's files come from (the preload links read module scripts there), or
    None for no preload links. Returns the HTML and the alternates, (hreflang, absolute href)
    in page order."""
    if not url:
        raise fail("site_url must be set (hreflang alternates are absolute)")
    direction = i18n.locale_dir(locale)
    output = _HTML_TAG.sub(lambda m: f'<html{_DIR_ATTR.sub("", m.group(1))} dir="{direction}">',
                           output, count=1)
    output = label_search_dialog(output)
    output = point_search_at_locale(output, locale)
    alternates: list[tuple[str, str]] = []

    def absolute(m: re.Match) -> str:
        href = urljoin(url, html.unescape(m.group(1)))
        alternates.append((m.group(2), href))
        return f'<link rel="alternate" href="{esc(href)}" hreflang="{m.group(2)}">'

    output = _ALTERNATE.sub(absolute, output)
    if preload_from is not None:
        output = add_preloads(output, urlsplit(url).path or "/", preload_from)
    return apply_csp(output), alternates  # last: the hashes are of the final inline scripts


# Where the site's files come from: the docs, then the theme's overrides.
def sources(config) -> tuple[Path, ...]:
    custom = config.theme.custom_dir
    return (Path(config.docs_dir),) + ((Path(custom),) if custom else ())


# A page (on_post_page): finished, and its directory's sitemap written.
def finish_page(output: str, page, config) -> str:
    # Not on a page with a widget: there the scripts, once preloaded, ran while the worker
    # compiled and started Python, and Lighthouse's blocking time grew (preload.py).
    widget = bool(page.meta and page.meta.get("calc_worker"))
    output, alternates = finish_html(output, site_locale(config), page.canonical_url,
                                     None if widget else sources(config))
    write_page_sitemap(Path(config.site_dir), config.site_url, page.canonical_url, alternates)
    return output


# --- search, the dialog and the index ------------------------------------------------------

_SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
_SEARCH_LABEL = re.compile(r'class="md-search__input" name="query" aria-label="([^"]*)"')
_CONFIG_SCRIPT = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)',
                            re.S)


# Material's search dialog has no accessible name: give it the search field's own label.
def label_search_dialog(output: str) -> str:
    m = _SEARCH_LABEL.search(output)
    if not m or _SEARCH_DIALOG not in output:
        return output
    return output.replace(_SEARCH_DIALOG, _SEARCH_DIALOG[:-1] + f' aria-label="{m.group(1)}">', 1)


def point_search_at_locale(output: str, locale: str) -> str:
    """Set `base` of Material's `__config` to the locale's root (from the site's root that
    Material's template gives it), so that its search fetches the locale's own index
    (site_build/search.py) and resolves the index's locations against the locale's root.
    Nothing else of the site reads `base` (Material uses it for search results' links and, with
    features this site leaves off, for instant navigation and versions). The default locale's
    pages keep theirs."""
    if locale == DEFAULT_LOCALE:
        return output
    m = _CONFIG_SCRIPT.search(output)
    if not m:
        raise fail("the page has no Material __config script")
    base = json.loads(m.group(2))["base"]
    old = '"base": ' + json.dumps(base)
    if m.group(2).count(old) != 1:
        raise fail(f"unexpected __config of Material: {m.group(2)[:200]}")
    new = '"base": ' + json.dumps((base if base.endswith("/") else base + "/") + locale_root(locale))
    return output[:m.start(2)] + m.group(2).replace(old, new, 1) + output[m.end(2):]


# --- Content-Security-Policy -----------------------------------------------------------------

#: What overrides/main.html writes as the policy of its <meta http-equiv>, filled in per page.
CSP_PLACEHOLDER = "__CSP__"
#: The site's own origin and nothing else. 'wasm-unsafe-eval' lets Pyodide compile its
#: WebAssembly (it allows no JavaScript eval); the inline scripts of each page are allowed by
#: their SHA-256 (added by `content_security_policy`). `frame-ancestors` is not here: a <meta>
#: policy ignores it, so serve.py adds it to the header (FRAME_ANCESTORS there).
CSP_DIRECTIVES: tuple[tuple[str, str], ...] = (
    ("default-src", "'self'"),
    ("script-src", "'self' 'wasm-unsafe-eval'"),
    ("style-src", "'self'"),
    ("img-src", "'self' data:"),  # Material's icons are data: URIs in its CSS
    ("font-src", "'self'"),
    ("connect-src", "'self'"),
    ("worker-src", "'self'"),
    ("manifest-src", "'self'"),
    ("object-src", "'none'"),
    ("base-uri", "'self'"),
    ("form-action", "'self'"),
)
_INLINE_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)
_SCRIPT_SRC = re.compile(r"\ssrc\s*=", re.I)
_SCRIPT_TYPE = re.compile(r"""\stype\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
#: <script type> values that run (HTML's JavaScript MIME types, and modules); any other type is
#: a data block (JSON, JSON-LD) that never runs, so the policy need not allow it.
_JS_TYPES = frozenset({"", "module", "text/javascript", "application/javascript",
                       "application/ecmascript", "application/x-javascript",
                       "application/x-ecmascript", "text/ecmascript", "text/x-javascript",
                       "text/x-ecmascript", "text/jscript", "text/livescript",
                       "text/javascript1.0", "text/javascript1.1", "text/javascript1.2",
                       "text/javascript1.3", "text/javascript1.4", "text/javascript1.5"})


# CSP source expressions ('sha256-...') of the inline scripts that run, in page order.
def inline_script_hashes(html_text: str) -> list[str]:
    out: list[str] = []
    for m in _INLINE_SCRIPT.finditer(html_text):
        attrs = m.group(1)
        if _SCRIPT_SRC.search(attrs):
            continue
        t = _SCRIPT_TYPE.search(attrs)
        kind = next((g for g in t.groups() if g is not None), "") if t else ""
        if kind.strip().lower() not in _JS_TYPES:
            continue
        body = m.group(2).replace("\r\n", "\n").replace("\r", "\n")  # as the parser sees it
        digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode()
        source = f"'sha256-{digest}'"
        if source not in out:
            out.append(source)
    return out


# The policy of one page: CSP_DIRECTIVES, script-src with the page's inline scripts.
def content_security_policy(html_text: str) -> str:
    hashes = inline_script_hashes(html_text)
    parts = []
    for name, value in CSP_DIRECTIVES:
        if name == "script-src" and hashes:
            value = f"{value} {' '.join(hashes)}"
        parts.append(f"{name} {value}")
    return "; ".join(parts)


# Fill in the <meta http-equiv="Content-Security-Policy"> of overrides/main.html.
def apply_csp(html_text: str) -> str:
    marker = f'content="{CSP_PLACEHOLDER}"'
    if html_text.count(marker) != 1:
        raise fail("the page has no Content-Security-Policy placeholder "
                   f"({marker}, overrides/main.html) or more than one")
    policy = content_security_policy(html_text)
    assert not set(policy) & set('"<>&'), policy  # nothing to escape: readable in the page
    return html_text.replace(marker, f'content="{policy}"', 1)


# --- sitemaps --------------------------------------------------------------------------------


def write_page_sitemap(site_dir: Path, site_url: str, page_url: str,
                       alternates: list[tuple[str, str]]) -> None:
    """Material's language switcher fetched `sitemap.xml` beside every hreflang alternate, i.e.
    in each page's directory (the build's bundle no longer does: switcher.py; a bundle an older
    visit cached still may); give every page directory a valid sitemap of that page (with its
    alternates) so that no request 404s. The site root keeps static-i18n's full sitemap."""
    base = site_url if site_url.endswith("/") else site_url + "/"
    if not page_url.startswith(base) or page_url == base:
        return
    directory = site_dir / page_url[len(base):]
    directory.mkdir(parents=True, exist_ok=True)
    links = "".join(
        f'\n    <xhtml:link rel="alternate" hreflang="{esc(lang)}" href="{esc(href)}"/>'
        for lang, href in alternates)
    (directory / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        ' xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
        f"  <url>\n    <loc>{esc(page_url)}</loc>{links}\n  </url>\n</urlset>\n",
        encoding="utf-8")


# --- the 404 page, per locale ----------------------------------------------------------------

#: What overrides/404.html writes as its heading, filled in per locale.
NOT_FOUND_PLACEHOLDER = "__NOT_FOUND__"
#: The default language's 404 page: every later language build rewrites site/404.html.
_root_404: list[str] = []


# The 404 page's heading (overrides/404.html) in the locale's words and digits.
def not_found_heading(locale: str) -> str:
    return f"{fmt(404, 'number', locale)} – {i18n.t('site.not_found', locale)}"


# 404.html is rendered after the pages, with the language menu static-i18n left pointing at
# the last page: point it at each language's home page instead (on_pre_template).
def prepare_404(config) -> None:
    roots = getattr(config.plugins.get("i18n"), "extra_alternate", None)
    if roots:
        # static-i18n sets it as an attribute of config.extra (which Jinja reads first)
        config.extra.alternate = copy.deepcopy(roots)
        config.extra["alternate"] = copy.deepcopy(roots)


def finish_404(output: str, config) -> str:
    """The 404 page (on_post_template), finished as the pages are, with its heading in the
    locale's words: `/404.html` stays the default language's, each other locale gets
    `/<locale>/404.html` (serve.py serves them)."""
    locale = site_locale(config)
    output = output.replace(NOT_FOUND_PLACEHOLDER, esc(not_found_heading(locale)), 1)
    output, _ = finish_html(output, locale, config.site_url, sources(config))
    if locale == DEFAULT_LOCALE:
        _root_404[:] = [output]
        return output
    target = Path(config.site_dir) / locale_root(locale) / "404.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(output, encoding="utf-8")
    return _root_404[0] if _root_404 else output


# --- what the theme reads per locale and per page -----------------------------------------------

#: The widgets' script and styles, loaded by pages with a widget only (overrides/main.html).
WIDGET_ASSETS = {"calc_js": "assets/calc/page.js", "calc_css": styles.CALC_CSS}
#: The script that starts the worker, written inline at the top of <head> (overrides/main.html).
EARLY_SCRIPT = "assets/calc/early.js"


def inline_code(path: Path) -> str:
    """A script file's code for an inline <script>: without its whole-line `//` comments (they
    explain the file; each page would carry them) and blank lines."""
    code = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                     if line.strip() and not line.lstrip().startswith("//"))
    if "</script" in code.lower() or "<!--" in code:
        raise fail(f"{path} cannot be written inside a <script> element")
    return code


# The heading permalinks' title (toc's `permalink_title`) in the locale's words (on_config).
def localize_config(config) -> None:
    locale = site_locale(config)
    toc = config.mdx_configs.setdefault("toc", {})
    key = "site.permalink"
    if key in i18n.catalog(DEFAULT_LOCALE):
        toc["permalink_title"] = i18n.t(key, locale)
    # The FAQ's copy-link buttons (overrides/assets/javascripts/faq.js), in the locale's words.
    config.extra["faq_msgs"] = {
        "button": i18n.t("ui.copy_link", locale), "label": i18n.t("site.faq_copy_link", locale),
        "copied": i18n.t("site.faq_link_copied", locale),
        "failed": i18n.t("ui.copy_failed", locale)}


#: The first widget's root: its name and locale name the worker (messages.workerName).
_FIRST_WIDGET = re.compile(r'<[a-z]+ [^>]*data-calc-widget="([^"]+)"[^>]*\sdata-locale="([^"]*)"')


# A page with a widget loads the widgets' script and styles; a missing one fails the build.
# `calc_worker`: the worker's name, for the tag in <head> that starts it early, and
# `calc_early_js` its code (docs/assets/calc/early.js, overrides/main.html).
def mark_widget_assets(page, output: str, config) -> None:
    if "data-calc-widget" not in output:
        return
    if not (Path(config.docs_dir) / WIDGET_ASSETS["calc_js"]).is_file():
        raise fail(f"{page.file.src_uri} has a widget, but {WIDGET_ASSETS['calc_js']} is not "
                   f"in {config.docs_dir}")
    styles.parts(Path(config.docs_dir))  # the stylesheet's parts (the build fails without)
    for key in WIDGET_ASSETS:
        page.meta[key] = True
    first = _FIRST_WIDGET.search(output)
    if first is None:
        raise fail(f"{page.file.src_uri}: a widget root without data-locale")
    page.meta["calc_worker"] = f"{first.group(1)} {first.group(2)}"
    page.meta["calc_early_js"] = inline_code(Path(config.docs_dir) / EARLY_SCRIPT)
