"""Model presets and GPU catalog: the data are checked against independent figures."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from importlib.resources import files

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc import catalog
from calc.catalog import Gpu, ModelPreset, count_params, count_params_of
from calc.errors import CalcError, Problem
from calc.types import Architecture, GpuKind

SLUG = re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*")

# --- models --------------------------------------------------------------------------------

# Headline sizes as the model cards / papers state them (billions), rounded as published.
HEADLINE_B = {
    "llama-3.1-8b": 8.03,
    "llama-3-8b": 8.03,
    "llama-3.2-1b": 1.23,
    "llama-3.2-3b": 3.21,
    "llama-3.1-405b": 405.0,
    "llama-2-7b": 6.74,
    "llama-2-13b": 13.0,
    "llama-2-70b": 69.0,
    "llama-65b": 65.2,
    "qwen2.5-0.5b": 0.49,
    "qwen2.5-1.5b": 1.54,
    "qwen2.5-3b": 3.09,
    "qwen2.5-7b": 7.61,
    "qwen2.5-14b": 14.7,
    "qwen2.5-72b": 72.7,
    "mistral-7b": 7.25,
    "gemma-2-2b": 2.61,
    "gemma-2-9b": 9.24,
    "gemma-2-27b": 27.2,
    "phi-3-mini": 3.8,
    "phi-3-medium": 14.0,
    "phi-4": 14.7,
    "qwen3-0.6b": 0.6,
    "qwen3-8b": 8.2,
}

# Exact totals of the published weights (safetensors metadata and public copies of it).
EXACT = {
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "llama-3.1-405b": 405_853_388_800,
    "llama-3.2-1b": 1_235_814_400,
    "llama-65b": 65_285_660_672,
    "qwen2.5-0.5b": 494_032_768,
    "qwen2.5-7b": 7_615_616_512,
    "mistral-7b": 7_248_023_552,
    "gemma-2-9b": 9_241_705_984,
    "phi-3-mini": 3_821_079_552,
}

REQUIRED_MODELS = {
    "llama-2-7b", "llama-2-13b", "llama-2-70b",
    "llama-3-8b", "llama-3-70b",
    "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b",
    "llama-3.2-1b", "llama-3.2-3b", "llama-3.3-70b", "llama-65b",
    "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "qwen2.5-7b",
    "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b",
    "mistral-7b", "gemma-2-2b", "gemma-2-9b", "gemma-2-27b",
    "phi-3-mini", "phi-3-medium", "phi-4",
}  # fmt: skip


def test_enough_presets_and_required_ids() -> None:
    ids = catalog.model_ids()
    assert len(ids) >= 28
    assert REQUIRED_MODELS <= set(ids)
    for preset_id in ("mistral-7b", "llama-3.1-8b", "qwen2.5-0.5b", "llama-65b"):
        assert catalog.model(preset_id).id == preset_id


def test_ids_unique_and_slug_shaped() -> None:
    ids = [m.id for m in catalog.models()]
    assert len(ids) == len(set(ids))
    for preset_id in ids:
        assert SLUG.fullmatch(preset_id), preset_id
        assert preset_id != "custom"


@pytest.mark.parametrize("preset", catalog.models(), ids=lambda m: m.id)
def test_params_match_architecture(preset: ModelPreset) -> None:
    counted = preset.counted_params()
    assert abs(counted - preset.params) <= 0.01 * preset.params
    # The data were taken from the published weights and reproduce exactly.
    assert counted == preset.params


@pytest.mark.parametrize("preset", catalog.models(), ids=lambda m: m.id)
def test_shapes_are_sane(preset: ModelPreset) -> None:
    a = preset.arch
    assert isinstance(a, Architecture)
    assert a.heads % a.kv_heads == 0
    assert a.head_dim % 32 == 0
    if preset.kind == "dense":
        assert a.ffn > a.hidden and a.experts == 0
    else:  # gpt-oss: every layer is MoE, its intermediate_size equals hidden_size
        assert preset.kind == "moe" and 0 < a.experts_active <= a.experts and a.expert_ffn > 0
    assert 32_000 <= a.vocab <= 262_208  # Gemma 3 4B-27B: 262,208 (their config.json)
    assert preset.source.startswith("https://huggingface.co/")
    assert preset.name and preset.family
    # k and v map hidden -> kv_heads x head_dim (grouped-query attention)
    assert a.linear_shapes()["k"] == (a.hidden, a.kv_heads * a.head_dim)


@pytest.mark.parametrize(("preset_id", "billions"), sorted(HEADLINE_B.items()))
def test_headline_sizes(preset_id: str, billions: float) -> None:
    assert catalog.model(preset_id).params == pytest.approx(billions * 1e9, rel=0.01)


@pytest.mark.parametrize(("preset_id", "exact"), sorted(EXACT.items()))
def test_exact_published_counts(preset_id: str, exact: int) -> None:
    assert catalog.model(preset_id).params == exact


def test_llama_65b_matches_spec_case() -> None:
    a = catalog.model("llama-65b").arch
    assert (a.layers, a.hidden, a.ffn, a.heads, a.kv_heads) == (80, 8192, 22016, 64, 64)
    assert a.params == pytest.approx(65.2e9, rel=0.005)


def test_family_specifics() -> None:
    tied = {m.id for m in catalog.models() if m.arch.tied}
    assert {"llama-3.2-1b", "llama-3.2-3b", "qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b",
            "gemma-2-2b", "gemma-2-9b", "gemma-2-27b"} <= tied
    assert not {"llama-3.1-8b", "qwen2.5-7b", "mistral-7b", "phi-4"} & tied
    qwen25 = [m for m in catalog.models() if m.family == "Qwen2.5"]
    assert len(qwen25) == 7 and all(m.qkv_bias for m in qwen25)
    # gpt-oss also has q/k/v (and o) biases (transformers 5.24.0 GptOssAttention, attention_bias)
    assert not any(m.qkv_bias for m in catalog.models() if m.family not in ("Qwen2.5", "gpt-oss"))
    assert catalog.model("llama-3.1-8b").arch.vocab == 128256
    assert catalog.model("llama-2-7b").arch.vocab == 32000
    assert catalog.model("qwen2.5-0.5b").arch.vocab == 151936
    assert catalog.model("qwen2.5-72b").arch.vocab == 152064
    assert catalog.model("gemma-2-9b").arch.head_dim == 256
    assert catalog.model("gemma-2-2b").arch.head_dim == 256
    assert catalog.model("gemma-2-27b").arch.head_dim == 128  # config.json: head_dim 128
    assert all(m.norms_per_layer == 4 for m in catalog.models() if m.family == "Gemma 2")
    # Without its biases Qwen2.5-0.5B would be short by 24 x (896 + 2 x 128) parameters.
    q = catalog.model("qwen2.5-0.5b")
    assert q.params - count_params(q.arch) == 24 * (896 + 2 * 128)
    # Qwen2.5's model card: 0.36B non-embedding parameters.
    assert q.params - q.arch.vocab * q.arch.hidden == pytest.approx(0.36e9, rel=0.01)


def test_count_params_accepts_mapping_and_positional() -> None:
    a = catalog.model("llama-3.1-8b").arch
    fields = {k: getattr(a, k) for k in
              ("layers", "hidden", "ffn", "heads", "kv_heads", "head_dim", "vocab", "tied")}
    assert count_params(fields) == count_params(a) == 8_030_261_248
    assert count_params_of(**fields) == 8_030_261_248


@given(
    layers=st.integers(1, 128),
    hidden=st.integers(1, 16384),
    ffn=st.integers(1, 65536),
    kv=st.integers(1, 16),
    group=st.integers(1, 8),
    head_dim=st.integers(1, 256),
    vocab=st.integers(1, 300_000),
    bias=st.booleans(),
)
def test_count_params_untied_adds_lm_head(
    layers: int, hidden: int, ffn: int, kv: int, group: int, head_dim: int, vocab: int, bias: bool
) -> None:
    args = (layers, hidden, ffn, kv * group, kv, head_dim, vocab)
    tied = count_params_of(*args, True, qkv_bias=bias)
    untied = count_params_of(*args, False, qkv_bias=bias)
    assert untied - tied == vocab * hidden
    assert tied > 0
    biased = count_params_of(*args, True, qkv_bias=True)
    plain = count_params_of(*args, True)
    assert biased - plain == layers * (kv * group + 2 * kv) * head_dim


def test_unknown_model_is_a_calc_error() -> None:
    with pytest.raises(CalcError) as info:
        catalog.model("llama-9000b")
    assert info.value.problems == (Problem.of("model", "unknown_model", value="llama-9000b"),)
    with pytest.raises(CalcError):
        catalog.model("Llama-3.1-8B")  # ids are exact; callers normalise case


# --- GPUs ----------------------------------------------------------------------------------

BRIEF_PRICES = {
    "l4": "0.74",
    "rtx-4090": "1.11",
    "a40": "0.74",
    "l40s": "1.36",
    "rtx-pro-6000": "3.11",
    "a100-80": "2.24",
    "h100-80": "4.99",
    "h200-141": "6.61",
    "b200-180": "9.99",
}

SPEC_GPUS_GIB = {
    "l4": 24, "t4": 16, "rtx-3090": 24, "rtx-4090": 24, "rtx-5090": 32, "a10": 24,
    "a40": 48, "l40s": 48, "rtx-6000-ada": 48, "rtx-pro-6000": 96, "a100-40": 40,
    "a100-80": 80, "h100-80": 80, "h200-141": 141, "b200-180": 180, "mi300x": 192,
}  # fmt: skip

APPLE_GIB = (16, 24, 36, 48, 64, 96, 128, 192)


def test_enough_gpus_and_spec_list_present() -> None:
    assert len(catalog.gpus()) >= 22
    for gpu_id, gib in SPEC_GPUS_GIB.items():
        g = catalog.gpu(gpu_id)
        assert g.kind is GpuKind.DISCRETE
        assert g.memory_bytes == gib * 2**30
        assert g.memory_gib == gib
    for gib in APPLE_GIB:
        g = catalog.gpu(f"mac-{gib}")
        assert g.kind is GpuKind.UNIFIED and g.vendor == "Apple"
        assert g.memory_bytes == gib * 2**30


def test_gpu_ids_unique_and_slug_shaped() -> None:
    ids = catalog.gpu_ids()
    assert len(ids) == len(set(ids))
    assert all(SLUG.fullmatch(i) for i in ids)


def test_prices_equal_brief() -> None:
    for g in catalog.gpus():
        if g.id in BRIEF_PRICES:
            assert g.price_per_hour == Decimal(BRIEF_PRICES[g.id]), g.id
            assert str(g.price_per_hour) == BRIEF_PRICES[g.id]
        else:
            assert g.price_per_hour is None, g.id  # no other example price is claimed


def test_cost_example_from_spec() -> None:
    price = catalog.gpu("a40").price_per_hour
    assert price is not None
    assert 20 * price == Decimal("14.80")


@pytest.mark.parametrize("g", catalog.gpus(), ids=lambda g: g.id)
def test_gpu_fields(g: Gpu) -> None:
    assert isinstance(g.kind, GpuKind)
    assert g.memory_bytes % 2**30 == 0 and g.memory_bytes > 0
    assert g.vendor and g.label in catalog.GPU_LABELS
    assert (g.product is None) == (g.label == "apple-silicon-mac")
    assert g.use in {"consumer", "workstation", "inference", "datacenter",
                     "datacenter-training", "laptop", "desktop"}
    assert (g.kind is GpuKind.UNIFIED) == (g.vendor == "Apple")


def test_gpus_ordered_by_kind_then_memory() -> None:
    kinds = [g.kind for g in catalog.gpus()]
    assert kinds == sorted(kinds, key=lambda k: k is GpuKind.UNIFIED)
    for kind in GpuKind:
        sizes = [g.memory_bytes for g in catalog.gpus() if g.kind is kind]
        assert sizes == sorted(sizes)


def test_unknown_gpu_is_a_calc_error() -> None:
    with pytest.raises(CalcError) as info:
        catalog.gpu("voodoo2")
    assert info.value.problems == (Problem.of("gpu", "unknown_choice", value="voodoo2"),)


# --- loading -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "key"), [("models.json", "models"), ("gpus.json", "gpus")])
def test_data_files_load_via_importlib_resources(name: str, key: str) -> None:
    resource = files("calc") / "data" / name
    assert resource.is_file()
    data = json.loads(resource.read_text(encoding="utf-8"))
    about = data["_about"]
    assert about["date"] == "2026-11-29" and about["sources"] and about["notes"]
    loaded = catalog.models() if key == "models" else catalog.gpus()
    assert [e["id"] for e in data[key]] == [x.id for x in loaded]


def test_gpu_units_documented() -> None:
    data = json.loads((files("calc") / "data" / "gpus.json").read_text(encoding="utf-8"))
    assert any("GiB" in note for note in data["_about"]["notes"])


def test_loading_is_cached() -> None:
    assert catalog.models() is catalog.models()
    assert catalog.gpus() is catalog.gpus()
    assert catalog.model("phi-4") is catalog.model("phi-4")


def test_presets_are_frozen() -> None:
    preset = catalog.model("llama-3.1-8b")
    with pytest.raises(AttributeError):
        preset.id = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        catalog.gpu("a40").memory_bytes = 0  # type: ignore[misc]
