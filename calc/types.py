"""Choices and architecture: the vocabulary every other module of `calc` speaks."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Method(str, Enum):
    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


class Targets(str, Enum):
    """LoRA target-module presets."""

    QV = "qv"  # q_proj + v_proj: PEFT's classic default for Llama
    ATTENTION = "attention"  # q, k, v, o
    ALL_LINEAR = "all-linear"  # q, k, v, o, gate, up, down

    @property
    def modules(self) -> tuple[str, ...]:
        return {
            Targets.QV: ("q", "v"),
            Targets.ATTENTION: ("q", "k", "v", "o"),
            Targets.ALL_LINEAR: ("q", "k", "v", "o", "gate", "up", "down"),
        }[self]


class Optimizer(str, Enum):
    ADAMW = "adamw"
    ADAMW_NO_MASTER = "adamw-no-master"
    ADAMW_BF16 = "adamw-bf16"
    ADAMW_8BIT = "adamw-8bit"
    SGD_MOMENTUM = "sgd-momentum"
    SGD = "sgd"
    ADAFACTOR = "adafactor"
    LION = "lion"


class Unit(str, Enum):
    """Display units for memory. Bytes stay integers inside; only the display changes."""

    GIB = "GiB"
    GB = "GB"
    MIB = "MiB"


class Mode(str, Enum):
    PLANNING = "planning"  # the textbook formula, exactly as engine.md section 1 gives it
    DETAILED = "detailed"  # the realistic model of a named training stack (engine.md section 6)


class Framework(str, Enum):
    """Training stacks (engine.md section 6); each is a cited set of the knobs below
    (calc/data/stacks.json)."""

    HF = "hf"  # Transformers Trainer / TRL + PEFT + bitsandbytes
    TORCHTUNE = "torchtune"
    LITGPT = "litgpt"
    UNSLOTH = "unsloth"
    QLORA_PAPER = "qlora-paper"  # Dettmers et al. 2023, artidoro/qlora


class AdapterDtype(str, Enum):
    """Storage precision of the LoRA adapters."""

    FP32 = "fp32"  # PEFT's autocast_adapter_dtype upcast
    BF16 = "bf16"


class Loss(str, Enum):
    """How the loss meets the vocabulary-sized logits."""

    FULL = "full"  # logits materialised, upcast to FP32 for the loss (Transformers)
    CHUNKED = "chunked"  # BF16 logits kept, upcast and loss chunk by chunk (torchtune, LitGPT)
    FUSED = "fused"  # fused linear cross-entropy: no logits tensor (Unsloth, Liger)


class OptStep(str, Enum):
    """How the optimizer step runs."""

    FUSED = "fused"  # one kernel per group of tensors: no temporaries
    FOREACH = "foreach"  # multi-tensor: temporaries of the size of a moment
    IN_BACKWARD = "in-backward"  # each gradient stepped and freed during the backward pass


class Quantized(str, Enum):
    """Which linear layers QLoRA stores in NF4."""

    ALL_LINEAR = "all-linear"  # every decoder linear (bitsandbytes through Transformers)
    ADAPTED = "adapted"  # only the LoRA-wrapped linears (torchtune before v0.3.0)


class Sharding(str, Enum):
    """How the model states are split across data-parallel GPUs (engine spec section 8; ZeRO
    stages of Rajbhandari et al. 2019). The value's order is the stage number."""

    DDP = "ddp"  # every card holds everything (PyTorch DistributedDataParallel, ZeRO stage 0)
    ZERO1 = "zero1"  # optimizer state sharded
    ZERO2 = "zero2"  # + gradients
    ZERO3 = "zero3"  # + weights; = FSDP full shard

    @property
    def stage(self) -> int:
        return ("ddp", "zero1", "zero2", "zero3").index(self.value)


class Offload(str, Enum):
    """What leaves the GPU for host RAM (DeepSpeed ZeRO-Offload / ZeRO-Infinity to the CPU)."""

    NONE = "none"
    OPTIMIZER = "optimizer"  # optimizer state and step on the CPU (ZeRO stage >= 1)
    OPTIMIZER_PARAMS = "optimizer+params"  # and the weights, fetched layer by layer (ZeRO-3)


class Objective(str, Enum):
    SFT = "sft"  # supervised fine-tuning
    DPO = "dpo"  # direct preference optimisation (Rafailov et al. 2023), as TRL's DPOTrainer runs it


class GpuKind(str, Enum):
    DISCRETE = "discrete"
    UNIFIED = "unified"


@dataclass(frozen=True)
class Architecture:
    """A decoder-only transformer as the engine needs it (Llama-style, gated MLP).

    The fields after `tied` describe mixture-of-experts and multi-head latent attention; their
    defaults (0, `moe_every` 1) mean a dense model with standard attention, so a dense
    architecture written with the first nine fields is exactly what it was before they existed.
    Shapes, parameter counts and LoRA targets built from them are in `calc.arch`.
    """

    params: int  # total parameters, from the model's own published count
    layers: int
    hidden: int
    ffn: int  # dense MLP size (the dense layers of a mixture-of-experts model)
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool
    # mixture-of-experts (0 = dense)
    experts: int = 0  # routed experts per MoE layer
    experts_active: int = 0  # routed experts per token (top-k)
    expert_ffn: int = 0  # each routed expert's FFN size
    shared_experts: int = 0  # always-active experts of size expert_ffn
    dense_layers: int = 0  # leading dense layers (DeepSeek first_k_dense_replace)
    moe_every: int = 1  # layer i (from dense_layers on) is MoE when (i + 1) % moe_every == 0
    # multi-head latent attention (0 = standard attention)
    q_lora_rank: int = 0  # 0: no query compression (q_proj), else q_a_proj / q_b_proj
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    # how the checkpoint's modeling code stores the routed experts (see calc.arch.lora_modules)
    experts_fused: bool = True  # one 3-D nn.Parameter per projection, not one nn.Linear each
    router_linear: bool = False  # the router is an nn.Linear (Llama 4), so all-linear adapts it
    fused_qkv: bool = False  # Phi-3/Phi-4: one qkv_proj and one gate_up_proj per layer

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    def linear_shapes(self) -> dict[str, tuple[int, int]]:
        """(d_in, d_out) of each linear projection of one layer, by module short name."""
        h = self.hidden
        return {
            "q": (h, self.q_dim),
            "k": (h, self.kv_dim),
            "v": (h, self.kv_dim),
            "o": (self.q_dim, h),
            "gate": (h, self.ffn),
            "up": (h, self.ffn),
            "down": (self.ffn, h),
        }
