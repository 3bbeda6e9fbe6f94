"""The loading glue added for issue 18 keeps the rules of test_glue.py (no widget, no locale,
no digits or yes/no words of calc's; messages built in messages.js), and the manifest names
the size of every file the worker may download before it is ready."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from calc.i18n import LOCALES
from calc.render import WIDGETS
from site_build.runtime import RUNTIME_DOWNLOADS, download_sizes
from test_glue import ASSETS, code_of, literals

NEW = {name: ASSETS / name for name in ("net.js", "copy.js", "boot.js", "early.js")}


@pytest.mark.parametrize("name", NEW)
def test_no_widget_locale_or_digits(name):
    found = set(literals(NEW[name]))
    assert found.isdisjoint(WIDGETS) and found.isdisjoint(LOCALES)
    assert not re.search("[\u0660-\u0669\u06f0-\u06f9]", code_of(NEW[name]))


def test_progress_and_causes_are_declared_and_built_in_messages_js():
    text = code_of(ASSETS / "messages.js")
    assert 'PROGRESS: "progress"' in text and "export const progress =" in text
    assert 'NETWORK: "network"' in text
    for name in ("net.js", "worker.js", "worker-python.js"):
        code = code_of(ASSETS / name)
        assert not re.search(r'type\s*:\s*"progress"', code), name
    assert "messages.progress(" in code_of(ASSETS / "net.js")


def test_the_start_message_is_declared_and_built_in_messages_js():
    text = code_of(ASSETS / "messages.js")
    assert 'START: "start"' in text and "export const start =" in text
    for name in ("boot.js", "worker.js", "worker-python.js", "page.js"):
        assert not re.search(r'type\s*:\s*"start"', code_of(ASSETS / name)), name
    assert "messages.start()" in code_of(ASSETS / "boot.js")


def test_the_early_script_names_its_worker_as_messages_js_does():
    # early.js is inline in <head> and imports nothing: its copy of messages.earlyName
    literal = "`${name} early`"
    assert f"export const earlyName = (name) => {literal};" in code_of(ASSETS / "messages.js")
    early = code_of(ASSETS / "early.js")
    assert literal in early and not re.search(r"\bimport\b", early)


def test_the_guard_waits_for_bytes_not_for_the_whole_load():
    page = code_of(ASSETS / "page.js")
    # the guard is re-armed by every message before ready, and cleared at ready
    assert "if (!ready) arm();" in page and "clearTimeout(guard)" in page


def test_download_sizes_name_every_runtime_file(tmp_path: Path):
    pyodide = tmp_path / "pyodide"
    pyodide.mkdir()
    for i, name in enumerate(RUNTIME_DOWNLOADS):
        (pyodide / name).write_bytes(b"x" * (i + 1))
    wheel = tmp_path / "calc-0-py3-none-any.whl"
    wheel.write_bytes(b"w" * 7)
    snap = tmp_path / "snapshot.bin"
    snap.write_bytes(b"s" * 11)
    sizes = download_sizes(pyodide, wheel, snap)
    assert sizes == {**{f"../pyodide/{n}": i + 1 for i, n in enumerate(RUNTIME_DOWNLOADS)},
                     wheel.name: 7, snap.name: 11}
    lite = tmp_path / "stdlib-lite.bin"
    lite.write_bytes(b"l" * 13)
    assert download_sizes(pyodide, wheel, snap, lite) == {**sizes, lite.name: 13}
    # what the worker imports or Pyodide fetches from ../pyodide/ is all there
    worker = (ASSETS / "worker-python.js").read_text(encoding="utf-8")
    for name in re.findall(r'"(pyodide[\w.]*\.m?js)"', worker):
        assert name in RUNTIME_DOWNLOADS
