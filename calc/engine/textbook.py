"""The textbook formula (engine.md section 1, `mode=planning`) and the parameter counts both
models share."""

from __future__ import annotations

import math
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction

from .. import arch as arch_mod
from ..types import Architecture, Framework, Method, Targets
from .constants import (ACT_BYTES, ACT_BYTES_CKPT, ADAPTER_DTYPE_BYTES, BF16_BYTES, FP32_BYTES,
                        GRAD_BYTES, NF4_BYTES_PER_PARAM, OPTIMIZER_BYTES, OVERHEAD_BYTES)

#: The router's probabilities per token and routed expert (FP32), see moe_layer_act_bytes_per_token.
FP32_ROUTER_BYTES = FP32_BYTES
from .model import Estimate, Inputs


def _round(x: Fraction | Decimal) -> int:
    """Round half up (away from zero) to a whole number of bytes."""
    f = Fraction(x)
    return math.floor(f + Fraction(1, 2)) if f >= 0 else -math.floor(-f + Fraction(1, 2))


def lora_layer_params(d_in: int, d_out: int, rank: int) -> int:
    """Trainable parameters of one LoRA-adapted linear layer: A (r x d_in) + B (d_out x r)."""
    return rank * (d_in + d_out)


def adapter_bytes(d_in: int, d_out: int, rank: int, dtype: str = "bf16") -> int:
    return lora_layer_params(d_in, d_out, rank) * ADAPTER_DTYPE_BYTES[dtype]


def plain_layers(arch: Architecture) -> bool:
    """Every layer is the Llama layout of `Architecture.linear_shapes` (separate q, k, v, o and
    gate, up, down; no experts, no latent attention): the case engine.md section 1 writes out."""
    return not (arch_mod.is_moe(arch) or arch_mod.is_mla(arch) or arch.fused_qkv)


def lora_trainable_params(arch: Architecture, rank: int, targets: Targets,
                          experts: bool | None = None) -> int:
    """Sum over layers and target modules of r x (d_in + d_out), with the real projection shapes
    (grouped-query attention: k and v map h -> kv_heads x head_dim). A model that is not
    `plain_layers` (mixture-of-experts, latent attention, Phi's fused projections) counts the
    modules PEFT adapts on it, `calc.arch.lora_params` (`experts`: see `calc.arch.lora_modules`;
    with fused 3-D experts all-linear leaves them out)."""
    if not plain_layers(arch):
        return arch_mod.lora_params(arch, rank, targets, experts=experts)
    shapes = arch.linear_shapes()
    per_layer = sum(lora_layer_params(*shapes[m], rank) for m in targets.modules)
    return arch.layers * per_layer


def max_rank(arch: Architecture, targets: Targets, experts: bool | None = None) -> int:
    """The largest rank that still is a low-rank update of every targeted matrix."""
    if not plain_layers(arch):
        return min(min(m.d_in, m.d_out) for m in arch_mod.lora_modules(arch, targets, experts=experts))
    shapes = arch.linear_shapes()
    return min(min(shapes[m]) for m in targets.modules)


#: Stacks that train their own model code, in which Phi-3/Phi-4's fused qkv_proj and
#: gate_up_proj are separate projections again: torchtune (torchtune/models/phi3/
#: _component_builders.py builds q_proj, k_proj, v_proj and w1, w3; _convert_weights.py
#: phi3_hf_to_tune splits the fused checkpoint weights, v0.6.1) and LitGPT (litgpt/lora.py
#: LoRAQKVLinear gives q, k and v their own LoRA pairs; Phi-3's mlp_class_name is LLaMAMLP,
#: fc_1 / fc_2 / proj, litgpt/config.py, v0.5.x). The other stacks run Transformers' modeling
#: code, where PEFT wraps the fused modules as they are.
OWN_MODEL_CODE = frozenset({Framework.TORCHTUNE, Framework.LITGPT})


def stack_arch(inputs: Inputs) -> Architecture:
    """The architecture as the stack's model code lays it out (see OWN_MODEL_CODE)."""
    if inputs.arch.fused_qkv and inputs.framework in OWN_MODEL_CODE:
        return replace(inputs.arch, fused_qkv=False)
    return inputs.arch


def lora_experts(inputs: Inputs) -> bool | None:
    """`calc.arch.lora_modules`' `experts` for these inputs: True adapts the routed experts even
    when they are fused 3-D parameters (PEFT's target_parameters); None follows all-linear."""
    return True if inputs.lora_experts else None


def trainable_params(inputs: Inputs) -> int:
    if inputs.method is Method.FULL:
        return inputs.arch.params
    return lora_trainable_params(stack_arch(inputs), inputs.rank, inputs.targets, lora_experts(inputs))


def moe_bf16_params(arch: Architecture) -> int:
    """Parameters of a mixture-of-experts model that QLoRA cannot store in NF4: the routed
    experts when they are fused 3-D parameters and a router that is not an nn.Linear
    (bitsandbytes replaces only nn.Linear modules, see calc.arch; gpt-oss's MXFP4 experts are
    dequantised to BF16 for training, calc.arch.EXPERTS_TRAINING_DTYPE). 0 for a dense model."""
    if not arch_mod.is_moe(arch):
        return 0
    router = 0 if arch.router_linear else arch_mod.moe_layers(arch) * arch.hidden * arch.experts
    return min(arch.params, arch_mod.weight_split(arch).experts + router)


def base_weight_bytes(params: int, method: Method, bf16: int = 0) -> int:
    """engine.md section 1; under QLoRA `bf16` of the `params` (moe_bf16_params) stay BF16."""
    if method is Method.QLORA:
        return _round(Fraction(NF4_BYTES_PER_PARAM) * (params - bf16)) + bf16 * BF16_BYTES
    return params * BF16_BYTES


def moe_layer_act_bytes_per_token(arch: Architecture) -> int:
    """The textbook's bytes per token of one mixture-of-experts layer without checkpointing.
    Korthikanti et al. 2022 (section 4.1) split the 34 bytes per hidden unit into attention 11,
    layer norms 4 and MLP 19, where the MLP's 19 are its input (2), the dropout mask (1) and 16
    that scale with the MLP's width (the 4h-wide first output and GeLU input, 2 + 2 bytes per
    unit of 4h). A token passes through `experts_active` routed experts and the shared ones,
    w = (experts_active + shared_experts) x expert_ffn units wide: 18 h + 4 w, plus the router's
    probabilities, FP32 (4 bytes per expert: transformers' MoE routers take
    softmax(router_logits, dtype=torch.float), e.g. MixtralTopKRouter, 5.24.0)."""
    width = (arch.experts_active + arch.shared_experts) * arch.expert_ffn
    return (ACT_BYTES - 16) * arch.hidden + 4 * width + FP32_ROUTER_BYTES * arch.experts


def activation_bytes(arch: Architecture, seq: int, batch: int, ckpt: bool) -> int:
    """engine.md section 1: L x s x b x h x 34 (2 with checkpointing). Mixture-of-experts
    layers without checkpointing: `moe_layer_act_bytes_per_token` (what a token passes
    through); with checkpointing only each layer's BF16 input is kept, as for a dense layer."""
    per = ACT_BYTES_CKPT if ckpt else ACT_BYTES
    n_moe = 0 if ckpt else arch_mod.moe_layers(arch)
    dense = (arch.layers - n_moe) * seq * batch * arch.hidden * per
    return dense + n_moe * seq * batch * (moe_layer_act_bytes_per_token(arch) if n_moe else 0)


def estimate_planning(inputs: Inputs) -> Estimate:
    """The textbook formula: base + gradients + optimizer + activations + overhead."""
    t = trainable_params(inputs)
    components = (
        ("base_weights", base_weight_bytes(inputs.arch.params, inputs.method,
                                           moe_bf16_params(inputs.arch))),
        ("gradients", t * GRAD_BYTES),
        ("optimizer", t * OPTIMIZER_BYTES[inputs.optimizer]),
        ("activations", activation_bytes(inputs.arch, inputs.seq, inputs.batch, inputs.ckpt)),
        ("overhead", OVERHEAD_BYTES),
    )
    return Estimate(inputs, t, components)
