"""serve.py as a static host with the build's precompressed files (as nginx's brotli_static /
gzip_static): `<file>.br` to a client that accepts Brotli, `<file>.gz` to one that accepts only
gzip, the file itself otherwise; a sibling older than its file is never sent; with
precompressed=False (bench's "gzip only"), gzip made on the fly."""

from __future__ import annotations

import gzip
import os
import shutil
import urllib.request
from pathlib import Path

import pytest

from serve import make_server, serve_in_thread


def get(url: str, **headers: str):
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
        return r.headers, r.read()


@pytest.fixture(scope="module")
def served(built_site: Path):
    server, url = serve_in_thread(built_site)
    yield url
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("path", ["assets/calc/snapshot.bin", "assets/pyodide/pyodide.asm.wasm",
                                  "calculator/index.html"])
def test_the_build_s_files_as_they_are(served, built_site, path):
    import brotli

    raw = (built_site / path).read_bytes()
    headers, body = get(served + path, **{"Accept-Encoding": "gzip, deflate, br"})
    assert headers["Content-Encoding"] == "br" and headers["Vary"] == "Accept-Encoding"
    assert body == (built_site / (path + ".br")).read_bytes() and brotli.decompress(body) == raw
    headers, body = get(served + path, **{"Accept-Encoding": "gzip"})
    assert headers["Content-Encoding"] == "gzip"
    assert body == (built_site / (path + ".gz")).read_bytes() and gzip.decompress(body) == raw
    headers, body = get(served + path, **{"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in headers and body == raw


def test_a_stale_sibling_is_not_sent_and_gzip_only_compresses_itself(built_site, tmp_path):
    site = tmp_path / "site"
    (site / "assets" / "calc").mkdir(parents=True)
    shutil.copy2(built_site / "index.html", site / "index.html")
    src = built_site / "assets" / "calc" / "page.js"
    dest = site / "assets" / "calc" / "page.js"
    shutil.copy2(src, dest)
    (site / "assets" / "calc" / "page.js.br").write_bytes(b"stale")
    old = dest.stat().st_mtime_ns - 10**9
    os.utime(site / "assets" / "calc" / "page.js.br", ns=(old, old))
    server, url = serve_in_thread(site)
    try:
        headers, body = get(url + "assets/calc/page.js", **{"Accept-Encoding": "br, gzip"})
        assert headers["Content-Encoding"] == "gzip" and gzip.decompress(body) == src.read_bytes()
    finally:
        server.shutdown()
        server.server_close()
    server = make_server(built_site, "127.0.0.1", 0, quiet=True, precompressed=False)
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        headers, body = get(base + "assets/calc/snapshot.bin", **{"Accept-Encoding": "br, gzip"})
        raw = (built_site / "assets/calc/snapshot.bin").read_bytes()
        assert headers["Content-Encoding"] == "gzip" and gzip.decompress(body) == raw
    finally:
        server.shutdown()
        server.server_close()
