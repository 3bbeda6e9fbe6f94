#!/usr/bin/env python3
"""Serve the built site over HTTP, as any static host would, with the MIME types the
calculators need: Pyodide hangs forever when `.wasm` is not `application/wasm`, and module
scripts (`.mjs`, the worker) must be JavaScript. Unknown paths get the 404 page of their
locale (`/fa/...` -> `/fa/404.html`).

Like a real static host it compresses: where the build wrote `<file>.br` or `<file>.gz` beside
a file (site_build/hosting.py), a client that accepts Brotli or gzip gets those bytes as they
are (what nginx's `brotli_static` / `gzip_static` do; a sibling older than its file is not
used); other text types and `.wasm` are gzip-encoded here (once per file version, kept in
memory); archives go as they are. `--no-precompressed` serves gzip only (the measurements of
what Brotli changes).
Every response has an ETag (size and modification time), and a conditional request for an
unchanged file gets 304 Not Modified: `Cache-Control: no-cache` makes browsers revalidate, so a
rebuilt site shows up on reload while a warm visit downloads nothing again.

    python serve.py [--dir site] [--host 127.0.0.1] [--port 8000] [--line 9:150]

`--line MBIT:RTT_MS` serves as through a reader's line (`Line`): each response waits one round
trip before its first byte (a new connection one more, its handshake), and all responses share
one downlink of MBIT Mbit/s, 16 KiB at a time in the order they are written. The benchmark's
throttled profiles use it (bench/network.py) rather than Chromium's network emulation, which
reaches a worker's requests only once DevTools has attached to it: a worker's first requests
went out at loopback speed (2026-12-02: 2.4 MB of the .wasm in 955 ms under 9 Mbit/s). Not
modelled: TCP slow start, loss, the uplink.

Security headers: every response carries the Content-Security-Policy the build wrote into the
page's `<meta http-equiv="Content-Security-Policy">` (for other files: the home page's), plus
`frame-ancestors 'none'`, which a `<meta>` policy cannot carry, and
`X-Content-Type-Options: nosniff`.

Standard library only, plus the site's locale registry (`calc.i18n.LOCALES`); tests import
`make_server` to serve a freshly built site.
"""

from __future__ import annotations

import argparse
import email.utils
import functools
import gzip
import http.server
import io
import os
import re
import sys
import threading
import time
from pathlib import Path

from calc.i18n import DEFAULT_LOCALE, LOCALES

MIME_TYPES = {
    ".wasm": "application/wasm",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".map": "application/json",
    ".css": "text/css",
    ".html": "text/html",
    ".xml": "application/xml",
    ".svg": "image/svg+xml",
    ".zip": "application/zip",
    ".whl": "application/zip",
    ".gz": "application/gzip",
}
#: Locales served under /<locale>/, each with its own 404 page (the default locale's is /404.html).
LOCALE_DIRS = frozenset(LOCALES) - {DEFAULT_LOCALE}
#: Sent gzip-encoded when the client accepts it (.zip and .whl are compressed already).
COMPRESSIBLE = frozenset({".wasm", ".mjs", ".js", ".json", ".map", ".css", ".html", ".xml",
                          ".svg", ".txt", ".bin"})
MIN_COMPRESS = 512  # bytes: smaller bodies go as they are
#: The build's precompressed siblings, best first: (Accept-Encoding token, file suffix).
PRECOMPRESSED = (("br", ".br"), ("gzip", ".gz"))

#: Added to the page's own policy in the header (ignored in a <meta> policy): no framing.
FRAME_ANCESTORS = "frame-ancestors 'none'"
_CSP_META = re.compile(rb'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', re.I)
_csp_cache: dict[str, tuple[tuple[int, int], str | None]] = {}

_gzip_cache: dict[str, tuple[tuple[int, int], bytes]] = {}
_gzip_lock = threading.Lock()


def gzipped(path: str, stamp: tuple[int, int]) -> bytes:
    """The file's gzip encoding (level 6), computed once per version of the file."""
    with _gzip_lock:
        hit = _gzip_cache.get(path)
        if hit and hit[0] == stamp:
            return hit[1]
    with open(path, "rb") as f:
        body = gzip.compress(f.read(), compresslevel=6, mtime=0)
    with _gzip_lock:
        _gzip_cache[path] = (stamp, body)
    return body


def page_policy(path: str | Path) -> str | None:
    """The Content-Security-Policy of a built HTML page (its <meta>), cached per file version."""
    path = str(path)
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_size, st.st_mtime_ns)
    hit = _csp_cache.get(path)
    if hit and hit[0] == stamp:
        return hit[1]
    with open(path, "rb") as f:
        m = _CSP_META.search(f.read(8192))  # the meta is first in <head>
    policy = m.group(1).decode("utf-8") if m else None
    _csp_cache[path] = (stamp, policy)
    return policy


class Line:
    """A reader's line: `down_mbit` Mbit/s shared by every response, `rtt_ms` per round trip."""

    CHUNK = 16 * 1024

    def __init__(self, down_mbit: float, rtt_ms: float) -> None:
        if not (down_mbit > 0 and rtt_ms >= 0):
            raise ValueError("a line needs a positive rate and a round trip of 0 ms or more")
        self.rate = down_mbit * 1e6 / 8  # bytes per second
        self.rtt = rtt_ms / 1000
        self._lock = threading.Lock()
        self._free_at = 0.0  # when the downlink has sent everything written so far

    def carry(self, size: int) -> None:
        """Returns once `size` more bytes have crossed the line, after those written before."""
        with self._lock:
            start = max(time.monotonic(), self._free_at)
            self._free_at = start + size / self.rate
            done = self._free_at
        if done > time.monotonic():
            time.sleep(done - time.monotonic())


class _Downlink:
    """A handler's wfile, through the server's line (none: as it is)."""

    def __init__(self, raw, server) -> None:
        self._raw = raw
        self._server = server

    def write(self, data) -> int:
        line = getattr(self._server, "line", None)
        if line is None:
            return self._raw.write(data)
        view = memoryview(data)
        for at in range(0, len(view), Line.CHUNK):
            piece = view[at:at + Line.CHUNK]
            line.carry(len(piece))
            self._raw.write(piece)
        return len(view)

    def __getattr__(self, name: str):
        return getattr(self._raw, name)


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}
    # Persistent connections, as any real host: one TCP connection serves a page's requests.
    protocol_version = "HTTP/1.1"
    timeout = 30  # seconds an idle connection is kept
    # TCP_NODELAY, as nginx's `tcp_nodelay on` (its default) for kept-alive connections: the
    # headers and the body are two writes, and with Nagle's algorithm the second waited for the
    # client's delayed ACK of the first (about 40 ms on Linux) on every response after a
    # connection's first; a page's scripts, fetched one after another, each waited that long.
    disable_nagle_algorithm = True
    #: The HTML file whose policy this response carries (None: the home page's).
    csp_page: str | None = None
    #: Send the build's `.br`/`.gz` siblings to clients that accept them.
    precompressed = True

    def setup(self) -> None:
        super().setup()
        line = getattr(self.server, "line", None)
        if line is not None:
            time.sleep(line.rtt)  # the handshake: the request comes a round trip later
        self.wfile = _Downlink(self.wfile, self.server)

    def parse_request(self) -> bool:
        ok = super().parse_request()
        line = getattr(self.server, "line", None)
        if line is not None:
            time.sleep(line.rtt)  # the request's way here, the response's first byte back
        return ok

    def _sibling(self, path: str, st: os.stat_result, accepted: list[str]):
        """(encoding, sibling path, its stat) of the best precompressed file the client
        accepts, or None (none, or older than the file itself: a stale sibling)."""
        if not self.precompressed:
            return None
        for token, suffix in PRECOMPRESSED:
            if token not in accepted:
                continue
            try:
                sib = os.stat(path + suffix)
            except OSError:
                continue
            if sib.st_mtime_ns >= st.st_mtime_ns:
                return token, path + suffix, sib
        return None

    def end_headers(self) -> None:
        # Revalidate every time (ETag, 304): a rebuilt site (new wheel, new figures) shows up
        # on reload, an unchanged file is not downloaded again.
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        policy = page_policy(self.csp_page or os.path.join(self.directory, "index.html"))
        if policy:
            self.send_header("Content-Security-Policy", f"{policy}; {FRAME_ANCESTORS}")
        super().end_headers()

    def send_head(self):  # type: ignore[override]
        self.csp_page = None  # a kept-alive connection serves several requests
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            if not self.path.split("?", 1)[0].split("#", 1)[0].endswith("/"):
                return super().send_head()  # the standard redirect to "dir/"
            path = os.path.join(path, "index.html")
            if not os.path.isfile(path):
                return super().send_head()
        if not os.path.isfile(path) or path.endswith("/"):
            return super().send_head()  # 404 (the locale's page) and the like
        try:
            st = os.stat(path)
        except OSError:
            return super().send_head()
        stamp = (st.st_size, st.st_mtime_ns)
        if path.endswith(".html"):
            self.csp_page = path
        etag = f'"{st.st_size:x}-{st.st_mtime_ns:x}"'
        ctype = self.guess_type(path)
        ext = os.path.splitext(path)[1].lower()
        accepts = self.headers.get("Accept-Encoding", "")
        accepted = [a.split(";")[0].strip() for a in accepts.split(",")]
        sibling = self._sibling(path, st, accepted) if ext in COMPRESSIBLE else None
        encode = (sibling is None and ext in COMPRESSIBLE and st.st_size >= MIN_COMPRESS
                  and "gzip" in accepted)
        if sibling:
            etag = etag[:-1] + ('-br"' if sibling[0] == "br" else '-gz"')
        elif encode:
            etag = etag[:-1] + '-gz"'
        inm = self.headers.get("If-None-Match")
        if inm and etag in [t.strip() for t in inm.split(",")]:
            self.send_response(304)
            self.send_header("ETag", etag)
            if ext in COMPRESSIBLE:
                self.send_header("Vary", "Accept-Encoding")
            self.end_headers()
            return None
        if sibling:
            f: io.BufferedIOBase = open(sibling[1], "rb")  # noqa: SIM115 - closed by the caller
            length = sibling[2].st_size
        elif encode:
            body = gzipped(path, stamp)
            f = io.BytesIO(body)
            length = len(body)
        else:
            f = open(path, "rb")  # noqa: SIM115 - closed by the caller (copyfile)
            length = st.st_size
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(length))
        self.send_header("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))
        self.send_header("ETag", etag)
        if sibling:
            self.send_header("Content-Encoding", sibling[0])
        elif encode:
            self.send_header("Content-Encoding", "gzip")
        if ext in COMPRESSIBLE:
            self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return f

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = self._error_page() if code == 404 else None
        if page is None:
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.csp_page = str(page)
        self.send_response(404, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error_page(self) -> Path | None:
        root = Path(self.directory)
        first = self.path.lstrip("/").split("/", 1)[0]
        candidates = [root / first / "404.html"] if first in LOCALE_DIRS else []
        candidates.append(root / "404.html")
        return next((p for p in candidates if p.is_file()), None)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        if not getattr(self.server, "quiet", False):
            super().log_message(format, *args)


class SiteServer(http.server.ThreadingHTTPServer):
    """A reader who navigates away, or a browser that cancels a download it no longer needs,
    closes the connection mid-response: that is not an error of the server, so no traceback
    (any other exception is still reported)."""

    daemon_threads = True
    #: The reader's line the responses go through (None: as fast as the machine allows).
    line: Line | None = None

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # reset, broken pipe, aborted
            return
        super().handle_error(request, client_address)


def make_server(directory: str | Path, host: str = "127.0.0.1", port: int = 8000,
                quiet: bool = False, precompressed: bool = True,
                line: Line | None = None) -> SiteServer:
    """An HTTP server for `directory` (port 0: any free port); call serve_forever().
    precompressed=False: gzip on the fly only (the build's `.br`/`.gz` files are not sent).
    line: a reader's line to serve through (`server.line`, may be changed while it serves)."""
    handler_class = SiteHandler if precompressed else type(
        "GzipOnlyHandler", (SiteHandler,), {"precompressed": False})
    handler = functools.partial(handler_class, directory=str(directory))
    server = SiteServer((host, port), handler)
    server.quiet = quiet  # type: ignore[attr-defined]
    server.line = line
    return server


def serve_in_thread(directory: str | Path, host: str = "127.0.0.1", port: int = 0):
    """Start a quiet server in a daemon thread; returns (server, base URL)."""
    server = make_server(directory, host, port, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    h, p = server.server_address[:2]
    return server, f"http://{h}:{p}/"


def _line(text: str) -> Line:
    try:
        mbit, rtt = text.split(":")
        return Line(float(mbit), float(rtt))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not MBIT:RTT_MS, e.g. 9:150 (9 Mbit/s, 150 ms)") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default="site", help="built site (default: site)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--no-precompressed", action="store_true",
                        help="gzip on the fly only, never the build's .br/.gz files")
    parser.add_argument("--line", metavar="MBIT:RTT_MS", type=_line,
                        help="serve as through a reader's line, e.g. 9:150 (fast 4G)")
    args = parser.parse_args(argv)
    directory = Path(args.dir)
    if not (directory / "index.html").is_file():
        print(f"serve.py: {directory}/index.html not found; build the site first (make site)",
              file=sys.stderr)
        return 1
    server = make_server(directory, args.host, args.port,
                         precompressed=not args.no_precompressed, line=args.line)
    print(f"Serving {directory}/ at http://{args.host}:{args.port}/ (Ctrl+C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
