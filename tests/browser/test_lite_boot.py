"""The boot path by the line (worker.js, issue 18): the worker measures how fast the .wasm's first
bytes arrive and, below the manifest's `boot.lite_below`, boots Python the ordinary way from the
lite standard library (make_snapshot.mjs: the modules calc needs, precompiled) instead of
downloading the snapshot; the full standard library follows once the calculator is live. The
figures are calc's either way."""

from __future__ import annotations

import json
import threading
import zipfile
from pathlib import Path

import pytest

from browser_helpers import (Held, Watch, assert_figures, expected_calculator, figures, root,
                             set_form, throttle, wait_ready)
from calc import CalcError, parse
from calc.html import bidi_text
from serve import Line, make_server

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "configs"

QUERY = {"model": "qwen2.5-7b", "method": "qlora", "seq": "4096"}


def _manifest(calc_site) -> dict:
    return json.loads((calc_site.directory / "assets/calc/manifest.json").read_text())


def test_the_manifest_names_a_lite_standard_library_of_precompiled_modules(calc_site):
    manifest = _manifest(calc_site)
    lite = calc_site.directory / "assets/calc" / manifest["stdlib_lite"]
    assert manifest["files"][manifest["stdlib_lite"]] == lite.stat().st_size
    assert manifest["boot"]["lite_below"] > 0 and manifest["boot"]["decide_ms"] > 0
    full = zipfile.ZipFile(calc_site.directory / "assets/pyodide/python_stdlib.zip")
    sources = set(full.namelist())
    wheel = calc_site.directory / "assets/calc" / manifest["wheel"]
    with zipfile.ZipFile(wheel) as w:
        calc_files = {n for n in w.namelist() if n.startswith("calc/")}
        calc_data = {n: w.read(n) for n in calc_files if not n.endswith(".py")}
    with zipfile.ZipFile(lite) as z:
        every = z.namelist()
        # bytecode only, stored (the host compresses): of modules of the full archive ...
        names = [n for n in every if not n.startswith("site-packages/")]
        assert names and all(n.endswith(".pyc") and n[:-1] in sources for n in names)
        assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_STORED}
        # ... and calc, so that a lite boot needs no wheel: each of the wheel's modules as
        # sourceless bytecode in the module's own place (calc/x.pyc), its data files as they are
        packaged = {n[len("site-packages/"):] for n in every if n.startswith("site-packages/")}
        assert packaged == {n + "c" if n.endswith(".py") else n for n in calc_files}
        for name, data in calc_data.items():
            assert z.read("site-packages/" + name) == data
        assert int.from_bytes(z.read("site-packages/calc/render.pyc")[4:8], "little") == 0b01
        # what calc imports (calc/*.py) and what Pyodide's own start needs
        for module in ("json/__init__.pyc", "decimal.pyc", "fractions.pyc", "dataclasses.pyc",
                       "_pyodide/__init__.pyc", "pyodide/__init__.pyc"):
            assert module in names
        # an unchecked hash-based .pyc (PEP 552: flags 0b01), so no source is needed beside it
        header = z.read("decimal.pyc")[:8]
        assert int.from_bytes(header[4:8], "little") == 0b01
    # only what is needed: a small part of the archive
    assert len(names) < len(sources) / 2


def test_a_slow_line_boots_from_the_lite_standard_library(browser, calc_site):
    """6 Mbit/s (below lite_below): no snapshot byte before live, the full standard library
    held back by the server until then (the boot does not need it) and asked for after."""
    manifest = _manifest(calc_site)
    assert 6e6 / 8 < manifest["boot"]["lite_below"]
    context = browser.new_context()
    try:
        held = Held()
        context.route("**/assets/pyodide/python_stdlib.zip", held)
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        throttle(context, page, 6, 20)
        page.goto(calc_site.page_url("en", "calculator"))
        wait_ready(page, "calculator")
        before = list(watch.requests)
        assert any(u.endswith("/assets/calc/" + manifest["stdlib_lite"]) for u in before)
        assert not any(u.endswith("/assets/calc/" + manifest["snapshot"]) for u in before)
        held.release_once_asked(page)  # held until now: the boot did not wait for it
        assert any(u.endswith("/python_stdlib.zip") for u in watch.requests)
        set_form(page, "calculator", QUERY)
        assert_figures(figures(page, "calculator"), expected_calculator(QUERY, "en"))
        watch.check()
    finally:
        context.close()


def test_a_compressed_runtime_is_timed_by_its_bytes_on_the_line(browser, calc_site):
    """A 9 Mbit/s line (fast 4G), emulated by the server (serve.py's Line: every request of the
    page and of its worker alike) and the .wasm sent as Brotli, about 3.5 times smaller than the
    file: its rate is the line's, 1.1 MB/s, below lite_below, so the lite path. Counted as the
    decoded bytes arrive (3.9 MB/s) it would be the snapshot's."""
    manifest = _manifest(calc_site)
    wasm = calc_site.directory / "assets/pyodide/pyodide.asm.wasm"
    ratio = wasm.stat().st_size / (wasm.parent / "pyodide.asm.wasm.br").stat().st_size
    line_rate = 9e6 / 8
    assert line_rate < manifest["boot"]["lite_below"] < line_rate * ratio  # the case above
    server = make_server(calc_site.directory, port=0, quiet=True, line=Line(9, 150))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    context = browser.new_context()
    try:
        page = context.new_page()
        watch = Watch(f"http://{host}:{port}").attach(page)
        page.goto(f"http://{host}:{port}/calculator/")
        wait_ready(page, "calculator")
        assert any(u.endswith("/assets/calc/" + manifest["stdlib_lite"]) for u in watch.requests)
        assert not any(u.endswith("/assets/calc/" + manifest["snapshot"]) for u in watch.requests)
        assert_figures(figures(page, "calculator"), expected_calculator({}, "en"))
        # Material's language menu asks the built-for address for its sitemap (this server
        # has another port): those requests are refused by the page's policy, nothing else.
        assert [f for f in watch.failed if "/sitemap.xml" not in f] == []
        assert watch.page_errors == []
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def _lite_always(context, lite_status: int | None = None):
    """The manifest's threshold above any line (every visit takes the lite path); with
    `lite_status`, the lite standard library answered with that status instead."""
    def manifest(route):
        data = route.fetch().json()
        data["boot"]["lite_below"] = 1e15
        route.fulfill(status=200, body=json.dumps(data), content_type="application/json")

    context.route("**/assets/calc/manifest.json", manifest)
    if lite_status is not None:
        context.route("**/assets/calc/stdlib-lite.bin",
                      lambda route: route.fulfill(status=lite_status, body="no",
                                                  content_type="text/plain"))


def test_without_the_lite_standard_library_python_boots_from_the_full_one(browser, calc_site):
    context = browser.new_context()
    try:
        _lite_always(context, lite_status=404)
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        page.goto(calc_site.page_url("ru", "calculator"))
        wait_ready(page, "calculator")
        assert any(u.endswith("/assets/pyodide/python_stdlib.zip") for u in watch.requests)
        set_form(page, "calculator", QUERY)
        assert_figures(figures(page, "calculator"), expected_calculator(QUERY, "ru"))
        watch.failed = [f for f in watch.failed if "stdlib-lite.bin" not in f]
        # Pyodide's own log of the failed archive (pyodide.mjs installStdlib), then the fallback
        watch.console_errors = [e for e in watch.console_errors
                                if "404" not in e and "stdlib-lite.bin" not in e
                                and "installing the standard library" not in e]
        watch.check()
    finally:
        context.close()


def test_after_a_lite_boot_the_error_path_and_a_pasted_config_work(browser, calc_site):
    """The lite archive holds what calc imports and calc itself (its bytecode and data files):
    an invalid field (the error path, translated) and a pasted config.json (calc.hfconfig) are
    answered before the full standard library and the wheel are there (held back by the server
    for the whole test)."""
    context = browser.new_context()
    try:
        _lite_always(context)
        context.route("**/assets/pyodide/python_stdlib.zip", Held())  # never released
        context.route("**/assets/calc/*.whl", Held())  # never released
        page = context.new_page()
        watch = Watch(calc_site.origin).attach(page)
        page.goto(calc_site.page_url("fa", "calculator"))
        wait_ready(page, "calculator")
        assert not any(u.endswith("/snapshot.bin") for u in watch.requests)
        r = root(page, "calculator")
        bad = {"seq": "-5"}
        set_form(page, "calculator", bad)
        with pytest.raises(CalcError) as err:
            parse(bad, "fa")
        message = bidi_text(err.value.messages("fa")["seq"], "fa")
        assert r.locator('[data-calc-error-for="seq"]').text_content() == message
        config = {"config": (FIXTURES / "gemma-3-1b-it.json").read_text(encoding="utf-8")}
        set_form(page, "calculator", config)
        assert_figures(figures(page, "calculator"), expected_calculator(config, "fa"))
        assert watch.page_errors == []
    finally:
        context.close()
