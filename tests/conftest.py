"""Fixtures shared by every test directory.

- `repo_root`: the checkout.
- `spec_dir`: the shared specification (`../shared/spec` beside the checkout; `SPEC_DIR`
  overrides it).
- `site_base_url`: the address the session's site is built for and served at
  (http://127.0.0.1:<free port>/; mkdocs.yml's site_url comes from SITE_URL).
- `built_site`: the real `mkdocs build --strict` of the whole site (five locales, Pyodide, the
  calc wheel), run once per test session into a temporary directory. `SITE_DIR=<dir>` reuses
  an existing build instead (a complete one, built for SITE_URL).
- `site_url`: that build served over HTTP by serve.py (correct MIME types for .wasm and .mjs,
  404 pages per locale) at `site_base_url`, for the session; with CALC_HOST=nginx by nginx
  with the shipped hosting/nginx.conf instead (tests/host/nginx_host.py). Use it, not a server of your
  own: the pages' hreflang links and sitemaps name this address.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def find_spec_dir() -> Path | None:
    candidates = []
    if os.environ.get("SPEC_DIR"):
        candidates.append(Path(os.environ["SPEC_DIR"]))
    candidates += [ROOT.parent / "shared" / "spec", Path("/work/shared/spec")]
    return next((c for c in candidates if (c / "content.md").is_file()), None)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def spec_dir() -> Path:
    found = find_spec_dir()
    if found is None:
        pytest.fail("the shared spec (content.md) is not at ../shared/spec beside the checkout; "
                    "set SPEC_DIR")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def site_base_url() -> str:
    if os.environ.get("SITE_DIR"):
        return os.environ.get("SITE_URL", "http://127.0.0.1:8000/")
    return f"http://127.0.0.1:{_free_port()}/"


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory, site_base_url: str) -> Path:
    reuse = os.environ.get("SITE_DIR")
    if reuse:
        site = Path(reuse)
        if not (site / "index.html").is_file():
            pytest.fail(f"SITE_DIR={reuse} holds no built site")
        return site
    site = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", SITE_URL=site_base_url)
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed (exit {proc.returncode}):\n{log}")
    (site / ".build-log.txt").write_text(log, encoding="utf-8")
    return site


@pytest.fixture(scope="session")
def site_url(built_site: Path, site_base_url: str, tmp_path_factory: pytest.TempPathFactory):
    from urllib.parse import urlsplit

    parts = urlsplit(site_base_url)
    if os.environ.get("CALC_HOST") == "nginx":
        # The shipped nginx configuration instead of serve.py (make test's second pass).
        sys.path.insert(0, str(ROOT / "tests" / "host"))
        try:
            from nginx_host import Nginx
        finally:
            sys.path.remove(str(ROOT / "tests" / "host"))
        with Nginx(built_site, parts.hostname, parts.port, tmp_path_factory.mktemp("nginx")):
            yield site_base_url
        return

    sys.path.insert(0, str(ROOT))
    try:
        from serve import make_server
    finally:
        sys.path.remove(str(ROOT))
    import threading

    server = make_server(built_site, parts.hostname, parts.port, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield site_base_url
    server.shutdown()
    server.server_close()
