"""The formulas. Everything here is integer bytes (or exact fractions) until a figure is shown.

Two models of peak memory (engine.md section 0), chosen by `Inputs.mode`:

- the realistic model (`mode=detailed`, the default): a named training stack's step, term by
  term (calc/engine/realistic.py, stacks in calc/data/stacks.json read by calc/engine/stacks.py);
- the textbook formula (`mode=planning`): engine.md section 1 exactly (calc/engine/textbook.py).

Also here: which GPUs fit (fit.py), the small calculators (calculators.py) and every constant
with its source (constants.py). `from calc.engine import estimate, ...` and `calc.engine.NAME`
reach all of them.
"""

from __future__ import annotations

from ..types import Mode
from .calculators import Number, cost, quick_full, rule_of_thumb
from .constants import *  # noqa: F401,F403 (the constants are the engine's public vocabulary)
from .constants import adapter_state_bytes
from . import constants as _constants_module
from .fit import GpuFit, fewest_cards, fits_on, gpu_fit, usable_bytes
from .model import Estimate, Inputs
from .realistic import (adapter_input_bytes_per_token, estimate_realistic, full_state_bytes,
                        gradient_bytes,
                        largest_trainable_tensor, layer_activation_bytes_per_token, logits_bytes,
                        step_temp_per_param, unquantized_params)
from .stacks import KNOBS, Knobs, Stack, applies, knobs_of, stack, stacks
from .textbook import (_round, activation_bytes, adapter_bytes, base_weight_bytes, estimate_planning,
                       lora_layer_params, lora_trainable_params, max_rank, trainable_params)


def estimate(inputs: Inputs) -> Estimate:
    """Peak training memory on one card (no sharding), by component, in bytes, in the model
    `inputs.mode` names."""
    if inputs.mode is Mode.PLANNING:
        return estimate_planning(inputs)
    return estimate_realistic(inputs)


#: The detailed model under its earlier name.
estimate_detailed = estimate_realistic

__all__ = sorted(
    [n for n in vars(_constants_module) if n.isupper()]
    + ["Number", "cost", "quick_full", "rule_of_thumb", "GpuFit", "fewest_cards", "fits_on",
       "gpu_fit", "usable_bytes", "Estimate", "Inputs", "adapter_input_bytes_per_token",
       "estimate_realistic", "estimate_detailed", "full_state_bytes", "gradient_bytes",
       "largest_trainable_tensor",
       "layer_activation_bytes_per_token", "logits_bytes", "step_temp_per_param",
       "unquantized_params", "KNOBS", "Knobs", "Stack", "applies", "knobs_of", "stack", "stacks",
       "activation_bytes", "adapter_bytes", "base_weight_bytes", "estimate_planning",
       "lora_layer_params", "lora_trainable_params", "max_rank", "trainable_params", "estimate",
       "adapter_state_bytes"]
)
