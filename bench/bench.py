#!/usr/bin/env python3
"""Performance benchmark of the site, side by side in one run (issue #6). `make bench` runs it.

    .venv/bin/python bench/bench.py [--reps 7] [--edits 60] [--no-lighthouse] [--out BENCHMARKS.md]

What it does, in this order:

1. builds the whole site (five locales, Pyodide, the calc wheel, the memory snapshot) with
   `mkdocs build --strict` into an empty temporary directory, timed (twice: the first build
   into an empty directory and an empty snapshot cache, then a second one with the caches that
   the first left, as `make site` re-runs have them);
2. serves it with serve.py on loopback (gzip for text and .wasm, ETag/304, as a static host);
3. adds a bare-boot page to the served copy (`assets/bench/bare.html`): a module worker that
   runs `loadPyodide` on the same runtime files, same origin, nothing else;
4. in headless Chromium (Playwright, /usr/bin/chromium), interleaved and repeated: cold (new
   browser context, empty cache) and warm (same context, second visit) time from navigation
   to `data-state="ready"` on the calculator page and to "loaded" on the bare page; first and
   largest contentful paint of the calculator page and whether its build-time result is
   rendered and visible at first paint;
5. input-to-updated-result latency: `--edits` edits of the calculator's fields on each of
   EDIT_LOADS (3) cold loads of the page, each timed in the page from the input event to the
   new result in the DOM (and to the next frame);
6. bytes transferred (encoded body + headers, as Chromium counts them) by every page of every
   locale, split into Pyodide/calc runtime bytes and the rest, calculators after Python is up;
7. Lighthouse 12 (bench/package.json, pinned; mobile preset) on home, calculator and FAQ in
   every locale: performance, accessibility, best practices, SEO;
8. writes BENCHMARKS.md: the figures, the targets met or not, the date and the machine, and
   bench/ideas.md (the optimizations tried and their measured effects, written by hand).

The raw figures also go to bench/results.json (not committed). The measurements are here; the
pages, locales and targets are in targets.py, the scripts put into the pages in
page_scripts.py, and BENCHMARKS.md is written by report.py.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from network import network_main, network_profiles, transferred
from page_scripts import BARE_HTML, BARE_JS, BARE_WORKER_JS, EDIT_JS, INIT_JS
from report import pct, report  # noqa: F401  (pct: ab.py uses bench.pct)
from targets import BENCH, LH_CATEGORIES, LIGHTHOUSE_PAGES, LOCALES, PAGES, ROOT, WIDGET_PAGES

from serve import make_server  # noqa: E402  (targets put the checkout on sys.path)


CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
RUNTIME_PARTS = ("/assets/pyodide/", "/assets/calc/")  # Pyodide, worker, wheel, snapshot
PAGE_ASSETS = ("/assets/calc/page.js", "/assets/calc/copy.js", "/assets/calc/calc.css")  # the widget page's own


def is_runtime(url: str) -> bool:
    """Bytes of Python in the browser (not of the page that shows the widget)."""
    path = url.split("?", 1)[0]
    return any(p in path for p in RUNTIME_PARTS) and not path.endswith(PAGE_ASSETS)


TIMEOUT_MS = 90_000


def log(*args: object) -> None:
    print("[bench]", *args, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]




# --- 1. build -----------------------------------------------------------------------------


def build(site_dir: Path, site_url: str, cache_dir: Path | None) -> float:
    if site_dir.exists():
        shutil.rmtree(site_dir)
    env = dict(os.environ, SITE_URL=site_url, NO_MKDOCS_2_WARNING="1")
    if cache_dir is not None:
        env["CALC_SNAPSHOT_CACHE"] = str(cache_dir)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(site_dir)], cwd=ROOT, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"bench: mkdocs build failed:\n{proc.stdout}\n{proc.stderr}")
    return took


def add_bare_page(site_dir: Path) -> None:
    d = site_dir / "assets" / "bench"
    d.mkdir(parents=True, exist_ok=True)
    (d / "bare.html").write_text(BARE_HTML, encoding="utf-8")
    (d / "bare.js").write_text(BARE_JS, encoding="utf-8")
    (d / "bare-worker.js").write_text(BARE_WORKER_JS, encoding="utf-8")


def warm_server(base: str, site_dir: Path) -> None:
    """Let the server compress the big runtime files once, before anything is timed (a static
    host keeps compressed copies; this server keeps them in memory)."""
    for sub in ("assets/pyodide", "assets/calc"):
        for p in sorted((site_dir / sub).iterdir()):
            if p.is_file():
                req = urllib.request.Request(base + f"{sub}/{p.name}",
                                             headers={"Accept-Encoding": "gzip"})
                with urllib.request.urlopen(req, timeout=60) as r:
                    r.read()


# --- 2-5. the browser ---------------------------------------------------------------------


def url_of(base: str, locale: str, page: str) -> str:
    prefix = "" if locale == "en" else f"{locale}/"
    return f"{base}{prefix}{page}/" if page else f"{base}{prefix}"


#: Python is up and its first result is on the page (a widget), or the bare boot is done.
READY_SELECTOR = ('[data-calc-widget][data-state="ready"][data-busy="false"], '
                  'html[data-state="ready"]')


def wait_first(page) -> None:
    # a selector, not wait_for_function: the site's Content-Security-Policy forbids eval
    page.wait_for_selector(READY_SELECTOR, state="attached", timeout=TIMEOUT_MS)
    for _ in range(100):  # the init script's observer records the moment in a microtask
        if page.evaluate("window.__bench && window.__bench.first !== null"):
            return
        page.wait_for_timeout(10)


def visit(context, url: str, wait_ready: bool) -> dict:
    page = context.new_page()
    try:
        page.goto(url, wait_until="load", timeout=TIMEOUT_MS)
        if wait_ready:
            wait_first(page)
            state = page.evaluate(
                "(document.querySelector('[data-calc-widget]') || document.documentElement)"
                ".dataset.state")
            if state != "ready":
                raise RuntimeError(f"{url}: state {state}")
        else:
            page.wait_for_timeout(300)
        return page.evaluate("window.__bench")
    finally:
        page.close()


def boot_times(browser, base: str, reps: int) -> dict:
    calc_url = url_of(base, "en", "calculator")
    bare_url = base + "assets/bench/bare.html"
    out: dict[str, list] = {k: [] for k in
                            ("calc_cold", "calc_warm", "bare_cold", "bare_warm",
                             "calc_first_cold", "calc_first_warm", "fcp_cold", "lcp_cold",
                             "fcp_warm", "lcp_warm", "results_at_fcp", "lcp_tag")}
    for rep in range(reps):
        order = ("bare", "calc") if rep % 2 == 0 else ("calc", "bare")
        for kind in order:
            ctx = browser.new_context()
            ctx.add_init_script(INIT_JS)
            try:
                url = calc_url if kind == "calc" else bare_url
                cold = visit(ctx, url, True)
                warm = visit(ctx, url, True)
            finally:
                ctx.close()
            out[f"{kind}_cold"].append(cold["ready"])
            out[f"{kind}_warm"].append(warm["ready"])
            if kind == "calc":
                out["calc_first_cold"].append(cold["first"])
                out["calc_first_warm"].append(warm["first"])
                out["fcp_cold"].append(cold["fcp"])
                out["lcp_cold"].append(cold["lcp"])
                out["fcp_warm"].append(warm["fcp"])
                out["lcp_warm"].append(warm["lcp"])
                out["results_at_fcp"].append(cold["resultsAtFcp"])
                out["lcp_tag"].append(cold["lcpTag"])
        log(f"rep {rep + 1}/{reps}: bare {out['bare_cold'][-1]:.0f}/{out['bare_warm'][-1]:.0f} ms,"
            f" calculator {out['calc_cold'][-1]:.0f}/{out['calc_warm'][-1]:.0f} ms (cold/warm)")
    return out


# Edits are timed on this many loads of the page, each from a cold start: the p95 of one load's
# 60 edits is its third-slowest edit, which moved by 3-6 ms between runs of the same build.
EDIT_LOADS = 3


def edit_latency(browser, base: str, edits: int, locale: str, loads: int = EDIT_LOADS) -> dict:
    """`edits` timed edits of the calculator on each of `loads` loads of the page, together."""
    out: dict = {"dom": [], "frame": [], "loads": loads}
    for _ in range(loads):
        one = _edit_latency_once(browser, base, edits, locale)
        out["dom"] += one["dom"]
        out["frame"] += one["frame"]
    return out


def _edit_latency_once(browser, base: str, edits: int, locale: str) -> dict:
    ctx = browser.new_context()
    ctx.add_init_script(INIT_JS)
    page = ctx.new_page()
    try:
        page.goto(url_of(base, locale, "calculator"), timeout=TIMEOUT_MS)
        wait_first(page)
        # open the advanced fields, so that every edit is a visible one
        page.evaluate("for (const d of document.querySelectorAll('[data-calc-widget] details'))"
                      " d.open = true")
        # every edit gives a state not seen before (no cache can answer it)
        plan = []
        ranks = ["8", "16", "32", "64", "4", "128"]
        i = 0
        while len(plan) < edits:
            plan.append(("seq", str(1000 + 8 * i)))
            plan.append(("batch", str(1 + i % 7)))
            plan.append(("rank", ranks[i % len(ranks)]))
            plan.append(("ckpt", ""))
            i += 1
        plan = plan[:edits]
        # every edit counts, the first ones after Python is up too
        dom, frame = [], []
        for name, value in plan:
            d, f = page.evaluate(EDIT_JS, [name, value])
            dom.append(d)
            frame.append(f)
        return {"dom": dom, "frame": frame}
    finally:
        page.close()
        ctx.close()


def transfer(browser, base: str) -> list[dict]:
    """Bytes by page, every locale: cold cache, calculators until Python is up."""
    rows = []
    for locale in LOCALES:
        for name in PAGES:
            # no service worker: its install after "ready" fetches the runtime again (counted
            # twice), and Playwright's sizes() of its requests never answers (the run hung)
            ctx = browser.new_context(service_workers="block")
            ctx.add_init_script(INIT_JS)
            requests: list = []
            lock = threading.Lock()

            # noted only: a request's sizes asked for inside the event handler deadlock the
            # sync API's dispatcher (network.py); read after the page is done
            def finished(request, requests=requests):
                with lock:
                    requests.append(request)

            ctx.on("requestfinished", finished)
            page = ctx.new_page()
            url = url_of(base, locale, name)
            widget = name in WIDGET_PAGES
            try:
                page.goto(url, wait_until="load", timeout=TIMEOUT_MS)
                if widget:
                    wait_first(page)
                page.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
                page.wait_for_timeout(500)
                with lock:
                    got = [(r.url, transferred(r)) for r in requests]
                page_bytes = sum(n for u, n in got if not is_runtime(u))
                runtime = sum(n for u, n in got if is_runtime(u))
                runtime_files = sorted({u.rsplit("/", 1)[-1] for u, _ in got if is_runtime(u)})
                rows.append({"locale": locale, "page": name or "(home)", "widget": widget,
                             "page_bytes": page_bytes, "runtime_bytes": runtime,
                             "total": page_bytes + runtime, "requests": len(got),
                             "runtime_files": runtime_files})
            finally:
                page.close()
                ctx.close()
        log(f"bytes: {locale} done")
    return rows


# --- 6. Lighthouse ------------------------------------------------------------------------


def lighthouse_once(cli: Path, url: str, path: Path) -> dict | str:
    """One Lighthouse run (mobile preset, the default): its report, or the error text."""
    env = dict(os.environ, CHROME_PATH=CHROMIUM)
    path.unlink(missing_ok=True)
    cmd = ["node", str(cli), url, "--output=json", f"--output-path={path}", "--quiet",
           "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
           "--only-categories=" + ",".join(LH_CATEGORIES)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0 or not path.is_file():
        return (proc.stderr or proc.stdout)[-500:]
    return json.loads(path.read_text(encoding="utf-8"))


def lighthouse(base: str, out_dir: Path, runs: int,
               pages: tuple[str, ...] = LIGHTHOUSE_PAGES) -> list[dict]:
    """Every page `runs` times; the run with the median performance score is reported (as
    Lighthouse's documentation advises against single runs on a noisy machine)."""
    cli = BENCH / "node_modules" / "lighthouse" / "cli" / "index.js"
    if not cli.is_file():
        sys.exit("bench: Lighthouse is not installed (npm ci --prefix bench)")
    rows = []
    for locale in LOCALES:
        for name in pages:
            url = url_of(base, locale, name)
            reports, error = [], ""
            for i in range(runs):
                got = lighthouse_once(cli, url, out_dir / f"lh-{locale}-{name or 'home'}-{i}.json")
                if isinstance(got, str):
                    error = got
                else:
                    reports.append(got)
            if not reports:
                rows.append({"locale": locale, "page": name or "(home)", "error": error})
                continue
            reports.sort(key=lambda r: r["categories"]["performance"]["score"] or 0)
            all_perf = [round(100 * (r["categories"]["performance"]["score"] or 0))
                        for r in reports]
            rep = reports[(len(reports) - 1) // 2]
            scores = {c: round(100 * (rep["categories"][c]["score"] or 0)) for c in LH_CATEGORIES}
            failing = []
            for c in LH_CATEGORIES:
                for ref in rep["categories"][c]["auditRefs"]:
                    a = rep["audits"][ref["id"]]
                    if ref.get("weight", 0) > 0 and a.get("score") is not None and a["score"] < 1:
                        if a.get("scoreDisplayMode") in ("binary", "numeric", "metricSavings"):
                            failing.append(f"{c}:{ref['id']}({a['score']:.2f})")
            metrics = {k: rep["audits"][k].get("numericValue") for k in
                       ("first-contentful-paint", "largest-contentful-paint",
                        "total-blocking-time", "cumulative-layout-shift", "speed-index")}
            rows.append({"locale": locale, "page": name or "(home)", "scores": scores,
                         "failing": failing, "metrics": metrics, "all_performance": all_perf})
            log(f"lighthouse {locale} {name or '(home)'}: {scores}"
                + (f" failing {failing}" if failing else ""))
    return rows


# --- machine and report -------------------------------------------------------------------


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f"{kb / 2**20:.0f} GiB"
    except (OSError, AttributeError):
        pass
    os_name = platform.platform()
    try:
        rel = Path("/etc/os-release").read_text()
        os_name = re.search(r'PRETTY_NAME="([^"]+)"', rel).group(1)
    except (OSError, AttributeError):
        pass

    def version(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return "unknown"

    pyodide = json.loads((ROOT / "node_modules" / "pyodide" / "package.json").read_text())["version"]
    lh = BENCH / "node_modules" / "lighthouse" / "package.json"
    return {"cpu": cpu, "cores": os.cpu_count(), "memory": mem, "os": os_name,
            "python": platform.python_version(), "node": version(["node", "--version"]),
            "chromium": version([CHROMIUM, "--version"]), "pyodide": pyodide,
            "lighthouse": json.loads(lh.read_text())["version"] if lh.is_file() else "-"}




def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7, help="boot repetitions (default 7)")
    ap.add_argument("--edits", type=int, default=60, help="timed edits (default 60, >= 40)")
    ap.add_argument("--no-lighthouse", action="store_true")
    ap.add_argument("--lh-runs", type=int, default=3,
                    help="Lighthouse runs per page; the median one is reported (default 3)")
    ap.add_argument("--lh-pages", help="Lighthouse only on these pages (comma-separated, "
                    "\"home\" for the home page); default every page of every locale")
    ap.add_argument("--out", default=str(ROOT / "BENCHMARKS.md"))
    ap.add_argument("--json", default=str(BENCH / "results.json"))
    ap.add_argument("--network-only", action="store_true",
                    help="only the throttled profiles (section 7 of --out, the rest kept)")
    ap.add_argument("--site", help="a built site to measure instead of building one")
    ap.add_argument("--before-ref", help="also measure the page scripts of this git ref "
                    "(docs/assets/calc/*.js) on the same build, as \"calculator (before)\"")
    ap.add_argument("--profiles", help="--network-only: the throttled profiles whose name "
                    "contains this (e.g. \"fast\"); default all")
    ap.add_argument("--gzip-only-too", action="store_true",
                    help="--network-only: also the same build from a server that sends gzip "
                    "only (no .br), as \"(gzip only)\"")
    ap.add_argument("--boot-variants", action="store_true",
                    help="--network-only: also the boot path pinned to the snapshot, to the "
                    "lite standard library, and without the early start (bench/network.py)")
    ap.add_argument("--report-only", action="store_true",
                    help="write --out again from the figures in --json, measuring nothing")
    args = ap.parse_args(argv)
    if args.report_only:
        report(json.loads(Path(args.json).read_text(encoding="utf-8")), Path(args.out))
        return 0
    if not Path(CHROMIUM).is_file():
        sys.exit(f"bench: Chromium not found at {CHROMIUM} (apt-get install chromium)")
    if args.network_only:
        return network_main(args)
    from playwright.sync_api import sync_playwright

    started = time.perf_counter()
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    work = Path(tempfile.mkdtemp(prefix="bench-"))
    results: dict = {"date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                     "machine": machine(), "load": {"start": os.getloadavg()[0]}}
    try:
        site = work / "site"
        log("building the site (empty snapshot cache) ...")
        fresh = build(site, base, work / "snapshot-cache")
        log(f"build: {fresh:.1f} s; again with the cache ...")
        cached = build(site, base, work / "snapshot-cache")
        log(f"build: {cached:.1f} s")
        results["build"] = {"fresh": fresh, "cached": cached}
        add_bare_page(site)
        server = make_server(site, "127.0.0.1", port, quiet=True)  # its line: network.py
        server.handle_error = lambda request, address: None  # resets by the browser: not news
        threading.Thread(target=server.serve_forever, daemon=True).start()
        warm_server(base, site)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
                try:
                    results["load"]["browser"] = os.getloadavg()[0]
                    log("boot times ...")
                    results["boot"] = boot_times(browser, base, args.reps)
                    results["load"]["boot_end"] = os.getloadavg()[0]
                    log("recalculation latency ...")
                    results["latency"] = {
                        "en": edit_latency(browser, base, args.edits, "en"),
                        "fa": edit_latency(browser, base, max(40, args.edits // 2), "fa"),
                    }
                    results["load"]["latency_end"] = os.getloadavg()[0]
                    log("bytes transferred ...")
                    results["transfer"] = transfer(browser, base)
                    log("throttled networks ...")
                    results["network"] = network_profiles(
                        browser, {"calculator": url_of(base, "en", "calculator"),
                                  "bare": base + "assets/bench/bare.html"}, 1, log, [server])
                finally:
                    browser.close()
            if args.no_lighthouse:
                results["lighthouse"] = []
            else:
                log("Lighthouse ...")
                pages = LIGHTHOUSE_PAGES if not args.lh_pages else tuple(
                    "" if p.strip() == "home" else p.strip() for p in args.lh_pages.split(","))
                results["lighthouse"] = lighthouse(base, work, max(1, args.lh_runs), pages)
                results["load"]["lighthouse"] = os.getloadavg()[0]
        finally:
            server.shutdown()
            server.server_close()
        results["duration_s"] = time.perf_counter() - started
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
        report(results, Path(args.out))
        log(f"wrote {args.out} and {args.json}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
