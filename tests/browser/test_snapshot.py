"""The memory snapshot (build_tables.build_snapshot, make_snapshot.mjs): the worker restores it
instead of booting Python, and boots the ordinary way when it is missing or damaged; the
figures are calc's either way."""

from __future__ import annotations

import json
import time

import pytest

from browser_helpers import Watch, assert_figures, expected_calculator, figures, set_form, wait_ready


def test_the_manifest_names_the_snapshot(calc_site):
    manifest = json.loads((calc_site.directory / "assets/calc/manifest.json").read_text())
    snapshot = calc_site.directory / "assets/calc" / manifest["snapshot"]
    assert snapshot.is_file() and snapshot.stat().st_size == manifest["snapshot_size"]


SMALL = 4 * 65536  # bytes: a stand-in snapshot, small enough to go through the test's route


def _snapshot_path(data: dict) -> dict:
    """The manifest with the lite boot turned off (no line is slower than 0 bytes per second):
    these tests are about the snapshot, whatever this machine's load makes of the .wasm's rate
    (the lite path: test_lite_boot.py)."""
    data["boot"]["lite_below"] = 0
    return data


def _pin_snapshot(context) -> None:
    def manifest(route):
        data = _snapshot_path(route.fetch().json())
        route.fulfill(status=200, body=json.dumps(data), content_type="application/json")

    context.route("**/assets/calc/manifest.json", manifest)


def _missing(context):
    context.route("**/assets/calc/snapshot.bin",
                  lambda route: route.fulfill(status=404, content_type="text/plain", body="no"))


def _truncated(context):
    """Fewer bytes than the manifest says."""
    context.route("**/assets/calc/snapshot.bin",
                  lambda route: route.fulfill(status=200, body=bytes(1000),
                                              content_type="application/octet-stream"))


def _not_a_snapshot(context):
    """The size the manifest says, but not Pyodide's memory (no magic number, no build id)."""
    def manifest(route):
        data = _snapshot_path(route.fetch().json())
        data["snapshot_size"] = SMALL
        route.fulfill(status=200, body=json.dumps(data), content_type="application/json")

    context.route("**/assets/calc/manifest.json", manifest)
    context.route("**/assets/calc/snapshot.bin",
                  lambda route: route.fulfill(status=200, body=bytes(SMALL),
                                              content_type="application/octet-stream"))


def _wrong_delta(context):
    """The manifest's check of the snapshot's delta does not match what XOR gives back (as a
    runtime other than the one the snapshot was made with would)."""
    def manifest(route):
        data = _snapshot_path(route.fetch().json())
        data["snapshot_delta"]["check"] = (data["snapshot_delta"]["check"] + 1) % 2**32
        route.fulfill(status=200, body=json.dumps(data), content_type="application/json")

    context.route("**/assets/calc/manifest.json", manifest)


@pytest.mark.parametrize("breaks", [None, _missing, _truncated, _not_a_snapshot, _wrong_delta],
                         ids=["restored", "missing", "truncated", "not a snapshot", "wrong delta"])
def test_calculator_works_with_or_without_the_snapshot(browser, calc_site, breaks):
    context = browser.new_context()
    try:
        if breaks in (None, _missing, _truncated):
            _pin_snapshot(context)
        if breaks is not None:
            breaks(context)
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        page.goto(calc_site.page_url("en", "calculator"))
        wait_ready(page, "calculator")
        assert any(u.endswith("/assets/calc/snapshot.bin") for u in watch.requests)
        query = {"model": "qwen2.5-7b", "method": "qlora", "seq": "4096"}
        set_form(page, "calculator", query)
        assert_figures(figures(page, "calculator"), expected_calculator(query, "en"))
        if breaks is _missing:
            watch.failed = [f for f in watch.failed if "snapshot.bin" not in f]
            watch.console_errors = [e for e in watch.console_errors if "404" not in e]
        watch.check()
    finally:
        context.close()


#: The one file of assets/calc/ a page without a widget may load: the clipboard helper, which
#: the FAQ's copy-link buttons share with the calculators (overrides/assets/javascripts/faq.js).
SHARED = "/assets/calc/copy.js"


def test_pages_without_a_widget_fetch_no_runtime(open_page):
    for path in ("how-it-works", "faq", "rule-of-thumb", "accuracy"):
        page, watch = open_page("ru", path)
        page.wait_for_load_state("networkidle")
        assert not [u for u in watch.requests
                    if "/assets/pyodide/" in u or ("/assets/calc/" in u and not u.endswith(SHARED))]
        # the clipboard helper only where there is something to copy: the FAQ's question links
        assert any(u.endswith(SHARED) for u in watch.requests) == (path == "faq")


@pytest.mark.parametrize("late", [False, True], ids=["as it comes", "after the module"])
def test_the_snapshot_is_restored_not_booted_around(browser, calc_site, late):
    """The snapshot path is taken (its delta against the .wasm undone and checked, worker.js):
    Python is ready while the standard library and the wheel, which only an ordinary boot
    reads before ready (calc is in the snapshot's memory), are held back by the server. `late`:
    the snapshot is answered only after Pyodide's module has been made (which the worker does
    while it downloads, from the manifest's size, with a stand-in of zeros in the real bytes'
    place until they come): restored from the real bytes all the same."""
    manifest = json.loads((calc_site.directory / "assets/calc/manifest.json").read_text())
    delta = manifest["snapshot_delta"]
    assert 0 < delta["from"] < delta["to"] <= manifest["snapshot_size"]
    context = browser.new_context()
    try:
        _pin_snapshot(context)
        held, snapshot = [], []
        # never answered: an ordinary boot would wait for it
        context.route("**/assets/pyodide/python_stdlib.zip", lambda route: held.append(route))
        context.route("**/assets/calc/*.whl", lambda route: held.append(route))
        if late:
            context.route("**/assets/calc/snapshot.bin", lambda route: snapshot.append(route))
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        page.goto(calc_site.page_url("en", "calculator"))
        if late:
            deadline = time.monotonic() + 30
            while not snapshot and time.monotonic() < deadline:
                page.wait_for_timeout(100)
            assert snapshot, "the worker never asked for the snapshot"
            page.wait_for_timeout(1500)  # the module is made meanwhile (160-200 ms)
            route = snapshot[0]
            route.fulfill(response=route.fetch())
        wait_ready(page, "calculator")
        assert any(u.endswith("/assets/calc/snapshot.bin") for u in watch.requests)
        assert not any(u.endswith("/assets/calc/stdlib-lite.bin") for u in watch.requests)
        query = {"model": "qwen2.5-7b", "method": "qlora", "seq": "4096"}
        set_form(page, "calculator", query)
        assert_figures(figures(page, "calculator"), expected_calculator(query, "en"))
        assert watch.page_errors == []
    finally:
        context.close()
