"""The realistic model (engine.md section 6, `mode=detailed`): what a training step of a named
stack allocates, term by term. Each knob of the stack adds or removes a named component:

- `quantized` (QLoRA): which linears are NF4 -> `base_weights`;
- `kbit_upcast` (QLoRA): PEFT's FP32 upcast of what stays out of NF4 -> `kbit_upcast`;
- `adapter_dtype` (LoRA, QLoRA): the adapters' bytes -> `adapter_weights`, `gradients`, and the
  FP32 copies of the adapted layers' inputs -> `adapter_inputs` (FP32 only);
- `opt_step`: `foreach` adds `step_temporaries`; `in-backward` keeps one parameter's gradient
  at a time in `gradients`; `fused` adds nothing;
- `act_offload` (with checkpointing): the checkpointed layer inputs leave `checkpoints` for the
  CPU (`Estimate.cpu_bytes`), but for the layers in flight;
- `loss`: `logits`.

The constants and their evidence are in calc/engine/constants.py; the stacks' values and their
sources in calc/data/stacks.json.
"""

from __future__ import annotations

from fractions import Fraction

from ..types import AdapterDtype, Architecture, Loss, Method, OptStep, Optimizer, Quantized, Targets
from .constants import (ACT_BYTES_CKPT, ADAPTER_DTYPE_BYTES, ADAPTER_INPUT_BYTES, ATTN_SCORE_BYTES,
                        BF16_BYTES, CHUNKED_LOGITS_BYTES, COMPONENTS, FP32_BYTES, FUSED_LOSS_BYTES,
                        GRAD_BYTES, LOGITS_BYTES, NF4_BYTES_EXACT, NF4_BYTES_EXACT_DQ,
                        OFFLOAD_RESIDENT_LAYERS, OPTIMIZER_BYTES, OVERHEAD_BYTES,
                        REALISTIC_COMPONENTS, STATE_BYTES_FP32, STEP_TEMP_BYTES,
                        adapter_state_bytes)
from .model import Estimate, Inputs
from .textbook import _round, trainable_params


def unquantized_params(arch: Architecture, quantized: Quantized = Quantized.ALL_LINEAR,
                       targets: Targets = Targets.ALL_LINEAR) -> int:
    """Parameters left out of 4-bit storage: embeddings, lm_head (unless tied) and the RMSNorm
    weights (two per layer plus the final one), which bitsandbytes through Transformers keeps
    (its quantizer skips the lm_head and converts only linear layers); with
    `quantized=adapted` also every linear layer without an adapter."""
    keep = arch.vocab * arch.hidden * (1 if arch.tied else 2) + (2 * arch.layers + 1) * arch.hidden
    if quantized is Quantized.ADAPTED:
        shapes = arch.linear_shapes()
        keep += arch.layers * sum(d_in * d_out for m, (d_in, d_out) in shapes.items()
                                  if m not in targets.modules)
    return min(arch.params, keep)


def layer_activation_bytes_per_token(arch: Architecture, seq: int, flash: bool) -> int:
    """Bytes one Llama-style layer keeps for the backward pass, per token, in BF16 training:
    attention: norm output (2h) + q (2 q_dim) + k and v (2 kv_dim each) + attention output
    (2 q_dim); MLP: norm output (2h) + gate, SiLU(gate), up and their product (4 x 2 ffn);
    the two RMSNorms keep their input upcast to FP32 (2 x 4h). Without flash attention,
    ATTN_SCORE_BYTES x a s per token for the score matrix.
    Checked against bench/ground_truth.py (calc/data/ground_truth.json): with the adapter input
    copies the measured per-layer slope is within a few percent."""
    h, q, kv, f = arch.hidden, arch.q_dim, arch.kv_dim, arch.ffn
    per = 2 * h + 2 * q + 4 * kv + 2 * q + 2 * h + 8 * f + 8 * h
    if not flash:
        per += ATTN_SCORE_BYTES * arch.heads * seq
    return per


def adapter_input_bytes_per_token(arch: Architecture, targets: Targets) -> int:
    """The FP32 copies of the adapted projections' inputs that PEFT keeps per layer and token
    with FP32 adapters (see ADAPTER_INPUT_BYTES)."""
    shapes = arch.linear_shapes()
    return ADAPTER_INPUT_BYTES * sum(shapes[m][0] for m in targets.modules)


def largest_trainable_tensor(inputs: Inputs) -> int:
    """Elements of the largest trainable tensor: what `opt_step=in-backward` keeps of the
    gradients (each one is stepped and freed as soon as it is complete)."""
    arch = inputs.arch
    shapes = arch.linear_shapes()
    if inputs.method is Method.FULL:
        return max(arch.vocab * arch.hidden, *(d_in * d_out for d_in, d_out in shapes.values()))
    return inputs.rank * max(max(shapes[m]) for m in inputs.targets.modules)


def logits_bytes(loss: Loss, arch: Architecture, tokens: int) -> int:
    """The logits and loss buffer at its peak (LOGITS_BYTES, CHUNKED_LOGITS_BYTES,
    FUSED_LOSS_BYTES)."""
    if loss is Loss.FULL:
        return tokens * arch.vocab * LOGITS_BYTES
    if loss is Loss.CHUNKED:
        return _round(CHUNKED_LOGITS_BYTES * tokens * arch.vocab)
    return tokens * arch.hidden * FUSED_LOSS_BYTES


def step_temp_per_param(optimizer: Optimizer, param_bytes: int) -> int:
    """The foreach step's temporary list, bytes per trainable parameter: one moment's size."""
    if optimizer is Optimizer.ADAMW_BF16:
        return param_bytes  # the moments follow the parameter's dtype
    return STEP_TEMP_BYTES.get(optimizer, 0)


def full_state_bytes(optimizer: Optimizer) -> Fraction:
    """Optimizer state per parameter of full fine-tuning (BF16 weights): the textbook's bytes,
    with the 8-bit state's block constants counted."""
    if optimizer is Optimizer.ADAMW_8BIT:
        return FP32_BYTES + STATE_BYTES_FP32[Optimizer.ADAMW_8BIT]
    return Fraction(OPTIMIZER_BYTES[optimizer])


def estimate_realistic(inputs: Inputs) -> Estimate:
    """Peak memory of one training step on one card, by named component (module docstring)."""
    arch, method, k = inputs.arch, inputs.method, inputs.knobs
    t = trainable_params(inputs)
    tokens = inputs.seq * inputs.batch
    parts: dict[str, int] = {}

    # model states
    if method is Method.QLORA:
        assert k.quantized is not None
        keep = unquantized_params(arch, k.quantized, inputs.targets)
        nf4 = NF4_BYTES_EXACT_DQ if inputs.dquant else NF4_BYTES_EXACT
        parts["base_weights"] = _round(nf4 * (arch.params - keep)) + keep * BF16_BYTES
        if k.kbit_upcast:  # prepare_model_for_kbit_training: BF16 -> FP32
            parts["kbit_upcast"] = keep * (FP32_BYTES - BF16_BYTES)
    else:
        parts["base_weights"] = arch.params * BF16_BYTES
    if method is Method.FULL:
        param_bytes = GRAD_BYTES
        optimizer = _round(full_state_bytes(inputs.optimizer) * t)
    else:
        assert k.adapter_dtype is not None
        param_bytes = ADAPTER_DTYPE_BYTES[k.adapter_dtype.value]
        parts["adapter_weights"] = t * param_bytes
        optimizer = _round(adapter_state_bytes(inputs.optimizer, param_bytes) * t)
    grads_alive = largest_trainable_tensor(inputs) if k.opt_step is OptStep.IN_BACKWARD else t
    parts["gradients"] = grads_alive * param_bytes
    parts["optimizer"] = optimizer

    # what the forward pass keeps for the backward pass
    layer = layer_activation_bytes_per_token(arch, inputs.seq, inputs.flash) * tokens
    copies = 0
    if method is not Method.FULL and k.adapter_dtype is AdapterDtype.FP32:
        copies = adapter_input_bytes_per_token(arch, inputs.targets) * tokens
    cpu = 0
    if inputs.ckpt:  # every layer's input, plus one layer recomputed during the backward pass
        checkpoints = arch.layers * ACT_BYTES_CKPT * arch.hidden * tokens
        if k.act_offload:
            resident = min(arch.layers, OFFLOAD_RESIDENT_LAYERS) * ACT_BYTES_CKPT * arch.hidden * tokens
            cpu, checkpoints = checkpoints - resident, resident
        parts["checkpoints"] = checkpoints
        acts, inputs_copies = layer, copies
    else:
        acts, inputs_copies = arch.layers * layer, arch.layers * copies
    parts["activations"] = acts
    parts["adapter_inputs"] = inputs_copies
    parts["logits"] = logits_bytes(k.loss, arch, tokens)

    # the optimizer step: its temporaries, when they exceed what the backward pass has freed
    if k.opt_step is OptStep.FOREACH:
        step = step_temp_per_param(inputs.optimizer, param_bytes) * t
        freed = sum(parts.get(n, 0) for n in ("checkpoints", "activations", "adapter_inputs", "logits"))
        parts["step_temporaries"] = max(0, step - freed)
    parts["overhead"] = OVERHEAD_BYTES

    components = tuple((n, parts[n]) for n in REALISTIC_COMPONENTS
                       if n in parts and (parts[n] or n in COMPONENTS))
    return Estimate(inputs, t, components, cpu)
