"""A pasted Hugging Face `config.json` -> Architecture.

Families read (key names and defaults of their transformers 5.24.0 configuration classes):
Llama, Mistral, Mixtral, Qwen2/2.5, Qwen3, Qwen3-MoE, Gemma/Gemma 2/Gemma 3, Phi-3/Phi-4,
DeepSeek-V2/V3, gpt-oss, OLMo 2, OLMoE and Llama 4; other dense decoders with the usual keys
(and GPT-style aliases) are read as Llama-shaped. A multimodal configuration
(Gemma3ForConditionalGeneration, Llama4ForConditionalGeneration, ...) is read from its
`text_config`: the language model is counted, the vision tower and the projector are not, and
`read_config(...).left_out` names what was left out. DeepSeek-V3's multi-token-prediction layers
(num_nextn_predict_layers) are not counted either: transformers does not load them.

Errors are CalcError on the `config` field; `key` names the JSON key at fault.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from . import arch as arch_mod
from .arch import Layout
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
TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3_text", "gemma3"})
#: Keys that mark a mixture-of-experts configuration (any family).
EXPERT_KEYS: tuple[str, ...] = ("num_local_experts", "num_experts", "n_routed_experts")
#: Defaults of Gemma3TextConfig (transformers 5.24.0 configuration_gemma3.py): the text_config
#: of the Gemma 3 4B-27B checkpoints omits them.
GEMMA3_TEXT_DEFAULTS: dict[str, Any] = {
    "vocab_size": 262_208, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
    "tie_word_embeddings": True,
}
#: Layout by model_type: the terms only the parameter count needs (see calc.arch.Layout).
LAYOUTS: dict[str, Layout] = {
    "qwen2": Layout(qkv_bias=True),
    "qwen3": Layout(qk_norm="head"),
    "qwen3_moe": Layout(qk_norm="head"),
    "gemma2": Layout(norms_per_layer=4),
    "gemma3_text": Layout(norms_per_layer=4, qk_norm="head"),
    "olmo2": Layout(qk_norm="full"),
    "olmoe": Layout(qk_norm="full"),
    "gpt_oss": Layout(qkv_bias=True, o_bias=True, sinks=True, router_bias=True, expert_bias=True),
}
MOE_TYPES = frozenset({"mixtral", "qwen3_moe", "olmoe", "deepseek_v2", "deepseek_v3", "gpt_oss",
                       "llama4_text"})
MAX_DIM = 10**7
#: Deepest nesting read: json.loads recurses per level, and in Pyodide the JavaScript stack
#: overflows (a fatal error, not a RecursionError) long before Python's recursion limit.
MAX_DEPTH = 32


@dataclass(frozen=True)
class ConfigReading:
    """What a config.json gave: the architecture (params counted from it), the layout terms
    of its family, its model_type, which part of a multimodal checkpoint was counted
    ("all" or "text") and the sub-configurations left out, and the storage of the experts in
    the checkpoint when it is not the training dtype (gpt-oss: "mxfp4")."""

    arch: Architecture
    layout: Layout
    model_type: str
    part: str = "all"
    left_out: tuple[str, ...] = ()
    experts_checkpoint: str | None = None


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


def _value(cfg: dict[str, Any], key: str, low: int = 1) -> int | None:
    """An integer key: None when absent or null, CalcError when not an integer in range."""
    v = cfg.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= MAX_DIM:
        raise _fail("json_bad_value", key=key)
    return v


def _need(cfg: dict[str, Any], key: str, low: int = 1) -> int:
    v = _value(cfg, key, low)
    if v is None:
        raise _fail("json_missing", key=key)
    return v


def _int(cfg: dict[str, Any], name: str, required: bool = True) -> int | None:
    for key in ALIASES[name]:
        v = _value(cfg, key)
        if v is not None:
            return v
    if required:
        raise _fail("json_missing", key=ALIASES[name][0])
    return None


def _flag(cfg: dict[str, Any], key: str, default: bool) -> bool:
    v = cfg.get(key, default)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise _fail("json_bad_value", key=key)
    return v


def _load(text: str) -> dict[str, Any]:
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
    return cfg


def _text_part(cfg: dict[str, Any]) -> tuple[dict[str, Any], str, tuple[str, ...]]:
    """The language model's keys of a multimodal config (text_config over the top level)."""
    text = cfg.get("text_config")
    if "num_hidden_layers" in cfg or not isinstance(text, dict):
        return cfg, "all", ()
    merged = {k: v for k, v in cfg.items() if k != "text_config"}
    if str(text.get("model_type", "")) == "gemma3_text":
        merged.update(GEMMA3_TEXT_DEFAULTS)
    merged.update(text)
    if "model_type" not in text and merged.get("model_type") == "llama4":
        merged["model_type"] = "llama4_text"
    left = tuple(k for k in ("vision_config", "audio_config", "vision_tower") if k in cfg)
    return merged, "text", left or ("vision_config",)


def _experts_key(cfg: dict[str, Any]) -> tuple[str, int] | None:
    """The routed-expert count and its key; CalcError when two keys disagree."""
    found = [(k, _value(cfg, k, 0)) for k in EXPERT_KEYS if cfg.get(k) is not None]
    for k, v in found[1:]:
        if v != found[0][1]:
            raise _fail("json_conflict", key=k, value=found[0][0])
    return (found[0][0], found[0][1]) if found else None  # type: ignore[return-value]


def _moe_fields(cfg: dict[str, Any], model_type: str, experts: tuple[str, int]) -> dict[str, Any]:
    """Architecture fields of a mixture-of-experts family (transformers 5.24.0 key names)."""
    key, n = experts
    if n < 2:
        raise _fail("json_bad_value", key=key)
    k_key = "num_experts_per_tok"
    if cfg.get(k_key) is None and cfg.get("experts_per_token") is not None:
        k_key = "experts_per_token"  # gpt-oss carries both
    top_k = _need(cfg, k_key)
    other = cfg.get("experts_per_token")
    if k_key == "num_experts_per_tok" and other is not None and other != top_k:
        raise _fail("json_conflict", key="experts_per_token", value=k_key)
    if top_k > n:
        raise _fail("json_conflict", key=k_key, value=key)
    out: dict[str, Any] = {"experts": n, "experts_active": top_k}
    if model_type in ("mixtral", "olmoe", "gpt_oss"):
        out["expert_ffn"] = _need(cfg, "intermediate_size")
    elif model_type == "qwen3_moe":
        out["expert_ffn"] = _need(cfg, "moe_intermediate_size")
        out["moe_every"] = _value(cfg, "decoder_sparse_step") or 1
        only = cfg.get("mlp_only_layers") or []
        if not isinstance(only, list) or only != list(range(len(only))):
            raise _fail("json_bad_value", key="mlp_only_layers")  # leading dense layers only
        out["dense_layers"] = len(only)
    elif model_type in ("deepseek_v2", "deepseek_v3"):
        out["expert_ffn"] = _need(cfg, "moe_intermediate_size")
        out["shared_experts"] = _value(cfg, "n_shared_experts", 0) or 0
        out["dense_layers"] = _value(cfg, "first_k_dense_replace", 0) or 0
        if (_value(cfg, "moe_layer_freq") or 1) != 1:
            raise _fail("json_bad_value", key="moe_layer_freq")  # not in transformers 5.24
    elif model_type == "llama4_text":
        out["expert_ffn"] = _need(cfg, "intermediate_size")
        out["shared_experts"] = 1
        out["router_linear"] = True
        step = _value(cfg, "interleave_moe_layer_step") or 1
        out["moe_every"] = step
        layers = cfg.get("moe_layers")
        if layers is not None and layers != list(range(step - 1, _need(cfg, "num_hidden_layers"), step)):
            raise _fail("json_conflict", key="moe_layers", value="interleave_moe_layer_step")
    return out


def _mla_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    """Multi-head latent attention (DeepseekV3Attention); head_dim = q/k head size."""
    rope, nope = _need(cfg, "qk_rope_head_dim"), _need(cfg, "qk_nope_head_dim")
    return {
        "q_lora_rank": _value(cfg, "q_lora_rank") or 0,  # null: no query compression
        "kv_lora_rank": _need(cfg, "kv_lora_rank"),
        "qk_rope_head_dim": rope,
        "qk_nope_head_dim": nope,
        "v_head_dim": _need(cfg, "v_head_dim"),
        "head_dim": rope + nope,
    }


def read_config(text: str) -> ConfigReading:
    """config.json text -> ConfigReading; CalcError (field `config`) when it cannot be read."""
    cfg, part, left_out = _text_part(_load(text))
    model_type = str(cfg.get("model_type", ""))
    experts = _experts_key(cfg)
    moe: dict[str, Any] = {}
    if model_type in MOE_TYPES:
        if experts is None:
            raise _fail("json_missing", key="n_routed_experts" if model_type.startswith("deepseek")
                        else ("num_experts" if model_type in ("qwen3_moe", "olmoe") else EXPERT_KEYS[0]))
        moe = _moe_fields(cfg, model_type, experts)
    elif experts is not None and experts[1] > 1:
        if model_type in ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text",
                          "phi3", "olmo2"):
            raise _fail("json_moe_on_dense", key=experts[0], value=model_type)
        raise _fail("unsupported_arch", value=(model_type or "moe")[:40])
    layers, hidden, ffn, heads = (_int(cfg, n) for n in ("layers", "hidden", "ffn", "heads"))
    if model_type == "llama4_text":
        ffn = _need(cfg, "intermediate_size_mlp")
    vocab = _int(cfg, "vocab")
    kv = _int(cfg, "kv_heads", required=False) or heads
    head_dim = _int(cfg, "head_dim", required=False) or max(1, hidden // heads)  # type: ignore[operator]
    if heads % kv:  # type: ignore[operator]
        raise _fail("json_bad_value", key="num_key_value_heads")
    tied = _flag(cfg, "tie_word_embeddings", model_type in TIED_BY_DEFAULT)
    extra: dict[str, Any] = dict(moe)
    if model_type.startswith("deepseek") and cfg.get("kv_lora_rank") is not None:
        extra.update(_mla_fields(cfg))
        head_dim = extra.pop("head_dim")
    if model_type == "phi3":
        extra["fused_qkv"] = True
    layout = LAYOUTS.get(model_type, Layout())
    if _flag(cfg, "attention_bias", False) and not extra.get("kv_lora_rank"):
        # LlamaAttention and its kin: bias=config.attention_bias on q, k, v and o
        layout = replace(layout, qkv_bias=True, o_bias=True)
    arch = Architecture(0, layers, hidden, ffn, heads, kv, head_dim, vocab, tied, **extra)  # type: ignore[arg-type]
    problems = arch_mod.problems(arch)
    if problems:
        raise _fail("json_bad_value", key=problems[0].field)
    arch = replace(arch, params=arch_mod.params(arch, layout))
    quant = cfg.get("quantization_config")
    checkpoint = None
    if isinstance(quant, dict) and quant.get("quant_method") == "mxfp4" and moe:
        checkpoint = "mxfp4"
    return ConfigReading(arch, layout, model_type, part, left_out, checkpoint)


def reading_notes(reading: ConfigReading, locale: str) -> tuple[str, ...]:
    """What a reader should be told about a reading, in `locale`: for a multimodal
    configuration, that only its language model is counted (catalog key ui.config_text_part)."""
    from .i18n import t

    return (t("ui.config_text_part", locale),) if reading.part == "text" else ()


def parse_config(text: str) -> Architecture:
    """config.json text -> Architecture (params counted from its shapes); see read_config."""
    return read_config(text).arch
