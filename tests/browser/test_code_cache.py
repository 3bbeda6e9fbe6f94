"""A returning reader's Python runs optimized code from the start: Pyodide compiles the .wasm
from the response the worker fetched (docs/assets/calc/net.js hands the response itself over,
not a Response made from its bytes), so Chromium keeps the code V8 optimized during the first
visit in the profile's code cache, keyed by the .wasm's URL, and the next visit deserializes it
instead of starting again in the baseline tier (bench/ideas.md, row "The .wasm's response
handed to Pyodide"). An incognito-like context has no code cache: this test runs in a profile
on disk, as a reader's browser does. The figures are calc's either way."""

from __future__ import annotations

from pathlib import Path

from browser_helpers import Watch, assert_figures, expected_calculator, figures, set_form, wait_ready

QUERIES = [{"model": "llama-3.1-8b", "method": "lora", "rank": str(r), "seq": str(s)}
           for r, s in ((8, 1024), (32, 4096), (128, 512))]
CACHE_WAIT_MS = 60_000


def _wasm_entries(profile: Path) -> dict[str, int]:
    folder = profile / "Default" / "Code Cache" / "wasm"
    if not folder.is_dir():
        return {}
    return {p.name: p.stat().st_size for p in folder.iterdir() if p.is_file() and p.name != "index"}


def _trace_names(cdp, page, url: str) -> set[str]:
    events, done = [], []
    cdp.on("Tracing.dataCollected", lambda params: events.extend(params["value"]))
    cdp.on("Tracing.tracingComplete", lambda params: done.append(True))
    cdp.send("Tracing.start", {"traceConfig": {"includedCategories": ["v8.wasm"]},
                               "transferMode": "ReportEvents"})
    page.goto(url)
    wait_ready(page, "calculator")
    cdp.send("Tracing.end")
    for _ in range(300):
        if done:
            break
        page.wait_for_timeout(100)
    assert done, "the trace never ended"
    return {e.get("name") for e in events}


def test_a_second_visit_takes_pythons_optimized_code_from_the_cache(
        browser_type, browser_type_launch_args, calc_site, tmp_path):
    profile = tmp_path / "profile"
    # the service worker would answer the second visit from its own cache, whose entries get
    # their code cache on the visit after (a third one); this test is about the HTTP cache's
    context = browser_type.launch_persistent_context(
        profile, **browser_type_launch_args, service_workers="block")
    url = calc_site.page_url("en", "calculator")
    try:
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        page.goto(url)
        wait_ready(page, "calculator")
        # the worker's warm-up before ready and the reader's edits: Python's hot functions
        # get optimized
        for query in QUERIES:
            set_form(page, "calculator", query)
        # V8 hands its optimized code to Chromium once no new code has come for a moment
        for _ in range(CACHE_WAIT_MS // 250):
            if any(size >= 64 * 1024 for size in _wasm_entries(profile).values()):
                break
            page.wait_for_timeout(250)
        entries = _wasm_entries(profile)
        assert any(size >= 64 * 1024 for size in entries.values()), \
            f"no compiled code of the .wasm in the profile's code cache: {entries}"
        watch.check()
        page.close()

        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        names = _trace_names(context.new_cdp_session(page), page, url)
        assert "wasm.Deserialize" in names, "the second visit compiled the .wasm again"
        query = QUERIES[1]
        set_form(page, "calculator", query)
        assert_figures(figures(page, "calculator"), expected_calculator(query, "en"))
        watch.check()
    finally:
        context.close()
