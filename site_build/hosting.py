"""What a real static host needs beside the pages, written after the build:

- `_csp.map`: each page's Content-Security-Policy for nginx (`hosting/nginx.conf` includes it
  in a `map $uri`), the policy of the page's own `<meta http-equiv>`; every other file gets the
  home page's policy (the worker script must carry `'wasm-unsafe-eval'` itself);
- `_404.map`: the 404 page of the language a missing path is under (from `calc.i18n.LOCALES`);
- `_headers`: the same headers in the format of hosts that read one (Netlify, Cloudflare Pages),
  one rule per page, one for the assets and one for the service worker `/sw.js` (at the root:
  its scope is the whole site without a `Service-Worker-Allowed` header; `Cache-Control:
  no-cache` as everything, so a new build's worker is seen on the next visit), so no path gets
  two policies;
- `<file>.br` and `<file>.gz` beside every large compressible file, for hosts that send
  precompressed files as they are (nginx `brotli_static` / `gzip_static`). Brotli quality 11
  (window 2^24) below `BROTLI_MAX_Q11` bytes, quality 9 above it (the Python heap snapshot:
  quality 11 takes about 95 s for 0.7 MB less); outputs are cached by content in
  `.cache/precompressed/` (or $CALC_PRECOMPRESS_CACHE).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
from pathlib import Path

#: Added to each page's policy in a header (a `<meta>` policy cannot forbid framing).
FRAME_ANCESTORS = "frame-ancestors 'none'"
#: Headers every response carries (as serve.py sends them).
COMMON_HEADERS = (("Cache-Control", "no-cache"), ("X-Content-Type-Options", "nosniff"),
                  ("Referrer-Policy", "strict-origin-when-cross-origin"))
#: Compressed beside the file when it is at least MIN_PRECOMPRESS bytes.
PRECOMPRESS = frozenset({".wasm", ".bin", ".mjs", ".js", ".json", ".css", ".html", ".xml",
                         ".svg", ".map", ".txt"})
MIN_PRECOMPRESS = 1024
BROTLI_MAX_Q11 = 16 * 2**20

_CSP_META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', re.I)


def page_policies(site: Path) -> dict[str, str]:
    """{URL path of each HTML file: its policy} ("/calculator/index.html" -> "default-src ...")."""
    out: dict[str, str] = {}
    for page in sorted(site.rglob("*.html")):
        m = _CSP_META.search(page.read_text(encoding="utf-8", errors="replace")[:20000])
        if m:
            out["/" + page.relative_to(site).as_posix()] = m.group(1).replace("&#39;", "'")
    return out


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# The whole site built: host files, then the precompressed copies (of the host files too).
def finish_site(site: Path) -> None:
    from calc.i18n import DEFAULT_LOCALE, LOCALES

    write_host_files(site, LOCALES, DEFAULT_LOCALE)
    # the service worker's source as mkdocs copied it (the filled one is /sw.js, runtime.py)
    (site / "assets" / "calc" / "sw.js").unlink(missing_ok=True)
    precompress(site, Path(__file__).resolve().parent.parent)


# `_csp.map`, `_404.map` and `_headers` from the built pages.
def write_host_files(site: Path, locales: tuple[str, ...], default_locale: str) -> None:
    """`_csp.map`, `_404.map` and `_headers` in the built site."""
    policies = page_policies(site)
    home = policies.get("/index.html")
    if home is None:
        raise ValueError("the built site has no index.html with a Content-Security-Policy")
    lines = [f"default {_quote(home)};"]
    for path, policy in policies.items():
        lines.append(f"{_quote(path)} {_quote(policy)};")
        if path.endswith("/index.html"):
            lines.append(f"{_quote(path[:-len('index.html')])} {_quote(policy)};")
    (site / "_csp.map").write_text("\n".join(lines) + "\n", encoding="utf-8")

    others = [loc for loc in locales if loc != default_locale]
    not_found = ["default /404.html;"]
    if others:
        not_found.insert(0, f"~^/(?<guide_locale>{'|'.join(others)})/ /$guide_locale/404.html;")
    (site / "_404.map").write_text("\n".join(not_found) + "\n", encoding="utf-8")

    rules = []
    for path, policy in policies.items():
        paths = [path]
        if path.endswith("/index.html"):
            paths.insert(0, path[:-len("index.html")])
        for p in paths:
            rules.append(_rule(p, policy))
    rules.append(_rule("/assets/*", home))
    if (site / "sw.js").is_file():  # the service worker (runtime.py): revalidated, as all
        rules.append(_rule("/sw.js", home))
    (site / "_headers").write_text("\n".join(rules), encoding="utf-8")


def _rule(path: str, policy: str) -> str:
    headers = [*COMMON_HEADERS, ("Content-Security-Policy", f"{policy}; {FRAME_ANCESTORS}")]
    return path + "\n" + "".join(f"  {k}: {v}\n" for k, v in headers)


def _cache_dir(root: Path) -> Path:
    return Path(os.environ.get("CALC_PRECOMPRESS_CACHE") or root / ".cache" / "precompressed")


def precompress(site: Path, root: Path) -> list[Path]:
    """Write `.br` and `.gz` beside every large compressible file; returns the files written."""
    import brotli  # build-time only (requirements.txt); calc itself stays standard library

    cache = _cache_dir(root)
    cache.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for path in sorted(site.rglob("*")):
        if not path.is_file() or path.suffix not in PRECOMPRESS or path.name.startswith("_"):
            continue
        data = path.read_bytes()
        if len(data) < MIN_PRECOMPRESS:
            continue
        digest = hashlib.sha256(data).hexdigest()
        for ext, make in ((".gz", lambda d: gzip.compress(d, compresslevel=9, mtime=0)),
                          (".br", lambda d: brotli.compress(
                              d, quality=11 if len(d) <= BROTLI_MAX_Q11 else 9, lgwin=24))):
            cached = cache / f"{digest}{ext}"
            if not cached.is_file():
                tmp = cached.with_suffix(ext + ".tmp")
                tmp.write_bytes(make(data))
                tmp.replace(cached)
            out = path.with_name(path.name + ext)
            shutil.copyfile(cached, out)
            written.append(out)
    return written
