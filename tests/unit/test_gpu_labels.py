"""Display names of the GPU catalog in every locale (`calc.catalog.gpu_label`).

The expectations are written here, not derived from the label code: the model names as the
vendors write them, which cards carry their memory size in the name, the sizes in each
locale's digits and unit symbol, and the English names of the data-centre cards.
"""

from __future__ import annotations

import json
import re
from importlib.resources import files

import pytest

from calc import catalog
from calc.i18n import LOCALES
from calc.types import GpuKind

NBSP = "\u00a0"
LRI, PDI = "\u2066", "\u2069"
PERSIAN_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")

# Model names: proper names, the same Latin text in every locale (None: a Mac, no model name).
PRODUCTS = {
    "rtx-3060": "NVIDIA GeForce RTX 3060", "t4": "NVIDIA T4", "l4": "NVIDIA L4",
    "a10": "NVIDIA A10", "rtx-3090": "NVIDIA GeForce RTX 3090",
    "rtx-4090": "NVIDIA GeForce RTX 4090", "rtx-5090": "NVIDIA GeForce RTX 5090",
    "a100-40": "NVIDIA A100", "a40": "NVIDIA A40", "l40s": "NVIDIA L40S",
    "rtx-a6000": "NVIDIA RTX A6000", "rtx-6000-ada": "NVIDIA RTX 6000 Ada",
    "a100-80": "NVIDIA A100", "h100-80": "NVIDIA H100",
    "rtx-pro-6000": "NVIDIA RTX PRO 6000 Blackwell", "h200-141": "NVIDIA H200",
    "b200-180": "NVIDIA B200", "mi300x": "AMD Instinct MI300X",
}  # fmt: skip

# Cards whose name needs the memory size: models sold in several sizes, and every Mac.
WITH_MEMORY = {"rtx-3060": 12, "a100-40": 40, "a100-80": 80, "h100-80": 80, "h200-141": 141,
               "b200-180": 180}

# English display names of the data-centre cards, as their vendors write them.
EN_NAMES = {
    "a100-40": "NVIDIA A100 40 GB", "a100-80": "NVIDIA A100 80 GB",
    "h100-80": "NVIDIA H100 80 GB", "h200-141": "NVIDIA H200 141 GB",
    "b200-180": "NVIDIA B200 180 GB", "mi300x": "AMD Instinct MI300X",
    "a40": "NVIDIA A40", "l40s": "NVIDIA L40S", "l4": "NVIDIA L4", "t4": "NVIDIA T4",
    "a10": "NVIDIA A10", "rtx-3060": "NVIDIA GeForce RTX 3060 12 GB",
    "mac-36": "Mac with Apple silicon, 36 GB",
}  # fmt: skip

# The descriptive words of a Mac's name in each locale (the glossaries' "Apple silicon").
MAC_WORDS = {
    "en": ("Mac", "Apple silicon"),
    "tr": ("Mac", "Apple silicon"),
    "pt": ("Mac", "Apple silicon"),
    "ru": ("Mac", "Apple silicon"),
    "fa": ("مک", "Apple silicon"),
}


def memory_gb(gib: int, loc: str) -> str:
    """The advertised size "80 GB" in the locale: its digits, its unit symbol, a no-break space;
    on fa the Latin symbol between the isolates LRI/PDI."""
    if loc == "fa":
        return str(gib).translate(PERSIAN_DIGITS) + NBSP + LRI + "GB" + PDI
    return f"{gib}{NBSP}{'ГБ' if loc == 'ru' else 'GB'}"


def needs_memory(g: catalog.Gpu) -> int | None:
    if g.kind is GpuKind.UNIFIED:
        return g.memory_gib
    return WITH_MEMORY.get(g.id)


ALL = [(g, loc) for g in catalog.gpus() for loc in LOCALES]


def test_products_are_data() -> None:
    got = {g.id: g.product for g in catalog.gpus() if g.kind is GpuKind.DISCRETE}
    assert got == PRODUCTS
    assert all(g.product is None for g in catalog.gpus() if g.kind is GpuKind.UNIFIED)


@pytest.mark.parametrize(("g", "loc"), ALL, ids=lambda x: getattr(x, "id", x))
def test_label_in_every_locale(g: catalog.Gpu, loc: str) -> None:
    label = catalog.gpu_label(g, loc)
    assert label.strip() and label == label.strip()
    assert catalog.gpu_label(g.id, loc) == label  # by id too
    if g.product is not None:
        assert g.product in label
    size = needs_memory(g)
    if size is not None:
        assert memory_gb(size, loc) in label, (label, memory_gb(size, loc))
    else:
        assert label == g.product  # nothing to add to a model sold in one size
    # no figure in ASCII digits outside the model name on a Persian page, no Arabic-Indic ones
    rest = label.replace(g.product, " ") if g.product else label
    if loc == "fa":
        assert not re.search(r"[0-9]", rest), label
    assert not re.search(r"[\u0660-\u0669]", label), label
    if loc != "fa":
        assert not re.search(r"[\u06f0-\u06f9\u2066-\u2069]", label), label
    assert "{" not in label and "}" not in label, label  # every placeholder filled


@pytest.mark.parametrize("loc", LOCALES)
def test_mac_names_are_translated(loc: str) -> None:
    for g in catalog.gpus():
        if g.kind is not GpuKind.UNIFIED:
            continue
        label = catalog.gpu_label(g, loc)
        for word in MAC_WORDS[loc]:
            assert word in label, (loc, label)
    if loc == "fa":
        assert "Mac" not in catalog.gpu_label("mac-36", loc)  # the word is Persian there


def test_english_names() -> None:
    for gpu_id, name in EN_NAMES.items():
        assert catalog.gpu_label(gpu_id, "en").replace(NBSP, " ") == name, gpu_id
        # the number and its unit never break apart
        if name.endswith(" GB"):
            assert catalog.gpu_label(gpu_id, "en").endswith(NBSP + "GB")


@pytest.mark.parametrize("loc", LOCALES)
def test_labels_tell_every_card_apart(loc: str) -> None:
    labels = [catalog.gpu_label(g, loc) for g in catalog.gpus()]
    assert len(set(labels)) == len(labels)


def test_labels_in_the_other_locales() -> None:
    assert catalog.gpu_label("a100-80", "ru") == "NVIDIA A100 80\u00a0ГБ"
    assert catalog.gpu_label("h200-141", "fa") == "NVIDIA H200 ۱۴۱\u00a0\u2066GB\u2069"
    assert catalog.gpu_label("mac-36", "pt") == "Mac com Apple silicon, 36\u00a0GB"
    assert catalog.gpu_label("mac-36", "ru") == "Mac с Apple silicon, 36\u00a0ГБ"
    assert catalog.gpu_label("mac-36", "tr") == "Apple silicon'lu Mac, 36\u00a0GB"
    assert catalog.gpu_label("mac-36", "fa") == "مک مجهز به Apple silicon، ۳۶\u00a0\u2066GB\u2069"
    assert catalog.gpu_label("rtx-4090", "fa") == "NVIDIA GeForce RTX 4090"
    # an unknown or regional locale: as the catalogs' fallback does
    assert catalog.gpu_label("a100-80", "pt_BR") == catalog.gpu_label("a100-80", "pt")
    assert catalog.gpu_label("a100-80", "de") == catalog.gpu_label("a100-80", "en")


def test_label_words_in_every_catalog() -> None:
    """Each way of building a name the data uses has its words in all five catalogs."""
    used = {g.label for g in catalog.gpus()} - {"product"}
    for loc in LOCALES:
        data = json.loads((files("calc") / "locales" / f"{loc}.json").read_text(encoding="utf-8"))
        for label in used:
            text = data[f"gpu.label.{label}"]
            assert "{memory}" in text, (loc, label)
            assert ("{product}" in text) == (label == "product-memory"), (loc, label)


def test_data_file_has_no_english_display_names() -> None:
    """The memory size is data (memory_gib), not text typed into a name."""
    data = json.loads((files("calc") / "data" / "gpus.json").read_text(encoding="utf-8"))
    for entry in data["gpus"]:
        assert "name" not in entry, entry["id"]
        assert entry["product"] is None or not re.search(r"\bGB\b", entry["product"]), entry["id"]


def test_bad_label_is_a_data_error() -> None:
    entry = {"id": "x", "product": "X", "label": "fancy", "vendor": "V", "kind": "discrete",
             "memory_gib": 8, "price_per_hour": None, "use": "consumer"}
    with pytest.raises(catalog.CatalogDataError):
        catalog._gpu(entry, set())
    with pytest.raises(catalog.CatalogDataError):
        catalog._gpu({**entry, "label": "product", "product": ""}, set())
    with pytest.raises(catalog.CatalogDataError):
        catalog._gpu({**entry, "label": "apple-silicon-mac", "product": "Mac"}, set())
    ok = catalog._gpu({**entry, "label": "product-memory"}, set())
    assert ok.product == "X" and ok.label == "product-memory"


def test_a_text_part_preset_says_so_in_the_readers_language():
    """Gemma 3 4B's preset is the language model of a multimodal checkpoint: its label says
    "(text)" in the reader's language (no English word on a Turkish page); a text-only model's
    label is its name; both the name and the English label find the preset."""
    gemma = catalog.model("gemma-3-4b")
    assert catalog.model_label(gemma, "en") == "Gemma 3 4B (text)"
    assert catalog.model_label(gemma, "tr") == "Gemma 3 4B (metin)"
    assert catalog.model_label(gemma, "ru") == "Gemma 3 4B (текст)"
    assert catalog.model_label(catalog.model("llama-3.1-8b"), "tr") == "Llama 3.1 8B"
    assert catalog.resolve_model("Gemma 3 4B (text)") == catalog.resolve_model("gemma 3 4b") == "gemma-3-4b"
