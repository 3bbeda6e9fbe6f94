"""A card's display name in a locale (`gpu_label`): the model name in Latin letters, the memory
size written by `fmt` in the locale's digits, the words from the catalogs."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from .fmt import fmt
from .i18n import normalize_locale, t

if TYPE_CHECKING:  # pragma: no cover
    from .catalog import Gpu


def gpu_label(card: Gpu | str, locale: str) -> str:
    """The display name of a card (a `Gpu` or its id) in `locale`, as plain (unescaped) text.

    product: the model name as is ("NVIDIA GeForce RTX 4090"); product-memory: the catalog's
    `gpu.label.product-memory` with the model name and the advertised memory written by `fmt`
    ("NVIDIA A100 80 GB"; Persian digits on fa); apple-silicon-mac: `gpu.label.apple-silicon-mac`
    with the memory ("Mac with Apple silicon, 36 GB").
    """
    gpu_id = card if isinstance(card, str) else card.id
    return _label(gpu_id, normalize_locale(locale))


@lru_cache(maxsize=None)
def _label(gpu_id: str, loc: str) -> str:
    from .catalog import gpu

    g = gpu(gpu_id)
    if g.label == "product" and g.product is not None:
        return g.product
    memory = fmt(g.advertised_bytes, "GB", loc, 0)
    return t(f"gpu.label.{g.label}", loc, product=g.product or "", memory=memory)
