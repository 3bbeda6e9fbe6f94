"""BENCHMARKS.md from the figures of one run of bench.py: the targets met or not, the date and
the machine, and bench/ideas.md (the optimizations tried, written by hand)."""

from __future__ import annotations

import statistics
from pathlib import Path

from targets import (BENCH, LH_CATEGORIES, LOCALES, PAGES, T_BUILD_S, T_GUIDE_BYTES, T_LH,
                     T_P95_MS, T_READY_RATIO, WARM_MS, WIDGET_PAGES, yes)

#: A simulated first paint past this is the late-real-paint case (bench/ideas.md).
FCP_LATE_MS = 1500


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def pct(xs: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))
    return s[int(k)]


def kb(n: float) -> str:
    return f"{n / 1024:,.0f} KB" if n < 10 * 2**20 else f"{n / 2**20:,.1f} MB"


def report(r: dict, out: Path) -> None:
    m = r["machine"]
    b = r["boot"]
    lines: list[str] = []
    add = lines.append
    add("# Benchmarks")
    add("")
    add(f"Written by `make bench` (`bench/bench.py`) on {r['date']}, in {r['duration_s']:.0f} s. "
        "Every figure below comes from that one run; the machines are noisy, so boot times are "
        "medians of interleaved repetitions and the figure that counts is the ratio to a bare "
        "Pyodide boot measured beside them.")
    add("")
    add(f"- Machine: {m['cpu']}, {m['cores']} cores, {m['memory']} memory, {m['os']}")
    add(f"- Software: Python {m['python']}, Node {m['node']}, {m['chromium']} (headless, "
        f"Playwright), Pyodide {m['pyodide']}, Lighthouse {m['lighthouse']}")
    load = r.get("load", {})
    add(f"- Load average (1 min): {load.get('start', 0):.1f} when the run started, "
        f"{load.get('browser', 0):.1f} before the boot measurements, "
        f"{load.get('boot_end', 0):.1f} after them, {load.get('latency_end', 0):.1f} after the "
        f"edit latencies, {load.get('lighthouse', 0):.1f} after Lighthouse (2 cores; the load "
        "counts the bench's own browser, server and Lighthouse too)")
    add("- Server: `serve.py` on loopback (127.0.0.1), HTTP/1.1 keep-alive, gzip for text types, "
        "`.wasm` and the snapshot, ETag and "
        "304 on revalidation, `Cache-Control: no-cache`; no network throttling (Lighthouse "
        "simulates its own mobile network).")
    add("")

    # targets
    ratio_cold = median(b["calc_cold"]) / median(b["bare_cold"])
    ratio_warm = median(b["calc_warm"]) / median(b["bare_warm"])
    lat = r["latency"]["en"]
    p95 = pct(lat["dom"], 95)
    guides = [x for x in r["transfer"] if not x["widget"]]
    no_pyodide = all(x["runtime_bytes"] == 0 for x in guides)
    guide_max = max(x["total"] for x in guides)
    visible = all(v and v["text"] > 0 and v["display"] != "none" and v["visibility"] != "hidden"
                  and float(v["opacity"]) > 0 and v["height"] > 0 for v in b["results_at_fcp"])
    lh = [x for x in r["lighthouse"] if "scores" in x]
    lh_ok = {c: bool(lh) and len(lh) == len(r["lighthouse"]) and all(x["scores"][c] >= T_LH[c]
                                                                      for x in lh)
             for c in LH_CATEGORIES}
    build_s = r["build"]["fresh"]

    add("## Targets")
    add("")
    add("| target | measured | |")
    add("| --- | --- | --- |")
    add(f"| build-time result visible at first contentful paint | rendered in the HTML, "
        f"{sum(1 for v in b['results_at_fcp'] if v)}/{len(b['results_at_fcp'])} cold loads had it "
        f"visible when FCP fired; FCP median {median(b['fcp_cold']):.0f} ms | {yes(visible)} |")
    add(f"| ready <= {T_READY_RATIO:.2f} x bare Pyodide boot (cold) | {ratio_cold:.2f} x "
        f"({median(b['calc_cold']):.0f} ms vs {median(b['bare_cold']):.0f} ms) | "
        f"{yes(ratio_cold <= T_READY_RATIO)} |")
    add(f"| ready faster than the bare boot itself (cold / warm) | {ratio_cold:.2f} x / "
        f"{ratio_warm:.2f} x | {yes(ratio_cold < 1 and ratio_warm < 1)} |")
    add(f"| recalculation p95 <= {T_P95_MS:.0f} ms (input to result in the DOM, en) | "
        f"{p95:.1f} ms (p50 {pct(lat['dom'], 50):.1f} ms, {len(lat['dom'])} edits) | "
        f"{yes(p95 <= T_P95_MS)} |")
    add(f"| no Pyodide bytes on pages without a calculator | "
        f"{sum(1 for x in guides if x['runtime_bytes'] == 0)}/{len(guides)} pages (5 locales) "
        f"fetched none | {yes(no_pyodide)} |")
    add(f"| guide pages <= 300 KB transferred | largest {kb(guide_max)} | "
        f"{yes(guide_max <= T_GUIDE_BYTES)} |")
    add(f"| five-locale build <= {T_BUILD_S:.0f} s | {build_s:.1f} s from nothing "
        f"({r['build']['cached']:.1f} s with the snapshot cache) | {yes(build_s <= T_BUILD_S)} |")
    for c in LH_CATEGORIES:
        vals = [x["scores"][c] for x in lh]
        add(f"| Lighthouse {c} >= {T_LH[c]} on {len(r['lighthouse'])} pages | "
            f"min {min(vals) if vals else '-'}, median {median(vals) if vals else '-'} | "
            f"{yes(lh_ok[c])} |")
    net_why: list[str] = []
    if r.get("network"):
        from network import target_rows
        net_rows, net_why = target_rows(r["network"], ratio_cold, median(b["bare_cold"]))
        lines.extend(net_rows)
    add("")
    why = []
    if p95 > T_P95_MS:
        why.append(
            "Recalculation: about half of an edit is the worker's Python (p50 about 5 ms), a "
            "quarter the page's apply (parsing the new HTML and patching the region). After the "
            "snapshot restore Python's WebAssembly runs in V8's baseline tier (Liftoff) until a "
            "function has done enough work; the warm-up before ready (new states of the page's "
            f"widget, up to {WARM_MS} ms) gets the edits most of the way (Python per edit p95 "
            "16 -> 6 ms), and a longer one would cost the first live result as much. What stays "
            "is not V8's code: the same calculations back to back in the worker run as fast as "
            "under Node (p50 2.5 ms), while an edit comes after an idle gap and takes about twice "
            "that; on two cores the page's own frame shares the CPU (bench/ideas.md, rows on "
            "tiering, the warm-up and where an edit's time goes).")
    if not lh_ok["performance"]:
        short = [f"{x['locale']} {x['page']} {x['scores']['performance']}" for x in lh
                 if x["scores"]["performance"] < T_LH["performance"]]
        why.append(
            "Lighthouse performance: below the target: " + ", ".join(short) + " (each page's "
            "three runs are in section 6; a page's runs differ by up to 9 points here). What "
            "Lighthouse takes off is total blocking time: Material's own start-up and its scroll "
            "observers lay the whole page out at the mobile preset's 4 x CPU slowdown (its "
            "palette's whole-page style passes are patched out: site_build/palette.py). The "
            "guide's tables are laid out only near the "
            "viewport (site.css, content-visibility; the accuracy page went from 74-79 to "
            "96-100), and so are the calculator's results tables (calc.css); a calculator page "
            "still lays out its form (about 450 elements, 600 on fa) and the results' summary, "
            "and starts the worker, which competes with the main thread for two cores "
            "(bench/ideas.md).")
        name = lambda x: f"{x['locale']} {x['page']}"  # noqa: E731
        fcp = {name(x): x["metrics"].get("first-contentful-paint") or 0 for x in lh}
        late = [name(x) for x in lh
                if x["scores"]["performance"] < T_LH["performance"] and fcp[name(x)] > FCP_LATE_MS]
        usual = [v for v in fcp.values() if 0 < v <= FCP_LATE_MS]
        if late and usual:
            why.append(
                "Lighthouse's simulated first paint: "
                + ", ".join(f"{k} {fcp[k] / 1000:.1f} s" for k in late)
                + f" (the other pages {min(usual) / 1000:.1f}-{max(usual) / 1000:.1f} s). "
                "Lighthouse counts every request with a render-blocking priority that ended "
                "before the real first paint (the page's scripts, the worker's first files): "
                "when the real paint comes late on a loaded machine, the simulated one comes "
                "later too (bench/ideas.md, row \"Lighthouse's simulated first paint\").")
    if not (ratio_cold < 1 and ratio_warm < 1) or ratio_cold > T_READY_RATIO:
        why.append("Python ready: see section 1-2 for the spread of the repetitions.")
    why += net_why
    if why:
        add("Where a target is not met, why:")
        add("")
        for w in why:
            add(f"- {w}")
        add("")

    add("## 1-2. Paint and Python ready (calculator page, en)")
    add("")
    add(f"{len(b['calc_cold'])} repetitions, bare and calculator interleaved (order alternating), "
        "each in a new browser context (cold: empty HTTP cache), then a second visit in the same "
        "context (warm). Times from navigation start, medians (min-max).")
    add("")
    add("| | cold | warm |")
    add("| --- | --- | --- |")

    def cell(xs):
        return f"{median(xs):.0f} ms ({min(xs):.0f}-{max(xs):.0f})"

    add(f"| first contentful paint | {cell(b['fcp_cold'])} | {cell(b['fcp_warm'])} |")
    add(f"| largest contentful paint | {cell(b['lcp_cold'])} | {cell(b['lcp_warm'])} |")
    add(f"| bare Pyodide boot (`loadPyodide` in a module worker) | {cell(b['bare_cold'])} | "
        f"{cell(b['bare_warm'])} |")
    add(f"| calculator `data-state=\"ready\"` | {cell(b['calc_cold'])} | {cell(b['calc_warm'])} |")
    add(f"| calculator first live result on the page | {cell(b['calc_first_cold'])} | "
        f"{cell(b['calc_first_warm'])} |")
    add(f"| **ratio ready / bare** | **{ratio_cold:.2f}** | **{ratio_warm:.2f}** |")
    add("")
    in_view = sum(1 for v in b["results_at_fcp"] if v and v.get("inViewport"))
    add(f"At first contentful paint the results region held the build-time figures and was "
        f"rendered (not hidden, non-zero size) in {sum(1 for v in b['results_at_fcp'] if v)} of "
        f"{len(b['results_at_fcp'])} cold loads; its top was inside the first 1280 x 720 "
        f"viewport in {in_view} (below the form otherwise: the reader scrolls to it).")
    add("")
    tags = sorted({t for t in b["lcp_tag"] if t})
    add(f"Largest contentful paint element (cold): {', '.join(tags) or '-'}. The results region "
        "is part of the HTML the build writes (figures of the default inputs), so it paints with "
        "the page, before any script runs; Python only replaces it after an edit or a link with "
        "inputs.")
    add("")

    add("## 3. Recalculation latency")
    add("")
    loads = max(v.get("loads", 1) for v in r["latency"].values())
    add(f"On each of {loads} cold loads of the page, right after Python is up, each edit "
        "sets one field of the calculator (sequence length, "
        "batch, rank, checkpointing in turn; every state new), fires `input` and is timed in the "
        "page with `performance.now()` until the results region has changed (\"DOM\": the new "
        "figures are on the page) and until the next animation frame has run (\"next frame\": "
        "they are painted). Every edit counts, the first ones too.")
    add("")
    add("| locale | edits | p50 DOM | p95 DOM | max DOM | p50 next frame | p95 next frame |")
    add("| --- | --- | --- | --- | --- | --- | --- |")
    for loc, v in r["latency"].items():
        add(f"| {loc} | {len(v['dom'])} | {pct(v['dom'], 50):.1f} ms | {pct(v['dom'], 95):.1f} ms "
            f"| {max(v['dom']):.1f} ms | {pct(v['frame'], 50):.1f} ms | "
            f"{pct(v['frame'], 95):.1f} ms |")
    add("")

    add("## 4. Bytes transferred")
    add("")
    add("Cold cache, one page per context, counted by Chromium (encoded bodies and headers, "
        "workers included). Pages with a calculator show \"page + runtime\": the page with its "
        "own script and style (`page.js`, `calc.css`), i.e. before Python, plus everything "
        "under `assets/pyodide/` and `assets/calc/` that Python needs (Pyodide, the worker, the "
        "calc wheel, the memory snapshot), counted once Python is up. Any runtime byte on a page "
        "without a calculator would be flagged \"(Pyodide!)\".")
    add("")
    add("| page | en | tr | pt | ru | fa |")
    add("| --- | --- | --- | --- | --- | --- |")
    by = {(x["locale"], x["page"]): x for x in r["transfer"]}
    for name in PAGES:
        label = name or "(home)"
        cells = []
        for loc in LOCALES:
            x = by.get((loc, label))
            if not x:
                cells.append("-")
            elif x["widget"]:
                cells.append(f"{kb(x['page_bytes'])} + {kb(x['runtime_bytes'])}")
            else:
                cells.append(kb(x["total"]) + ("" if x["runtime_bytes"] == 0 else " (Pyodide!)"))
        add(f"| {label}{' (calculator)' if name in WIDGET_PAGES else ''} | " + " | ".join(cells)
            + " |")
    add("")
    calc_en = by.get(("en", "calculator"))
    if calc_en:
        add(f"Calculator (en): {kb(calc_en['page_bytes'])} before Python, "
            f"{kb(calc_en['total'])} after ({', '.join(calc_en['runtime_files'])}).")
        add("")

    add("## 5. Build")
    add("")
    add(f"`mkdocs build --strict` of the five locales into an empty directory: "
        f"**{build_s:.1f} s** with an empty snapshot cache (what a fresh machine does), "
        f"{r['build']['cached']:.1f} s again with the cache the first build left.")
    add("")

    add("## 6. Lighthouse (mobile preset)")
    add("")
    runs = max((len(x.get("all_performance", [])) for x in r["lighthouse"]), default=0)
    add(f"Each page {runs} times; the run with the median performance score is shown (the "
        "other runs' performance scores in brackets). Lighthouse 12.2 cannot read some trace "
        "events of this Chromium (\"frame_sequence\"): its LCP-element and render-blocking "
        "diagnostics are missing, the scores and metrics are not affected.")
    add("")
    add("| locale | page | performance | accessibility | best practices | SEO | FCP | LCP | TBT | "
        "failing audits |")
    add("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for x in r["lighthouse"]:
        if "scores" not in x:
            add(f"| {x['locale']} | {x['page']} | error | | | | | | {x['error'][:80]} |")
            continue
        s, mt = x["scores"], x["metrics"]
        perf = f"{s['performance']} ({', '.join(map(str, x.get('all_performance', [])))})"
        add(f"| {x['locale']} | {x['page']} | {perf} | {s['accessibility']} | "
            f"{s['best-practices']} | {s['seo']} | "
            f"{(mt['first-contentful-paint'] or 0) / 1000:.1f} s | "
            f"{(mt['largest-contentful-paint'] or 0) / 1000:.1f} s | "
            f"{mt['total-blocking-time'] or 0:.0f} ms | {', '.join(x['failing']) or '-'} |")
    add("")

    if r.get("network"):
        from network import report_lines

        lines.extend(report_lines(r["network"]))

    ideas = BENCH / "ideas.md"
    if ideas.is_file():
        add(ideas.read_text(encoding="utf-8").rstrip())
        add("")
    out.write_text("\n".join(lines), encoding="utf-8")
