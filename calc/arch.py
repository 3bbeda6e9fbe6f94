"""Shapes of a decoder layer: mixture-of-experts, latent attention, what LoRA adapts.

Everything here is integer arithmetic on an `Architecture` (calc.types); nothing depends on the
engine, so the engine, the catalog and the config.json reader share one account of a layer.

Sources, all read at a named version:
- transformers 5.24.0 (the stack of calc/data/ground_truth.json), src/transformers/models/:
  `mixtral/modeling_mixtral.py` (MixtralExperts: gate_up_proj (E, 2f, h) and down_proj
  (E, h, f) as nn.Parameter; MixtralTopKRouter.weight (E, h) an nn.Parameter),
  `qwen3_moe/`, `olmoe/`, `deepseek_v2/`, `deepseek_v3/` (the same fused experts and a router
  that is not an nn.Linear; DeepSeek's shared experts are one DeepseekV3MLP of
  moe_intermediate_size x n_shared_experts; layer i is MoE when i >= first_k_dense_replace),
  `llama4/modeling_llama4.py` (Llama4TextExperts fused; Llama4Router *is* an nn.Linear
  subclass; one shared expert of intermediate_size; non-MoE layers use intermediate_size_mlp;
  moe_layers = range(step - 1, layers, step)), `gpt_oss/modeling_gpt_oss.py` (experts fused
  with biases, router weight and bias, attention sinks, biases on q/k/v/o).
  In transformers 4.57.6 Mixtral, Qwen3-MoE, OLMoE and DeepSeek-V2/V3 still had one
  nn.Linear per expert (`experts_fused=False`) and Mixtral/Qwen3-MoE/OLMoE's router `gate`
  was an nn.Linear; gpt-oss and Llama 4 were fused already.
- Multi-head latent attention: `DeepseekV3Attention` (transformers 5.24.0): q_proj
  (h -> heads x (nope + rope)) when q_lora_rank is null, else q_a_proj (h -> q_lora_rank),
  q_a_layernorm (q_lora_rank), q_b_proj (q_lora_rank -> heads x (nope + rope));
  kv_a_proj_with_mqa (h -> kv_lora_rank + rope), kv_a_layernorm (kv_lora_rank),
  kv_b_proj (kv_lora_rank -> heads x (nope + v)), o_proj (heads x v -> h).
- PEFT 0.21.2 (same code in the v0.20.0 tag): `tuners/tuners_utils.py`
  `_maybe_include_all_linear_layers` turns `target_modules="all-linear"` into every
  torch.nn.Linear (and Conv1D) of the model except the output embedding, so an expert or a
  router is adapted only if it is an nn.Linear; `tuners/lora/layer.py` `ParamWrapper` (what
  `target_parameters` builds, PEFT >= 0.17) adapts a 3-D parameter (E, in, out) with
  lora_A = Linear(in, r x E) and lora_B = Linear(r x E, out): r x E x (in + out) parameters,
  the same as adapting each expert alone.
- bitsandbytes through transformers 5.24.0 (`integrations/bitsandbytes.py`
  replace_with_bnb_linear) swaps only modules whose type *is* nn.Linear (or Conv1D) for
  Linear4bit: fused 3-D experts and routers stay in the load dtype under QLoRA.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import Problem
from .types import Architecture, Targets

__all__ = [
    "BOOL_FIELDS",
    "CHECKPOINT_DTYPES",
    "FIELD_LIMITS",
    "EXPERTS_TRAINING_DTYPE",
    "Layout",
    "LoraModule",
    "active_params",
    "attention_shapes",
    "expert_params",
    "is_mla",
    "is_moe",
    "lora_modules",
    "lora_params",
    "moe_layers",
    "params",
    "problems",
    "weight_split",
]

#: Expert storage in a published checkpoint that differs from the training dtype.
#: gpt-oss ships its routed experts in MXFP4, "quantized to 4.25 bits per parameter"
#: (OpenAI, gpt-oss model card, arXiv:2508.10925, section 2): blocks of 32 FP4 values (16 bytes)
#: with one E8M0 scale byte, 17 bytes per 32 parameters; attention, router, embeddings and
#: head stay BF16 (its config.json: quantization_config.modules_to_not_convert).
CHECKPOINT_DTYPES: dict[str, tuple[int, int]] = {"mxfp4": (17, 32)}  # bytes per parameter, n/d
#: What fine-tuning loads those experts as: transformers refuses to train MXFP4
#: (quantizers/quantizer_mxfp4.py `is_trainable` is False, 4.57.6 and 5.24.0: "please consider
#: dequantizing the model first by passing quantization_config=Mxfp4Config(dequantize=True)"),
#: and the OpenAI/Hugging Face fine-tuning cookbook loads gpt-oss-20b with
#: Mxfp4Config(dequantize=True) and torch_dtype=torch.bfloat16
#: (openai-cookbook articles/gpt-oss/fine-tune-transfomers.ipynb). So full fine-tuning, LoRA
#: and QLoRA all hold the experts in BF16: bitsandbytes does not quantise the fused 3-D
#: experts either (see the module docstring), so QLoRA's NF4 covers only the nn.Linear layers.
EXPERTS_TRAINING_DTYPE: dict[str, str] = {"mxfp4": "bf16"}

#: Bounds of the mixture-of-experts and latent-attention fields as interface fields (URL, CLI,
#: JSON): 0 means dense / standard attention. The largest published values are far below them
#: (DeepSeek-V3: 256 experts, 8 active, q_lora_rank 1536).
FIELD_LIMITS: dict[str, tuple[int, int]] = {
    "experts": (0, 4_096), "experts_active": (0, 4_096), "expert_ffn": (0, 4_194_304),
    "shared_experts": (0, 4_096), "dense_layers": (0, 2_000), "moe_every": (1, 2_000),
    "q_lora_rank": (0, 1_048_576), "kv_lora_rank": (0, 1_048_576),
    "qk_rope_head_dim": (0, 16_384), "qk_nope_head_dim": (0, 16_384), "v_head_dim": (0, 16_384),
}
#: The yes/no fields among them.
BOOL_FIELDS: tuple[str, ...] = ("experts_fused", "router_linear", "fused_qkv")

#: Mixture-of-experts fields that a dense model (experts = 0) must leave at their default.
MOE_FIELDS: tuple[str, ...] = ("experts_active", "expert_ffn", "shared_experts", "dense_layers")
#: Latent-attention fields that need kv_lora_rank > 0.
MLA_FIELDS: tuple[str, ...] = ("q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")


@dataclass(frozen=True)
class Layout:
    """The small terms in which a family departs from the plain Llama layout. They only change
    the parameter count (a few per million), so they live with the preset or the config.json
    reader, not in the interface.

    qk_norm: "head" (Qwen3, Gemma 3: one weight of head_dim each for q and k), "full" (OLMo 2,
    OLMoE: q over heads x head_dim, k over kv_heads x head_dim), or "none".
    """

    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: str = "none"
    norms_per_layer: int = 2
    sinks: bool = False  # gpt-oss: one learned logit per head
    router_bias: bool = False  # gpt-oss
    expert_bias: bool = False  # gpt-oss: gate_up (2f) and down (h) biases per expert


PLAIN = Layout()


def is_moe(arch: Architecture) -> bool:
    return arch.experts > 0


def is_mla(arch: Architecture) -> bool:
    return arch.kv_lora_rank > 0


def moe_layers(arch: Architecture) -> int:
    """Number of mixture-of-experts layers: layer i counts when i >= dense_layers and
    (i + 1) % moe_every == 0 (Qwen3-MoE decoder_sparse_step, Llama 4 interleave step)."""
    if not is_moe(arch):
        return 0
    step = max(1, arch.moe_every)
    return sum(1 for i in range(arch.dense_layers, arch.layers) if (i + 1) % step == 0)


def problems(arch: Architecture) -> list[Problem]:
    """What is inconsistent in the mixture-of-experts and latent-attention fields, each
    Problem naming its field (empty when the architecture is consistent):
    expert fields on a dense model, experts_active missing or above experts, expert_ffn
    missing, no MoE layer left after dense_layers / moe_every; latent-attention sizes without
    kv_lora_rank, or kv_lora_rank without them."""
    out: list[Problem] = []
    if not is_moe(arch):
        out += [Problem.of(f, "moe_field_on_dense") for f in MOE_FIELDS if getattr(arch, f)]
        if arch.moe_every != 1:
            out.append(Problem.of("moe_every", "moe_field_on_dense"))
    else:
        if arch.experts_active < 1:
            out.append(Problem.of("experts_active", "required"))
        elif arch.experts_active > arch.experts:
            out.append(Problem.of("experts_active", "experts_active_exceeds", max=arch.experts))
        if arch.expert_ffn < 1:
            out.append(Problem.of("expert_ffn", "required"))
        if arch.dense_layers >= arch.layers:
            out.append(Problem.of("dense_layers", "too_large", max=arch.layers - 1))
        elif moe_layers(arch) == 0:
            out.append(Problem.of("moe_every", "too_large", max=arch.layers - arch.dense_layers))
    if not is_mla(arch):
        out += [Problem.of(f, "mla_field_without_rank") for f in MLA_FIELDS if getattr(arch, f)]
    else:
        out += [Problem.of(f, "required") for f in MLA_FIELDS[1:] if not getattr(arch, f)]
    return out


def attention_shapes(arch: Architecture) -> tuple[tuple[str, int, int], ...]:
    """(module name, d_in, d_out) of each attention projection of one layer."""
    h = arch.hidden
    if is_mla(arch):
        qk = arch.qk_nope_head_dim + arch.qk_rope_head_dim
        q: tuple[tuple[str, int, int], ...]
        if arch.q_lora_rank:
            q = (("q_a_proj", h, arch.q_lora_rank),
                 ("q_b_proj", arch.q_lora_rank, arch.heads * qk))
        else:
            q = (("q_proj", h, arch.heads * qk),)
        return q + (
            ("kv_a_proj_with_mqa", h, arch.kv_lora_rank + arch.qk_rope_head_dim),
            ("kv_b_proj", arch.kv_lora_rank, arch.heads * (arch.qk_nope_head_dim + arch.v_head_dim)),
            ("o_proj", arch.heads * arch.v_head_dim, h),
        )
    return (
        ("q_proj", h, arch.q_dim),
        ("k_proj", h, arch.kv_dim),
        ("v_proj", h, arch.kv_dim),
        ("o_proj", arch.q_dim, h),
    )


def _attention_params(arch: Architecture, layout: Layout) -> int:
    n = sum(d_in * d_out for _, d_in, d_out in attention_shapes(arch))
    if is_mla(arch):
        n += arch.kv_lora_rank + arch.q_lora_rank  # kv_a_layernorm, q_a_layernorm
        return n
    if layout.qkv_bias:
        n += arch.q_dim + 2 * arch.kv_dim
    if layout.o_bias:
        n += arch.hidden
    if layout.qk_norm == "head":
        n += 2 * arch.head_dim
    elif layout.qk_norm == "full":
        n += arch.q_dim + arch.kv_dim
    if layout.sinks:
        n += arch.heads
    return n


def expert_params(arch: Architecture, layout: Layout = PLAIN) -> int:
    """Parameters of one routed expert: gate, up (h x expert_ffn) and down (expert_ffn x h)."""
    n = 3 * arch.hidden * arch.expert_ffn
    if layout.expert_bias:
        n += 2 * arch.expert_ffn + arch.hidden
    return n


def _moe_block_params(arch: Architecture, layout: Layout) -> int:
    h = arch.hidden
    router = h * arch.experts + (arch.experts if layout.router_bias else 0)
    shared = 3 * h * arch.expert_ffn * arch.shared_experts
    return arch.experts * expert_params(arch, layout) + shared + router


def params(arch: Architecture, layout: Layout = PLAIN) -> int:
    """Total parameters from the shapes: embeddings (vocab x hidden, twice unless tied), per
    layer attention + its norms + a dense MLP (3 x hidden x ffn) or a MoE block (every routed
    expert, the shared experts and the router), and the final norm. Rotary embeddings and
    buffers (DeepSeek-V3's e_score_correction_bias) are not parameters."""
    n_moe = moe_layers(arch)
    per_layer = _attention_params(arch, layout) + layout.norms_per_layer * arch.hidden
    dense_mlp = 3 * arch.hidden * arch.ffn
    body = (arch.layers * per_layer + (arch.layers - n_moe) * dense_mlp
            + n_moe * _moe_block_params(arch, layout))
    embeddings = arch.vocab * arch.hidden * (1 if arch.tied else 2)
    return embeddings + body + arch.hidden


def active_params(arch: Architecture, layout: Layout = PLAIN, *, embeddings: bool = True) -> int:
    """Parameters one token passes through: everything but the routed experts it is not sent
    to, i.e. `arch.params` less (experts - experts_active) experts in every MoE layer.

    With `embeddings=True` (the default) the input embedding matrix and the output head both
    count, as in Mistral AI's "12.9B active parameters" for Mixtral 8x7B (mistral.ai/news/
    mixtral-of-experts) and Qwen's "3.3B activated" for Qwen3-30B-A3B. `embeddings=False` leaves
    out the input embedding (a row lookup, not a matrix product) when it is not tied to the
    output head, the convention of OpenAI's gpt-oss model card (arXiv:2508.10925, Table 1:
    5.13B active for gpt-oss-120b). For a dense model it is `arch.params` (less the embedding).
    """
    idle = moe_layers(arch) * max(0, arch.experts - arch.experts_active) * expert_params(arch, layout)
    n = max(0, arch.params - idle)
    if not embeddings and not arch.tied:
        n -= arch.vocab * arch.hidden
    return n


@dataclass(frozen=True)
class WeightSplit:
    """How the parameters are stored, for the bytes of the base weights.

    linear: in nn.Linear modules other than the output head (what bitsandbytes turns into
    NF4 for QLoRA); experts: routed experts stored as fused 3-D parameters (kept in the load
    dtype by bitsandbytes; MXFP4 in the gpt-oss checkpoints); other: embeddings, output head,
    norms, routers that are not nn.Linear, biases of fused experts, sinks."""

    linear: int
    experts: int
    other: int

    @property
    def total(self) -> int:
        return self.linear + self.experts + self.other


def weight_split(arch: Architecture, layout: Layout = PLAIN) -> WeightSplit:
    """`params(arch, layout)` split by storage (see WeightSplit); the parts sum to it."""
    total = params(arch, layout)
    n_moe = moe_layers(arch)
    attn = arch.layers * sum(d_in * d_out for _, d_in, d_out in attention_shapes(arch))
    dense_mlp = (arch.layers - n_moe) * 3 * arch.hidden * arch.ffn
    shared = n_moe * 3 * arch.hidden * arch.expert_ffn * arch.shared_experts
    routed = n_moe * arch.experts * 3 * arch.hidden * arch.expert_ffn
    router = n_moe * arch.hidden * arch.experts if arch.router_linear else 0
    linear = attn + dense_mlp + shared + router + (0 if arch.experts_fused else routed)
    experts = routed if arch.experts_fused else 0
    return WeightSplit(linear, experts, total - linear - experts)


@dataclass(frozen=True)
class LoraModule:
    """One kind of adapted weight: `count` instances in the model (parameters), of which a
    token passes through `per_token` (activations: the adapter's input copy)."""

    name: str
    d_in: int
    d_out: int
    count: int
    per_token: int

    def params(self, rank: int) -> int:
        return self.count * rank * (self.d_in + self.d_out)


def _mlp_modules(arch: Architecture, width: int, n: int, prefix: str) -> list[LoraModule]:
    h = arch.hidden
    return [LoraModule(f"{prefix}gate_proj", h, width, n, n),
            LoraModule(f"{prefix}up_proj", h, width, n, n),
            LoraModule(f"{prefix}down_proj", width, h, n, n)]


def lora_modules(arch: Architecture, targets: Targets, *,
                 experts: bool | None = None) -> tuple[LoraModule, ...]:
    """The weights LoRA adapts on this model, as PEFT 0.21.2 does.

    - `qv`: q_proj and v_proj (PEFT's default mapping for Llama-style models; qkv_proj for
      Phi-3, whose q, k and v are one nn.Linear: `fused_qkv`). With latent
      attention there is no v_proj: the query projections (q_proj, or q_a_proj and q_b_proj)
      and kv_b_proj, which makes the values; this mapping is this project's, PEFT has none
      for DeepSeek.
    - `attention`: every attention projection of `attention_shapes`.
    - `all-linear`: every nn.Linear but the output head: attention, dense MLP layers, shared
      experts, the router where it is an nn.Linear (`router_linear`) and the routed experts
      where each is an nn.Linear (`experts_fused` false: transformers 4.x Mixtral, Qwen3-MoE,
      OLMoE, DeepSeek). Fused 3-D experts are not nn.Linear and are not adapted.
    - `experts=True` adapts the routed experts also when fused, as PEFT's `target_parameters`
      does (gate_up_proj and down_proj of every MoE layer, r x E x (in + out) each); `False`
      never adapts them; `None` (default) follows `all-linear` as above.
    A token passes through `experts_active` routed experts per MoE layer.
    """
    n_moe = moe_layers(arch)
    n_dense = arch.layers - n_moe
    shapes = attention_shapes(arch)
    if arch.fused_qkv and not is_mla(arch):  # Phi3Attention: qkv_proj, o_proj
        shapes = (("qkv_proj", arch.hidden, arch.q_dim + 2 * arch.kv_dim), shapes[3])
    attn = [LoraModule(name, d_in, d_out, arch.layers, arch.layers) for name, d_in, d_out in shapes]
    if targets is Targets.ATTENTION:
        return tuple(attn)
    if targets is Targets.QV:
        keep = {"q_proj", "v_proj", "q_a_proj", "q_b_proj", "kv_b_proj", "qkv_proj"}
        return tuple(m for m in attn if m.name in keep)
    out = list(attn)
    if n_dense and arch.fused_qkv:  # Phi3MLP: gate_up_proj, down_proj
        out += [LoraModule("mlp.gate_up_proj", arch.hidden, 2 * arch.ffn, n_dense, n_dense),
                LoraModule("mlp.down_proj", arch.ffn, arch.hidden, n_dense, n_dense)]
    elif n_dense:
        out += _mlp_modules(arch, arch.ffn, n_dense, "mlp.")
    if n_moe and arch.shared_experts:
        out += _mlp_modules(arch, arch.expert_ffn * arch.shared_experts, n_moe, "shared_experts.")
    if n_moe and arch.router_linear:
        out.append(LoraModule("router", arch.hidden, arch.experts, n_moe, n_moe))
    adapt_experts = (not arch.experts_fused) if experts is None else experts
    if n_moe and adapt_experts:
        e, k, h, f = arch.experts, arch.experts_active, arch.hidden, arch.expert_ffn
        if arch.experts_fused:  # target_parameters: one ParamWrapper per 3-D parameter
            out += [LoraModule("experts.gate_up_proj", h, 2 * f, n_moe * e, n_moe * k),
                    LoraModule("experts.down_proj", f, h, n_moe * e, n_moe * k)]
        else:
            out += [LoraModule("experts.gate_proj", h, f, n_moe * e, n_moe * k),
                    LoraModule("experts.up_proj", h, f, n_moe * e, n_moe * k),
                    LoraModule("experts.down_proj", f, h, n_moe * e, n_moe * k)]
    return tuple(out)


def lora_params(arch: Architecture, rank: int, targets: Targets, *,
                experts: bool | None = None) -> int:
    """Trainable LoRA parameters: sum of r x (d_in + d_out) over `lora_modules`."""
    return sum(m.params(rank) for m in lora_modules(arch, targets, experts=experts))
