"""The browser glue stays generic: the page script, the worker and the snapshot script name no
widget and no locale and keep no knowledge of calc's (digits, the words for yes); calc is the
one place for those. The messages between page and worker are built in one module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from calc.fields import FALSE_WORDS, TRUE_WORDS
from calc.i18n import LOCALES
from calc.render import WIDGETS

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "docs" / "assets" / "calc"
GLUE = {"page.js": ASSETS / "page.js", "worker.js": ASSETS / "worker.js",
        "worker-python.js": ASSETS / "worker-python.js",
        "messages.js": ASSETS / "messages.js", "make_snapshot.mjs": ROOT / "make_snapshot.mjs"}

_COMMENT = re.compile(r"(?m)(^|\s)//.*$")
_STRING = re.compile(r"""(["'`])((?:\\.|(?!\1)[^\\])*)\1""")


def code_of(path: Path) -> str:
    """The file without its // comments (the files have no /* */ comments)."""
    text = path.read_text(encoding="utf-8")
    assert "/*" not in text, f"{path.name}: /* */ comments are not stripped here"
    return _COMMENT.sub(r"\1", text)


def literals(path: Path) -> list[str]:
    """Every JavaScript string literal of the file (quotes and template texts)."""
    return [m.group(2) for m in _STRING.finditer(code_of(path))]


def test_the_string_reader_finds_literals():
    sample = ASSETS / "page.js"
    found = literals(sample)
    assert "./messages.js" in found and "[data-calc-form]" in found
    assert not any(s.startswith(" The calculators") for s in found)  # comments are left out


@pytest.mark.parametrize("name", GLUE)
def test_no_widget_and_no_locale_named(name):
    found = set(literals(GLUE[name]))
    assert found.isdisjoint(WIDGETS), sorted(found & set(WIDGETS))
    assert found.isdisjoint(LOCALES), sorted(found & set(LOCALES))


@pytest.mark.parametrize("name", GLUE)
def test_no_digit_tables_and_no_yes_no_words(name):
    text = code_of(GLUE[name])
    assert not re.search("[\u0660-\u0669\u06f0-\u06f9]", text), "Arabic-Indic digits"
    # the form's own "true"/"false" (the canonical query) are allowed; calc's other words for
    # yes and no are not ("0" and "1" are left out: a hex digit's padding is no yes/no word)
    words = {w for w in (*TRUE_WORDS, *FALSE_WORDS) if w.isalpha()} - {"true", "false"}
    assert words and set(literals(GLUE[name])).isdisjoint(words)


@pytest.mark.parametrize("name", ["page.js", "worker-python.js"])
def test_messages_are_built_in_one_module(name):
    text = code_of(GLUE[name])
    assert 'import * as messages from "./messages.js";' in text
    kinds = "|".join(("status", "error", "result", "failure"))
    assert not re.search(rf'\{{\s*type\s*:\s*"({kinds})"', text), "a message built by hand"
    posts = re.findall(r"postMessage\(([^)]*)", text)
    for call in posts:
        assert call.startswith(("messages.", "message", "0")), call  # the warm-up's tick: 0
    assert "manifest.file" not in text and "manifest.name" not in text


def test_the_message_module_declares_every_kind():
    text = code_of(GLUE["messages.js"])
    for kind in ("status", "error", "result", "failure"):
        assert f'"{kind}"' in text and f"export const {kind} =" in text
    for stage in ("runtime", "package", "ready", "crashed"):
        assert f'"{stage}"' in text


def test_the_snapshot_runs_calcs_prime():
    text = code_of(GLUE["make_snapshot.mjs"])
    assert "calc.render.prime()" in text
