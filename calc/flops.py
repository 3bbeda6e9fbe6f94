"""Training compute: FLOPs per token, and the utilisation calibrated on published throughput.

FLOPs per trained token, counted as matrix multiplications (2 FLOPs per multiply-add), with
N = the parameters a token passes through as matrix products (`matmul_params`), A = the LoRA
adapter's parameters a token passes through (`active_adapter_params`; 0 for full
fine-tuning), W = the parameters that get a weight gradient (N for full fine-tuning, A for
LoRA/QLoRA), L layers, H heads of size Q, T the sequence length:

    forward                    2 (N + A) + 4 L H Q T
    backward, activations      2 (N + A) + 8 L H Q T
    backward, weights          2 W
    recomputation (ckpt on)    2 (N_layers + A) + 4 L H Q T    one more forward of the layers

so full fine-tuning is 6 N + 12 L H Q T (+ one forward with checkpointing) and LoRA
4 N + 6 A + 12 L H Q T. Sources:
- the 6 N rule and the attention term: PaLM (Chowdhery et al. 2022, arXiv:2204.02311,
  appendix B, "Model FLOPs utilization"): "6N" for the weights' matrix products and
  "6LH(2QT)" for the matrix products of dense self-attention per token; the full (not causal)
  score matrix is counted, as PaLM and torchtitan do;
- the split of the backward pass: every weight matrix takes two products in the backward pass,
  one for the gradient of its input and one for its own gradient (Narayanan et al. 2021,
  arXiv:2104.04473, appendix "Floating-point operations": "forward pass, backward wgrad,
  backward dgrad"); a frozen base weight skips the second, which is why LoRA is about 4 N;
- N leaves out the input embedding, a table lookup with no matrix product (torchtitan
  `get_num_params(model, exclude_embedding=True)` feeding `get_num_flop_per_token`,
  torchtitan commit 9dec370 of 2024-12-26, the one its H100 benchmarks ran); with tied
  embeddings the shared matrix is the output head's product and stays in;
- recomputation: gradient checkpointing as Transformers applies it (each decoder layer's
  forward again during the backward pass; the output head is not recomputed). Flash
  attention's own recomputation of the scores is not counted (torchtitan's convention).

Time = tokens x FLOPs per token / (cards x peak x utilisation); the utilisation is calibrated
per method on the runs of calc/data/throughput.json (`calibration`). With recomputation in the
count, it is the share of peak the hardware spends on these products, between MFU and HFU.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from importlib.resources import files
from typing import Any

from . import arch as arch_mod
from .engine import Inputs, trainable_params
from .engine.textbook import lora_experts
from .types import Architecture, Method, Optimizer, Targets

__all__ = [
    "TrainFlops", "active_params", "active_adapter_params", "matmul_params", "layer_params", "train_flops",
    "ThroughputRun", "Calibration", "throughput_runs", "calibration", "utilisation",
]

#: FLOP components per token, in the order JSON and the breakdown list them.
FLOP_COMPONENTS = ("forward", "backward_activations", "backward_weights", "recompute")


def active_params(arch: Architecture) -> int:
    """The parameters one token passes through (calc.arch.active_params, embeddings counted):
    dense models all of them; mixture-of-experts models all but the routed experts a token is
    not sent to."""
    return arch_mod.active_params(arch)


def active_adapter_params(inputs: Inputs) -> int:
    """The adapter parameters one token passes through: all of them on a dense model; on a
    mixture-of-experts model with adapted experts only those of the experts it is routed to
    (calc.arch.LoraModule.per_token)."""
    if inputs.method is Method.FULL:
        return 0
    arch = inputs.arch
    if not arch.experts:
        return trainable_params(inputs)
    mods = arch_mod.lora_modules(arch, inputs.targets, experts=lora_experts(inputs))
    return sum(m.per_token * inputs.rank * (m.d_in + m.d_out) for m in mods)


def matmul_params(arch: Architecture) -> int:
    """Active parameters used as matrix products: the input embedding is a lookup (left out
    unless it is tied to the output head, whose product it then is)."""
    return active_params(arch) - (0 if arch.tied else arch.vocab * arch.hidden)


def layer_params(arch: Architecture) -> int:
    """Matrix-product parameters of the decoder layers alone (no output head): what
    gradient checkpointing runs forward again."""
    return max(0, matmul_params(arch) - arch.vocab * arch.hidden)


@dataclass(frozen=True)
class TrainFlops:
    """Training FLOPs per token, by component (integers)."""

    components: tuple[tuple[str, int], ...]
    attention: int  # the attention products' share of the total (4 + 8 (+ 4) L H Q T)

    @property
    def per_token(self) -> int:
        return sum(v for _, v in self.components)

    def get(self, name: str) -> int:
        return dict(self.components)[name]

    def to_json(self) -> dict[str, object]:
        return {"per_token": self.per_token, "components": dict(self.components),
                "attention": self.attention}


def train_flops(inputs: Inputs) -> TrainFlops:
    """FLOPs per trained token of `inputs` (see the module docstring for the formula)."""
    arch = inputs.arch
    n = matmul_params(arch)
    adapter = active_adapter_params(inputs)
    weights = n if inputs.method is Method.FULL else adapter
    attn = arch.layers * arch.heads * arch.head_dim * inputs.seq  # L H Q T
    forward = 2 * (n + adapter) + 4 * attn
    recompute = 2 * (layer_params(arch) + adapter) + 4 * attn if inputs.ckpt else 0
    components = (
        ("forward", forward),
        ("backward_activations", 2 * (n + adapter) + 8 * attn),
        ("backward_weights", 2 * weights),
        ("recompute", recompute),
    )
    return TrainFlops(components, attn * (16 if inputs.ckpt else 12))


# --- calibration ------------------------------------------------------------------------


@dataclass(frozen=True)
class ThroughputRun:
    """One published run of calc/data/throughput.json."""

    id: str
    inputs: Inputs
    gpu: str
    cards: int
    tokens_per_s: Fraction  # per card
    source: str
    compile: bool
    packed: bool

    def utilisation(self) -> Fraction:
        """The share of the card's peak this run's tokens per second imply."""
        from .catalog import gpu

        peak = gpu(self.gpu).peak_flops
        if not peak:
            raise ValueError(f"throughput.json: {self.id}: {self.gpu} has no peak throughput")
        return self.tokens_per_s * train_flops(self.inputs).per_token / peak


def _run(entry: dict[str, Any]) -> ThroughputRun:
    from .catalog import model

    preset = model(entry["model"])
    method = Method(entry["method"])
    kw: dict[str, Any] = dict(model=preset.id, method=method, seq=int(entry["seq"]),
                              batch=int(entry["batch"]), ckpt=bool(entry["ckpt"]),
                              optimizer=Optimizer(entry["optimizer"]))
    if method is not Method.FULL:
        kw.update(rank=int(entry["rank"]), targets=Targets(entry["targets"]))
    cards = int(entry["cards"])
    if cards < 1 or int(entry["tokens_per_s"]) <= 0:
        raise ValueError(f"throughput.json: {entry['id']}: cards and tokens_per_s must be positive")
    tps = Fraction(str(entry["tokens_per_s"]))
    if not entry["per_card"]:
        tps /= cards
    return ThroughputRun(entry["id"], Inputs(arch=preset.arch, **kw), entry["gpu"], cards, tps,
                         entry["source"], bool(entry["compile"]), bool(entry["packed"]))


@lru_cache(maxsize=None)
def throughput_runs() -> tuple[ThroughputRun, ...]:
    data = json.loads((files("calc") / "data" / "throughput.json").read_text(encoding="utf-8"))
    return tuple(_run(e) for e in data["runs"])


@dataclass(frozen=True)
class Calibration:
    """One utilisation per method: the median of what its published runs imply."""

    by_method: tuple[tuple[Method, Fraction], ...]
    runs: tuple[tuple[ThroughputRun, Fraction], ...]  # each run and its implied utilisation

    def get(self, method: Method) -> Fraction:
        return dict(self.by_method)[method]

    def errors(self) -> tuple[tuple[ThroughputRun, Fraction], ...]:
        """Each run's time error: estimated time / measured time - 1 (positive: too slow)."""
        return tuple((r, u / self.get(r.inputs.method) - 1) for r, u in self.runs)

    def median_abs_error(self) -> Fraction:
        return Fraction(statistics.median(abs(e) for _, e in self.errors()))


@lru_cache(maxsize=None)
def calibration() -> Calibration:
    runs = tuple((r, r.utilisation()) for r in throughput_runs())
    by_method = []
    for method in Method:
        implied = [u for r, u in runs if r.inputs.method is method]
        if not implied:
            raise ValueError(f"throughput.json: no run for method {method.value}")
        by_method.append((method, Fraction(statistics.median(implied))))
    return Calibration(tuple(by_method), runs)


def utilisation(inputs: Inputs) -> Fraction:
    """The calibrated utilisation for `inputs`' method."""
    return calibration().get(inputs.method)
