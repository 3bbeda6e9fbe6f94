#!/usr/bin/env python3
"""Serve the built site over HTTP, as any static host would, with the MIME types the
calculators need: Pyodide hangs forever when `.wasm` is not `application/wasm`, and module
scripts (`.mjs`, the worker) must be JavaScript. Unknown paths get the 404 page of their
locale (`/fa/...` -> `/fa/404.html`).

    python serve.py [--dir site] [--host 127.0.0.1] [--port 8000]

Standard library only; tests import `make_server` to serve a freshly built site.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path

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
LOCALES = ("tr", "pt", "ru", "fa")


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}

    def end_headers(self) -> None:
        # A rebuilt site (new wheel, new figures) shows up on reload.
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = self._error_page() if code == 404 else None
        if page is None:
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(404, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error_page(self) -> Path | None:
        root = Path(self.directory)
        first = self.path.lstrip("/").split("/", 1)[0]
        candidates = [root / first / "404.html"] if first in LOCALES else []
        candidates.append(root / "404.html")
        return next((p for p in candidates if p.is_file()), None)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        if not getattr(self.server, "quiet", False):
            super().log_message(format, *args)


def make_server(directory: str | Path, host: str = "127.0.0.1", port: int = 8000,
                quiet: bool = False) -> http.server.ThreadingHTTPServer:
    """An HTTP server for `directory` (port 0: any free port); call serve_forever()."""
    handler = functools.partial(SiteHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer((host, port), handler)
    server.quiet = quiet  # type: ignore[attr-defined]
    return server


def serve_in_thread(directory: str | Path, host: str = "127.0.0.1", port: int = 0):
    """Start a quiet server in a daemon thread; returns (server, base URL)."""
    server = make_server(directory, host, port, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    h, p = server.server_address[:2]
    return server, f"http://{h}:{p}/"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default="site", help="built site (default: site)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    directory = Path(args.dir)
    if not (directory / "index.html").is_file():
        print(f"serve.py: {directory}/index.html not found; build the site first (make site)",
              file=sys.stderr)
        return 1
    server = make_server(directory, args.host, args.port)
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
