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
- `loss`: `logits`;
- `compile` (torch.compile on the model and the loss): the loss's share of `logits` (the
  compiled cross-entropy keeps BF16 logits, or the FP32 ones a model returns itself); the
  compiled layers' own fusion is not modelled;
- the stack's facts (calc/data/stacks.json `facts`, no knob): `lora_dropout` (the dropout mask
  and the dropped copy of each adapted module's input) and `kbit_saves_input` (the inputs the
  old bitsandbytes 4-bit matmul keeps) -> `activations`, per layer as the layers' own;
  `drops_output_before_backward` (with checkpointing): the loss's buffers and the recomputed
  layer are never alive together, the smaller leaves the peak for `Estimate.off_peak`;
  `kbit_output_layer` (QLoRA): the output layer in NF4 -> `base_weights`, and its dequantized
  copies at the loss -> `logits`; `fp32_logits_output`: a compiled `loss=full` keeps the FP32
  logits the model returns -> `logits`; `keeps_previous_graph` (with `kbit_saves_input`): the
  previous step's kept 4-bit-layer inputs during the next forward pass -> `previous_step`.

The gradients and the loss (`grad_accum`): with gradient accumulation (grad_accum > 1) the
previous micro-batches' gradients are alive while the next one's activations and loss buffers
are, so they are counted with them. A run that steps after every micro-batch (grad_accum = 1,
the Trainer's default) and frees its gradients with the step (zero_grad(set_to_none=True))
allocates them in the backward pass, as the activations are freed: `gradients` then holds only
what they add beyond the freed (DEFAULT_GRAD_ACCUM has the evidence). The same holds for
`opt_step=in-backward`, whatever grad_accum (torchtune's recipes refuse accumulation with it),
with one parameter's gradient alive at a time. After the loss, the end of the backward pass
and the optimizer step free the activations: what they hold beyond them is counted only where
it is larger (`step_temporaries`: foreach's temporaries; in `gradients`: the accumulation of a
tied embedding's gradient, TIED_GRAD_COPIES, and with checkpointing the first layer recomputed
beside nearly every gradient).

The constants and their evidence are in calc/engine/constants.py; the stacks' values and their
sources in calc/data/stacks.json.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from .. import arch as arch_mod
from ..types import (AdapterDtype, Architecture, Framework, Loss, Method, OptStep, Optimizer,
                     Quantized, Targets)
from .constants import (ACT_BYTES_CKPT, ADAPTER_DTYPE_BYTES, ADAPTER_INPUT_BYTES, ATTN_SCORE_BYTES,
                        BF16_BYTES, CHUNKED_LOGITS_BYTES, COMPILED_CHUNKED_LOGITS_BYTES,
                        COMPILED_FP32_LOGITS_BYTES, COMPILED_LOGITS_BYTES, COMPONENTS, DROPOUT_MASK_BYTES,
                        FP32_BYTES, FUSED_LOSS_BYTES, GRAD_BYTES, KBIT_INPUT_BYTES, LOGITS_BYTES,
                        LOSS_SIDE, RECOMPUTE_SIDE,
                        NF4_BYTES_EXACT, NF4_BYTES_EXACT_DQ, OFFLOAD_RESIDENT_LAYERS,
                        OPTIMIZER_BYTES, OVERHEAD_BYTES, PREVIOUS_STEP_LOGITS_BYTES,
                        REALISTIC_COMPONENTS, STATE_BYTES_FP32,
                        STEP_TEMP_BYTES, TIED_GRAD_COPIES, KBIT_OUTPUT_DEQUANT_BYTES,
                        adapter_state_bytes)
from .model import Estimate, Inputs
from .stacks import stack
from .textbook import (_round, lora_experts, moe_bf16_params, plain_layers, stack_arch,
                       trainable_params)


def _layer(arch: Architecture, moe: bool) -> Architecture:
    """One layer of `arch` as a one-layer architecture: a mixture-of-experts layer, or (moe
    False) a dense one, so that calc.arch's per-model counts give per-layer figures."""
    if moe:
        return replace(arch, layers=1, dense_layers=0, moe_every=1)
    return replace(arch, layers=1, experts=0, experts_active=0, expert_ffn=0, shared_experts=0,
                   dense_layers=0, moe_every=1)


def _layer_kinds(arch: Architecture) -> tuple[tuple[bool, int], ...]:
    """(moe, how many layers) for each kind of layer the model has."""
    n_moe = arch_mod.moe_layers(arch)
    return tuple((moe, n) for moe, n in ((False, arch.layers - n_moe), (True, n_moe)) if n)


def _adapted_linear(arch: Architecture, targets: Targets, experts: bool | None) -> int:
    """Weights of the nn.Linear modules LoRA wraps (fused 3-D experts are not nn.Linear)."""
    return sum(m.count * m.d_in * m.d_out for m in arch_mod.lora_modules(arch, targets, experts=experts)
               if not (arch.experts_fused and m.name.startswith("experts.")))


def unquantized_params(arch: Architecture, quantized: Quantized = Quantized.ALL_LINEAR,
                       targets: Targets = Targets.ALL_LINEAR, experts: bool | None = None) -> int:
    """Parameters left out of 4-bit storage: embeddings, lm_head (unless tied) and the RMSNorm
    weights (two per layer plus the final one), which bitsandbytes through Transformers keeps
    (its quantizer skips the lm_head and converts only linear layers); on a mixture-of-experts
    model also the routed experts when they are fused 3-D parameters and a router that is not an
    nn.Linear (bitsandbytes replaces only modules whose type is nn.Linear: calc.arch's module
    docstring, transformers 5.24.0 integrations/bitsandbytes.py; calc.arch.weight_split); with
    `quantized=adapted` also every linear layer without an adapter."""
    keep = arch.vocab * arch.hidden * (1 if arch.tied else 2) + (2 * arch.layers + 1) * arch.hidden
    keep += moe_bf16_params(arch)
    if quantized is Quantized.ADAPTED:
        keep += arch_mod.weight_split(arch).linear - _adapted_linear(arch, targets, experts)
    return min(arch.params, keep)


def _attention_bytes(arch: Architecture) -> int:
    """Per token, BF16: the attention's norm output (2h), q, k and v, the attention output;
    latent attention (DeepseekV3Attention) keeps its own shapes: q and k of heads x
    (nope + rope), v and the output of heads x v_head_dim, and the compressed kv (and q) with
    their RMSNorm (BF16 projection output, FP32 norm input, BF16 norm output: 2 + 4 + 2)."""
    h = arch.hidden
    if not arch_mod.is_mla(arch):
        return 2 * h + 2 * arch.q_dim + 4 * arch.kv_dim + 2 * arch.q_dim
    qk = arch.heads * (arch.qk_nope_head_dim + arch.qk_rope_head_dim)
    v = arch.heads * arch.v_head_dim
    latent = 2 * (arch.kv_lora_rank + arch.qk_rope_head_dim) + 6 * arch.kv_lora_rank + 8 * arch.q_lora_rank
    return 2 * h + 2 * qk + 2 * qk + 2 * v + 2 * v + latent


def _moe_mlp_bytes(arch: Architecture) -> int:
    """Per token, one mixture-of-experts block (transformers 5.24.0 MixtralSparseMoeBlock and
    the families that share its experts loop): the norm output (2h); the router's FP32
    probabilities (softmax(router_logits, dtype=torch.float): 4 per expert); per routed expert
    the token passes through, the dense MLP's gate, SiLU(gate), up and product (4 x 2 x
    expert_ffn) and the expert's output, kept for its product with the routing weight (2h);
    the shared experts as one dense MLP of shared_experts x expert_ffn."""
    h, f = arch.hidden, arch.expert_ffn
    return (2 * h + FP32_BYTES * arch.experts + arch.experts_active * (8 * f + 2 * h)
            + 8 * f * arch.shared_experts)


def layer_activation_bytes_per_token(arch: Architecture, seq: int, flash: bool, moe: bool = False) -> int:
    """Bytes one Llama-style layer keeps for the backward pass, per token, in BF16 training:
    attention: norm output (2h) + q (2 q_dim) + k and v (2 kv_dim each) + attention output
    (2 q_dim); MLP: norm output (2h) + gate, SiLU(gate), up and their product (4 x 2 ffn);
    the two RMSNorms keep their input upcast to FP32 (2 x 4h). Without flash attention,
    ATTN_SCORE_BYTES x a s per token for the score matrix. `moe`: a mixture-of-experts layer,
    whose MLP part is `_moe_mlp_bytes` (what a token passes through); latent attention:
    `_attention_bytes`.
    Checked against bench/ground_truth.py (calc/data/ground_truth.json): with the adapter input
    copies the measured per-layer slope is within a few percent."""
    h, f = arch.hidden, arch.ffn
    mlp = _moe_mlp_bytes(arch) if moe else 2 * h + 8 * f
    per = _attention_bytes(arch) + mlp + 8 * h
    if not flash:
        per += ATTN_SCORE_BYTES * arch.heads * seq
    return per


def adapter_input_bytes_per_token(arch: Architecture, targets: Targets, moe: bool = False,
                                  experts: bool | None = None) -> int:
    """The FP32 copies of the adapted projections' inputs that PEFT keeps per layer and token
    with FP32 adapters (see ADAPTER_INPUT_BYTES): one per adapted module a token passes
    through (calc.arch.LoraModule.per_token; on a mixture-of-experts layer, `moe`, the experts
    it is routed to)."""
    if plain_layers(arch):
        shapes = arch.linear_shapes()
        return ADAPTER_INPUT_BYTES * sum(shapes[m][0] for m in targets.modules)
    mods = arch_mod.lora_modules(_layer(arch, moe), targets, experts=experts)
    return ADAPTER_INPUT_BYTES * sum(m.d_in * m.per_token for m in mods)


#: Stacks whose LoRA wraps q, k and v as one fused linear layer with one dropout on its input:
#: LitGPT (litgpt/lora.py LoRAQKVLinear: after_A = F.linear(self.lora_dropout(x), self.lora_A),
#: commit 00af8b0d).
ONE_QKV_DROPOUT = frozenset({Framework.LITGPT})
_QKV = ("q_proj", "k_proj", "v_proj")


def dropout_bytes_per_token(inputs: Inputs, arch: Architecture, moe: bool = False) -> int:
    """With the stack fact `lora_dropout`: per layer and token, the dropout mask of each adapted
    module's input (DROPOUT_MASK_BYTES per input feature) and, with BF16 adapters, the dropped
    copy LoRA's A matrix keeps (with FP32 adapters it replaces the FP32 copy `adapter_inputs`
    counts). On a stack with one fused q, k, v linear (ONE_QKV_DROPOUT) their shared input has
    one dropout."""
    k = inputs.knobs
    if inputs.method is Method.FULL or not stack(inputs.framework).fact("lora_dropout"):
        return 0
    assert k.adapter_dtype is not None
    per = DROPOUT_MASK_BYTES + (0 if k.adapter_dtype is AdapterDtype.FP32
                                else ADAPTER_DTYPE_BYTES[k.adapter_dtype.value])
    mods = arch_mod.lora_modules(_layer(arch, moe), inputs.targets, experts=lora_experts(inputs))
    features, qkv_seen = 0, False
    for m in mods:
        if inputs.framework in ONE_QKV_DROPOUT and m.name in _QKV:
            if qkv_seen:
                continue
            qkv_seen = True
        features += m.d_in * m.per_token
    return per * features


def kbit_input_bytes_per_token(inputs: Inputs, arch: Architecture, moe: bool = False) -> int:
    """With the stack fact `kbit_saves_input` (QLoRA on bitsandbytes before 0.43.2): the inputs
    the 4-bit matmul keeps that nothing else keeps, per layer and token (KBIT_INPUT_BYTES): the
    two normed layer inputs and down_proj's input. A mixture-of-experts layer's experts are not
    4-bit linear layers in calc's layout: its attention's input only."""
    if inputs.method is not Method.QLORA or not stack(inputs.framework).fact("kbit_saves_input"):
        return 0
    if moe:
        return KBIT_INPUT_BYTES * arch.hidden
    return KBIT_INPUT_BYTES * (2 * arch.hidden + arch.ffn)


def previous_step_bytes(inputs: Inputs, arch: Architecture, tokens: int, loss_logits: int) -> int:
    """With the stack facts `keeps_previous_graph` and `kbit_saves_input` (QLoRA): what the
    moment of the output layer's last chunk holds beyond the loss's buffers `loss_logits` (see
    PREVIOUS_STEP_LOGITS_BYTES): the previous step's kept inputs of every 4-bit layer (a
    mixture-of-experts layer: its attention's, the experts' are not counted), the previous FP32
    logits and this step's BF16 chunks. A 4-bit output layer's dequantized copies are alive at
    both moments, so they are left out of both."""
    s = stack(inputs.framework)
    if inputs.method is not Method.QLORA or not (s.fact("keeps_previous_graph")
                                                 and s.fact("kbit_saves_input")):
        return 0
    h = arch.hidden
    kept = sum(n * BF16_BYTES * (2 * h + arch.q_dim + (0 if moe else arch.ffn))
               for moe, n in _layer_kinds(arch)) * tokens + BF16_BYTES * h * tokens
    return max(0, kept + PREVIOUS_STEP_LOGITS_BYTES * tokens * arch.vocab - loss_logits)


def largest_trainable_tensor(inputs: Inputs) -> int:
    """Elements of the largest trainable tensor: what `opt_step=in-backward` keeps of the
    gradients (each one is stepped and freed as soon as it is complete). Fused 3-D experts are
    one tensor of every expert (full fine-tuning), and PEFT's ParamWrapper adapts one with
    lora_A of r x E rows and lora_B of r x E columns."""
    arch = stack_arch(inputs)
    if plain_layers(arch):
        shapes = arch.linear_shapes()
        if inputs.method is Method.FULL:
            return max(arch.vocab * arch.hidden, *(d_in * d_out for d_in, d_out in shapes.values()))
        return inputs.rank * max(max(shapes[m]) for m in inputs.targets.modules)

    def grouped(name: str) -> int:
        return arch.experts if arch.experts_fused and name.startswith("experts.") else 1

    if inputs.method is Method.FULL:
        mods = arch_mod.lora_modules(arch, Targets.ALL_LINEAR, experts=True)
        return max(arch.vocab * arch.hidden,
                   *(grouped(m.name) * m.d_in * m.d_out for m in mods))
    mods = arch_mod.lora_modules(arch, inputs.targets, experts=lora_experts(inputs))
    return inputs.rank * max(grouped(m.name) * max(m.d_in, m.d_out) for m in mods)


def logits_bytes(loss: Loss, arch: Architecture, tokens: int, compiled: bool = False,
                 fp32_output: bool = False) -> int:
    """The logits and loss buffer at its peak (LOGITS_BYTES, CHUNKED_LOGITS_BYTES,
    FUSED_LOSS_BYTES; `compiled`: the loss under torch.compile, COMPILED_LOGITS_BYTES,
    COMPILED_CHUNKED_LOGITS_BYTES, or COMPILED_FP32_LOGITS_BYTES where the model returns FP32
    logits itself, `fp32_output`)."""
    if loss is Loss.FULL:
        if compiled:
            per = COMPILED_FP32_LOGITS_BYTES if fp32_output else COMPILED_LOGITS_BYTES
            return tokens * arch.vocab * per
        return tokens * arch.vocab * LOGITS_BYTES
    if loss is Loss.CHUNKED:
        per_entry = COMPILED_CHUNKED_LOGITS_BYTES if compiled else CHUNKED_LOGITS_BYTES
        return _round(per_entry * tokens * arch.vocab)
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


def trainable_bytes(inputs: Inputs) -> int:
    """Bytes per trainable parameter, and per element of its gradient: BF16 weights in full
    fine-tuning, the adapters' dtype (`adapter_dtype`) with LoRA and QLoRA."""
    if inputs.method is Method.FULL:
        return GRAD_BYTES
    assert inputs.knobs.adapter_dtype is not None
    return ADAPTER_DTYPE_BYTES[inputs.knobs.adapter_dtype.value]


def gradient_bytes(inputs: Inputs) -> int:
    """The gradients a step allocates at once: every trainable parameter's, or with
    `opt_step=in-backward` the largest tensor's (its post-accumulate hook steps and frees each
    one). Whether they are alive at the loss depends on `grad_accum` (module docstring); the
    strategies of calc.scale that copy or shard them (DDP's buckets, FSDP's unsharded unit)
    read this, not the `gradients` component."""
    n = largest_trainable_tensor(inputs) if inputs.knobs.opt_step is OptStep.IN_BACKWARD \
        else trainable_params(inputs)
    return n * trainable_bytes(inputs)


def _peak_of_loss_or_recompute(parts: dict[str, int]) -> tuple[tuple[str, int], ...]:
    """With gradient checkpointing and the stack fact `drops_output_before_backward`, keep in
    `parts` the larger of the two moments of LOSS_SIDE and RECOMPUTE_SIDE, so that the
    breakdown is what the peak holds; the other side's components become 0 in `parts` and are
    returned (Estimate.off_peak)."""
    loss = sum(parts.get(n, 0) for n in LOSS_SIDE)
    layer = sum(parts.get(n, 0) for n in RECOMPUTE_SIDE)
    off = RECOMPUTE_SIDE if loss >= layer else LOSS_SIDE
    moved = tuple((name, parts[name]) for name in off if parts.get(name))
    for name, _ in moved:
        parts[name] = 0
    return moved


def _first_layer_recomputed(inputs: Inputs, arch: Architecture, parts: dict[str, int],
                            off_peak: tuple[tuple[str, int], ...], grads: int) -> int:
    """With checkpointing and gradients that do not accumulate, what the last recomputation of
    the backward pass holds (the first layer's, at its end): that layer (RECOMPUTE_SIDE, at
    the peak or off it) and its checkpointed input, beside every gradient allocated by then:
    all but an untied embedding's, which comes after it (with `opt_step=in-backward`, `grads`
    is the one alive). Counting the first layer's own gradients as well keeps it on the safe
    side by one layer's."""
    layer = sum(dict(off_peak).get(n, 0) + parts.get(n, 0) for n in RECOMPUTE_SIDE)
    tokens = inputs.seq * inputs.batch
    embedding = arch.vocab * arch.hidden * trainable_bytes(inputs) \
        if inputs.method is Method.FULL and not arch.tied \
        and inputs.knobs.opt_step is not OptStep.IN_BACKWARD else 0
    return layer + ACT_BYTES_CKPT * arch.hidden * tokens + grads - embedding


def estimate_realistic(inputs: Inputs) -> Estimate:
    """Peak memory of one training step on one card, by named component (module docstring)."""
    arch, method, k = stack_arch(inputs), inputs.method, inputs.knobs
    t = trainable_params(inputs)
    tokens = inputs.seq * inputs.batch
    parts: dict[str, int] = {}
    kbit_head = False

    # model states
    if method is Method.QLORA:
        assert k.quantized is not None
        keep = unquantized_params(arch, k.quantized, inputs.targets, lora_experts(inputs))
        kbit_head = stack(inputs.framework).fact("kbit_output_layer") and not arch.tied
        if kbit_head:  # the output layer in NF4 too (stacks.json facts)
            keep -= arch.vocab * arch.hidden
        nf4 = NF4_BYTES_EXACT_DQ if inputs.dquant else NF4_BYTES_EXACT
        parts["base_weights"] = _round(nf4 * (arch.params - keep)) + keep * BF16_BYTES
        if k.kbit_upcast:  # prepare_model_for_kbit_training: BF16 -> FP32
            parts["kbit_upcast"] = keep * (FP32_BYTES - BF16_BYTES)
    else:
        parts["base_weights"] = arch.params * BF16_BYTES
    param_bytes = trainable_bytes(inputs)
    if method is Method.FULL:
        optimizer = _round(full_state_bytes(inputs.optimizer) * t)
    else:
        parts["adapter_weights"] = t * param_bytes
        optimizer = _round(adapter_state_bytes(inputs.optimizer, param_bytes) * t)
    grads = gradient_bytes(inputs)
    parts["optimizer"] = optimizer

    # what the forward pass keeps for the backward pass
    kinds = _layer_kinds(arch)  # dense and mixture-of-experts layers
    fp32_copies = method is not Method.FULL and k.adapter_dtype is AdapterDtype.FP32
    per_kind = [(n, (layer_activation_bytes_per_token(arch, inputs.seq, inputs.flash, moe)
                     + dropout_bytes_per_token(inputs, arch, moe)
                     + kbit_input_bytes_per_token(inputs, arch, moe)) * tokens,
                 adapter_input_bytes_per_token(arch, inputs.targets, moe, lora_experts(inputs)) * tokens
                 if fp32_copies else 0) for moe, n in kinds]
    cpu = 0
    if inputs.ckpt:  # every layer's input, plus one layer recomputed during the backward pass
        checkpoints = arch.layers * ACT_BYTES_CKPT * arch.hidden * tokens
        if k.act_offload:
            resident = min(arch.layers, OFFLOAD_RESIDENT_LAYERS) * ACT_BYTES_CKPT * arch.hidden * tokens
            cpu, checkpoints = checkpoints - resident, resident
        parts["checkpoints"] = checkpoints
        # the layer recomputed at a time: the largest kind
        acts, inputs_copies = max((a + c, a, c) for _, a, c in per_kind)[1:]
    else:
        acts = sum(n * a for n, a, _ in per_kind)
        inputs_copies = sum(n * c for n, _, c in per_kind)
    parts["activations"] = acts
    parts["adapter_inputs"] = inputs_copies
    parts["logits"] = logits_bytes(k.loss, arch, tokens, bool(k.compile),
                                   stack(inputs.framework).fact("fp32_logits_output"))
    parts["previous_step"] = previous_step_bytes(inputs, arch, tokens, parts["logits"])
    if method is Method.QLORA and kbit_head:  # its FP16 and BF16 dequantized copies
        parts["logits"] += KBIT_OUTPUT_DEQUANT_BYTES * arch.vocab * arch.hidden
    off_peak = _peak_of_loss_or_recompute(parts) if inputs.ckpt and \
        stack(inputs.framework).fact("drops_output_before_backward") else ()

    # after the loss: what the end of the backward pass and the optimizer step hold beyond
    # the activations they free (module docstring)
    freed = sum(parts.get(n, 0) for n in ("checkpoints", "activations", "adapter_inputs", "logits",
                                           "previous_step"))
    tied = TIED_GRAD_COPIES * arch.vocab * arch.hidden * param_bytes \
        if method is Method.FULL and arch.tied else 0
    step = step_temp_per_param(inputs.optimizer, param_bytes) * t \
        if k.opt_step is OptStep.FOREACH else 0
    # four moments, beyond the model states: the loss (what is freed later, and the gradients
    # only where they accumulate), with checkpointing the first layer's recomputation at the
    # end of the backward pass (_first_layer_recomputed), the end of the backward pass (the
    # gradients and a tied embedding's accumulation) and the foreach step (the gradients and
    # its list)
    accumulating = inputs.grad_accum > 1 and k.opt_step is not OptStep.IN_BACKWARD
    loss = freed + (grads if accumulating else 0)
    backward = max(loss, grads + tied, _first_layer_recomputed(inputs, arch, parts, off_peak, grads)
                   if inputs.ckpt and not accumulating else 0)
    parts["gradients"] = backward - freed
    if k.opt_step is OptStep.FOREACH:
        parts["step_temporaries"] = max(0, grads + step - backward)
    parts["overhead"] = OVERHEAD_BYTES

    components = tuple((n, parts[n]) for n in REALISTIC_COMPONENTS
                       if n in parts and (parts[n] or n in COMPONENTS))
    return Estimate(inputs, t, components, cpu, off_peak)
