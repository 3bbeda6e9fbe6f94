"""serve.py serves the built site as the calculators need it (the `site_url` fixture)."""

from __future__ import annotations

import re
import socket
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urljoin

import pytest

import serve


def get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


@pytest.mark.parametrize("path, mime", [
    ("assets/pyodide/pyodide.asm.wasm", "application/wasm"),
    ("assets/pyodide/pyodide.mjs", "text/javascript"),
    ("assets/pyodide/python_stdlib.zip", "application/zip"),
    ("assets/calc/manifest.json", "application/json"),
    ("fa/faq/", "text/html"),
])
def test_mime_types(site_url, path, mime):
    status, content_type, _ = get(urljoin(site_url, path))
    assert status == 200 and content_type.startswith(mime), (path, status, content_type)


def test_wheel_named_by_the_manifest_is_served(site_url):
    import json

    status, _, body = get(urljoin(site_url, "assets/calc/manifest.json"))
    wheel = json.loads(body)["wheel"]
    status, content_type, body = get(urljoin(site_url, f"assets/calc/{wheel}"))
    assert status == 200 and body[:2] == b"PK"


def test_unknown_paths_get_the_404_page_of_their_locale(site_url):
    status, _, body = get(urljoin(site_url, "fa/no-such-page/"))
    assert status == 404 and b'lang="fa"' in body
    status, _, body = get(urljoin(site_url, "no-such-page/"))
    assert status == 404 and b'lang="en"' in body


def test_every_alternates_sitemap_answers(site_url):
    """What Material's language switcher fetches on every page: no 404, same origin."""
    _, _, body = get(urljoin(site_url, "tr/faq/"))
    hrefs = re.findall(rb'<link rel="alternate" href="([^"]+)" hreflang=', body)
    assert len(hrefs) == 5
    for href in hrefs:
        assert href.decode().startswith(site_url)
        status, _, _ = get(urljoin(href.decode(), "sitemap.xml"))
        assert status == 200, href


def test_text_and_wasm_are_gzipped_with_etags(site_url):
    """As a static host: gzip when accepted, ETag, 304 for an unchanged file."""
    import gzip

    for path, compressed in (("faq/", True), ("assets/pyodide/pyodide.asm.wasm", True),
                             ("assets/pyodide/python_stdlib.zip", False)):
        url = urljoin(site_url, path)
        req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=30) as r:
            body, etag = r.read(), r.headers["ETag"]
            assert (r.headers.get("Content-Encoding") == "gzip") == compressed, path
        plain = get(url)[2]
        assert (gzip.decompress(body) if compressed else body) == plain, path
        assert etag, path
        req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip",
                                                   "If-None-Match": etag})
        try:
            urllib.request.urlopen(req, timeout=30)
            status = 200
        except urllib.error.HTTPError as e:
            status = e.code
        assert status == 304, path


def _handle_error_output(exc: BaseException, capsys) -> str:
    server = serve.make_server(Path(__file__).resolve().parents[2], "127.0.0.1", 0, quiet=True)
    try:
        try:
            raise exc
        except BaseException:
            server.handle_error(None, ("127.0.0.1", 1))
    finally:
        server.server_close()
    return capsys.readouterr().err


@pytest.mark.parametrize("exc", [ConnectionResetError(104, "reset"), BrokenPipeError(32, "pipe"),
                                 ConnectionAbortedError(103, "aborted")])
def test_a_client_that_hangs_up_is_not_a_server_error(exc, capsys):
    """A navigation cancels a download mid-response: no traceback on the server's stderr."""
    assert _handle_error_output(exc, capsys) == ""


def test_other_errors_are_still_reported(capsys):
    assert "ValueError: boom" in _handle_error_output(ValueError("boom"), capsys)


def test_responses_are_sent_without_waiting_for_the_client_s_ack(tmp_path, monkeypatch):
    """TCP_NODELAY on every connection, as nginx's default `tcp_nodelay on`: the headers and the
    body are two writes, and with Nagle's algorithm every response after a kept-alive
    connection's first waited for the client's delayed ACK (about 40 ms on Linux): a page's
    scripts, which the browser fetches one after another, each waited that long."""
    (tmp_path / "index.html").write_text("<!doctype html><title>x</title>", encoding="utf-8")
    seen: list[int] = []
    setup = serve.SiteHandler.setup

    def recording_setup(self) -> None:
        setup(self)
        seen.append(self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    monkeypatch.setattr(serve.SiteHandler, "setup", recording_setup)
    server, url = serve.serve_in_thread(tmp_path)
    try:
        for _ in range(2):
            assert get(url)[0] == 200
    finally:
        server.shutdown()
        server.server_close()
    assert len(seen) >= 1 and all(seen), seen
