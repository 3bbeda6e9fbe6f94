"""A pasted Hugging Face `config.json` -> Architecture.

Key names of the Llama, Mistral, Qwen2, Gemma 2 and Phi-3 configurations (and GPT-style
aliases); multimodal configs are read from their `text_config`. Errors are CalcError on the
`config` field.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import CalcError
from .types import Architecture

FIELD = "config"
ALIASES: dict[str, tuple[str, ...]] = {
    "layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "hidden": ("hidden_size", "n_embd", "d_model"),
    "ffn": ("intermediate_size", "n_inner", "ffn_dim"),
    "heads": ("num_attention_heads", "n_head"),
    "kv_heads": ("num_key_value_heads", "num_kv_heads"),
    "head_dim": ("head_dim",),
    "vocab": ("vocab_size",),
}
#: Families whose q, k and v projections carry a bias (counted in the parameter total).
QKV_BIAS_TYPES = frozenset({"qwen2"})
#: Families whose config class ties embeddings unless told otherwise.
TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3_text"})
MAX_DIM = 10**7
#: Deepest nesting read: json.loads recurses per level, and in Pyodide the JavaScript stack
#: overflows (a fatal error, not a RecursionError) long before Python's recursion limit.
MAX_DEPTH = 32


def _depth(text: str) -> int:
    """Deepest [ / { nesting of a JSON text, strings skipped, without recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _fail(code: str, **params: object) -> CalcError:
    return CalcError.one(FIELD, code, **params)


def _int(cfg: dict[str, Any], name: str, required: bool = True) -> int | None:
    for key in ALIASES[name]:
        if key in cfg and cfg[key] is not None:
            v = cfg[key]
            if isinstance(v, bool) or not isinstance(v, int) or not 0 < v <= MAX_DIM:
                raise _fail("json_bad_value", key=key)
            return v
    if required:
        raise _fail("json_missing", key=ALIASES[name][0])
    return None


def parse_config(text: str) -> Architecture:
    from .catalog import count_params_of

    if _depth(text) > MAX_DEPTH:
        raise _fail("json_too_deep", max=MAX_DEPTH)
    try:
        cfg = json.loads(text)
    except (ValueError, RecursionError) as err:
        line = getattr(err, "lineno", 1)
        col = getattr(err, "colno", 1)
        raise _fail("json_syntax", line=line, column=col) from None
    if not isinstance(cfg, dict):
        raise _fail("json_not_object")
    if "num_hidden_layers" not in cfg and isinstance(cfg.get("text_config"), dict):
        cfg = {**cfg, **cfg["text_config"]}
    experts = cfg.get("num_local_experts") or cfg.get("num_experts") or 0
    if isinstance(experts, int) and not isinstance(experts, bool) and experts > 1:
        raise _fail("unsupported_arch", value=str(cfg.get("model_type", "moe"))[:40])
    layers, hidden, ffn, heads = (_int(cfg, n) for n in ("layers", "hidden", "ffn", "heads"))
    vocab = _int(cfg, "vocab")
    kv = _int(cfg, "kv_heads", required=False) or heads
    head_dim = _int(cfg, "head_dim", required=False) or max(1, hidden // heads)  # type: ignore[operator]
    if heads % kv:  # type: ignore[operator]
        raise _fail("json_bad_value", key="num_key_value_heads")
    model_type = str(cfg.get("model_type", ""))
    tied_raw = cfg.get("tie_word_embeddings", model_type in TIED_BY_DEFAULT)
    if not isinstance(tied_raw, bool):
        raise _fail("json_bad_value", key="tie_word_embeddings")
    params = count_params_of(layers, hidden, ffn, heads, kv, head_dim, vocab, tied_raw,  # type: ignore[arg-type]
                             qkv_bias=model_type in QKV_BIAS_TYPES or bool(cfg.get("attention_bias")))
    return Architecture(params, layers, hidden, ffn, heads, kv, head_dim, vocab, tied_raw)  # type: ignore[arg-type]
