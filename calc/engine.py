"""The formulas. Everything here is integer bytes (or exact fractions) until a figure is shown.

Sources for each term are on the site's "How it is calculated" page and in the docstrings below.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Union

from .types import Architecture, GpuKind, Method, Mode, Optimizer, Targets, Unit

if TYPE_CHECKING:  # pragma: no cover
    from .catalog import Gpu

Number = Union[int, float, str, Decimal, Fraction]

GB = 10**9
GIB = 2**30

#: Bytes per weight of the frozen or trained base in BF16/FP16.
BF16_BYTES = 2
#: NF4 with double quantisation: 4 bits + 0.127 bits of constants per weight
#: (Dettmers et al. 2023, QLoRA, section 3) ~ 0.516 bytes, as the spec fixes it.
NF4_BYTES_PER_PARAM = Decimal("0.516")
#: Gradients of the trainable parameters, BF16.
GRAD_BYTES = 2
#: Activation bytes per layer, token and hidden unit: 34 with flash attention
#: (Korthikanti et al. 2022, "Reducing Activation Recomputation", eq. 1 without the 5as/h term),
#: 2 with full recomputation (only each layer's BF16 input is kept).
ACT_BYTES = 34
ACT_BYTES_CKPT = 2
#: CUDA context, allocator reserve and framework buffers.
OVERHEAD_BYTES = 1 * GIB
#: Share of a discrete card's memory a run may plan on (what vLLM-style servers take), and of
#: unified memory (Apple silicon) that training can use.
DISCRETE_USABLE = Fraction(95, 100)
UNIFIED_USABLE = Fraction(3, 4)
#: Extra step time gradient checkpointing costs (one more forward pass per layer, partly
#: hidden by the backward pass): the range practitioners measure, as the content brief gives it.
CKPT_EXTRA_TIME = (Fraction(20, 100), Fraction(30, 100))
#: LoRA's trainable share stays "well under" this bound for the usual ranks.
LORA_SHARE_BOUND = Fraction(1, 100)
#: Fewest-cards search stops here; beyond it the answer is "does not fit".
MAX_CARDS = 4096

#: Optimizer state in bytes per trainable parameter, on top of the BF16 weight and gradient.
#: In mixed precision every optimizer updates an FP32 master copy of the weights (4 bytes)
#: and keeps its own state beside it.
OPTIMIZER_BYTES: dict[Optimizer, int] = {
    # FP32 master (4) + first and second moments in FP32 (4 + 4): ZeRO, Rajbhandari et al. 2019.
    Optimizer.ADAMW: 12,
    # Two FP32 moments, weights updated in 16 bits (no master copy).
    Optimizer.ADAMW_NO_MASTER: 8,
    # Plain PyTorch AdamW on BF16 parameters: both moments are created in the parameter dtype.
    Optimizer.ADAMW_BF16: 4,
    # bitsandbytes AdamW8bit: two 8-bit block-wise quantised moments (1 + 1; the per-block
    # absmax constants add ~0.004 bytes, not counted) + FP32 master (4). Dettmers et al. 2021.
    Optimizer.ADAMW_8BIT: 6,
    # torch.optim.SGD(momentum>0): one FP32 momentum buffer (4) + FP32 master (4).
    Optimizer.SGD_MOMENTUM: 8,
    # torch.optim.SGD without momentum keeps no state: FP32 master only.
    Optimizer.SGD: 4,
    # Adafactor (Shazeer & Stern 2018), no first moment: factored second moment of
    # rows + columns per matrix (well under 0.1 % of the parameters, not counted) + FP32 master.
    Optimizer.ADAFACTOR: 4,
    # Lion (Chen et al. 2023): one momentum buffer (FP32, 4) + FP32 master (4).
    Optimizer.LION: 8,
}

#: Quick full fine-tuning calculator presets (bytes per parameter, all states): the round
#: figures practitioners quote, kept as the spec gives them.
QUICK_PRESETS: dict[str, int] = {"adamw": 16, "adamw-8bit": 12, "sgd-momentum": 8}

#: Rule of thumb: GB per billion parameters and fixed GB, by method.
RULE_OF_THUMB: dict[str, tuple[Fraction, int]] = {
    "lora": (Fraction(2), 3),
    "qlora": (Fraction(6, 10), 4),
    "full": (Fraction(12), 4),  # no FP32 master copy: 2 + 2 + 4 + 4 bytes
    "full-master": (Fraction(16), 4),
}

#: Bytes per adapter parameter, by the adapter's storage precision.
ADAPTER_DTYPE_BYTES: dict[str, int] = {"bf16": 2, "fp32": 4}

COMPONENTS = ("base_weights", "gradients", "optimizer", "activations", "overhead")

# --- detailed mode (mode=detailed): documented terms, off in planning mode ---------------------

#: NF4 storage exactly (Dettmers et al. 2023, QLoRA): 4 bits per weight plus one absmax
#: constant per block of 64 weights. Without double quantisation the constant is FP32
#: (4/64 byte per weight); with it, an 8-bit constant (1/64) plus one FP32 second-level
#: constant per 256 blocks (4/(64 x 256)).
NF4_BLOCK = 64
NF4_DQ_BLOCK = 256
NF4_BYTES_EXACT = Fraction(1, 2) + Fraction(4, NF4_BLOCK)
NF4_BYTES_EXACT_DQ = Fraction(1, 2) + Fraction(1, NF4_BLOCK) + Fraction(4, NF4_BLOCK * NF4_DQ_BLOCK)
#: PEFT keeps adapter weights in FP32 (`autocast_adapter_dtype=True`), so their gradients are
#: FP32 and the optimizer needs no separate master copy; `prepare_model_for_kbit_training`
#: casts every parameter left in 16 bits under QLoRA (embeddings, lm_head, norms) to FP32.
FP32_BYTES = 4
#: Optimizer state without a master copy, for FP32 parameters (bytes per parameter).
#: bitsandbytes' 8-bit state adds one FP32 absmax per block of 256 values per moment.
STATE_BYTES_FP32: dict[Optimizer, Fraction] = {
    Optimizer.ADAMW: Fraction(8),
    Optimizer.ADAMW_NO_MASTER: Fraction(8),
    Optimizer.ADAMW_BF16: Fraction(8),  # moments follow the (FP32) parameter dtype
    Optimizer.ADAMW_8BIT: 2 + Fraction(2 * 4, 256),
    Optimizer.SGD_MOMENTUM: Fraction(4),
    Optimizer.SGD: Fraction(0),
    Optimizer.ADAFACTOR: Fraction(0),
    Optimizer.LION: Fraction(4),
}
#: Logits and loss, per token and vocabulary entry, at the loss's backward pass (Hugging Face's
#: `ForCausalLMLoss`: logits upcast to FP32, then cross-entropy): the BF16 logits the model
#: returns (2) + the FP32 log-softmax kept for the backward pass (4) + the FP32 gradients of the
#: log-probabilities and of the upcast logits, both alive at once (4 + 4). The FP32 upcast
#: itself is freed after the forward pass.
#: Evidence (bench/ground_truth.py, PyTorch MemTracker): a one-layer model with a 128,256-entry
#: vocabulary peaks at 14.07 bytes per token and vocabulary entry of activations plus
#: temporaries, LoRA and full alike. The first version counted the forward peak only
#: (2 + 4 + 4 = 10) and fell short on every long-sequence run.
LOGITS_BYTES = 2 + 4 + 4 + 4
#: Attention scores without flash attention, per score element and layer (a s^2 b per layer).
#: Korthikanti et al. count 5 (BF16 scores 2 + softmax 2 + dropout mask 1); Hugging Face's eager
#: attention keeps the softmax in FP32 (4) and its BF16 copy for the product with v (2), and
#: with attention dropout 0 (Llama's default) no mask: 6. Evidence: eager minus SDPA on
#: Llama 3.2 1B, LoRA, batch 1, length 2048: 5.87 bytes per score element and layer.
ATTN_SCORE_BYTES = 6
#: PEFT's LoRA layers cast their input to the adapter's dtype before `lora_A`; with FP32
#: adapters that is an FP32 copy of every adapted projection's input, kept for the backward
#: pass (bytes per input feature and token): 4 x the sum of d_in over the targeted modules of
#: a layer (q, k and v each make their own copy). Evidence: Llama 3.2 1B, LoRA r = 16 on all
#: linear layers, no checkpointing: 179 kB per layer and token measured (slope between
#: lengths 512 and 2048), against 100 kB from the layer formula alone and 182 kB with this term.
ADAPTER_INPUT_BYTES = 4
#: The optimizer step's temporaries, per trainable parameter: PyTorch's AdamW in its default
#: `foreach` form on CUDA computes sqrt(v) for every parameter at once (one list the size of
#: a moment: 4 bytes in FP32, 2 in BF16) while weights, gradients and state are all alive and
#: the activations are already freed; so the step's peak is weights + gradients + state + this,
#: and the estimate takes the larger of it and the forward/backward peak. Evidence: full
#: fine-tuning, pure BF16, of Llama 3.2 1B and Llama 3.1 8B peaks at the step with 2 bytes per
#: parameter of optimizer temporaries (1B: 6.91 GiB of optimizer memory for 4.60 GiB of moments).
#: Other optimizers: not measured, counted as 0 (bitsandbytes' 8-bit step is a fused kernel;
#: SGD's momentum update is in place).
STEP_TEMP_BYTES: dict[Optimizer, int] = {
    Optimizer.ADAMW: 4,
    Optimizer.ADAMW_NO_MASTER: 4,
    Optimizer.ADAMW_BF16: 2,
}

def _round(x: Fraction | Decimal) -> int:
    """Round half up (away from zero) to a whole number of bytes."""
    f = Fraction(x)
    return math.floor(f + Fraction(1, 2)) if f >= 0 else -math.floor(-f + Fraction(1, 2))


@dataclass(frozen=True)
class Inputs:
    """One configuration of the detailed calculator. Field names are the interface's."""

    arch: Architecture
    model: str = "llama-3.1-8b"
    method: Method = Method.LORA
    rank: int = 16
    targets: Targets = Targets.ALL_LINEAR
    seq: int = 2048
    batch: int = 1
    ckpt: bool = True
    optimizer: Optimizer = Optimizer.ADAMW
    unit: Unit = Unit.GIB
    mode: Mode = Mode.PLANNING
    flash: bool = True  # detailed mode: flash attention (no s x s scores kept)
    dquant: bool = True  # detailed mode: NF4 double quantisation


@dataclass(frozen=True)
class Estimate:
    inputs: Inputs
    trainable_params: int
    components: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        return sum(v for _, v in self.components)

    def get(self, name: str) -> int:
        if name == "total":
            return self.total
        if name == "trainable_params":
            return self.trainable_params
        return dict(self.components)[name]

    @property
    def sharded(self) -> int:
        """What ZeRO-3/FSDP divides among cards: weights, gradients, optimizer state."""
        return sum(v for k, v in self.components if k in SHARDED)

    @property
    def per_card(self) -> int:
        """What every card keeps whatever the number of cards: activations and overhead."""
        return self.total - self.sharded

    def to_json(self) -> dict[str, object]:
        i = self.inputs
        return {
            "model": i.model,
            "method": i.method.value,
            "mode": i.mode.value,
            "total_bytes": self.total,
            "components": dict(self.components),
            "trainable_params": self.trainable_params,
            "params": i.arch.params,
        }


#: Components that shard across cards with ZeRO-3/FSDP.
SHARDED = frozenset({"base_weights", "gradients", "optimizer", "fp32_copies"})


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


def estimate(inputs: Inputs) -> Estimate:
    """Peak training memory on one card (no sharding), by component, in bytes."""
    if inputs.mode is Mode.DETAILED:
        return estimate_detailed(inputs)
    t = trainable_params(inputs)
    components = (
        ("base_weights", base_weight_bytes(inputs.arch.params, inputs.method)),
        ("gradients", t * GRAD_BYTES),
        ("optimizer", t * OPTIMIZER_BYTES[inputs.optimizer]),
        ("activations", activation_bytes(inputs.arch, inputs.seq, inputs.batch, inputs.ckpt)),
        ("overhead", OVERHEAD_BYTES),
    )
    return Estimate(inputs, t, components)


# --- which GPUs fit -------------------------------------------------------------------------


@dataclass(frozen=True)
class GpuFit:
    gpu: "Gpu"
    usable: int  # bytes a run may plan on
    fits: bool  # on one card
    cards: int | None  # fewest cards with ZeRO-3/FSDP sharding; None: no number of cards fits


def usable_bytes(gpu: "Gpu") -> int:
    share = UNIFIED_USABLE if gpu.kind is GpuKind.UNIFIED else DISCRETE_USABLE
    return gpu.memory_bytes * share.numerator // share.denominator


def fewest_cards(sharded: int, per_card: int, usable: int) -> int | None:
    """Fewest n with sharded / n + per_card <= usable, or None."""
    room = usable - per_card
    if room <= 0:
        return None
    n = max(1, -(-sharded // room))
    return n if n <= MAX_CARDS else None


def gpu_fit(est: Estimate, gpus: "tuple[Gpu, ...] | None" = None) -> tuple[GpuFit, ...]:
    if gpus is None:
        from .catalog import gpus as catalog_gpus

        gpus = catalog_gpus()
    total, sharded = est.total, est.sharded  # sums: once, not once per card
    out = []
    for g in gpus:
        usable = usable_bytes(g)
        fits, cards = fits_on(total, sharded, usable, g.kind is GpuKind.UNIFIED)
        out.append(GpuFit(g, usable, fits, cards))
    return tuple(out)


def fits_on(total: int, sharded: int, usable: int, unified: bool) -> tuple[bool, int | None]:
    """(fits on one, fewest cards) of one GPU with `usable` bytes, for an estimate's `total`
    and `sharded` bytes: `gpu_fit` without the objects (the worker asks on every edit)."""
    fits = total <= usable
    if unified:  # one machine; no sharding across laptops
        return fits, 1 if fits else None
    return fits, fewest_cards(sharded, total - sharded, usable)


# --- the other calculators --------------------------------------------------------------------


def _fraction(x: Number) -> Fraction:
    return Fraction(str(x)) if isinstance(x, float) else Fraction(x)


def rule_of_thumb(billions: Number, method: str) -> int:
    """Rule-of-thumb memory in bytes (the rule is stated in GB = 10**9 bytes)."""
    per_b, fixed = RULE_OF_THUMB[method]
    return _round((per_b * _fraction(billions) + fixed) * GB)


def quick_full(n_billion: Number, bpp: Number, act_gb: Number) -> int:
    """V [GB] = N [billions] x B [bytes per parameter] + A [GB], returned in bytes."""
    return _round((_fraction(n_billion) * _fraction(bpp) + _fraction(act_gb)) * GB)


def cost(hours: Number, price: Number) -> Decimal:
    """hours x hourly price, to the cent (prices are examples, without VAT)."""
    value = Decimal(str(hours)) * Decimal(str(price))
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


# --- detailed mode ----------------------------------------------------------------------------


def unquantized_params(arch: Architecture) -> int:
    """Parameters bitsandbytes leaves out of 4-bit storage: embeddings, lm_head (unless tied),
    and the RMSNorm weights (two per layer plus the final one)."""
    emb = arch.vocab * arch.hidden * (1 if arch.tied else 2)
    return min(arch.params, emb + (2 * arch.layers + 1) * arch.hidden)


def layer_activation_bytes_per_token(arch: Architecture, seq: int, flash: bool) -> int:
    """Bytes one Llama-style layer keeps for the backward pass, per token, in BF16 training:
    attention: norm output (2h) + q (2 q_dim) + k and v (2 kv_dim each) + attention output
    (2 q_dim); MLP: norm output (2h) + gate, SiLU(gate), up and their product (4 x 2 ffn);
    the two RMSNorms keep their input upcast to FP32 (2 x 4h). Without flash attention,
    ATTN_SCORE_BYTES x a s per token for the score matrix.
    Checked against bench/ground_truth.py (calc/data/ground_truth.json): with the LoRA term
    below the measured per-layer slope is within a few percent."""
    h, q, kv, f = arch.hidden, arch.q_dim, arch.kv_dim, arch.ffn
    per = 2 * h + 2 * q + 4 * kv + 2 * q + 2 * h + 8 * f + 8 * h
    if not flash:
        per += ATTN_SCORE_BYTES * arch.heads * seq
    return per


def adapter_input_bytes_per_token(arch: Architecture, targets: Targets) -> int:
    """The FP32 copies of the adapted projections' inputs that PEFT keeps per layer and token
    (see ADAPTER_INPUT_BYTES)."""
    shapes = arch.linear_shapes()
    return ADAPTER_INPUT_BYTES * sum(shapes[m][0] for m in targets.modules)


def estimate_detailed(inputs: Inputs) -> Estimate:
    """Planning formula plus the documented terms (see the site's "How it is calculated").

    Changes after the comparison with measured peaks (calc/data/ground_truth.json and
    calc/data/measurements.json; the accuracy page shows both):
    - logits and loss: 14 bytes per token and vocabulary entry, not 10 (LOGITS_BYTES);
    - attention without flash attention: 6 bytes per score element, not 5 (ATTN_SCORE_BYTES);
    - LoRA/QLoRA: PEFT's FP32 copies of every adapted layer's input (ADAPTER_INPUT_BYTES);
    - the optimizer step's temporaries (STEP_TEMP_BYTES) when they exceed the activations and
      logits freed before the step: added to `optimizer`.
    """
    arch, method = inputs.arch, inputs.method
    t = trainable_params(inputs)
    tokens = inputs.seq * inputs.batch
    if method is Method.QLORA:
        keep = unquantized_params(arch)
        nf4 = NF4_BYTES_EXACT_DQ if inputs.dquant else NF4_BYTES_EXACT
        base = _round(nf4 * (arch.params - keep)) + keep * BF16_BYTES
        upcast = keep * (FP32_BYTES - BF16_BYTES)  # prepare_model_for_kbit_training
    else:
        upcast = 0
        base = arch.params * BF16_BYTES
    if method is Method.FULL:
        grads = t * GRAD_BYTES
        opt = OPTIMIZER_BYTES[inputs.optimizer]
        if inputs.optimizer is Optimizer.ADAMW_8BIT:  # 8-bit state with its block constants
            opt = FP32_BYTES + STATE_BYTES_FP32[Optimizer.ADAMW_8BIT]
        optimizer = _round(Fraction(opt) * t)
        copies = 0
        per_layer = layer_activation_bytes_per_token(arch, inputs.seq, inputs.flash)
    else:  # FP32 adapters: FP32 gradients, no separate master copy
        grads = t * FP32_BYTES
        optimizer = _round(STATE_BYTES_FP32[inputs.optimizer] * t)
        copies = t * FP32_BYTES + upcast
        per_layer = (layer_activation_bytes_per_token(arch, inputs.seq, inputs.flash)
                     + adapter_input_bytes_per_token(arch, inputs.targets))
    layer = per_layer * tokens
    if inputs.ckpt:  # every layer's input, plus one layer recomputed during the backward pass
        acts = arch.layers * ACT_BYTES_CKPT * arch.hidden * tokens + layer
    else:
        acts = arch.layers * layer
    logits = tokens * arch.vocab * LOGITS_BYTES
    step = STEP_TEMP_BYTES.get(inputs.optimizer, 0) * t  # foreach AdamW: sqrt(v) for all
    optimizer += max(0, step - acts - logits)  # the step's peak, when above the backward's
    components = (
        ("base_weights", base),
        ("fp32_copies", copies),
        ("gradients", grads),
        ("optimizer", optimizer),
        ("activations", acts),
        ("logits", logits),
        ("overhead", OVERHEAD_BYTES),
    )
    return Estimate(inputs, t, tuple(c for c in components if c[0] != "fp32_copies" or c[1]))
