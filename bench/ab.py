#!/usr/bin/env python3
"""A/B comparison of built sites: calculator ready time (cold and warm), FCP/LCP and edit
latency, the variants interleaved in one run (how bench/ideas.md's figures were measured).

    .venv/bin/python bench/ab.py NAME=SITE_DIR NAME=SITE_DIR ... [--reps 5] [--edits 0]
        [--page calculator] [--locale en] [--bare] [--profile]

Each site (a `mkdocs build` output, possibly edited by hand to make a variant) is served by
serve.py on its own loopback port; every repetition visits each variant in turn (the order
rotating) in a new browser context (cold), then again in the same context (warm). `--bare`
adds the bare Pyodide boot (bench.py's page, on the first site) as one more variant.
`--profile` visits in a browser profile on disk (a new one per repetition and variant) instead
of a Playwright context, which is incognito-like: only a profile on disk has a code cache, so
only there does the warm visit reuse the .wasm's optimized code as a returning reader's
browser does (bench/ideas.md, row "The .wasm's response handed to Pyodide").
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench  # noqa: E402
from serve import make_server  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variants", nargs="+", help="NAME=SITE_DIR")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--edits", type=int, default=0, help="timed edits per variant and rep")
    ap.add_argument("--page", default="calculator")
    ap.add_argument("--locale", default="en", help="the edits' page's locale")
    ap.add_argument("--bare", action="store_true")
    ap.add_argument("--profile", action="store_true", help="visit in a profile on disk")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    servers, urls = [], {}
    for spec in args.variants:
        name, _, path = spec.partition("=")
        site = Path(path)
        port = bench.free_port()
        server = make_server(site, "127.0.0.1", port, quiet=True)
        server.handle_error = lambda request, address: None  # resets by the browser
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        base = f"http://127.0.0.1:{port}/"
        bench.warm_server(base, site)
        urls[name] = bench.url_of(base, "en", args.page)
        if args.bare and "bare" not in urls:
            bench.add_bare_page(site)
            urls["bare"] = base + "assets/bench/bare.html"
    names = list(urls)
    res = {n: {"cold": [], "warm": [], "fcp": [], "lcp": [], "dom": [], "frame": []} for n in names}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=bench.CHROMIUM, args=bench.FLAGS)
        for rep in range(args.reps):
            order = names[rep % len(names):] + names[:rep % len(names)]
            for n in order:
                profile = tempfile.mkdtemp(prefix="ab-profile-") if args.profile else None
                ctx = (pw.chromium.launch_persistent_context(
                    profile, executable_path=bench.CHROMIUM, args=bench.FLAGS)
                    if profile else browser.new_context())
                ctx.add_init_script(bench.INIT_JS)
                try:
                    cold = bench.visit(ctx, urls[n], True)
                    warm = bench.visit(ctx, urls[n], True)
                finally:
                    ctx.close()
                    if profile:
                        shutil.rmtree(profile, ignore_errors=True)
                r = res[n]
                r["cold"].append(cold["ready"])
                r["warm"].append(warm["ready"])
                r["fcp"].append(cold["fcp"] or 0)
                r["lcp"].append(cold["lcp"] or 0)
                if args.edits and n != "bare":
                    base = urls[n].rsplit("/", 2)[0] + "/"
                    lat = bench.edit_latency(browser, base, args.edits, args.locale, loads=1)
                    r["dom"] += lat["dom"]
                    r["frame"] += lat["frame"]
            print(f"rep {rep + 1}: " + ", ".join(
                f"{n} {res[n]['cold'][-1]:.0f}/{res[n]['warm'][-1]:.0f}" for n in names), flush=True)
        browser.close()
    for server in servers:
        server.shutdown()
        server.server_close()
    med = statistics.median
    print("variant | ready cold | ready warm | FCP | LCP | edit p50 | edit p95 | frame p95")
    for n in names:
        r = res[n]
        lat = (f"{bench.pct(r['dom'], 50):.1f} | {bench.pct(r['dom'], 95):.1f} | "
               f"{bench.pct(r['frame'], 95):.1f}") if r["dom"] else "- | - | -"
        print(f"{n} | {med(r['cold']):.0f} | {med(r['warm']):.0f} | {med(r['fcp']):.0f} | "
              f"{med(r['lcp']):.0f} | {lat}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
