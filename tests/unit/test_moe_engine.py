"""The engine on mixture-of-experts and latent-attention models (issue 14, engine.md section 7).

Expected figures are computed here by hand from each model's config.json shapes (cited in
calc/data/models.json) and the formulas of engine.md sections 1 and 6, not read back from the
code under test: every expert is stored (weights, gradients, optimizer state), a token passes
through `experts_active` of them (activations, router, compute), and LoRA adapts what PEFT
0.21.2's all-linear wraps: with transformers 5.24.0's fused 3-D experts, not the experts.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

from calc import catalog
from calc.engine import (ACT_BYTES_CKPT, BF16_BYTES, GIB, NF4_BYTES_EXACT_DQ, OVERHEAD_BYTES,
                         Inputs, estimate, max_rank)
from calc.errors import CalcError
from calc.fields import parse, to_query
from calc.flops import matmul_params, train_flops
from calc.types import Method, Mode, Targets

MIXTRAL = catalog.model("mixtral-8x7b").arch  # h 4096, L 32, 32/8 heads of 128, 8 experts x 14336, top-2
QWEN3 = catalog.model("qwen3-30b-a3b").arch  # h 2048, L 48, 32/4 heads of 128, 128 experts x 768, top-8
GPT_OSS = catalog.model("gpt-oss-20b").arch  # h 2880, L 24, 64/8 heads of 64, 32 experts x 2880, top-4
TOKENS = 2048


def run(arch, **kw) -> "calc.engine.Estimate":  # noqa: F821
    return estimate(Inputs(arch=arch, seq=TOKENS, **kw))


# --- trainable parameters: PEFT all-linear on fused experts ---------------------------------


def test_mixtral_lora_adapts_attention_only() -> None:
    # r (d_in + d_out) per projection: q 4096 -> 4096, k and v 4096 -> 1024, o 4096 -> 4096
    per_layer = 16 * ((4096 + 4096) + 2 * (4096 + 1024) + (4096 + 4096))
    assert per_layer == 425_984
    assert run(MIXTRAL).trainable_params == 32 * per_layer == 13_631_488


def test_mixtral_lora_experts_adds_every_expert() -> None:
    # target_parameters: gate_up (4096 -> 2 x 14336) and down (14336 -> 4096) of each of 8 experts
    per_expert = 16 * ((4096 + 2 * 14336) + (14336 + 4096))
    est = run(MIXTRAL, lora_experts=True)
    assert est.trainable_params == 13_631_488 + 32 * 8 * per_expert == 223_346_688
    # the weights are the same: the experts are frozen either way
    assert est.get("base_weights") == run(MIXTRAL).get("base_weights")


def test_qwen3_moe_lora_params() -> None:
    # q 2048 -> 4096, k and v 2048 -> 512, o 4096 -> 2048
    per_layer = 16 * ((2048 + 4096) + 2 * (2048 + 512) + (4096 + 2048))
    assert run(QWEN3).trainable_params == 48 * per_layer == 13_369_344
    per_expert = 16 * ((2048 + 2 * 768) + (768 + 2048))
    assert run(QWEN3, lora_experts=True).trainable_params == 48 * (per_layer + 128 * per_expert)


def test_unfused_experts_are_adapted_by_all_linear() -> None:
    # transformers 4.57.6: one nn.Linear per expert (w1, w3: 4096 -> 14336, w2: 14336 -> 4096)
    # and an nn.Linear router (4096 -> 8): all-linear wraps them all
    old = replace(MIXTRAL, experts_fused=False, router_linear=True)
    per_layer = 425_984 + 8 * 3 * 16 * (4096 + 14336) + 16 * (4096 + 8)
    assert run(old).trainable_params == 32 * per_layer
    assert max_rank(old, Targets.ALL_LINEAR) == 8  # the router's 8 outputs


# --- weights: every expert stored; QLoRA's NF4 only on nn.Linear -----------------------------

EXPERTS = 32 * 8 * 3 * 4096 * 14336  # Mixtral's routed experts, fused 3-D parameters
ROUTER = 32 * 4096 * 8  # MixtralTopKRouter.weight, an nn.Parameter
EMBED_NORMS = 2 * 32000 * 4096 + (2 * 32 + 1) * 4096


def test_weights_count_every_expert() -> None:
    for mode in Mode:
        assert run(MIXTRAL, mode=mode).get("base_weights") == 46_702_792_704 * BF16_BYTES
    assert run(MIXTRAL, method=Method.FULL).get("optimizer") == 46_702_792_704 * 12
    assert run(MIXTRAL, method=Method.FULL, grad_accum=2).get("gradients") == 46_702_792_704 * 2


def test_mixtral_qlora_keeps_experts_in_bf16() -> None:
    keep = EMBED_NORMS + EXPERTS + ROUTER
    nf4 = 46_702_792_704 - keep  # attention projections (and nothing else)
    assert nf4 == 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024)
    est = run(MIXTRAL, method=Method.QLORA)
    expected = int(NF4_BYTES_EXACT_DQ * nf4 + Fraction(1, 2)) + keep * BF16_BYTES
    assert est.get("base_weights") == expected
    # PEFT's prepare_model_for_kbit_training casts every BF16 parameter that is not Params4bit
    # to FP32 (peft utils/other.py): the fused experts too
    assert est.get("kbit_upcast") == keep * 2
    assert est.get("kbit_upcast") > 80 * GIB
    # the TRL >= 0.26 path (no upcast): only the BF16 experts and the NF4 attention
    trl = run(MIXTRAL, method=Method.QLORA, kbit_upcast=False)
    assert trl.get("kbit_upcast") == 0
    # textbook: 0.516 bytes for the NF4 part, 2 for the experts and the router
    planning = run(MIXTRAL, method=Method.QLORA, mode=Mode.PLANNING)
    bf16 = EXPERTS + ROUTER
    assert planning.get("base_weights") == int(
        Fraction("0.516") * (46_702_792_704 - bf16) + Fraction(1, 2)) + bf16 * 2


def test_gpt_oss_mxfp4_experts_train_in_bf16() -> None:
    experts = 24 * 32 * 3 * 2880 * 2880  # stored in MXFP4, dequantised to BF16 for training
    router = 24 * 2880 * 32
    est = run(GPT_OSS, method=Method.QLORA, kbit_upcast=False)
    rest = GPT_OSS.params - experts - router
    embed_norms = 2 * 201088 * 2880 + (2 * 24 + 1) * 2880
    assert est.get("base_weights") == (int(NF4_BYTES_EXACT_DQ * (rest - embed_norms) + Fraction(1, 2))
                                       + (experts + router + embed_norms) * 2)
    assert run(GPT_OSS).get("base_weights") == GPT_OSS.params * 2


# --- activations and the router: what a token passes through ---------------------------------


def test_mixtral_layer_scales_with_active_experts() -> None:
    # Mistral 7B has Mixtral's attention and a dense MLP of 14336: per token its MLP keeps the
    # norm output and gate, SiLU(gate), up, product (2h + 8 x 14336); Mixtral's MoE block keeps
    # the norm output, the router's FP32 probabilities (4 x 8) and, for each of 2 experts, the
    # same 8 x 14336 plus the expert's output (2h) for the routing-weight product.
    dense = replace(MIXTRAL, experts=0, experts_active=0, expert_ffn=0, params=7_241_732_096)
    moe, mistral = run(MIXTRAL).get("activations"), run(dense).get("activations")
    assert moe - mistral == TOKENS * (4 * 8 + 2 * (8 * 14336 + 2 * 4096) - 8 * 14336)
    # attention, MoE block, norms (FP32 inputs, 2 x 4h), per token
    attention = 2 * 4096 + 2 * 4096 + 4 * 1024 + 2 * 4096
    block = 2 * 4096 + 4 * 8 + 2 * (8 * 14336 + 2 * 4096)
    assert moe == TOKENS * (attention + block + 8 * 4096)
    # checkpoints: each layer's BF16 input, as for a dense model
    assert run(MIXTRAL).get("checkpoints") == 32 * ACT_BYTES_CKPT * 4096 * TOKENS


def test_qwen3_moe_activations_without_checkpointing() -> None:
    # 8 experts of 768 = 6144 wide per token; against a dense model with ffn = 6144 each
    # layer adds the router (4 x 128) and 8 expert outputs (8 x 2h)
    dense = replace(QWEN3, experts=0, experts_active=0, expert_ffn=0, ffn=6144)
    moe = run(QWEN3, ckpt=False).get("activations")
    assert moe - run(dense, ckpt=False).get("activations") == 48 * TOKENS * (4 * 128 + 8 * 2 * 2048)
    # textbook, engine.md section 1 with Korthikanti's 16 width-bytes of 4h replaced by the width
    # a token passes through: 18 h + 4 x 8 x 768, plus the router's FP32 probabilities
    planning = run(QWEN3, ckpt=False, mode=Mode.PLANNING)
    assert planning.get("activations") == 48 * TOKENS * (18 * 2048 + 4 * 8 * 768 + 4 * 128)
    # with checkpointing the textbook keeps L s b h x 2, as for a dense model
    assert run(QWEN3, mode=Mode.PLANNING).get("activations") == 48 * TOKENS * 2048 * 2


def test_adapter_input_copies_follow_the_adapted_modules() -> None:
    # FP32 adapters (hf stack): a 4-byte copy of each adapted projection's input; fused experts
    # are not adapted, so only q, k, v (4096 each) and o (4096) per layer, one layer at a time
    assert run(MIXTRAL).get("adapter_inputs") == 4 * (3 * 4096 + 4096) * TOKENS
    # with the experts adapted, a token's copies include the 2 experts it is routed to
    # (gate_up: 4096 in, down: 14336 in)
    assert run(MIXTRAL, lora_experts=True).get("adapter_inputs") == \
        4 * (4 * 4096 + 2 * (4096 + 14336)) * TOKENS


# --- what the results report -----------------------------------------------------------------


def test_params_and_active_params_in_json() -> None:
    out = run(MIXTRAL).to_json()
    # 46.7B stored; per token all but 6 of 8 experts in each of 32 layers (Mistral AI: 12.9B)
    assert out["params"] == 46_702_792_704
    assert out["active_params"] == 46_702_792_704 - 32 * 6 * 3 * 4096 * 14336 == 12_879_925_248
    assert out["lora_experts"] is False
    dense = run(catalog.model("llama-3.1-8b").arch).to_json()
    assert dense["active_params"] == dense["params"] and "lora_experts" not in dense


def test_flops_count_active_parameters() -> None:
    n = matmul_params(MIXTRAL)
    assert n == 12_879_925_248 - 32000 * 4096
    f = train_flops(Inputs(arch=MIXTRAL, seq=TOKENS, ckpt=False))
    assert f.get("forward") == 2 * (n + 13_631_488) + 4 * 32 * 32 * 128 * TOKENS
    # adapted experts: a token passes through the adapters of 2 of the 8
    fe = train_flops(Inputs(arch=MIXTRAL, seq=TOKENS, ckpt=False, lora_experts=True))
    per_expert = 16 * ((4096 + 2 * 14336) + (14336 + 4096))
    assert fe.get("backward_weights") == 2 * (13_631_488 + 32 * 2 * per_expert)


# --- the interface: lora_experts ---------------------------------------------------------------


def test_lora_experts_field() -> None:
    i = parse({"model": "mixtral-8x7b", "lora_experts": "true"})
    assert i.lora_experts and to_query(i)["lora_experts"] == "true"
    # where it changes nothing it is dropped, so a link keeps working
    for q in ({"model": "llama-3.1-8b"}, {"model": "mixtral-8x7b", "method": "full"},
              {"model": "mixtral-8x7b", "targets": "attention"}):
        i = parse({**q, "lora_experts": "true"})
        assert not i.lora_experts and "lora_experts" not in to_query(i)
    with pytest.raises(CalcError) as err:
        parse({"model": "mixtral-8x7b", "lora_experts": "maybe"})
    assert [p.field for p in err.value.problems] == ["lora_experts"]


def test_rank_bound_by_llama4_router() -> None:
    # Llama4Router is an nn.Linear (5120 -> 16 experts): all-linear adapts it, so r <= 16
    with pytest.raises(CalcError) as err:
        parse({"model": "llama-4-scout", "rank": "32"})
    assert err.value.problems[0].field == "rank"
    assert parse({"model": "llama-4-scout", "rank": "32", "targets": "attention"}).rank == 32


# --- dense models ------------------------------------------------------------------------------


def test_phi_fused_projections_counted_as_peft_wraps_them() -> None:
    # Phi-4-mini: one qkv_proj (3072 -> 3072 + 2 x 1024) and one gate_up_proj (3072 -> 2 x 8192)
    phi = catalog.model("phi-4-mini").arch
    per_layer = 16 * ((3072 + 5120) + (3072 + 3072) + (3072 + 16384) + (8192 + 3072))
    assert run(phi).trainable_params == 32 * per_layer == 23_068_672
    # one FP32 input copy for qkv_proj, not three
    assert run(phi).get("adapter_inputs") == 4 * (3072 + 3072 + 3072 + 8192) * TOKENS


@pytest.mark.parametrize("preset", [m for m in catalog.models() if m.kind == "dense"
                                    and not m.arch.fused_qkv], ids=lambda m: m.id)
def test_dense_textbook_unchanged(preset: catalog.ModelPreset) -> None:
    # engine.md section 1 written out: 2 P, T x (2 + 12), L s b h x 2, 1 GiB
    a = preset.arch
    t = a.layers * 16 * sum(d_in + d_out for d_in, d_out in a.linear_shapes().values())
    est = run(a, mode=Mode.PLANNING)
    assert est.trainable_params == t
    assert dict(est.components) == {"base_weights": 2 * a.params, "gradients": 2 * t,
                                    "optimizer": 12 * t,
                                    "activations": a.layers * TOKENS * a.hidden * 2,
                                    "overhead": OVERHEAD_BYTES}
    assert est.to_json()["active_params"] == a.params


def test_phi_on_stacks_with_their_own_model_code() -> None:
    # torchtune and LitGPT split Phi's fused qkv_proj and gate_up_proj: q, k, v, o, gate, up,
    # down of their own shapes, as on a Llama layer
    phi = catalog.model("phi-4-mini").arch
    per_layer = 16 * ((3072 + 3072) + 2 * (3072 + 1024) + (3072 + 3072)
                      + 2 * (3072 + 8192) + (8192 + 3072))
    for fw in ("torchtune", "litgpt"):
        assert parse({"model": "phi-4-mini", "framework": fw}).arch == phi
        assert estimate(parse({"model": "phi-4-mini", "framework": fw})).trainable_params == 32 * per_layer
