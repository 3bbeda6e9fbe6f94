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
    out = []
    for g in gpus:
        usable = usable_bytes(g)
        fits = est.total <= usable
        if g.kind is GpuKind.UNIFIED:  # one machine; no sharding across laptops
            cards = 1 if fits else None
        else:
            cards = fewest_cards(est.sharded, est.per_card, usable)
        out.append(GpuFit(g, usable, fits, cards))
    return tuple(out)


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
