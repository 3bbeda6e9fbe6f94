"""Beyond one GPU and beyond supervised fine-tuning (engine spec section 8): a layer above the
single-card estimate.

`calc.engine.estimate(inputs)` answers for one card holding everything. This module takes that
answer, component by component, and places each component for a run on `gpus` data-parallel
cards with a sharding strategy, an optional CPU offload and a training objective:

- `sharding` (`Sharding`): which components divide by the number of GPUs. The stages are those
  of ZeRO (Rajbhandari et al. 2019, "ZeRO: Memory Optimizations Toward Training Trillion
  Parameter Models", section 5: P_os, P_os+g, P_os+g+p): ZeRO-1 partitions the optimizer
  state, ZeRO-2 also the gradients, ZeRO-3 also the parameters; PyTorch FSDP's FULL_SHARD is
  ZeRO-3 (its SHARD_GRAD_OP is ZeRO-2). DeepSpeed names the same stages in
  `deepspeed/runtime/zero/config.py` (`ZeroStageEnum`: disabled, optimizer_states, gradients,
  weights; v0.19.5). What a component *is* decides where it goes (`COMPONENT_PARTS`).
- `offload` (`Offload`): DeepSpeed ZeRO-Offload (Ren et al. 2021) moves the optimizer state and
  its step to the CPU; ZeRO-Infinity (Rajbhandari et al. 2021) also the parameters. Offloaded
  bytes leave the per-GPU total and appear in `cpu_components`, the host RAM the offload needs
  on the node (all `gpus` on one machine: the host holds every GPU's partition).
- `objective` (`Objective`): DPO as TRL's `DPOTrainer` runs it (v1.9.0): chosen and rejected
  sequences in one batch of twice the micro-batch, and for full fine-tuning a frozen reference
  copy of the weights (see `_dpo`).

Bytes stay integers: a sharded component takes ceil(bytes / gpus) on each card (DeepSpeed pads
its flat partitions to equal sizes, `stage_1_and_2.py` / `stage3.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache
from typing import TYPE_CHECKING, Mapping

from .engine import (BF16_BYTES, FP32_BYTES, MAX_CARDS, Estimate, Inputs, estimate,
                     gradient_bytes, usable_bytes)
from .errors import CalcError, Problem
from .types import GpuKind, Method, Mode, Objective, Offload, Optimizer, Sharding

if TYPE_CHECKING:  # pragma: no cover
    from .catalog import Gpu
    from .fields import Query


class Part(str, Enum):
    """What a component of the estimate is, which decides how it shards and offloads."""

    WEIGHTS = "weights"  # parameters: sharded by ZeRO-3, offloaded with the params
    GRADIENTS = "gradients"  # sharded from ZeRO-2
    OPTIMIZER = "optimizer"  # optimizer state (and the FP32 master copy): sharded from ZeRO-1
    LOCAL = "local"  # lives on every card whatever the strategy: activations and the like


#: The ZeRO stage from which a part is partitioned (Rajbhandari et al. 2019, section 5.1-5.3).
SHARDED_FROM: dict[Part, int] = {Part.OPTIMIZER: 1, Part.GRADIENTS: 2, Part.WEIGHTS: 3}

#: Every component name `estimate()` (and this module) can produce, by what it is. A name not
#: listed is treated as LOCAL (never sharded, never offloaded: the safe side), and
#: tests/unit/test_scale.py fails for any component of `estimate()` missing here, so a new
#: term cannot slip through unclassified.
COMPONENT_PARTS: dict[str, Part] = {
    # BF16 (or NF4) weights of the model: ZeRO-3's P_p, FSDP's FlatParameter shards.
    "base_weights": Part.WEIGHTS,
    # Parameters held in FP32: PEFT's FP32 adapter weights (trainable parameters, part of the
    # model like any weight) and the k-bit upcast of the non-quantised parameters by
    # `prepare_model_for_kbit_training` (frozen weights in FP32). Both are parameters, so ZeRO-3
    # / FSDP partitions them with the rest (FSDP flattens every parameter of a unit into one
    # FlatParameter; DeepSpeed partitions each parameter). Not optimizer state: PEFT's FP32
    # adapters are their own master copy, the engine counts no separate one for them.
    "fp32_copies": Part.WEIGHTS,
    # The same two, as the training-stack model names them (calc.engine.realistic).
    "adapter_weights": Part.WEIGHTS,
    "kbit_upcast": Part.WEIGHTS,
    # DPO's frozen reference model (full fine-tuning): weights of a second model. TRL prepares
    # it with ZeRO-3 when the run uses ZeRO-3 and with ZeRO disabled (stage 0, a whole copy on
    # every card) otherwise (`trl/models/utils.py`, `prepare_deepspeed`, v1.9.0); with FSDP it
    # is wrapped in FSDP too (`prepare_fsdp`). So it shards exactly like the weights.
    "reference_model": Part.WEIGHTS,
    # Gradients of the trainable parameters: ZeRO's P_g (with grad_accum 1, what they add beyond
    # the freed activations: sharding that is on the safe side, as for the step below).
    "gradients": Part.GRADIENTS,
    # Optimizer state and the FP32 master copy (ZeRO's P_os: with mixed-precision Adam the
    # FP32 copy of the parameters, the momentum and the variance, section 3.1). The engine
    # adds the optimizer step's temporaries to this component (foreach AdamW's sqrt(v) list,
    # where it outweighs the activations freed before the step): each card computes them for
    # its own partition, so they shard with the state. On the safe side: the card's step peak
    # is the partitions plus step/n, this gives the partitions plus (step - activations)/n
    # and the unsharded activations, never less.
    "optimizer": Part.OPTIMIZER,
    # A multi-tensor (foreach) step's temporaries: each card computes them for its own
    # partition of the state, so they shard with it.
    "step_temporaries": Part.OPTIMIZER,
    # Activations kept for the backward pass: each card runs its own micro-batch; ZeRO does
    # not partition activations (ZeRO-R's P_a partitions only across model-parallel ranks,
    # section 6.1, and there is no model parallelism here).
    "activations": Part.LOCAL,
    # Logits and the loss buffer: activations of the card's own micro-batch.
    "logits": Part.LOCAL,
    "previous_step": Part.LOCAL,  # the card's own previous micro-batch
    # The checkpointed layer inputs and PEFT's FP32 copies of the adapters' inputs: activations
    # of the card's own micro-batch too.
    "checkpoints": Part.LOCAL,
    "adapter_inputs": Part.LOCAL,
    # CUDA context, allocator, framework: one per process, one process per card.
    "overhead": Part.LOCAL,
    # Added by this module (detailed mode): working sets that every card holds in full.
    "gathered_weights": Part.LOCAL,
    "ddp_buckets": Part.LOCAL,
}

#: Optimizers DeepSpeed can offload: with ZeRO-Offload the step runs on the CPU, and DeepSpeed
#: refuses a client optimizer other than its own DeepSpeedCPUAdam / DeepSpeedCPULion
#: (`deepspeed/runtime/engine.py`, `_configure_optimizer`, `zero_force_ds_cpu_optimizer`,
#: default true; v0.19.5). AdamW with an FP32 master copy is DeepSpeedCPUAdam in AdamW mode.
OFFLOAD_OPTIMIZERS = frozenset({Optimizer.ADAMW, Optimizer.LION})

#: Host bytes per trainable parameter that DeepSpeed's optimizer offload allocates (v0.19.5),
#: summed over the node's processes (each holds its 1/gpus partition):
#: - FP32 master copy of the partition (`single_partition_of_fp32_groups` in
#:   `stage_1_and_2.py`, `fp32_partitioned_groups_flat` in `stage3.py`), pinned: 4;
#: - the CPU optimizer's two FP32 state tensors, `exp_avg` and `exp_avg_sq`
#:   (`deepspeed/ops/adam/cpu_adam.py`; `deepspeed/ops/lion/cpu_lion.py` allocates both as
#:   well, although Lion reads only the first): 8;
#: - the FP32 gradient partition the CPU step reads (`single_partition_of_fp32_groups[i].grad`,
#:   pinned, `initialize_optimizer_states` in `stage_1_and_2.py`; the pinned
#:   `subgroup_gradient_buffer` in `stage3.py`): 4;
#: - a 16-bit partition: the pinned `param_buffer_of_bit16_for_cpu_offload_groups` through
#:   which ZeRO-1/2 copy the updated weights back, or ZeRO-3's `grad_partitions_flat_buffer`
#:   in the gradient-accumulation dtype (the model's BF16 unless `grad_accum_dtype` is set,
#:   `engine.py`, `get_data_types`), pinned: 2.
#: DeepSpeed pins these by default (`pin_memory: true` for `offload_optimizer`,
#: docs/_pages/config-json.md): pinned memory cannot be swapped and counts against `ulimit -l`.
#: The first two are the optimizer state moved off the GPU ("optimizer"); the last two are
#: buffers that exist only on the host ("offload_buffers").
HOST_STATE_BYTES = FP32_BYTES + 2 * FP32_BYTES  # master + exp_avg + exp_avg_sq
HOST_BUFFER_BYTES = FP32_BYTES + BF16_BYTES  # FP32 gradient partition + 16-bit partition

#: FSDP keeps this many decoder-layer units unsharded at once: the unit being computed and the
#: next one, prefetched (`backward_prefetch=BACKWARD_PRE`, PyTorch's and Accelerate's default).
GATHERED_UNITS = 2

STRATEGIES: tuple[Sharding, ...] = tuple(Sharding)
SCALE_FIELDS = ("gpus", "sharding", "offload", "objective")


@dataclass(frozen=True)
class Scale:
    """The section-8 fields. Defaults are the interface's: 1, zero3, none, sft."""

    gpus: int = 1
    sharding: Sharding = Sharding.ZERO3
    offload: Offload = Offload.NONE
    objective: Objective = Objective.SFT


@dataclass(frozen=True)
class ScaledEstimate:
    """The configuration's memory on each GPU and on the host."""

    inputs: Inputs
    scale: Scale
    #: The single-card estimate the figures come from (micro-batch doubled for DPO).
    estimate: Estimate
    #: One card holding everything (gpus = 1, no offload): the estimate plus DPO's reference.
    components: tuple[tuple[str, int], ...]
    #: What each GPU holds.
    gpu_components: tuple[tuple[str, int], ...]
    #: What the node's host RAM holds for the offload (all GPUs' partitions together).
    cpu_components: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        return sum(v for _, v in self.components)

    @property
    def per_gpu_total(self) -> int:
        return sum(v for _, v in self.gpu_components)

    @property
    def cpu_bytes(self) -> int:
        return sum(v for _, v in self.cpu_components)

    @property
    def trainable_params(self) -> int:
        return self.estimate.trainable_params

    def to_json(self) -> dict[str, object]:
        return {
            "gpus": self.scale.gpus,
            "sharding": self.scale.sharding.value,
            "offload": self.scale.offload.value,
            "objective": self.scale.objective.value,
            "total_bytes": self.total,
            "components": dict(self.components),
            "per_gpu_total_bytes": self.per_gpu_total,
            "per_gpu_components": dict(self.gpu_components),
            "cpu_bytes": self.cpu_bytes,
            "cpu_components": dict(self.cpu_components),
        }


def part_of(name: str) -> Part:
    """What a component is; an unknown name stays on every card (never sharded)."""
    return COMPONENT_PARTS.get(name, Part.LOCAL)


# --- validation -----------------------------------------------------------------------------


def problems(scale: Scale, optimizer: Optimizer | None = None) -> list[Problem]:
    """Combinations no framework runs, each naming the field to change."""
    out: list[Problem] = []
    if scale.offload is not Offload.NONE:
        # DeepSpeed: offload_optimizer is "valid for ZeRO stage 1, 2, 3" and offload_param
        # "valid only with stage 3" (deepspeed/runtime/zero/config.py, v0.19.5); plain DDP
        # has no offload, FSDP offloads only with its parameters (CPUOffload(offload_params)).
        if scale.sharding is Sharding.DDP:
            out.append(Problem.of("offload", "offload_needs_zero"))
        elif scale.offload is Offload.OPTIMIZER_PARAMS and scale.sharding is not Sharding.ZERO3:
            out.append(Problem.of("offload", "offload_params_needs_zero3"))
        elif optimizer is not None and optimizer not in OFFLOAD_OPTIMIZERS:
            out.append(Problem.of("offload", "offload_optimizer"))
    return out


def supports(sharding: Sharding, offload: Offload) -> bool:
    return not problems(Scale(sharding=sharding, offload=offload))


def validate(inputs: Inputs, scale: Scale) -> None:
    found = problems(scale, inputs.optimizer)
    if scale.gpus < 1 or scale.gpus > MAX_CARDS:
        found.insert(0, Problem.of("gpus", "too_small" if scale.gpus < 1 else "too_large",
                                   **({"min": 1} if scale.gpus < 1 else {"max": MAX_CARDS})))
    if found:
        raise CalcError(found)


# --- the objective --------------------------------------------------------------------------


def _dpo(inputs: Inputs) -> tuple[Estimate, tuple[tuple[str, int], ...]]:
    """DPO as TRL's DPOTrainer runs it (huggingface/trl v1.9.0, trl/trainer/dpo_trainer.py):

    - One batch of 2 x micro-batch: `DataCollatorForPreference.torch_call` stacks the
      prompt+chosen and the prompt+rejected sequences (`input_ids = prompt_chosen_ids +
      prompt_rejected_ids`) and `_compute_loss` runs the policy once on it (`logps.chunk(2)`:
      "batch is [chosen, rejected]"; older TRL did the same in `concatenated_forward`). So the
      activations and logits are those of twice the micro-batch, each sequence up to `seq`:
      the engine's own estimate with `batch` doubled gives every batch-dependent component
      (and the optimizer step's peak, which depends on the activations freed before it).
    - The reference model: `ref_model=None` with a PEFT model means no second model
      (`if is_peft_model(self.model) or args.precompute_ref_log_probs: self.ref_model = None`):
      the reference log-probs come from the same model with its adapters disabled
      (`use_adapter(model, adapter_name=None)`; older TRL: `null_ref_context` ->
      `disable_adapter()`). LoRA and QLoRA therefore add nothing. Full fine-tuning loads a
      second copy (`create_model_from_path`) and keeps it frozen: its weights, no gradients,
      no optimizer state. The engine counts the policy's weights in BF16; the reference is
      the same bytes when `model_init_kwargs` gives `dtype=bfloat16` (applied to both). Note:
      without a `dtype` TRL loads the reference in FP32 (`create_model_from_path`: "If not
      explicitly set, `dtype` defaults to 'float32'"), twice this figure.
    - Every method runs under DPOTrainer (a plain model, a PEFT model, a k-bit PEFT model),
      so no method is refused with `objective=dpo`; only an unknown objective is.
    - `precompute_ref_log_probs` (default False, `dpo_config.py`) would drop the reference
      from training entirely; the default is modelled.
    - The reference's forward runs under `torch.no_grad()` after the policy's forward, before
      the backward pass: it stores no activations (each layer's working set is freed as the
      next one runs). Its logits (BF16, 2 bytes per token and vocabulary entry for the 2b
      sequences) are alive with the policy's during the loss and are freed when `_compute_loss`
      returns, before the backward pass. The logits term of the doubled estimate (14 bytes per
      token and vocabulary entry for the HF loss's FP32 upcast and its gradients) is larger
      than the policy's BF16 logits, TRL's row-by-row BF16 log-softmax and the reference's
      logits together at that moment (2 + 2 + 2), so the reference's logits add no peak of
      their own. Not counted: one layer's working set of the reference forward without
      gradient checkpointing (about 1/layers of the activations).
    """
    doubled = estimate(replace(inputs, batch=inputs.batch * 2))
    parts = list(doubled.components)
    if inputs.method is Method.FULL:
        parts.insert(1, ("reference_model", doubled.get("base_weights")))
    return doubled, tuple(parts)


@lru_cache(maxsize=64)
def single_card(inputs: Inputs, objective: Objective = Objective.SFT
                ) -> tuple[Estimate, tuple[tuple[str, int], ...]]:
    """The estimate and components of one card holding everything, for the objective (memoized)."""
    if objective is Objective.DPO:
        return _dpo(inputs)
    est = estimate(inputs)
    return est, est.components


# --- placing the components -----------------------------------------------------------------


def _gathered(inputs: Inputs, components: tuple[tuple[str, int], ...]) -> int:
    """Detailed mode, ZeRO-3 with the weights not resident (sharded or offloaded): the working
    set of unsharded weights every card holds while it computes. FSDP (PyTorch, FULL_SHARD,
    one unit per decoder layer as Accelerate's TRANSFORMER_BASED_WRAP makes them) all-gathers
    a unit before its forward and backward and frees it after; with BACKWARD_PRE the next unit
    is gathered while the current one runs (GATHERED_UNITS). The root unit (embeddings, final
    norm, output layer) is not resharded after the forward pass ("Do not free the root's
    parameters in the post-forward for FULL_SHARD", `_post_forward_reshard` in
    torch/distributed/fsdp/_runtime_utils.py, pytorch/pytorch@3ade90a6); during the backward
    pass a unit's gradients exist unsharded until its reduce-scatter. So:
    2 x one layer's weights + the root's BF16 weights + one layer's gradients.
    DeepSpeed's ZeRO-3 gathers per submodule with a prefetch bucket (HF's `auto`:
    0.9 x hidden^2 elements) and needs less; this is the upper bound of the two.
    One layer = (weights - root) / layers: the k-bit upcast of the embeddings is spread over
    the layers (a slight over-count)."""
    arch = inputs.arch
    weights = sum(v for n, v in components
                  if part_of(n) is Part.WEIGHTS and n != "reference_model")
    grads = gradient_bytes(inputs)  # a unit's own, whether or not alive at the loss
    root = arch.vocab * arch.hidden * (1 if arch.tied else 2) * BF16_BYTES
    root = min(root, weights)
    layer = -(-(weights - root) // arch.layers)
    return GATHERED_UNITS * layer + root + -(-grads // arch.layers)


def _extras(inputs: Inputs, components: tuple[tuple[str, int], ...], sharding: Sharding,
            offload: Offload, gpus: int) -> list[tuple[str, int]]:
    """Per-card working sets the strategy adds (detailed mode only; the textbook formula of
    section 1 divides the states and adds nothing)."""
    if inputs.mode is not Mode.DETAILED:
        return []
    out = []
    if sharding is Sharding.ZERO3 and (gpus > 1 or offload is Offload.OPTIMIZER_PARAMS):
        out.append(("gathered_weights", _gathered(inputs, components)))
    if sharding is Sharding.DDP and gpus > 1:
        # PyTorch DDP copies every gradient into its all-reduce buckets unless
        # gradient_as_bucket_view=True ("the saved memory size will be equal to the total
        # gradients size", torch/nn/parallel/distributed.py); Accelerate's
        # DistributedDataParallelKwargs and the Trainer leave it False.
        grads = gradient_bytes(inputs)  # the buckets exist from the start (not the component)
        if grads:
            out.append(("ddp_buckets", grads))
    return out


def _on_host(part: Part, sharding: Sharding, offload: Offload) -> bool:
    if offload is Offload.NONE:
        return False
    if part is Part.OPTIMIZER:
        return True
    if part is Part.GRADIENTS:
        # ZeRO-2/3 with offload reduce each gradient straight into the host partition the CPU
        # step reads; ZeRO-1 keeps the full gradients on the card until the step.
        return sharding.stage >= 2
    return part is Part.WEIGHTS and offload is Offload.OPTIMIZER_PARAMS


@dataclass(frozen=True)
class Layout:
    """How one strategy places the components, for any number of cards n >= 2 (or n = 1)."""

    whole: tuple[tuple[str, int], ...]  # on every card in full
    sharded: tuple[tuple[str, int], ...]  # each card holds ceil(bytes / n)
    host: tuple[tuple[str, int], ...]  # on the node's host RAM

    def per_gpu(self, n: int) -> int:
        return sum(v for _, v in self.whole) + sum(-(-v // n) for _, v in self.sharded)


def layout(inputs: Inputs, est: Estimate, components: tuple[tuple[str, int], ...],
           sharding: Sharding, offload: Offload, multi: bool) -> Layout:
    """Place every component for `sharding` and `offload`; `multi`: more than one card (with
    one card nothing divides and no strategy adds a working set)."""
    whole: list[tuple[str, int]] = []
    sharded: list[tuple[str, int]] = []
    moved: list[tuple[str, int]] = []
    for name, value in components:
        part = part_of(name)
        if _on_host(part, sharding, offload):
            moved.append((name, value))
        elif multi and part is not Part.LOCAL and sharding.stage >= SHARDED_FROM[part]:
            sharded.append((name, value))
        else:
            whole.append((name, value))
    whole += _extras(inputs, components, sharding, offload, 2 if multi else 1)
    return Layout(tuple(whole), tuple(sharded), _host(inputs, est, moved, offload))


def _host(inputs: Inputs, est: Estimate, moved: list[tuple[str, int]], offload: Offload
          ) -> tuple[tuple[str, int], ...]:
    """Host RAM: in the textbook mode exactly the bytes that left the GPUs; in the detailed
    mode DeepSpeed's layout for the optimizer (HOST_STATE_BYTES, HOST_BUFFER_BYTES per
    trainable parameter: the FP32 master copy exists there even where the engine counts none
    on the card, e.g. PEFT's FP32 adapters; the step's temporaries do not, DeepSpeed's CPU Adam
    updates in place) and the weights as they were on the card."""
    if offload is Offload.NONE:
        return ()
    if inputs.mode is not Mode.DETAILED:
        return tuple(moved)
    t = est.trainable_params
    out = [("optimizer", t * HOST_STATE_BYTES), ("offload_buffers", t * HOST_BUFFER_BYTES)]
    out += [(n, v) for n, v in moved if part_of(n) is Part.WEIGHTS]
    return tuple(out)


def scaled(inputs: Inputs, scale: Scale = Scale()) -> ScaledEstimate:
    """Per-GPU and host memory of `inputs` run as `scale` says. Raises CalcError for a
    combination no framework runs."""
    validate(inputs, scale)
    est, components = single_card(inputs, scale.objective)
    lay = layout(inputs, est, components, scale.sharding, scale.offload, scale.gpus > 1)
    n = scale.gpus
    per_gpu = dict(lay.whole)
    per_gpu.update((k, -(-v // n)) for k, v in lay.sharded)
    order = [k for k, _ in components] + [k for k, _ in lay.whole if k not in dict(components)]
    gpu = tuple((k, per_gpu[k]) for k in order if k in per_gpu)
    host = lay.host
    if est.cpu_bytes:  # activation offloading (the stack's act_offload): each card's own
        host = (*host, ("checkpoints", est.cpu_bytes * n))
    return ScaledEstimate(inputs, scale, est, components, gpu, host)


# --- the fit table --------------------------------------------------------------------------


def sums(lay1: Layout, layn: Layout) -> tuple[int, int, tuple[int, ...]]:
    """fewest()'s input, summed once: one card's total, n cards' whole part, the sharded parts."""
    return lay1.per_gpu(1), sum(v for _, v in layn.whole), tuple(v for _, v in layn.sharded)


def fewest(summed: tuple[int, int, tuple[int, ...]], usable: int, unified: bool) -> int | None:
    """Fewest n with the per-GPU total within `usable`, or None (beyond MAX_CARDS, or state
    that never shards under this strategy); `summed`: sums() of the strategy's two layouts."""
    one, whole, shards = summed
    if one <= usable:
        return 1
    room, total = usable - whole, sum(shards)
    if unified or room <= 0 or total == 0:  # unified: one machine, no sharding across laptops
        return None  # room == 0 or nothing divides: more cards hold no less than one does
    n = max(2, -(-total // room))
    while n <= MAX_CARDS and sum(-(-v // n) for v in shards) > room:  # ceil each: a few steps
        n += 1
    return n if n <= MAX_CARDS else None


def cards_needed(inputs: Inputs, scale: Scale = Scale(),
                 gpus: "tuple[Gpu, ...] | None" = None) -> dict[str, dict[str, int | None]]:
    """For every catalog card kind, the fewest cards each strategy needs for this
    configuration, with the scale's offload and objective: {gpu_id: {strategy: n or None}}.
    A strategy that cannot run the chosen offload is left out of the inner mapping."""
    if gpus is None:
        from .catalog import gpus as catalog_gpus

        gpus = catalog_gpus()
    # every strategy is tried, so only what does not depend on it is checked: ZeRO-3 runs
    # every offload, leaving the optimizer's own check
    found = problems(replace(scale, sharding=Sharding.ZERO3), inputs.optimizer)
    if found:
        raise CalcError(found)
    est, components = single_card(inputs, scale.objective)
    by = {s.value: sums(layout(inputs, est, components, s, scale.offload, False),
                        layout(inputs, est, components, s, scale.offload, True))
          for s in STRATEGIES if supports(s, scale.offload)}
    return {g.id: {s: fewest(v, usable_bytes(g), g.kind is GpuKind.UNIFIED)
                   for s, v in by.items()} for g in gpus}


# --- the fields -----------------------------------------------------------------------------


def parse_scale(query: "Query", locale: str = "en") -> Scale:
    """`gpus`, `sharding`, `offload`, `objective` from a URL query, a form or CLI flags
    (other keys are ignored: `calc.fields.parse` reads them). Raises CalcError naming each
    invalid field."""
    from .fields import Collector, read_cards, read_choice

    c = Collector(query)
    gpus = c.read("gpus", lambda v: read_cards(v, locale), 1)
    sharding = c.read("sharding", lambda v: read_choice(v, Sharding), Sharding.ZERO3)
    offload = c.read("offload", lambda v: read_choice(v, Offload), Offload.NONE)
    objective = c.read("objective", lambda v: read_choice(v, Objective), Objective.SFT)
    if sharding is not None and offload is not None:
        c.problems.extend(problems(Scale(sharding=sharding, offload=offload)))
    c.done()
    return Scale(gpus, sharding, offload, objective)  # type: ignore[arg-type]


def to_query(scale: Scale) -> dict[str, str]:
    """The scale's fields that differ from the defaults, as query text."""
    default = Scale()
    q: dict[str, str] = {}
    if scale.gpus != default.gpus:
        q["gpus"] = str(scale.gpus)
    for name in ("sharding", "offload", "objective"):
        value = getattr(scale, name)
        if value is not getattr(default, name):
            q[name] = value.value
    return q


def split_query(query: Mapping[str, object]) -> tuple[dict[str, object], dict[str, object]]:
    """(the single-card fields, the scale fields) of one query."""
    rest = {k: v for k, v in query.items() if k not in SCALE_FIELDS}
    mine = {k: v for k, v in query.items() if k in SCALE_FIELDS}
    return rest, mine
