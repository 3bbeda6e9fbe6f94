"""calc.arch: counts of mixture-of-experts and latent-attention models against published totals
and independent shapes, LoRA targets as PEFT 0.21.2 adapts them, and invalid combinations."""

from __future__ import annotations

from dataclasses import replace

import pytest

from calc import arch, catalog
from calc.catalog import count_params_of
from calc.engine import lora_trainable_params
from calc.errors import CalcError
from calc.fields import parse, to_query
from calc.i18n import LOCALES
from calc.types import Targets

MOE = [m for m in catalog.models() if m.kind == "moe"]
DENSE = [m for m in catalog.models() if m.kind == "dense"]
#: Llama 4 Scout: Meta publishes 109B for the checkpoint with its vision encoder and no
#: text-only total, so its text count is checked against the shapes and the active figure.
NO_TEXT_TOTAL = {"llama-4-scout"}


def test_the_required_presets_exist_and_are_marked() -> None:
    moe = {"mixtral-8x7b", "mixtral-8x22b", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-20b",
           "gpt-oss-120b", "deepseek-v2-lite", "llama-4-scout"}
    dense = {"gemma-3-1b", "gemma-3-4b", "gemma-3-12b", "gemma-3-27b", "mistral-small-24b",
             "phi-4-mini"}
    assert moe <= {m.id for m in MOE} and dense <= {m.id for m in DENSE}
    assert all(m.kind in catalog.KINDS for m in catalog.models())


@pytest.mark.parametrize("preset", [m for m in catalog.models() if m.published], ids=lambda m: m.id)
def test_preset_total_within_half_a_percent_of_the_published_one(preset: catalog.ModelPreset) -> None:
    pub = preset.published
    assert pub is not None and pub.source.startswith("https://")
    if preset.id in NO_TEXT_TOTAL:
        assert preset.params < pub.params  # the text part of a 109B checkpoint
        return
    assert abs(preset.params - pub.params) <= 0.005 * pub.params, (preset.params, pub.params)


# Active parameters as published (figures and conventions in models.json "published"): the
# figure is stated to two or three digits, rounded or cut (Qwen3-30B-A3B: 3.35B stated as 3.3B;
# DeepSeek-V2-Lite: 2.45B as 2.4B), so the check is to one unit of its last digit.
@pytest.mark.parametrize("preset", [m for m in MOE if m.published and m.published.active],
                         ids=lambda m: m.id)
def test_active_params_match_the_published_figure(preset: catalog.ModelPreset) -> None:
    pub = preset.published
    assert pub is not None and pub.active is not None
    got = arch.active_params(preset.arch, preset.layout, embeddings=pub.active_embeddings)
    digits = len(str(pub.active).rstrip("0"))  # 12.9e9 -> 3 significant digits
    unit = 10 ** (len(str(pub.active)) - digits)  # 12.9e9 -> 0.1e9
    assert abs(got - pub.active) < unit, (got, pub.active)


def test_dense_presets_count_as_before() -> None:
    """calc.arch.params of every dense preset equals the dense formula of calc.catalog (the
    count before this change) and the preset's published weights."""
    for m in DENSE:
        a = m.arch
        old = count_params_of(a.layers, a.hidden, a.ffn, a.heads, a.kv_heads, a.head_dim, a.vocab,
                              a.tied, qkv_bias=m.qkv_bias, norms_per_layer=m.norms_per_layer,
                              qk_norm=m.qk_norm)
        assert arch.params(a, m.layout) == old == m.params, m.id
        assert arch.active_params(a, m.layout) == m.params


def test_mixtral_count_written_out() -> None:
    """Mixtral 8x7B from its modules (MixtralForCausalLM, transformers 5.24.0), by hand."""
    h, f, e, layers, vocab = 4096, 14336, 8, 32, 32000
    attention = h * 4096 + 2 * h * 1024 + 4096 * h
    moe = e * (2 * f * h + h * f) + e * h  # gate_up_proj (E, 2f, h), down_proj (E, h, f), router
    total = 2 * vocab * h + layers * (attention + moe + 2 * h) + h
    assert total == arch.params(catalog.model("mixtral-8x7b").arch) == 46_702_792_704


def test_latent_attention_shapes_of_deepseek() -> None:
    # DeepSeek-V2-Lite as transformers prints it (tests/fixtures/configs README: the report):
    # q_proj 2048->3072, kv_a_proj_with_mqa 2048->576, kv_b_proj 512->4096, o_proj 2048->2048
    lite = catalog.model("deepseek-v2-lite").arch
    assert arch.attention_shapes(lite) == (
        ("q_proj", 2048, 3072), ("kv_a_proj_with_mqa", 2048, 576), ("kv_b_proj", 512, 4096),
        ("o_proj", 2048, 2048))
    assert arch.moe_layers(lite) == 26  # layer 0 dense (first_k_dense_replace 1)
    v3 = replace(lite, hidden=7168, heads=128, kv_heads=128, q_lora_rank=1536)
    names = dict((n, (i, o)) for n, i, o in arch.attention_shapes(v3))
    assert names["q_a_proj"] == (7168, 1536) and names["q_b_proj"] == (1536, 128 * 192)
    assert names["kv_b_proj"] == (512, 128 * 256) and "q_proj" not in names


def test_all_linear_on_fused_experts_adapts_attention_only() -> None:
    """transformers 5.24.0 Mixtral: experts and router are nn.Parameter, so PEFT's all-linear
    (every nn.Linear but lm_head) finds q, k, v and o only."""
    mix = catalog.model("mixtral-8x7b").arch
    mods = arch.lora_modules(mix, Targets.ALL_LINEAR)
    assert [m.name for m in mods] == ["q_proj", "k_proj", "v_proj", "o_proj"]
    r = 16
    assert arch.lora_params(mix, r, Targets.ALL_LINEAR) == 32 * r * (
        (4096 + 4096) + 2 * (4096 + 1024) + (4096 + 4096))


def test_unfused_experts_and_target_parameters() -> None:
    mix = catalog.model("mixtral-8x7b").arch
    r, h, f, e, layers = 8, 4096, 14336, 8, 32
    attention = arch.lora_params(mix, r, Targets.ATTENTION)
    # transformers 4.57.6: w1/w2/w3 and the router gate are nn.Linear, all-linear takes them
    old = replace(mix, experts_fused=False, router_linear=True)
    got = {m.name: m for m in arch.lora_modules(old, Targets.ALL_LINEAR)}
    assert got["experts.gate_proj"].count == layers * e and got["experts.gate_proj"].per_token == layers * 2
    assert "router" in got
    assert arch.lora_params(old, r, Targets.ALL_LINEAR) == attention + layers * (
        e * r * (3 * h + 3 * f) + r * (h + e))
    # target_parameters on the fused (E, in, out) parameters: r x E x (in + out) each (ParamWrapper)
    assert arch.lora_params(mix, r, Targets.ALL_LINEAR, experts=True) == attention + layers * e * r * (
        (h + 2 * f) + (f + h))
    assert arch.lora_params(mix, r, Targets.ALL_LINEAR, experts=False) == attention


def test_llama4_router_and_shared_expert_are_linear() -> None:
    scout = catalog.model("llama-4-scout").arch
    names = [m.name for m in arch.lora_modules(scout, Targets.ALL_LINEAR)]
    assert names == ["q_proj", "k_proj", "v_proj", "o_proj", "shared_experts.gate_proj",
                     "shared_experts.up_proj", "shared_experts.down_proj", "router"]


def test_deepseek_targets() -> None:
    lite = catalog.model("deepseek-v2-lite").arch
    mods = {m.name: m for m in arch.lora_modules(lite, Targets.ALL_LINEAR)}
    assert mods["mlp.gate_proj"].count == 1 and mods["shared_experts.gate_proj"].count == 26
    assert mods["shared_experts.gate_proj"].d_out == 2 * 1408
    assert "router" not in mods and not any(n.startswith("experts.") for n in mods)
    assert [m.name for m in arch.lora_modules(lite, Targets.QV)] == ["q_proj", "kv_b_proj"]


def test_phi_fused_projections() -> None:
    phi = catalog.model("phi-4-mini").arch
    mods = {m.name: (m.d_in, m.d_out) for m in arch.lora_modules(phi, Targets.ALL_LINEAR)}
    assert mods == {"qkv_proj": (3072, 3072 + 2 * 1024), "o_proj": (3072, 3072),
                    "mlp.gate_up_proj": (3072, 2 * 8192), "mlp.down_proj": (8192, 3072)}
    assert [m.name for m in arch.lora_modules(phi, Targets.QV)] == ["qkv_proj"]


@pytest.mark.parametrize("preset", [m for m in DENSE if not m.arch.fused_qkv], ids=lambda m: m.id)
@pytest.mark.parametrize("targets", list(Targets))
def test_dense_lora_params_equal_the_engines(preset: catalog.ModelPreset, targets: Targets) -> None:
    assert arch.lora_params(preset.arch, 16, targets) == lora_trainable_params(preset.arch, 16, targets)


def test_weight_split_and_the_gpt_oss_checkpoint_size() -> None:
    """Experts in MXFP4 (17 bytes per 32 parameters), the rest BF16: the gpt-oss model card
    (arXiv:2508.10925, Table 1) gives checkpoint sizes of 12.8 GiB (20b) and 60.8 GiB (120b)."""
    n, d = arch.CHECKPOINT_DTYPES["mxfp4"]
    for preset_id, gib in (("gpt-oss-20b", 12.8), ("gpt-oss-120b", 60.8)):
        m = catalog.model(preset_id)
        split = arch.weight_split(m.arch, m.layout)
        assert split.total == m.params and m.experts_checkpoint == "mxfp4"
        size = split.experts * n // d + (split.linear + split.other) * 2
        assert abs(size / 2**30 - gib) <= 0.05, (preset_id, size / 2**30)
    assert arch.EXPERTS_TRAINING_DTYPE["mxfp4"] == "bf16"
    dense = catalog.model("llama-3.1-8b")
    split = arch.weight_split(dense.arch)
    assert split.experts == 0 and split.other == 2 * 128256 * 4096 + (2 * 32 + 1) * 4096


PROBLEMS = [
    ({"model": "llama-3.1-8b", "experts_active": "2"}, "experts_active", "moe_field_on_dense"),
    ({"model": "llama-3.1-8b", "dense_layers": "1"}, "dense_layers", "moe_field_on_dense"),
    ({"model": "mixtral-8x7b", "experts_active": "9"}, "experts_active", "experts_active_exceeds"),
    ({"model": "mixtral-8x7b", "dense_layers": "32"}, "dense_layers", "too_large"),
    ({"model": "llama-3.1-8b", "v_head_dim": "128"}, "v_head_dim", "mla_field_without_rank"),
    ({"model": "deepseek-v2-lite", "v_head_dim": "0"}, "v_head_dim", "required"),
    ({"model": "mixtral-8x7b", "experts": "5000"}, "experts", "too_large"),
    ({"model": "mixtral-8x7b", "experts": "-1"}, "experts", "negative"),
    ({"model": "llama-3.1-8b", "shared_experts": "1"}, "shared_experts", "moe_field_on_dense"),
    ({"model": "llama-3.1-8b", "expert_ffn": "1408"}, "expert_ffn", "moe_field_on_dense"),
    ({"model": "llama-3.1-8b", "q_lora_rank": "1536"}, "q_lora_rank", "mla_field_without_rank"),
    ({"model": "mixtral-8x7b", "shared_experts": "-1"}, "shared_experts", "negative"),
    ({"model": "qwen3-30b-a3b", "moe_every": "0"}, "moe_every", "zero"),
    ({"model": "qwen3-30b-a3b", "experts_active": "0"}, "experts_active", "required"),
    ({"model": "mixtral-8x7b", "lora_experts": "maybe"}, "lora_experts", "bad_bool"),
]


@pytest.mark.parametrize(("query", "field", "code"), PROBLEMS)
def test_invalid_combinations_name_the_field(query: dict, field: str, code: str) -> None:
    with pytest.raises(CalcError) as info:
        parse(query)
    assert [(p.field, p.code) for p in info.value.problems] == [(field, code)]
    for loc in LOCALES:
        message = info.value.messages(loc)[field]
        assert message and "{" not in message and "error." not in message and "field." not in message


def test_custom_moe_model_through_the_form() -> None:
    q = {"model": "custom", "layers": "32", "hidden": "4096", "ffn": "14336", "heads": "32",
         "kv_heads": "8", "vocab": "32000", "experts": "8", "experts_active": "2", "expert_ffn": "14336"}
    inputs = parse(q)
    assert inputs.arch.params == 46_702_792_704  # counted with every expert
    assert parse(to_query(inputs)).arch == inputs.arch
    preset = parse({"model": "qwen3-235b-a22b"})
    assert parse(to_query(preset)).arch == catalog.model("qwen3-235b-a22b").arch
