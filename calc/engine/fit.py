"""Which GPUs fit: one card within its usable share, or the fewest cards with ZeRO-3/FSDP."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..types import GpuKind
from .constants import DISCRETE_USABLE, MAX_CARDS, UNIFIED_USABLE
from .model import Estimate

if TYPE_CHECKING:  # pragma: no cover
    from ..catalog import Gpu


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


def fits_on(total: int, sharded: int, usable: int, unified: bool) -> tuple[bool, int | None]:
    """(fits on one, fewest cards) of one GPU with `usable` bytes, for an estimate's `total`
    and `sharded` bytes: `gpu_fit` without the objects (the worker asks on every edit)."""
    fits = total <= usable
    if unified:  # one machine; no sharding across laptops
        return fits, 1 if fits else None
    return fits, fewest_cards(sharded, total - sharded, usable)


def gpu_fit(est: Estimate, gpus: "tuple[Gpu, ...] | None" = None) -> tuple[GpuFit, ...]:
    if gpus is None:
        from ..catalog import gpus as catalog_gpus

        gpus = catalog_gpus()
    total, sharded = est.total, est.sharded  # sums: once, not once per card
    out = []
    for g in gpus:
        usable = usable_bytes(g)
        fits, cards = fits_on(total, sharded, usable, g.kind is GpuKind.UNIFIED)
        out.append(GpuFit(g, usable, fits, cards))
    return tuple(out)
