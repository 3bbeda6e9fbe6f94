"""`calc`: GPU memory for fine-tuning LLMs, the one source of every figure on the site.

Standard library only; runs unchanged in CPython and in Pyodide.
"""

from .engine import Estimate, GpuFit, Inputs, estimate, gpu_fit
from .errors import CalcError, Problem
from .fields import parse, to_query
from .types import Architecture, GpuKind, Method, Mode, Optimizer, Targets, Unit

__version__ = "0.1.0"

__all__ = [
    "Architecture", "CalcError", "Estimate", "GpuFit", "GpuKind", "Inputs", "Method", "Mode",
    "Optimizer", "Problem", "Targets", "Unit", "estimate", "gpu_fit", "parse", "to_query",
]
