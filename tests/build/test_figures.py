"""Every figure on the built pages is calc's: tables recomputed independently here, the spec's
rule-of-thumb figures, raw values beside formatted text, Persian digits on fa pages."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from calc import catalog, engine
from calc.fields import parse
from calc.fmt import fmt
from calc.types import GpuKind
from sitepaths import LOCALES, PAGES, page_path

GB = 10**9

# The spec's rule of thumb (engine.md section "Figures the engine must reproduce").
SPEC_ROT = {
    Decimal("0.5"): {"lora": 4, "full": 10},
    Decimal("1.5"): {"lora": 6, "full": 22},
    Decimal("3"): {"lora": 9, "full": 40},
    Decimal("7"): {"lora": 17, "full": 88},
    Decimal("14"): {"lora": 31, "full": 172},
}


def page(site_pages, built_site, locale, name):
    return site_pages[page_path(built_site, locale, name).relative_to(built_site)]


def figs_of(cell):
    return [(f.attrs.get("data-calc"), f) for f in cell.figs]


def raw(fig):
    if "data-bytes" in fig.attrs:
        return int(fig.attrs["data-bytes"])
    return Decimal(fig.attrs["data-value"])


def estimate(**fields):
    return engine.estimate(parse({k: str(v) for k, v in fields.items()}))


# --- every figure ---------------------------------------------------------------------------


def test_every_figure_carries_its_raw_value(site_pages):
    count = 0
    for rel, p in site_pages.items():
        for f in p.figs:
            count += 1
            assert f.attrs.get("data-calc"), (rel, f)
            has = [a for a in ("data-bytes", "data-value") if a in f.attrs]
            assert len(has) == 1, (rel, f.attrs)
            if "data-bytes" in f.attrs:
                assert re.fullmatch(r"\d+", f.attrs["data-bytes"]), (rel, f.attrs)
            else:
                Decimal(f.attrs["data-value"])  # a plain number
            assert f.text.strip(), (rel, f.attrs)
    assert count > 100


@pytest.mark.parametrize("name", PAGES)
def test_persian_pages_show_persian_digits_only(built_site, site_pages, name):
    for f in page(site_pages, built_site, "fa", name).figs:
        assert not re.search(r"[0-9]", f.text), (name, f.attrs, f.text)


@pytest.mark.parametrize("locale", LOCALES)
def test_byte_figures_are_formatted_by_calc(built_site, site_pages, locale):
    """A byte figure's text is calc.fmt of its raw bytes in one of the byte units."""
    for name in PAGES:
        for f in page(site_pages, built_site, locale, name).figs:
            if "data-bytes" not in f.attrs:
                continue
            value = int(f.attrs["data-bytes"])
            candidates = {fmt(value, unit, locale, digits)
                          for unit in ("GiB", "GB", "MiB") for digits in (None, 0, 1, 2, 3)}
            assert f.text in candidates, (locale, name, f.attrs, f.text)


# --- the rule-of-thumb table ----------------------------------------------------------------


def rot_table(site_pages, built_site, locale):
    p = page(site_pages, built_site, locale, "rule-of-thumb")
    for table in p.tables:
        names = {n for row in table for cell in row for n, _ in figs_of(cell)}
        if "rule_of_thumb.lora" in names:
            return table
    pytest.fail(f"{locale}: no rule-of-thumb table")


@pytest.mark.parametrize("locale", LOCALES)
def test_rule_of_thumb_table_equals_calc(built_site, site_pages, locale):
    table = rot_table(site_pages, built_site, locale)
    sizes_seen = []
    for row in table[1:]:
        figs = {n: f for cell in row for n, f in figs_of(cell)}
        size = raw(figs["model_size"])
        sizes_seen.append(size)
        preset = row[1].text.strip()
        model = next(m for m in catalog.models() if m.name == preset)
        for method in ("lora", "qlora", "full"):
            rot = figs[f"rule_of_thumb.{method}"]
            assert raw(rot) == engine.rule_of_thumb(size, method)
            assert rot.text == fmt(raw(rot), "GB", locale)
            fields = {"model": model.id, "method": method}
            if method == "full":
                fields["optimizer"] = "adamw-no-master"
            detailed = figs[f"total.{method}"]
            assert raw(detailed) == estimate(**fields).total
            assert detailed.text == fmt(raw(detailed), "GB", locale)
        if size in SPEC_ROT:
            for method, gb in SPEC_ROT[size].items():
                assert raw(figs[f"rule_of_thumb.{method}"]) == gb * GB, (size, method)
    assert min(sizes_seen) == Decimal("0.5") and max(sizes_seen) >= 70
    assert set(SPEC_ROT) <= set(sizes_seen)


def test_rule_of_thumb_eight_billion(built_site, site_pages):
    """Spec: 8B, LoRA 19 GB vs QLoRA about 9 GB."""
    table = rot_table(site_pages, built_site, "en")
    row = next(r for r in table[1:] if raw(dict(figs_of(r[0]))["model_size"]) == 8)
    figs = {n: f for cell in row for n, f in figs_of(cell)}
    assert raw(figs["rule_of_thumb.lora"]) == 19 * GB
    assert round(raw(figs["rule_of_thumb.qlora"]) / GB) == 9


# --- the GPU choice table -------------------------------------------------------------------


def expected_gpu_cells(preset: str, method: str, locale: str
                       ) -> tuple[int, list[str], list[tuple[int, str]]]:
    """Independently: total, the smallest discrete cards that fit on one card, else the fewest
    cards with ZeRO-3, found by trying 2, 3, ... cards on the calculator's own per-GPU figure
    (calc.scale.scaled: the spec's division of weights, gradients and optimizer state plus what
    every card gathers whole), not by the table's search (count, display name in the locale;
    the names themselves are checked by tests/unit/test_gpu_labels.py)."""
    from calc.fields import parse
    from calc.scale import Scale, scaled

    e = estimate(model=preset, method=method)
    discrete = [g for g in catalog.gpus() if g.kind is GpuKind.DISCRETE]
    usable = {g.id: g.memory_bytes * engine.DISCRETE_USABLE for g in discrete}
    fitting = [g for g in discrete if e.total <= usable[g.id]]
    if fitting:
        smallest = min(g.memory_bytes for g in fitting)
        return e.total, [catalog.gpu_label(g, locale) for g in fitting
                         if g.memory_bytes == smallest], []
    inputs = parse({"model": preset, "method": method})
    options = []
    for g in discrete:
        for n in range(2, 65):
            if scaled(inputs, Scale(n)).per_gpu_total <= usable[g.id]:
                options.append((n, -g.memory_bytes, catalog.gpu_label(g, locale)))
                break
    options.sort()
    return e.total, [], [(n, name) for n, _, name in options[:3]]


@pytest.mark.parametrize("locale", LOCALES)
def test_gpu_choice_table_equals_calc(built_site, site_pages, locale):
    p = page(site_pages, built_site, locale, "choosing-a-gpu")
    table = next(t for t in p.tables if any(n == "total" for r in t for c in r for n, _ in figs_of(c)))
    rows = table[1:]
    presets = ["llama-3.1-8b", "qwen2.5-14b", "qwen2.5-32b", "llama-3.1-70b",
               "mixtral-8x7b", "qwen3-30b-a3b"]  # the last two: mixture-of-experts rows
    methods = ["full", "lora", "qlora"]
    assert len(rows) == len(presets) * len(methods)
    for i, row in enumerate(rows):
        preset, method = presets[i // 3], methods[i % 3]
        total, one, multi = expected_gpu_cells(preset, method, locale)
        fig = dict(figs_of(row[2]))["total"]
        assert raw(fig) == total, (preset, method)
        assert fig.text == fmt(total, "GiB", locale)
        one_text, multi_text = row[3].text, row[4].text
        if one:
            for name in one:
                assert name in one_text, (preset, method, name, one_text)
            assert multi_text.strip() == "—"
        else:
            assert one_text.strip() == "—"
            for n, name in multi:
                assert name in multi_text and fmt(n, "number", locale) in multi_text, (
                    preset, method, n, name, multi_text)


@pytest.mark.parametrize("locale", LOCALES)
def test_gpu_catalog_table_equals_calc(built_site, site_pages, locale):
    p = page(site_pages, built_site, locale, "choosing-a-gpu")
    table = next(t for t in p.tables
                 if any(n == "gpu_memory" for r in t for c in r for n, _ in figs_of(c)))
    rows = table[1:]
    gpus = catalog.gpus()
    assert len(rows) == len(gpus)
    for row, g in zip(rows, gpus):
        assert row[0].text.strip() == catalog.gpu_label(g, locale)
        assert raw(dict(figs_of(row[1]))["gpu_memory"]) == g.memory_bytes
        prices = dict(figs_of(row[3]))
        if g.price_per_hour is None:
            assert "gpu_price" not in prices
        else:
            assert raw(prices["gpu_price"]) == g.price_per_hour
            assert prices["gpu_price"].text == fmt(g.price_per_hour, "USD", locale)


def test_card_memory_in_names_follows_the_page(built_site, site_pages):
    """Card names carry their memory size in the page's digits (written here, not by calc)."""
    names = {}
    for locale in LOCALES:
        p = page(site_pages, built_site, locale, "choosing-a-gpu")
        table = next(t for t in p.tables
                     if any(n == "gpu_memory" for r in t for c in r for n, _ in figs_of(c)))
        names[locale] = {row[0].text.strip() for row in table[1:]}
    assert "NVIDIA A100 80\u00a0GB" in names["en"]
    assert "Mac with Apple silicon, 36\u00a0GB" in names["en"]
    assert "NVIDIA A100 80\u00a0ГБ" in names["ru"]
    assert "Mac com Apple silicon, 36\u00a0GB" in names["pt"]
    fa = names["fa"]
    assert "NVIDIA H200 ۱۴۱\u00a0\u2066GB\u2069" in fa
    assert "مک مجهز به Apple silicon، ۳۶\u00a0\u2066GB\u2069" in fa
    assert "NVIDIA GeForce RTX 4090" in fa
    for name in fa:  # ASCII digits only inside a Latin model name
        assert not re.search(r"(?<![A-Za-z0-9])[0-9]+\u00a0", name), name


# --- figures in prose -----------------------------------------------------------------------


@pytest.mark.parametrize("locale", LOCALES)
def test_spec_figures_quoted_in_prose_are_calcs(built_site, site_pages, locale):
    """Where the pages quote the spec's anchor examples, the raw values are the engine's."""
    values: dict[str, set] = {}
    for name in PAGES:
        for f in page(site_pages, built_site, locale, name).figs:
            values.setdefault(f.attrs["data-calc"], set()).add(raw(f))
    # full fine-tuning of a 7B model, states only: 7 x 16 bytes = 112 GB
    assert engine.quick_full(7, 16, 0) in values.get("quick_full", set())
    for v in values.get("cost", set()):
        assert v == v.quantize(Decimal("0.01"))  # money to the cent
