"""One configuration (`Inputs`) and its estimate (`Estimate`), by component, in bytes."""

from __future__ import annotations

from dataclasses import dataclass

from ..arch import active_params
from ..types import (AdapterDtype, Architecture, Framework, Loss, Method, Mode, OptStep, Optimizer,
                     Quantized, Targets, Unit)
from .constants import (DEFAULT_GRAD_ACCUM, LEGACY_COMPONENTS, REALISTIC_COMPONENTS, RECOMPUTE_SIDE,
                        SHARDED)
from .stacks import KNOBS, Knobs, KnobValue, knobs_of, normalized


@dataclass(frozen=True)
class Inputs:
    """One configuration of the calculator. Field names are the interface's (engine.md).

    The realistic model (`mode=detailed`) is the default. The knobs (`adapter_dtype` ...
    `compile`) are None for "the stack's value"; an explicit knob equal to the stack's
    value, or one that does not apply (see `calc.engine.stacks.applies`), is stored as None, so
    that configurations that estimate the same compare equal.
    """

    arch: Architecture
    model: str = "llama-3.1-8b"
    method: Method = Method.LORA
    rank: int = 16
    targets: Targets = Targets.ALL_LINEAR
    seq: int = 2048
    batch: int = 1
    #: Micro-batches whose gradients are summed before each optimizer step (the Trainer's
    #: gradient_accumulation_steps, default 1). Realistic model only: above 1 the gradients
    #: stay alive through the next micro-batch's forward pass and loss.
    grad_accum: int = DEFAULT_GRAD_ACCUM
    ckpt: bool = True
    optimizer: Optimizer = Optimizer.ADAMW
    unit: Unit = Unit.GIB
    mode: Mode = Mode.DETAILED
    flash: bool = True  # realistic model: flash attention (no s x s scores kept)
    dquant: bool = True  # realistic model: NF4 double quantisation
    framework: Framework = Framework.HF
    adapter_dtype: AdapterDtype | None = None
    loss: Loss | None = None
    opt_step: OptStep | None = None
    act_offload: bool | None = None
    quantized: Quantized | None = None
    kbit_upcast: bool | None = None
    #: torch.compile on the model and the loss: changes only the loss term (`logits`).
    compile: bool | None = None
    #: LoRA/QLoRA on a mixture-of-experts model: also adapt the routed experts where they are
    #: fused 3-D parameters, as PEFT's `target_parameters` does (calc.arch.lora_modules). False
    #: follows `targets` as PEFT's all-linear does: an expert is adapted only if it is an
    #: nn.Linear. Stored as False wherever it changes nothing (dense model, full fine-tuning,
    #: targets other than all-linear), so that equal estimates have equal inputs.
    lora_experts: bool = False

    def __post_init__(self) -> None:
        given = self.explicit_knobs
        canonical = normalized(self.framework, self.method, self.ckpt, given)
        if canonical != given:
            for name, value in zip(KNOBS, canonical):
                object.__setattr__(self, name, value)
        if self.lora_experts and not (self.arch.experts and self.method is not Method.FULL
                                      and self.targets is Targets.ALL_LINEAR):
            object.__setattr__(self, "lora_experts", False)

    @property
    def explicit_knobs(self) -> tuple[KnobValue | None, ...]:
        return tuple(getattr(self, k) for k in KNOBS)

    @property
    def knobs(self) -> Knobs:
        """The knob values the realistic model uses (the stack's, overridden)."""
        return knobs_of(self.framework, self.method, self.ckpt, self.explicit_knobs)


@dataclass(frozen=True)
class Estimate:
    inputs: Inputs
    trainable_params: int
    components: tuple[tuple[str, int], ...]
    #: Host memory the run needs for what it moved off the GPU (act_offload); not in `total`.
    cpu_bytes: int = 0
    #: Components of a moment that is not the peak, not in `total`: with gradient checkpointing,
    #: on a stack whose loop drops the model's output before the backward pass (torchtune), the
    #: smaller of the loss's buffers and the recomputed layer (constants.LOSS_SIDE).
    off_peak: tuple[tuple[str, int], ...] = ()

    @property
    def total(self) -> int:
        return sum(v for _, v in self.components)

    def get(self, name: str) -> int:
        """A component's bytes (0 for a realistic component this estimate does not have),
        `total` or `trainable_params`; KeyError for an unknown name."""
        if name == "total":
            return self.total
        if name == "trainable_params":
            return self.trainable_params
        parts = dict(self.components)
        if name in parts:
            return parts[name]
        if name in LEGACY_COMPONENTS:
            return sum(parts.get(n, 0) for n in LEGACY_COMPONENTS[name])
        if name in REALISTIC_COMPONENTS:
            return 0
        raise KeyError(name)

    @property
    def off_peak_side(self) -> str | None:
        """Which moment `off_peak` holds: "recompute" (the recomputed layer) or "loss" (the
        loss's buffers); None when every component is at the peak."""
        if not self.off_peak:
            return None
        return "recompute" if self.off_peak[0][0] in RECOMPUTE_SIDE else "loss"

    @property
    def off_peak_bytes(self) -> int:
        return sum(v for _, v in self.off_peak)

    @property
    def sharded(self) -> int:
        """What ZeRO-3/FSDP divides among cards: weights, gradients, optimizer state."""
        return sum(v for k, v in self.components if k in SHARDED)

    @property
    def per_card(self) -> int:
        """What every card keeps whatever the number of cards: activations and overhead."""
        return self.total - self.sharded

    def to_json(self) -> dict[str, object]:
        """The interface's JSON: the estimate of the mode asked for, and beside it the textbook
        total and the realistic one, the stack and the knob values used."""
        from . import estimate  # the package's dispatcher (planning or realistic)
        from dataclasses import replace

        i = self.inputs
        out: dict[str, object] = {
            "model": i.model,
            "method": i.method.value,
            "mode": i.mode.value,
            "total_bytes": self.total,
            "components": dict(self.components),
            "trainable_params": self.trainable_params,
            "grad_accum": i.grad_accum,
            "params": i.arch.params,
            "active_params": active_params(i.arch),
        }
        other = estimate(replace(i, mode=Mode.PLANNING if i.mode is Mode.DETAILED else Mode.DETAILED))
        realistic, textbook = (self, other) if i.mode is Mode.DETAILED else (other, self)
        out["realistic_total_bytes"] = realistic.total
        out["textbook_total_bytes"] = textbook.total
        out["textbook_components"] = dict(textbook.components)
        if i.arch.experts:
            out["lora_experts"] = i.lora_experts
        out["cpu_bytes"] = realistic.cpu_bytes
        out["off_peak_components"] = dict(realistic.off_peak)
        out["framework"] = i.framework.value
        out["knobs"] = i.knobs.to_json()
        out["explicit_knobs"] = {k: (v.value if hasattr(v, "value") else v)
                                 for k, v in zip(KNOBS, i.explicit_knobs) if v is not None}
        return out
