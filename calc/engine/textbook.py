"""The textbook formula (engine.md section 1, `mode=planning`) and the parameter counts both
models share."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from ..types import Architecture, Method, Targets
from .constants import (ACT_BYTES, ACT_BYTES_CKPT, ADAPTER_DTYPE_BYTES, BF16_BYTES, GRAD_BYTES,
                        NF4_BYTES_PER_PARAM, OPTIMIZER_BYTES, OVERHEAD_BYTES)
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


def lora_trainable_params(arch: Architecture, rank: int, targets: Targets) -> int:
    """Sum over layers and target modules of r x (d_in + d_out), with the real projection shapes
    (grouped-query attention: k and v map h -> kv_heads x head_dim)."""
    shapes = arch.linear_shapes()
    per_layer = sum(lora_layer_params(*shapes[m], rank) for m in targets.modules)
    return arch.layers * per_layer


def max_rank(arch: Architecture, targets: Targets) -> int:
    """The largest rank that still is a low-rank update of every targeted matrix."""
    shapes = arch.linear_shapes()
    return min(min(shapes[m]) for m in targets.modules)


def trainable_params(inputs: Inputs) -> int:
    if inputs.method is Method.FULL:
        return inputs.arch.params
    return lora_trainable_params(inputs.arch, inputs.rank, inputs.targets)


def base_weight_bytes(params: int, method: Method) -> int:
    if method is Method.QLORA:
        return _round(Fraction(NF4_BYTES_PER_PARAM) * params)
    return params * BF16_BYTES


def activation_bytes(arch: Architecture, seq: int, batch: int, ckpt: bool) -> int:
    per = ACT_BYTES_CKPT if ckpt else ACT_BYTES
    return arch.layers * seq * batch * arch.hidden * per


def estimate_planning(inputs: Inputs) -> Estimate:
    """The textbook formula: base + gradients + optimizer + activations + overhead."""
    t = trainable_params(inputs)
    components = (
        ("base_weights", base_weight_bytes(inputs.arch.params, inputs.method)),
        ("gradients", t * GRAD_BYTES),
        ("optimizer", t * OPTIMIZER_BYTES[inputs.optimizer]),
        ("activations", activation_bytes(inputs.arch, inputs.seq, inputs.batch, inputs.ckpt)),
        ("overhead", OVERHEAD_BYTES),
    )
    return Estimate(inputs, t, components)
