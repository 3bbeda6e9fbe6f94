"""Content-Security-Policy: only the site's own origin, WebAssembly for Pyodide, and the build's
own inline scripts by their hash.

- Every built page carries `<meta http-equiv="Content-Security-Policy">` first in its head; its
  script hashes are exactly those of the page's inline scripts (recomputed here with an HTML
  parser, independently of the hook); no inline style or event handler is left in any page.
- serve.py sends the same policy as a header, plus `frame-ancestors 'none'` (ignored in a
  <meta> policy), on pages, 404 pages and every other file (the calculator's worker runs under
  the header's policy).
- In Chromium (a context that does not bypass CSP), every page of every locale, with its
  calculators reaching `ready`, the search worker running and the palette switched, reports no
  violation: neither a `securitypolicyviolation` event nor a console message (the workers'
  messages reach the page's console too). A script injected at run time is refused, so the
  listeners are known to hear violations.
"""

from __future__ import annotations

import base64
import hashlib
import re
import urllib.request
from html.parser import HTMLParser
from urllib.parse import urljoin

import pytest

from browser_helpers import BOOT_TIMEOUT_MS, LOCALES, NAV_PAGES

PAGES = NAV_PAGES  # mkdocs.yml's nav
KEYWORDS = {"'self'", "'none'", "'wasm-unsafe-eval'"}
JS_TYPES = {"", "module", "text/javascript", "application/javascript"}

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push([e.effectiveDirective, e.blockedURI, e.sourceFile, e.lineNumber,
                               (e.sample || '').slice(0, 80)].join(' | '));
}, true);
"""


def parse_policy(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in text.split(";"):
        words = part.split()
        if words:
            assert words[0] not in out, f"{words[0]} twice"
            out[words[0]] = words[1:]
    return out


class _Scan(HTMLParser):
    """Inline scripts (executable ones, as the browser will hash them), CSP metas and the
    markup a policy without 'unsafe-inline' would refuse."""

    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.metas: list[tuple[str, int]] = []  # (policy, scripts seen before it)
        self.scripts_seen = 0
        self.inline: list[str] = []
        self.refused: list[str] = []
        self._script: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = {k.lower(): v or "" for k, v in attrs}
        if tag == "meta" and a.get("http-equiv", "").lower() == "content-security-policy":
            self.metas.append((a.get("content", ""), self.scripts_seen))
        if tag == "script":
            self.scripts_seen += 1
            if "src" not in a and a.get("type", "").strip().lower() in JS_TYPES:
                self._script = []
        if tag == "style":
            self.refused.append("<style> element")
        for name, value in a.items():
            if name.startswith("on"):
                self.refused.append(f"<{tag} {name}=>")
            if name == "style":
                self.refused.append(f"<{tag} style={value!r}>")
            if name in ("href", "src", "action") and value.strip().lower().startswith("javascript:"):
                self.refused.append(f"<{tag} {name}=javascript:>")

    def handle_data(self, data):
        if self._script is not None:
            self._script.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.inline.append("".join(self._script))
            self._script = None


def scan(path) -> _Scan:
    s = _Scan()
    s.feed(path.read_text(encoding="utf-8"))
    s.close()
    return s


def sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def check_policy(policy: dict[str, list[str]]) -> None:
    """Only the site's origin: keywords, hashes and (for images) data: URIs; never
    'unsafe-inline' / 'unsafe-eval' / another origin / a wildcard."""
    for directive in ("default-src", "script-src", "style-src", "img-src", "font-src",
                      "connect-src", "worker-src", "object-src", "base-uri", "form-action"):
        assert directive in policy, directive
    assert policy["default-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert policy["worker-src"] == ["'self'"]
    assert "'wasm-unsafe-eval'" in policy["script-src"]
    for directive, sources in policy.items():
        for s in sources:
            ok = (s in KEYWORDS or re.fullmatch(r"'sha256-[A-Za-z0-9+/]{43}='", s)
                  or (s == "data:" and directive == "img-src"))
            assert ok, f"{directive} allows {s}"
            if s == "'wasm-unsafe-eval'":
                assert directive == "script-src"


# --- the build -------------------------------------------------------------------------------


def test_every_page_carries_the_policy_with_its_own_inline_scripts(built_site):
    pages = sorted(built_site.rglob("*.html"))
    assert len(pages) >= len(PAGES) * len(LOCALES) + len(LOCALES)
    for path in pages:
        s = scan(path)
        rel = path.relative_to(built_site)
        assert len(s.metas) == 1, f"{rel}: {len(s.metas)} CSP metas"
        text, before = s.metas[0]
        assert before == 0, f"{rel}: the policy comes after {before} script(s)"
        policy = parse_policy(text)
        check_policy(policy)
        hashes = {x for x in policy["script-src"] if x.startswith("'sha256-")}
        assert hashes == {sha256_source(body) for body in s.inline}, rel
        assert s.refused == [], f"{rel}: {s.refused[:5]}"


def get_headers(url: str):
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.headers


@pytest.mark.parametrize("path, page", [
    ("", "index.html"), ("fa/calculator/", "fa/calculator/index.html"),
    ("tr/faq/", "tr/faq/index.html"), ("ru/no-such-page/", "ru/404.html"),
    ("assets/calc/worker.js", "index.html"), ("assets/pyodide/pyodide.asm.wasm", "index.html"),
])
def test_serve_sends_the_same_policy_as_a_header(built_site, site_url, path, page):
    status, headers = get_headers(urljoin(site_url, path))
    assert status in (200, 404)
    meta = scan(built_site / page).metas[0][0]
    assert headers["Content-Security-Policy"] == f"{meta}; frame-ancestors 'none'"
    assert headers["X-Content-Type-Options"] == "nosniff"
    check_policy(parse_policy(headers["Content-Security-Policy"]))


# --- the browser -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def csp_context(browser):
    context = browser.new_context()  # bypass_csp stays False: the policy is enforced
    context.add_init_script(RECORD_VIOLATIONS)
    yield context
    context.close()


def _is_csp_message(text: str) -> bool:
    return bool(re.search(r"Content[ -]Security[ -]Policy|Refused to", text, re.I))


@pytest.mark.parametrize("locale", LOCALES)
def test_no_violation_on_any_page(csp_context, calc_site, locale):
    page = csp_context.new_page()
    messages: list[str] = []
    errors: list[str] = []
    page.on("console", lambda m: _is_csp_message(m.text) and messages.append(m.text[:300]))
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        # the listeners hear a violation: a script injected at run time is refused
        page.goto(calc_site.page_url(locale, "faq"))
        ran = page.evaluate("""() => {
          const s = document.createElement('script');
          s.textContent = 'window.__injected = true';
          document.body.appendChild(s);
          return window.__injected === true;
        }""")
        assert ran is False
        page.wait_for_function("window.__cspViolations.length > 0")
        assert "script-src" in page.evaluate("window.__cspViolations[0]")
        page.wait_for_timeout(100)
        messages.clear()

        urls = [calc_site.page_url(locale, p) if p else calc_site.url + (
            "" if locale == "en" else f"{locale}/") for p in PAGES]
        urls.append(calc_site.url + ("" if locale == "en" else f"{locale}/") + "no-such-page/")
        for url in urls:
            page.goto(url)
            widgets = page.locator("[data-calc-widget]")
            if widgets.count():
                page.wait_for_function(
                    "() => [...document.querySelectorAll('[data-calc-widget]')]"
                    ".every(w => w.dataset.state === 'ready' && w.dataset.busy === 'false')",
                    timeout=BOOT_TIMEOUT_MS)
                first = widgets.first
                field = first.locator("input[inputmode]").first
                field.fill("2")  # a recalculation, whose results arrive as HTML
                page.wait_for_selector("[data-calc-widget][data-busy='false']", state="attached")
            if url == urls[0]:  # the search (Material's search worker), once per locale
                page.locator(".md-search__input").fill("lora")
                page.keyboard.press("End")
                page.wait_for_selector(".md-search-result__meta", state="attached",
                                       timeout=15_000)
                page.keyboard.press("Escape")
            # the palette toggle (a programmatic click: in RTL the focused search field may
            # cover it)
            page.locator("form[data-md-component='palette'] label:visible").first.evaluate(
                "el => el.click()")
            page.wait_for_timeout(50)
            violations = page.evaluate("window.__cspViolations")
            assert violations == [], f"{url}: {violations}"
            assert messages == [], f"{url}: {messages}"
        assert errors == []
    finally:
        page.close()
