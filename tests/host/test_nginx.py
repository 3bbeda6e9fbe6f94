"""The shipped nginx configuration (hosting/nginx.conf) serving a real build: the README's
hosting instructions, proven. The calculator's browser tests also run against this server
(`make test` runs tests/browser/test_widgets.py a second time with CALC_HOST=nginx).

What a host must get right, each checked on the wire:
- MIME types: `.wasm` as application/wasm (Pyodide's streaming compile needs it), `.mjs`/`.js`
  as text/javascript (module scripts and the worker);
- each page's own Content-Security-Policy as a header, with `frame-ancestors 'none'`, and the
  worker script with the policy that allows `'wasm-unsafe-eval'`;
- precompressed Brotli and gzip files sent as they are (the bytes of `<file>.br` / `.gz`);
- revalidation (ETag -> 304) and `Cache-Control: no-cache`;
- a 404 page per language, with status 404; the build's host files not served.
"""

from __future__ import annotations

import gzip
import re
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from nginx_host import Nginx

from calc.i18n import DEFAULT_LOCALE, LOCALES

_CSP_META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"')


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def nginx_url(built_site: Path, tmp_path_factory) -> str:
    with Nginx(built_site, "127.0.0.1", _free_port(), tmp_path_factory.mktemp("nginx")) as url:
        yield url


def get(url: str, **headers: str):
    """(status, headers, body) of a GET, errors included."""
    req = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def _prefix(locale: str) -> str:
    return "" if locale == DEFAULT_LOCALE else f"{locale}/"


@pytest.mark.parametrize("path, ctype", [
    ("assets/pyodide/pyodide.asm.wasm", "application/wasm"),
    ("assets/pyodide/pyodide.mjs", "text/javascript"),
    ("assets/calc/worker.js", "text/javascript"),
    ("assets/calc/delta.mjs", "text/javascript"),
    ("sw.js", "text/javascript"),
    ("assets/calc/manifest.json", "application/json"),
    ("index.html", "text/html"),
    ("sitemap.xml", "application/xml"),
])
def test_mime_types(nginx_url, path, ctype):
    status, headers, _ = get(nginx_url + path)
    assert status == 200
    assert headers.get_content_type() == ctype
    assert headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("page", ["", "calculator/", "faq/"])
def test_each_page_carries_its_own_policy(nginx_url, built_site, locale, page):
    rel = f"{_prefix(locale)}{page}"
    html = (built_site / rel / "index.html").read_text(encoding="utf-8")
    meta = _CSP_META.search(html).group(1).replace("&#39;", "'")
    status, headers, body = get(nginx_url + rel)
    assert status == 200 and body.decode() == html
    assert headers["Content-Security-Policy"] == f"{meta}; frame-ancestors 'none'"


def test_worker_may_compile_webassembly(nginx_url):
    _, headers, _ = get(nginx_url + "assets/calc/worker.js")
    policy = headers["Content-Security-Policy"]
    assert "'wasm-unsafe-eval'" in policy and "frame-ancestors 'none'" in policy


@pytest.mark.parametrize("path", ["assets/pyodide/pyodide.asm.wasm", "assets/calc/snapshot.bin"])
def test_precompressed_files_are_sent_as_they_are(nginx_url, built_site, path):
    raw = (built_site / path).read_bytes()
    status, headers, body = get(nginx_url + path, **{"Accept-Encoding": "br"})
    assert status == 200 and headers["Content-Encoding"] == "br"
    assert body == (built_site / (path + ".br")).read_bytes()
    import brotli

    assert brotli.decompress(body) == raw
    status, headers, body = get(nginx_url + path, **{"Accept-Encoding": "gzip"})
    assert headers["Content-Encoding"] == "gzip" and gzip.decompress(body) == raw
    status, headers, body = get(nginx_url + path, **{"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in headers and body == raw


def test_revalidation(nginx_url):
    status, headers, _ = get(nginx_url + "calculator/")
    assert status == 200 and headers["Cache-Control"] == "no-cache"
    etag = headers["ETag"]
    assert etag
    status, _, body = get(nginx_url + "calculator/", **{"If-None-Match": etag})
    assert status == 304 and body == b""


def test_service_worker_is_revalidated_and_may_fetch(nginx_url):
    """/sw.js: revalidated on every update check (a new build's worker is seen on the next
    visit), with a policy whose connect-src lets it fetch the site's files; at the root, so
    no Service-Worker-Allowed header is needed for the whole site's scope."""
    status, headers, body = get(nginx_url + "sw.js")
    assert status == 200 and headers["Cache-Control"] == "no-cache"
    assert "connect-src 'self'" in headers["Content-Security-Policy"]
    assert b"const BUILD = {" in body and "Service-Worker-Allowed" not in headers


@pytest.mark.parametrize("locale", LOCALES)
def test_404_page_per_language(nginx_url, built_site, locale):
    status, _, body = get(nginx_url + f"{_prefix(locale)}no-such-page/")
    assert status == 404
    assert body == (built_site / _prefix(locale) / "404.html").read_bytes()


@pytest.mark.parametrize("name", ["_csp.map", "_404.map", "_headers"])
def test_host_files_are_not_served(nginx_url, built_site, name):
    assert (built_site / name).is_file(), f"the build did not write {name}"
    status, _, _ = get(nginx_url + name)
    assert status == 404


def test_headers_file_has_one_policy_per_page(built_site):
    """Hosts that read `_headers` merge every matching rule: a page matched by two rules
    would get two policies (both enforced). Each page path appears once, with its own."""
    rules: dict[str, list[str]] = {}
    path = None
    for line in (built_site / "_headers").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith(" "):
            path = line
            assert path not in rules, f"{path} has two rules"
            rules[path] = []
        elif line.strip():
            rules[path].append(line.strip())
    html = (built_site / "fa" / "faq" / "index.html").read_text(encoding="utf-8")
    meta = _CSP_META.search(html).group(1).replace("&#39;", "'")
    assert f"Content-Security-Policy: {meta}; frame-ancestors 'none'" in rules["/fa/faq/"]
    assert not any(p == "/*" for p in rules)
    assert "Cache-Control: no-cache" in rules["/sw.js"]
