"""No rendered sentence says a word twice in a row ("12,879,925,248 parameters parameters"):
the usual slip when a placeholder's value already carries its unit and the message repeats it.
Every widget's results in every locale, for dense, mixture-of-experts, multi-GPU and DPO runs."""

from __future__ import annotations

import html
import re

import pytest

from calc.i18n import LOCALES
from calc.render import REGISTRY, results

QUERIES = {
    "calculator": [
        {},
        {"model": "mixtral-8x7b", "method": "lora"},
        {"model": "qwen3-30b-a3b", "method": "qlora", "tokens": "50M", "gpu": "a40"},
        {"model": "llama-3.1-70b", "method": "full", "gpus": "8", "offload": "optimizer"},
        {"model": "llama-3.1-8b", "method": "full", "objective": "dpo", "gpu": "h100-80"},
    ],
}

_TAG = re.compile(r"<[^>]+>")
_REPEAT = re.compile(r"(?<!\w)([^\W\d_]{3,})\s+\1(?!\w)", re.IGNORECASE)


def _text(markup: str) -> str:
    return html.unescape(_TAG.sub(" ", markup))


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_no_word_twice_in_a_row(name, locale):
    for q in QUERIES.get(name, [{}]):
        text = _text(results(name, q, locale)["html"])
        found = _REPEAT.search(text)
        assert found is None, (name, q, text[max(0, found.start() - 80):found.end() + 40])


def test_the_check_finds_a_repeated_unit():
    assert _REPEAT.search("passes through 12,879,925,248 parameters parameters.")
    assert _REPEAT.search("через 12 879 925 248 параметров  параметров")
    assert not _REPEAT.search("LoRA, LoRA+ and QLoRA")
