"""How far to trust the estimates: calc's two modes against measured peak memory.

Two data files, read with `importlib.resources` (so this works in the wheel and in Pyodide):

- `calc/data/measurements.json`: published runs (library docs and benchmark result files), each
  with its configuration in calc's interface fields, its training stack (`framework` and any knob
  in which the run differs from that stack's defaults: each run is estimated with its own stack),
  the GPU, the measured peak and what kind of figure it is (`allocated`, `reserved`,
  `nvidia-smi`), a source URL and notes;
- `calc/data/ground_truth.json`: our own runs (`bench/ground_truth.py`): real training steps of
  Llama-shaped models counted by PyTorch's MemTracker under fake tensors, with the peak and its
  breakdown by category. These are tensor bytes only (kind `tracker`).

Every estimate goes through the public interface: `calc.fields.parse` of the row's fields, then
`calc.engine.estimate`, once with `mode=planning` and once with `mode=detailed`.

What is compared, like with like: the engine's `overhead` term (1 GiB: CUDA context, allocator
cache, framework buffers) is what nvidia-smi sees beyond the tensors, and reserved memory holds
its allocator-cache part. So for `nvidia-smi` and `reserved` figures the estimate's total is
compared; for figures that count live tensors only (`allocated`:
torch.cuda.max_memory_allocated; `peak-active`: memory_stats active_bytes.all.peak; `tracker`:
our MemTracker runs) the total without the overhead. Relative error = (estimate - measured) / measured: positive when the
estimate is above the measurement (safe side), negative when below.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping

from .engine import Estimate, estimate
from .fields import FIELDS, parse

__all__ = ["Run", "Summary", "measurements", "ground_truth", "ground_truth_runs", "summary",
           "relative_error", "multi_gpu_runs", "PerGpu", "MODES", "KINDS", "TRACKER", "TENSOR_KINDS", "COMPONENT_MAP"]

GIB = 2**30
MODES = ("planning", "detailed")
#: What a measured figure is. `tracker`: bench/ground_truth.py (tensor bytes, no allocator cache,
#: no CUDA context).
KINDS = ("allocated", "peak-active", "reserved", "nvidia-smi", "tracker")
TRACKER = "tracker"
#: Kinds that count live tensors only: compared without the estimate's overhead.
TENSOR_KINDS = frozenset({"allocated", "peak-active", TRACKER})
#: Interface fields a row may carry (everything else in a row is metadata).
ROW_FIELDS = tuple(f for f in FIELDS if f not in ("unit", "mode", "config"))
#: Ground-truth categories (MemTracker) -> the realistic model's components they correspond to.
COMPONENT_MAP: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "weights": (("parameters", "buffers", "other"), ("base_weights", "kbit_upcast", "adapter_weights")),
    "gradients": (("gradients",), ("gradients",)),
    "optimizer": (("optimizer_state",), ("optimizer", "step_temporaries")),
    "activations": (("activations", "temporaries"),
                    ("checkpoints", "activations", "adapter_inputs", "logits", "previous_step")),
}
#: A row's `peak_step: first`: the published peak is the first training step's, where nothing
#: of an earlier step can be alive; these components are left out of what is compared.
EARLIER_STEP = ("previous_step",)


def relative_error(estimate_bytes: int, measured_bytes: int) -> Fraction:
    """(estimate - measured) / measured, exactly."""
    return Fraction(estimate_bytes - measured_bytes, measured_bytes)


@dataclass(frozen=True)
class Run:
    """One measured run and calc's two estimates of it."""

    id: str
    query: tuple[tuple[str, str], ...]  # interface fields, as text
    measured: int  # bytes
    kind: str
    gpu: str
    source: str
    notes: str
    planning: Estimate
    detailed: Estimate
    components: tuple[tuple[str, int], ...] = ()  # ground truth: bytes per category at the peak
    first_step: bool = False  # the peak is the first step's (row `peak_step: first`)

    def estimate(self, mode: str) -> Estimate:
        return self.planning if mode == "planning" else self.detailed

    def compared(self, mode: str) -> int:
        """The estimate's figure that is compared with the measurement (bytes)."""
        e = self.estimate(mode)
        total = e.total - sum(e.get(n) for n in EARLIER_STEP) if self.first_step else e.total
        return total - e.get("overhead") if self.kind in TENSOR_KINDS else total

    def error(self, mode: str) -> Fraction:
        return relative_error(self.compared(mode), self.measured)

    @property
    def fields(self) -> dict[str, str]:
        return dict(self.query)

    @property
    def framework(self) -> str:
        """The run's training stack (every run has one; `hf` when the row names none)."""
        return self.detailed.inputs.framework.value


@dataclass(frozen=True)
class Summary:
    """Median of the absolute relative errors and the worst (largest absolute) error, signed."""

    n: int
    median_abs: Fraction
    worst: Fraction
    worst_id: str
    within_10: int  # runs with |error| <= 10 %


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _query(row: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((k, _text(row[k])) for k in ROW_FIELDS if row.get(k) is not None)


def _measured(row: Mapping[str, Any]) -> int:
    if row.get("measured_bytes") is not None:
        return int(row["measured_bytes"])
    return int((Decimal(str(row["measured_gib"])) * GIB).to_integral_value())


def _estimates(query: tuple[tuple[str, str], ...]) -> tuple[Estimate, Estimate]:
    q = dict(query)
    out = []
    for mode in MODES:
        out.append(estimate(parse({**q, "mode": mode}, strict=True)))
    return out[0], out[1]


def _load(name: str) -> dict[str, Any]:
    text = (resources.files(__package__) / "data" / name).read_text(encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=None)
def measurements() -> tuple[Run, ...]:
    """The published runs of `calc/data/measurements.json`, with both estimates."""
    runs = []
    for row in _load("measurements.json")["runs"]:
        query = _query(row)
        planning, detailed = _estimates(query)
        first = row.get("peak_step", "any") == "first"
        runs.append(Run(row["id"], query, _measured(row), row["kind"], row["gpu"],
                        row["source"], row.get("notes", ""), planning, detailed,
                        first_step=first))
    return tuple(runs)


@dataclass(frozen=True)
class PerGpu:
    """One GPU's share of a multi-GPU run (`calc.scale.scaled`), read like an `Estimate`."""

    inputs: Any
    components: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        return sum(v for _, v in self.components)

    def get(self, name: str) -> int:
        return self.total if name == "total" else dict(self.components).get(name, 0)


#: The fields of a multi-GPU run beside the engine's (calc.scale).
SCALE_ROW_FIELDS = ("gpus", "sharding", "offload", "objective")


@lru_cache(maxsize=None)
def multi_gpu_runs() -> tuple[Run, ...]:
    """The published multi-GPU runs of `calc/data/measurements_multi.json`, each compared per
    GPU with both models' per-GPU figure (`calc.scale.scaled`: the strategy's shards, the
    layers every card gathers whole, offload)."""
    from .scale import parse_scale, scaled

    runs = []
    for row in _load("measurements_multi.json")["runs"]:
        query = _query(row)
        scale = parse_scale({k: _text(row[k]) for k in SCALE_ROW_FIELDS if row.get(k) is not None})
        per_gpu = []
        for mode in MODES:
            r = scaled(parse({**dict(query), "mode": mode}, strict=True), scale)
            per_gpu.append(PerGpu(r.inputs, r.gpu_components))
        scale_query = tuple((k, _text(row[k])) for k in SCALE_ROW_FIELDS if row.get(k) is not None)
        runs.append(Run(row["id"], query + scale_query, _measured(row), row["kind"], row["gpu"],
                        row["source"], row.get("notes", ""), per_gpu[0], per_gpu[1]))
    return tuple(runs)


@lru_cache(maxsize=None)
def ground_truth() -> dict[str, Any]:
    """`calc/data/ground_truth.json` as stored (runs, versions, date)."""
    return _load("ground_truth.json")


def _gt_id(row: Mapping[str, Any]) -> str:
    if row.get("name"):  # bench/ground_truth.py names every run (knob runs share the settings)
        return str(row["name"])
    parts = [row["model"], row["method"], f"s{row['seq']}", "ckpt" if row["ckpt"] else "no-ckpt"]
    if not row.get("flash", True):
        parts.append("eager")
    return "-".join(parts)


@lru_cache(maxsize=None)
def ground_truth_runs() -> tuple[Run, ...]:
    """Our own runs as `Run`s (kind `tracker`), with both estimates."""
    doc = ground_truth()
    runs = []
    for row in doc["runs"]:
        query = _query(row)
        planning, detailed = _estimates(query)
        runs.append(Run(_gt_id(row), query, int(row["peak_bytes"]), TRACKER, "CPU (fake tensors)",
                        "bench/ground_truth.py", row.get("notes", ""), planning, detailed,
                        tuple((k, int(v)) for k, v in row["components"].items())))
    return tuple(runs)


def summary(runs: tuple[Run, ...], mode: str) -> Summary:
    errors = [(abs(r.error(mode)), r.error(mode), r.id) for r in runs]
    if not errors:
        raise ValueError("no runs")
    median = statistics.median(a for a, _, _ in errors)
    _, worst, worst_id = max(errors, key=lambda x: x[0])
    within = sum(1 for a, _, _ in errors if a <= Fraction(1, 10))
    return Summary(len(errors), Fraction(median), worst, worst_id, within)


def component_errors(run: Run) -> dict[str, tuple[int, int]]:
    """Ground truth vs detailed mode, by component group: {group: (measured, detailed)}."""
    measured = dict(run.components)
    return {group: (sum(measured.get(c, 0) for c in cats), sum(run.detailed.get(c) for c in comps))
            for group, (cats, comps) in COMPONENT_MAP.items()}
