"""The built site: five locales, every page translated, direction, FAQ ids, links, hreflang,
no third-party requests, 404 pages, Pyodide and the calc wheel."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from sitepaths import DEFAULT_LOCALE, LOCALES, PAGES, page_path


def faq_ids(spec_dir: Path) -> list[str]:
    """The ids of content.md's FAQ table (first column, after the `| id | question |` header)."""
    text = (spec_dir / "content.md").read_text(encoding="utf-8")
    section = text.split("## FAQ", 1)[1]
    ids = re.findall(r"^\|\s*([a-z0-9][a-z0-9-]*)\s*\|", section, re.M)
    ids = [i for i in ids if i != "id"]
    assert len(ids) >= 10, f"could not read the FAQ ids from {spec_dir / 'content.md'}"
    return ids


# --- build and locales ----------------------------------------------------------------------


def test_strict_build_passes_without_warnings(built_site):
    log_file = built_site / ".build-log.txt"
    if log_file.is_file():  # absent when SITE_DIR reuses a build
        log = log_file.read_text(encoding="utf-8")
        assert "WARNING" not in log, log
    for loc in LOCALES:
        assert page_path(built_site, loc, "index").is_file()


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_is_built_in_every_locale_and_translated(built_site, site_pages, locale, page):
    path = page_path(built_site, locale, page)
    assert path.is_file(), f"{page} missing in {locale}"
    parsed = site_pages[path.relative_to(built_site)]
    assert parsed.html_attrs.get("lang") == locale
    assert parsed.article_text, f"{path}: empty article"
    if locale != DEFAULT_LOCALE:
        english = site_pages[page_path(built_site, DEFAULT_LOCALE, page).relative_to(built_site)]
        assert parsed.article_text != english.article_text, f"{path} shows the English text"
        h1 = [h for h in parsed.headings if h[0] == "h1"]
        h1_en = [h for h in english.headings if h[0] == "h1"]
        assert h1 and h1_en and h1[0][2] != h1_en[0][2], f"{path}: English title"


@pytest.mark.parametrize("locale", LOCALES)
def test_html_lang_and_direction(built_site, site_pages, locale):
    expected = "rtl" if locale == "fa" else "ltr"
    for page in PAGES:
        parsed = site_pages[page_path(built_site, locale, page).relative_to(built_site)]
        assert parsed.html_attrs.get("lang") == locale
        assert parsed.html_attrs.get("dir") == expected, parsed.path
        assert parsed.body_attrs.get("dir") == expected, parsed.path


@pytest.mark.parametrize("locale", LOCALES)
def test_every_faq_id_is_on_the_faq_page(built_site, site_pages, spec_dir, locale):
    parsed = site_pages[page_path(built_site, locale, "faq").relative_to(built_site)]
    ids = faq_ids(spec_dir)
    missing = [i for i in ids if i not in parsed.ids]
    assert not missing, f"{locale} FAQ lacks {missing}"
    headings = {h[1].get("id"): h for h in parsed.headings}
    for i in ids:
        tag, attrs, text = headings[i]
        assert tag in ("h2", "h3"), (i, tag)
        assert text.strip(), i


def test_faq_questions_are_translated(built_site, site_pages, spec_dir):
    by_locale = {loc: {h[1].get("id"): h[2].strip() for h in site_pages[
        page_path(built_site, loc, "faq").relative_to(built_site)].headings} for loc in LOCALES}
    for i in faq_ids(spec_dir):
        texts = [by_locale[loc][i] for loc in LOCALES]
        assert len(set(texts)) == len(LOCALES), f"{i}: a question left in another language"


# --- links ----------------------------------------------------------------------------------


def _target(built_site: Path, page_rel: Path, ref: str, base: str) -> tuple[Path, str] | None:
    """The file a reference points to in the built site and its fragment; None if external."""
    page_url = urljoin(base, page_rel.as_posix())
    absolute = urljoin(page_url, ref)
    parts = urlsplit(absolute)
    if parts.scheme not in ("http", "https") or f"{parts.scheme}://{parts.netloc}/" != base:
        return None
    path = built_site / unquote(parts.path).lstrip("/")
    if parts.path.endswith("/") or path.is_dir():
        path = path / "index.html"
    return path, unquote(parts.fragment)


def test_no_broken_internal_link_or_anchor(built_site, site_pages, site_base_url):
    broken = []
    for rel, page in site_pages.items():
        for tag, attr, value in page.refs:
            if not value or value.startswith(("mailto:", "data:", "javascript:")):
                continue
            target = _target(built_site, rel, value, site_base_url)
            if target is None:
                continue
            path, fragment = target
            if not path.is_file():
                broken.append(f"{rel}: <{tag} {attr}={value!r}> -> {path} missing")
                continue
            if fragment and path.suffix == ".html":
                ids = site_pages[path.relative_to(built_site)].ids
                if fragment not in ids:
                    broken.append(f"{rel}: <{tag} {attr}={value!r}> -> #{fragment} missing")
    assert not broken, "\n".join(broken[:50])


THIRD_PARTY = re.compile(r"fonts\.googleapis|fonts\.gstatic|googletagmanager|google-analytics|"
                         r"cdn\.jsdelivr|unpkg\.com|cdnjs|gstatic\.com")


#: Outbound citation links (an <a> the reader may follow) are not requests the page makes;
#: they must be https and go to the sources the pages cite.
CITATION_HOSTS = ("github.com", "arxiv.org", "huggingface.co")


def test_no_reference_to_a_third_party_origin(built_site, site_pages, site_base_url):
    offending = []
    for rel, page in site_pages.items():
        for tag, attr, value in page.refs:
            if tag == "a" and urlsplit(value).scheme == "https" and \
                    urlsplit(value).hostname in CITATION_HOSTS:
                continue  # a link to a cited source, never loaded by the page
            if re.match(r"^[a-z][a-z0-9+.-]*:", value) and not value.startswith(
                    ("mailto:", "data:", "javascript:")):
                if _target(built_site, rel, value, site_base_url) is None:
                    offending.append(f"{rel}: <{tag} {attr}={value}>")
    for path in list(built_site.rglob("*.html")) + list(built_site.rglob("*.css")):
        if THIRD_PARTY.search(path.read_text(encoding="utf-8", errors="replace")):
            offending.append(f"{path.relative_to(built_site)} names a third-party host")
    assert not offending, "\n".join(offending[:50])


# --- hreflang, sitemaps, 404 ----------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_hreflang_alternates_are_absolute_and_point_to_the_same_page(built_site, site_pages,
                                                                   site_base_url, page):
    for loc in LOCALES:
        parsed = site_pages[page_path(built_site, loc, page).relative_to(built_site)]
        alternates = dict(parsed.alternates)
        assert sorted(alternates) == sorted(LOCALES), parsed.alternates
        for alt_loc, href in alternates.items():
            parts = urlsplit(href)
            assert parts.scheme and parts.netloc, f"{parsed.path}: relative hreflang {href}"
            expected = urljoin(site_base_url,
                               page_path(Path("."), alt_loc, page).parent.as_posix() + "/")
            assert href == expected.replace("/./", "/"), (href, expected)


def test_no_sitemap_404_beside_any_alternate(built_site, site_pages, site_base_url):
    """Material's language switcher fetches sitemap.xml relative to every hreflang alternate."""
    missing = set()
    for rel, page in site_pages.items():
        for _, href in page.alternates:
            target = _target(built_site, rel, urljoin(href, "sitemap.xml"), site_base_url)
            assert target is not None, href
            if not target[0].is_file():
                missing.add(str(target[0].relative_to(built_site)))
    assert not missing, sorted(missing)


def test_404_pages_per_locale(built_site, site_pages):
    root = site_pages[Path("404.html")]
    assert root.html_attrs.get("lang") == DEFAULT_LOCALE
    for loc in (loc for loc in LOCALES if loc != DEFAULT_LOCALE):
        page = site_pages[Path(loc) / "404.html"]
        assert page.html_attrs.get("lang") == loc
        assert page.html_attrs.get("dir") == ("rtl" if loc == "fa" else "ltr")


# --- widgets' assets ------------------------------------------------------------------------


def test_widget_script_only_on_pages_with_a_widget(built_site, site_pages):
    """page.js (a module) and calc.css on the pages with a widget, and on no other page; the
    same pages have widgets in every locale."""
    with_widgets = {}
    for loc in LOCALES:
        with_widgets[loc] = set()
        for page in PAGES:
            parsed = site_pages[page_path(built_site, loc, page).relative_to(built_site)]
            module = [s for s in parsed.scripts if s.get("src", "").endswith("assets/calc/page.js")]
            css = [v for tag, attr, v in parsed.refs
                   if tag == "link" and v.endswith("assets/calc/calc.css")]
            if parsed.widgets:
                with_widgets[loc].add(page)
                assert module and module[0].get("type") == "module", parsed.path
                assert len(css) == 1, parsed.path
            else:
                assert not module and not css, parsed.path
    assert with_widgets[DEFAULT_LOCALE], "no page has a widget"
    assert all(pages == with_widgets[DEFAULT_LOCALE] for pages in with_widgets.values())


def test_widget_stylesheet_is_its_parts_in_order(built_site):
    """The one stylesheet pages link holds every part of docs/assets/calc/css/, in the parts'
    name order (the cascade's) and nothing else; the parts are not copied into the site."""
    parts = sorted((Path(__file__).resolve().parents[2] / "docs/assets/calc/css").glob("*.css"))
    assert len(parts) >= 2, parts
    css = (built_site / "assets/calc/calc.css").read_text(encoding="utf-8")
    at = 0
    for part in parts:
        text = part.read_text(encoding="utf-8").strip()
        found = css.find(text, at)
        assert found >= at and css[at:found].strip() == "", part.name
        at = found + len(text)
    assert css[at:].strip() == ""
    assert not (built_site / "assets/calc/css").exists()


# --- Pyodide and the wheel ------------------------------------------------------------------


def test_pyodide_runtime_is_shipped(built_site, repo_root):
    src = repo_root / "node_modules" / "pyodide"
    dest = built_site / "assets" / "pyodide"
    names = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
             "pyodide-lock.json"] + [p.name for p in src.glob("*.map")]
    for name in names:
        assert (dest / name).is_file(), name
        assert (dest / name).read_bytes() == (src / name).read_bytes(), name
    lock = json.loads((repo_root / "package-lock.json").read_text(encoding="utf-8"))
    pinned = lock["packages"]["node_modules/pyodide"]["version"]
    shipped = json.loads((dest / "package.json").read_text(encoding="utf-8"))["version"]
    assert shipped == pinned


def test_calc_wheel_is_shipped_and_complete(built_site, repo_root):
    dest = built_site / "assets" / "calc"
    manifest = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    wheel = dest / manifest["wheel"]
    assert wheel.is_file()
    assert re.fullmatch(r"[a-z0-9_]+-[0-9][^-]*-py3-none-any\.whl", wheel.name), wheel.name
    data = wheel.read_bytes()
    assert manifest["sha256"] == hashlib.sha256(data).hexdigest()
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        sources = {p.relative_to(repo_root).as_posix() for p in (repo_root / "calc").rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
        assert sources <= names, sorted(sources - names)
        for name in sources:
            assert zf.read(name) == (repo_root / name).read_bytes(), name
        meta = [n for n in names if n.endswith(".dist-info/WHEEL")]
        assert meta and "Root-Is-Purelib: true" in zf.read(meta[0]).decode()


def test_calc_wheel_imports_and_reads_its_data(built_site, tmp_path):
    """The wheel alone (no checkout on the path) gives a working calc, catalogs included."""
    manifest = json.loads((built_site / "assets/calc/manifest.json").read_text(encoding="utf-8"))
    wheel = built_site / "assets" / "calc" / manifest["wheel"]
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import calc, calc.catalog, calc.engine, calc.fields, calc.fmt;"
        "assert calc.__file__.startswith(sys.argv[1]), calc.__file__;"
        "e = calc.engine.estimate(calc.fields.parse({'model': 'llama-3.1-8b'}));"
        "print(calc.fmt.fmt(e.total, 'GiB', 'fa'), len(calc.catalog.gpus()))")
    proc = subprocess.run([sys.executable, "-I", "-c", code, str(wheel)], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"[۰-۹]", proc.stdout), proc.stdout


@pytest.mark.parametrize("locale", LOCALES)
def test_faq_page_has_faqpage_structured_data(built_site, site_pages, spec_dir, locale):
    path = page_path(built_site, locale, "faq")
    blocks = re.findall(r'<script type="application/ld\+json">(.*?)</script>',
                        path.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, path
    data = json.loads(blocks[0])
    assert data["@type"] == "FAQPage"
    questions = data["mainEntity"]
    assert len(questions) == len(faq_ids(spec_dir))
    headings = {h[1].get("id"): h[2].strip() for h in site_pages[path.relative_to(built_site)].headings}
    for q, i in zip(questions, faq_ids(spec_dir)):
        assert q["name"] == re.sub(r"\s+", " ", headings[i].replace("¶", "")).strip()
        assert q["acceptedAnswer"]["text"]


def test_search_dialog_has_an_accessible_name(built_site):
    for loc in LOCALES:
        text = page_path(built_site, loc, "faq").read_text(encoding="utf-8")
        m = re.search(r'<div class="md-search"[^>]*role="dialog"[^>]*>', text)
        assert m and re.search(r'aria-label="[^"]+"', m.group(0)), loc
