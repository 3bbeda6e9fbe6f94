"""No figure is typed into a page: every number in docs/*.md comes from a template expression
(calc at build time). Digits are allowed only inside names that carry them (FP16, NF4, ZeRO-3,
H100, Qwen2.5, KVKK's law numbers like 152-FZ), in ordered-list markers, heading attribute
lists, link targets and HTML attributes."""

import re
from pathlib import Path

import pytest

from sitepaths import DEFAULT_LOCALE, LOCALES
from sitepaths import PAGES as NAV_PAGES

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(DOCS.glob("*.md"))

TEMPLATE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{##.*?##\}", re.S)
ATTR_LIST = re.compile(r"\{\s*[:#.][^{}\n]*\}")
LIST_MARKER = re.compile(r"^(\s*)\d+[.)]\s", re.M)
LINK_TARGET = re.compile(r"\]\([^)]*\)|<[^>]*>|https?://\S+")
CODE = re.compile(r"`[^`\n]*`")
DIGIT = re.compile(r"[0-9\u06F0-\u06F9\u0660-\u0669]")
TOKEN = re.compile(r"[\w.+\-/]*[0-9\u06F0-\u06F9\u0660-\u0669][\w.+\-/]*")
# A token that is only a quantity with a unit or size suffix is a typed figure, not a name.
QUANTITY = re.compile(r"^[\d.,]+(?:[kmbtKMBT]|GB|GiB|MB|MiB|TB|x|×|%|h)?$")


def typed_figures(text: str) -> list[str]:
    text = TEMPLATE.sub(" ", text)
    text = ATTR_LIST.sub(" ", text)
    text = LIST_MARKER.sub(r"\1", text)
    text = LINK_TARGET.sub(" ", text)
    text = CODE.sub(" ", text)
    bad = []
    for token in TOKEN.findall(text):
        token = token.strip(".-/+")
        has_letter = re.search(r"[A-Za-z]", token)
        if not has_letter or QUANTITY.match(token):
            bad.append(token)
    return bad


def test_pages_exist():
    """Every page of mkdocs.yml's nav in every locale: `<page>.md` (the default locale) and
    `<page>.<locale>.md`, and nothing else."""
    expected = {f"{page}.md" if loc == DEFAULT_LOCALE else f"{page}.{loc}.md"
                for page in NAV_PAGES for loc in LOCALES}
    assert sorted(p.name for p in PAGES) == sorted(expected)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_typed_figures(page):
    assert typed_figures(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("text, bad", [
    ("about 17 GB of memory", ["17"]), ("a 7B model", ["7B"]), ("{{ rot('lora', 7) }} GB", []),
    ("FP16 and NF4, ZeRO-3 on H100", []), ("۱۷ گیگابایت", ["۱۷"]), ("1. Lower the length", []),
    ("## Title { #13b-on-24gb .faq }", []), ("[link](page.md#a1)", []), ("`x = 16`", []),
    ("95%", ["95"]), ("Qwen2.5 and Llama 3.1", ["3.1"])])
def test_the_check_itself(text, bad):
    assert typed_figures(text) == bad
