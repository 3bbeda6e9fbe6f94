"""Model presets and the GPU catalog, read from `calc/data/*.json`.

The data are files, not code: `calc/data/models.json` holds the architecture of widely used
open models (shapes from each model's own `config.json`, exact parameter counts of the published
weights) and `calc/data/gpus.json` the cards and Apple unified-memory sizes with their memory and
an example hourly price. Both are read once with `importlib.resources` (works from a source
tree, an installed wheel and Pyodide alike) and cached.

`count_params` recomputes a dense model's total parameter count from its shapes, and
`ModelPreset.counted_params` any preset's (mixture-of-experts and latent attention through
`calc.arch.params`); the unit tests use them as an independent check of every preset's `params`.
A mixture-of-experts preset also records the published totals (`published`: total and active
parameters as the model card or paper states them, with the source), and each preset its kind
(`dense` or `moe`) for the model picker.

Re-exported here: `gpu_label` (calc.gpu_labels), `model_label` and `resolve_model` (calc.model_names).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from importlib.resources import files
from typing import Any, Mapping, Protocol

from . import arch as arch_mod
from .errors import CalcError
from .types import Architecture, GpuKind

__all__ = [
    "CatalogDataError",
    "Gpu",
    "ModelPreset",
    "Published",
    "count_params",
    "count_params_of",
    "GPU_LABELS",
    "gpu",
    "gpu_ids",
    "gpu_label", "model_label",
    "gpus",
    "model",
    "model_ids",
    "models",
]

GIB: int = 2**30
GB: int = 10**9
#: How a card's display name is built (the `label` of gpus.json): the model name alone, the
#: model name and its memory, a Mac with Apple silicon of a memory size (no model name).
GPU_LABELS: tuple[str, ...] = ("product", "product-memory", "apple-silicon-mac")
ID_PATTERN: re.Pattern[str] = re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*")

_ARCH_KEYS: tuple[str, ...] = (
    "params",
    "layers",
    "hidden",
    "ffn",
    "heads",
    "kv_heads",
    "head_dim",
    "vocab",
)
#: Optional architecture keys of models.json (0 / default: dense, standard attention).
_ARCH_OPTIONAL_INTS: tuple[str, ...] = tuple(k for k in arch_mod.FIELD_LIMITS if k != "moe_every")
_LAYOUT_BOOLS: tuple[str, ...] = ("qkv_bias", "o_bias", "sinks", "router_bias", "expert_bias")
KINDS: tuple[str, ...] = ("dense", "moe")
QK_NORMS: tuple[str, ...] = ("none", "head", "full")


class CatalogDataError(RuntimeError):
    """A packaged data file is malformed: a defect of the build, never of the reader's input."""


class ArchShape(Protocol):
    """What `count_params` reads: any object with these attributes (e.g. `Architecture`)."""

    @property
    def layers(self) -> int: ...
    @property
    def hidden(self) -> int: ...
    @property
    def ffn(self) -> int: ...
    @property
    def heads(self) -> int: ...
    @property
    def kv_heads(self) -> int: ...
    @property
    def head_dim(self) -> int: ...
    @property
    def vocab(self) -> int: ...
    @property
    def tied(self) -> bool: ...


@dataclass(frozen=True)
class Published:
    """A model's size as its authors state it: total parameters and, for a mixture-of-experts
    model, the parameters active per token, with where it is said. `part` is "text" when the
    preset is the language model of a multimodal checkpoint (its vision tower left out);
    `active_embeddings` says whether the stated active figure counts the input embedding
    (Mistral AI, Qwen, Meta) or not (OpenAI's gpt-oss card, DeepSeek)."""

    params: int
    source: str
    active: int | None = None
    active_embeddings: bool = True
    part: str = "all"
    note: str = ""


@dataclass(frozen=True)
class ModelPreset:
    """A named open model and its architecture.

    `layout` holds the few terms in which a family departs from the plain Llama layout (q/k/v
    biases, norms per layer, q/k norms, gpt-oss's sinks and expert biases); they only matter to
    the parameter count. `experts_checkpoint` is the storage of the routed experts in the
    published checkpoint when it is not the training dtype (gpt-oss: "mxfp4"; transformers
    dequantises it to BF16 for training, see calc.arch.EXPERTS_TRAINING_DTYPE).
    """

    id: str
    name: str
    family: str
    arch: Architecture
    source: str
    layout: arch_mod.Layout = arch_mod.Layout()
    kind: str = "dense"
    published: Published | None = None
    experts_checkpoint: str | None = None

    @property
    def qkv_bias(self) -> bool:
        return self.layout.qkv_bias

    @property
    def norms_per_layer(self) -> int:
        return self.layout.norms_per_layer

    @property
    def qk_norm(self) -> bool:
        return self.layout.qk_norm != "none"

    @property
    def params(self) -> int:
        return self.arch.params

    @property
    def active_params(self) -> int:
        """Parameters per token (calc.arch.active_params; embeddings counted)."""
        return arch_mod.active_params(self.arch, self.layout)

    def counted_params(self) -> int:
        """Total parameters recomputed from the shapes (equals `params` for every preset)."""
        return arch_mod.params(self.arch, self.layout)


@dataclass(frozen=True)
class Gpu:
    """One card (kind discrete) or one Apple unified-memory size (kind unified).

    `product` is the model name ("NVIDIA A100"; None for a Mac, which is a memory size, not a
    model) and `label` one of `GPU_LABELS`; what readers see is `gpu_label(gpu, locale)`.
    """

    id: str
    product: str | None
    label: str
    vendor: str
    kind: GpuKind
    memory_bytes: int  # advertised "GB" of the vendor, read as GiB: memory_gib * 2**30
    price_per_hour: Decimal | None  # example USD per hour without VAT, or None if not known
    use: str  # short id the site translates (consumer, workstation, ...)
    #: Peak dense BF16 tensor throughput in TFLOPS and peak memory bandwidth in GB/s, from the
    #: vendor's datasheet (gpus.json `_about` names each); None where no vendor figure exists.
    peak_bf16_tflops: Decimal | None = None
    bandwidth_gbs: Decimal | None = None

    @property
    def peak_flops(self) -> int | None:
        """Peak dense BF16 FLOP/s (an integer: TFLOPS figures have at most two decimals)."""
        if self.peak_bf16_tflops is None:
            return None
        return int(self.peak_bf16_tflops * 10**12)

    @property
    def memory_gib(self) -> int:
        return self.memory_bytes // GIB

    @property
    def advertised_bytes(self) -> int:
        """The memory size as the vendor's name of the card says it ("A100 80 GB"), in bytes
        of the unit GB, so that `fmt(..., "GB", locale, 0)` writes the advertised number."""
        return self.memory_gib * GB


def count_params(
    arch: ArchShape | Mapping[str, Any],
    *,
    qkv_bias: bool = False,
    norms_per_layer: int = 2,
    qk_norm: bool = False,
) -> int:
    """Total parameters of a decoder-only transformer with a gated (SwiGLU-style) MLP.

    embeddings (vocab x hidden), plus the output head unless tied, plus per layer:
    q (hidden x heads*head_dim), k and v (hidden x kv_heads*head_dim), o (heads*head_dim x
    hidden), gate and up (hidden x ffn), down (ffn x hidden), `norms_per_layer` RMSNorm weights
    of size hidden, optional q/k/v biases and optional per-head q/k norms (head_dim each);
    plus the final norm (hidden). Rotary embeddings have no parameters.

    `arch` is an `Architecture` (its `params` is ignored) or a mapping with the same keys.
    """

    def get(key: str) -> Any:
        return arch[key] if isinstance(arch, Mapping) else getattr(arch, key)

    return count_params_of(
        int(get("layers")),
        int(get("hidden")),
        int(get("ffn")),
        int(get("heads")),
        int(get("kv_heads")),
        int(get("head_dim")),
        int(get("vocab")),
        bool(get("tied")),
        qkv_bias=qkv_bias,
        norms_per_layer=norms_per_layer,
        qk_norm=qk_norm,
    )


def count_params_of(
    layers: int,
    hidden: int,
    ffn: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    vocab: int,
    tied: bool,
    *,
    qkv_bias: bool = False,
    norms_per_layer: int = 2,
    qk_norm: bool = False,
) -> int:
    """`count_params` from the shapes given one by one (for a custom model or a config.json)."""
    q_dim = heads * head_dim
    kv_dim = kv_heads * head_dim
    per_layer = (
        hidden * q_dim  # q
        + 2 * hidden * kv_dim  # k, v
        + q_dim * hidden  # o
        + 3 * hidden * ffn  # gate, up, down
        + norms_per_layer * hidden
    )
    if qkv_bias:
        per_layer += q_dim + 2 * kv_dim
    if qk_norm:
        per_layer += 2 * head_dim
    embeddings = vocab * hidden * (1 if tied else 2)
    return embeddings + layers * per_layer + hidden


# --- loading -------------------------------------------------------------------------------


def _read(name: str) -> dict[str, Any]:
    text = (files("calc") / "data" / name).read_text(encoding="utf-8")
    data = json.loads(text)
    if not isinstance(data, dict):
        raise CatalogDataError(f"{name}: top level is not an object")
    return data


def _check_id(name: str, entry_id: object, seen: set[str]) -> str:
    if not isinstance(entry_id, str) or not ID_PATTERN.fullmatch(entry_id):
        raise CatalogDataError(f"{name}: id {entry_id!r} is not a lowercase slug")
    if entry_id in seen:
        raise CatalogDataError(f"{name}: duplicate id {entry_id!r}")
    seen.add(entry_id)
    return entry_id


def _str(name: str, entry: Mapping[str, Any], key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CatalogDataError(f"{name}: {entry.get('id')!r}: {key} must be a non-empty string")
    return value


def _positive_int(name: str, entry: Mapping[str, Any], key: str) -> int:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise CatalogDataError(f"{name}: {entry.get('id')!r}: {key} must be a positive integer")
    return value


def _bool(name: str, entry: Mapping[str, Any], key: str, default: bool | None = None) -> bool:
    value = entry.get(key, default)
    if not isinstance(value, bool):
        raise CatalogDataError(f"{name}: {entry.get('id')!r}: {key} must be true or false")
    return value


def _entries(name: str, data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    entries = data.get(key)
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise CatalogDataError(f"{name}: '{key}' must be a list of objects")
    return entries


def _int_at_least(name: str, entry: Mapping[str, Any], key: str, low: int, default: int) -> int:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise CatalogDataError(f"{name}: {entry.get('id')!r}: {key} must be an integer >= {low}")
    return value


def _published(name: str, entry: Mapping[str, Any]) -> Published | None:
    pub = entry.get("published")
    if pub is None:
        return None
    if not isinstance(pub, dict):
        raise CatalogDataError(f"{name}: {entry.get('id')!r}: published must be an object")
    where = {**pub, "id": f"{entry.get('id')}.published"}
    active = pub.get("active")
    if active is not None:
        active = _positive_int(name, where, "active")
    part = pub.get("part", "all")
    if part not in ("all", "text"):
        raise CatalogDataError(f"{name}: {entry.get('id')!r}: published.part must be all or text")
    note = pub.get("note", "")
    if not isinstance(note, str):
        raise CatalogDataError(f"{name}: {entry.get('id')!r}: published.note must be a string")
    return Published(
        params=_positive_int(name, where, "params"),
        source=_str(name, where, "source"),
        active=active,
        active_embeddings=_bool(name, where, "active_embeddings", True),
        part=part,
        note=note,
    )


def _preset(entry: Mapping[str, Any], seen: set[str]) -> ModelPreset:
    name = "models.json"
    preset_id = _check_id(name, entry.get("id"), seen)
    shape = {k: _positive_int(name, entry, k) for k in _ARCH_KEYS}
    if shape["heads"] % shape["kv_heads"]:
        raise CatalogDataError(f"{name}: {preset_id!r}: kv_heads must divide heads")
    extra: dict[str, Any] = {k: _int_at_least(name, entry, k, 0, 0) for k in _ARCH_OPTIONAL_INTS}
    extra["moe_every"] = _int_at_least(name, entry, "moe_every", 1, 1)
    extra.update({k: _bool(name, entry, k, default) for k, default in
                  (("experts_fused", True), ("router_linear", False), ("fused_qkv", False))})
    arch = Architecture(tied=_bool(name, entry, "tied"), **shape, **extra)
    problems = arch_mod.problems(arch)
    if problems:
        raise CatalogDataError(f"{name}: {preset_id!r}: {problems[0].field}: {problems[0].code}")
    qk_norm = entry.get("qk_norm", False)
    if isinstance(qk_norm, bool):
        qk_norm = "head" if qk_norm else "none"
    if qk_norm not in QK_NORMS:
        raise CatalogDataError(f"{name}: {preset_id!r}: qk_norm must be true, false or 'full'")
    layout = arch_mod.Layout(
        norms_per_layer=_int_at_least(name, entry, "norms_per_layer", 0, 2),
        qk_norm=qk_norm,
        **{k: _bool(name, entry, k, False) for k in _LAYOUT_BOOLS},
    )
    kind = entry.get("kind")
    if kind not in KINDS or (kind == "moe") != arch_mod.is_moe(arch):
        raise CatalogDataError(f"{name}: {preset_id!r}: kind must be 'moe' exactly when experts > 0")
    checkpoint = entry.get("experts_checkpoint")
    if checkpoint is not None and checkpoint not in arch_mod.CHECKPOINT_DTYPES:
        raise CatalogDataError(f"{name}: {preset_id!r}: unknown experts_checkpoint {checkpoint!r}")
    return ModelPreset(
        id=preset_id,
        name=_str(name, entry, "name"),
        family=_str(name, entry, "family"),
        arch=arch,
        source=_str(name, entry, "source"),
        layout=layout,
        kind=kind,
        published=_published(name, entry),
        experts_checkpoint=checkpoint,
    )


def _price(entry: Mapping[str, Any]) -> Decimal | None:
    value = entry.get("price_per_hour")
    try:
        price = Decimal(value) if isinstance(value, str) else value
    except InvalidOperation:
        price = False
    if price is not None and not (isinstance(price, Decimal) and price.is_finite() and price >= 0):
        raise CatalogDataError(
            f"gpus.json: {entry.get('id')!r}: price_per_hour must be a decimal string or null")
    return price


def _positive_number(entry: Mapping[str, Any], key: str, hi: int) -> Decimal | None:
    """A positive finite JSON number up to `hi`, or null."""
    value = entry.get(key)
    if value is None:
        return None
    number = None if isinstance(value, bool) or not isinstance(value, (int, float)) \
        else Decimal(str(value))
    if number is None or not number.is_finite() or number <= 0 or number > hi:
        raise CatalogDataError(
            f"gpus.json: {entry.get('id')!r}: {key} must be a positive number up to {hi} or null")
    return number


def _gpu(entry: Mapping[str, Any], seen: set[str]) -> Gpu:
    name = "gpus.json"
    gpu_id = _check_id(name, entry.get("id"), seen)
    try:
        kind = GpuKind(entry.get("kind"))
    except ValueError:
        raise CatalogDataError(f"{name}: {gpu_id!r}: unknown kind {entry.get('kind')!r}") from None
    use = _str(name, entry, "use")
    if not ID_PATTERN.fullmatch(use):
        raise CatalogDataError(f"{name}: {gpu_id!r}: use must be a short lowercase id")
    label = entry.get("label")
    if label not in GPU_LABELS:
        raise CatalogDataError(f"{name}: {gpu_id!r}: label must be one of {', '.join(GPU_LABELS)}")
    product = None if label == "apple-silicon-mac" else _str(name, entry, "product")
    if label == "apple-silicon-mac" and entry.get("product") is not None:
        raise CatalogDataError(f"{name}: {gpu_id!r}: a Mac has no product name (null)")
    return Gpu(
        id=gpu_id,
        product=product,
        label=label,
        vendor=_str(name, entry, "vendor"),
        kind=kind,
        memory_bytes=_positive_int(name, entry, "memory_gib") * GIB,
        price_per_hour=_price(entry),
        use=use,
        peak_bf16_tflops=_positive_number(entry, "peak_bf16_tflops", 100_000),
        bandwidth_gbs=_positive_number(entry, "bandwidth_gbs", 1_000_000),
    )


@lru_cache(maxsize=None)
def models() -> tuple[ModelPreset, ...]:
    """Every model preset, in the file's order (by family, then size)."""
    seen: set[str] = set()
    data = _read("models.json")
    return tuple(_preset(e, seen) for e in _entries("models.json", data, "models"))


@lru_cache(maxsize=None)
def _models_by_id() -> dict[str, ModelPreset]:
    return {m.id: m for m in models()}


def model_ids() -> tuple[str, ...]:
    return tuple(m.id for m in models())


def model(preset_id: str) -> ModelPreset:
    """The preset with this id; `CalcError` (field `model`, code `unknown_model`) otherwise."""
    found = _models_by_id().get(preset_id) if isinstance(preset_id, str) else None
    if found is None:
        raise CalcError.one("model", "unknown_model", value=preset_id)
    return found


@lru_cache(maxsize=None)
def gpus() -> tuple[Gpu, ...]:
    """Every GPU and unified-memory size: discrete cards by memory, then Apple sizes."""
    seen: set[str] = set()
    data = _read("gpus.json")
    return tuple(_gpu(e, seen) for e in _entries("gpus.json", data, "gpus"))


@lru_cache(maxsize=None)
def _gpus_by_id() -> dict[str, Gpu]:
    return {g.id: g for g in gpus()}


def gpu_ids() -> tuple[str, ...]:
    return tuple(g.id for g in gpus())


def gpu(gpu_id: str) -> Gpu:
    """The GPU with this id; `CalcError` (field `gpu`, code `unknown_choice`) otherwise."""
    found = _gpus_by_id().get(gpu_id) if isinstance(gpu_id, str) else None
    if found is None:
        raise CalcError.one("gpu", "unknown_choice", value=gpu_id)
    return found


# Display names and name lookup live beside the catalog (one concern each); re-exported here.
from .gpu_labels import gpu_label  # noqa: E402,F401
from .model_names import hub_id, model_label, resolve_model  # noqa: E402,F401
