"""The pages' tables, as Markdown: each a macro of the page's context (`site_build.macros`),
every cell a figure or a name made by calc for the page's locale."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Callable

from calc import catalog, engine
from calc.fields import parse
from calc.scale import STRATEGIES, Offload, Scale, cards_needed, scaled
from calc.types import GpuKind

from .common import esc

if TYPE_CHECKING:
    from .macros import Macros

# Representative presets of the tables (catalog ids; a missing id fails the build).
ROT_ROWS = (
    (Decimal("0.5"), "qwen2.5-0.5b"),
    (Decimal("1.5"), "qwen2.5-1.5b"),
    (Decimal("3"), "qwen2.5-3b"),
    (Decimal("7"), "qwen2.5-7b"),
    (Decimal("8"), "llama-3.1-8b"),
    (Decimal("14"), "qwen2.5-14b"),
    (Decimal("32"), "qwen2.5-32b"),
    (Decimal("70"), "llama-3.1-70b"),
)
GPU_CHOICE_ROWS = (
    ("7/8B", "llama-3.1-8b"),
    ("13/14B", "qwen2.5-14b"),
    ("32/34B", "qwen2.5-32b"),
    ("70B", "llama-3.1-70b"),
    (None, "mixtral-8x7b"),  # mixture-of-experts rows: labelled by the model's name
    (None, "qwen3-30b-a3b"),
)
#: The multi-GPU table: a 70B model on one card kind under every strategy.
MULTI_GPU_MODEL = "llama-3.1-70b"
MULTI_GPU_CARD = "h100-80"
#: The strategies by their own (Latin) names, as practitioners write them in every language.
SHARDING_NAMES = {"ddp": "DDP", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3 / FSDP"}
METHODS = ("full", "lora", "qlora")
#: How many fewest-cards options a row of the GPU choice table lists.
MULTI_GPU_OPTIONS = 3


# A Markdown table; "|" and newlines inside cells are made harmless.
def _table(header: list[str], aligns: list[str], rows: list[list[str]]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "&#124;").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "| " + " | ".join(aligns) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# Rule of thumb (GB) beside the detailed engine (GB) for a preset of each size.
def table_rule_of_thumb(m: Macros) -> str:
    t = m.t
    header = [t("table.model_size"), t("table.preset")]
    aligns = [":--", ":--"]
    for method in ("lora", "qlora", "full"):
        header += [t("table.rot." + method), t("table.engine." + method)]
        aligns += ["--:", "--:"]
    rows = []
    for billions, preset in ROT_ROWS:
        row = [m.num(billions, "billions", name="model_size"), esc(catalog.model_label(catalog.model(preset), m.locale))]
        for method in ("lora", "qlora", "full"):
            row.append(m.rot(method, billions, name=f"rule_of_thumb.{method}"))
            fields = {"model": preset, "method": method}
            if method == "full":  # the rule's "full" has no FP32 master copy
                fields["optimizer"] = "adamw-no-master"
            row.append(m.est(unit="GB", name=f"total.{method}", **fields))
        rows.append(row)
    return _table(header, aligns, rows)


# Engine total per size and method; the smallest cards that fit, else the fewest cards.
def table_gpu_choice(m: Macros) -> str:
    t = m.t
    sep = t("list.separator") + " "
    header = [t("table.model_size"), t("table.method"), t("table.total"),
              t("table.one_card"), t("table.zero3")]
    aligns = [":--", ":--", "--:", ":--", ":--"]
    rows = []
    for size, preset in GPU_CHOICE_ROWS:
        for method in METHODS:
            e = m.estimate(model=preset, method=method)
            fits = [f for f in engine.gpu_fit(e) if f.gpu.kind is GpuKind.DISCRETE]
            one = sorted((f for f in fits if f.fits), key=lambda f: f.gpu.memory_bytes)
            if one:
                smallest = one[0].gpu.memory_bytes
                names = sep.join(catalog.gpu_label(f.gpu, m.locale)
                                 for f in one if f.gpu.memory_bytes == smallest)
                larger = any(f.gpu.memory_bytes > smallest for f in one)
                one_text = t("table.and_larger", cards=names) if larger else esc(names)
                multi_text = "—"
            else:
                one_text = "—"
                # the fewest cards as the calculator counts them (calc.scale: ZeRO-3, the
                # layers every card gathers whole included)
                needed = cards_needed(parse({"model": preset, "method": method}), Scale())
                multi = sorted(((f.gpu, needed[f.gpu.id].get("zero3")) for f in fits),
                               key=lambda g: (g[1] is None, g[1] or 0, -g[0].memory_bytes))
                multi_text = sep.join(
                    t("table.cards_of", n=n, card=catalog.gpu_label(g, m.locale))
                    for g, n in multi[:MULTI_GPU_OPTIONS] if n is not None) or "—"
            rows.append([
                _size_label(m, size) if size else t("table.moe_model", model=m.model_name(preset)),
                t("choice.method." + method),
                m.est(unit="GiB", name="total", model=preset, method=method),
                one_text,
                multi_text,
            ])
    return _table(header, aligns, rows)


# A 70B model on one card kind: the fewest cards under each sharding strategy, and with the
# optimizer offloaded to the CPU (ZeRO-3), with the host RAM that needs (calc.scale).
def table_multi_gpu(m: Macros) -> str:
    t = m.t
    gpu = catalog.gpu(MULTI_GPU_CARD)
    header = [t("table.method")] + [SHARDING_NAMES[s.value] for s in STRATEGIES] + [
        t("table.offload_cards"), t("table.offload_host")]
    aligns = [":--"] + ["--:"] * (len(STRATEGIES) + 2)
    rows = []
    for method in METHODS:
        inputs = parse({"model": MULTI_GPU_MODEL, "method": method})
        plain = cards_needed(inputs, Scale(), (gpu,))[gpu.id]
        cells = [t("choice.method." + method)]
        for s in STRATEGIES:
            n = plain.get(s.value)
            cells.append("—" if n is None else m.fig(f"cards.{s.value}", n, "count"))
        off = Scale(sharding=Scale().sharding, offload=Offload.OPTIMIZER)
        n = cards_needed(inputs, off, (gpu,))[gpu.id].get(off.sharding.value)
        cells.append("—" if n is None else m.fig("cards.offload", n, "count"))
        host = None if n is None else scaled(inputs, Scale(n, off.sharding, off.offload)).cpu_bytes
        cells.append("—" if host is None else m.fig("cpu_bytes", host, "GiB", 0))
        rows.append(cells)
    return _table(header, aligns, rows)


# "7/8B" -> the two sizes in the locale's billions format, joined by a slash.
def _size_label(m: Macros, label: str) -> str:
    parts = label.rstrip("B").split("/")
    return " / ".join(m.num(Decimal(p), "billions", name="model_size") for p in parts)


# The GPU catalog: display name, memory, kind, example hourly price, typical use.
def table_gpu_catalog(m: Macros) -> str:
    t = m.t
    header = [t("table.gpu"), t("table.memory"), t("table.kind"), t("table.price"),
              t("table.use")]
    aligns = [":--", "--:", ":--", "--:", ":--"]
    rows = []
    for g in catalog.gpus():
        price = m.fig("gpu_price", g.price_per_hour, "USD") if g.price_per_hour is not None else "—"
        rows.append([
            esc(catalog.gpu_label(g, m.locale)),
            m.fig("gpu_memory", g.memory_bytes, "GiB", 0),
            t("gpu.kind." + g.kind.value),
            price,
            t("gpu.use." + g.use),
        ])
    return _table(header, aligns, rows)


#: The tables by the name pages call them with: `{{ table_gpu_catalog() }}`.
TABLES: dict[str, Callable[[Macros], str]] = {
    "table_rule_of_thumb": table_rule_of_thumb,
    "table_gpu_choice": table_gpu_choice,
    "table_gpu_catalog": table_gpu_catalog,
    "table_multi_gpu": table_multi_gpu,
}
