"""config.json of each family, read from real configurations (tests/fixtures/configs, sources in
its README.md): the count equals the model's published total within 0.5 %; bad expert keys are
translated errors naming the key."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from calc import catalog
from calc.errors import CalcError
from calc.hfconfig import parse_config, read_config
from calc.i18n import LOCALES

CONFIGS = Path(__file__).resolve().parents[1] / "fixtures" / "configs"

# fixture -> (published total, where it is stated, preset with the same weights or None)
PUBLISHED = {
    "llama-3.1-8b": (8.03e9, "Llama 3.1 model card: 8.03B (Hub safetensors 8,030,261,248)", "llama-3.1-8b"),
    "qwen2.5-7b": (7.61e9, "Qwen2.5-7B model card: Number of Parameters 7.61B", "qwen2.5-7b"),
    "qwen3-8b": (8.2e9, "Qwen3-8B model card: Number of Parameters 8.2B", "qwen3-8b"),
    "qwen3-30b-a3b": (30.5e9, "Qwen3-30B-A3B model card: 30.5B in total", "qwen3-30b-a3b"),
    "qwen3-235b-a22b-instruct-2507": (235e9, "Qwen3-235B-A22B model card: 235B in total",
                                      "qwen3-235b-a22b"),
    "mixtral-8x7b-v0.1": (46.7e9, "mistral.ai/news/mixtral-of-experts: 46.7B total", "mixtral-8x7b"),
    "gpt-oss-20b": (20.91e9, "gpt-oss model card arXiv:2508.10925 Table 1: 20.91B", "gpt-oss-20b"),
    "gpt-oss-120b": (116.83e9, "gpt-oss model card arXiv:2508.10925 Table 1: 116.83B", "gpt-oss-120b"),
    "deepseek-v2-lite-chat": (15.7e9, "DeepSeek-V2-Lite model card: 15.7B parameters",
                              "deepseek-v2-lite"),
    "deepseek-v2.5": (236e9, "DeepSeek-V2 paper arXiv:2405.04434: 236B total parameters", None),
    "deepseek-r1": (671e9, "DeepSeek-V3 technical report arXiv:2412.19437: 671B total (the 14B "
                           "multi-token-prediction module not included)", None),
    "gemma-2-2b": (2_614_341_888, "Hub safetensors total of google/gemma-2-2b", "gemma-2-2b"),
    # The report the Mistral and OLMo 2 fixtures come from (stored file id 61558565367) also
    # lists the tensors transformers builds for each checkpoint; their sum, written out here:
    # embed and lm_head 32768 x 4096 each; per layer q, o 4096 x 4096, k, v 1024 x 4096,
    # gate, up, down 14336 x 4096, two norms of 4096; a final norm of 4096.
    "mistral-7b-instruct-v0.3": (
        2 * 32768 * 4096 + 32 * (2 * 4096 * 4096 + 2 * 1024 * 4096 + 3 * 14336 * 4096 + 2 * 4096) + 4096,
        "tensor shapes listed for mistralai/Mistral-7B-Instruct-v0.3 (stored file id 61558565367)",
        "mistral-7b"),
    # embed and lm_head 100352 x 4096; per layer q, k, v, o 4096 x 4096, q_norm and k_norm of
    # 4096 (over all heads), gate, up, down 11008 x 4096, post-attention and post-feed-forward
    # norms of 4096 (no input norm); a final norm.
    "olmo-2-1124-7b-instruct": (
        2 * 100352 * 4096 + 32 * (4 * 4096 * 4096 + 2 * 4096 + 3 * 11008 * 4096 + 2 * 4096) + 4096,
        "tensor shapes listed for allenai/OLMo-2-1124-7B-Instruct (stored file id 61558565367)", None),
    "phi-4-mini-instruct": (3.84e9, "Hub safetensors total of microsoft/Phi-4-mini-instruct: 3.84B",
                            "phi-4-mini"),
    "phi-3-mini-4k-instruct": (3_821_079_552, "keras-team/keras-hub keras_hub/src/models/phi3/"
                               "phi3_presets.py, phi3_mini_4k_instruct_en: params 3821079552",
                               "phi-3-mini"),
    # Multimodal: the text part (language model); Table 1 counts the 417M vision encoder apart.
    "gemma-3-4b-it": (3_884e6, "Gemma 3 technical report arXiv:2503.19786 Table 1: 675M embedding "
                      "+ 3,209M non-embedding (text part)", "gemma-3-4b"),
    # keras-team/keras-hub keras_hub/src/models/gemma3/gemma3_presets.py @00d9f10 (the Keras
    # ports of the same checkpoints); Gemma 3 1B is text only.
    "gemma-3-1b-it": (999_885_952, "keras-hub gemma3_presets.py, gemma3_instruct_1b: params 999885952",
                      "gemma-3-1b"),
    # Text part. Keras' embedding has 262,144 rows, the Hub checkpoint's 262,208 (Gemma3TextConfig's
    # vocab_size): the reader counts 64 x 3840 = 245,760 more, 0.002 %.
    "gemma-3-12b-it": (11_765_788_416, "keras-hub gemma3_presets.py, gemma3_instruct_12b_text: params "
                       "11765788416 (text only)", "gemma-3-12b"),
}
#: Fixtures with no published total of the part counted; test_hfconfig_multimodal.py checks
#: them against hand arithmetic instead.
NO_PUBLISHED_TEXT_TOTAL = {"llama-4-scout-17b-16e"}


def text(name: str) -> str:
    return (CONFIGS / f"{name}.json").read_text(encoding="utf-8")


def mutated(name: str, **changes: object) -> str:
    cfg = json.loads(text(name))
    for key, value in changes.items():
        if value is None:
            cfg.pop(key, None)
        else:
            cfg[key] = value
    return json.dumps(cfg)


def test_every_fixture_has_a_published_total() -> None:
    assert {p.stem for p in CONFIGS.glob("*.json")} == set(PUBLISHED) | NO_PUBLISHED_TEXT_TOTAL
    readme = (CONFIGS / "README.md").read_text(encoding="utf-8")
    for name in set(PUBLISHED) | NO_PUBLISHED_TEXT_TOTAL:
        assert f"{name}.json" in readme  # each fixture's source is cited


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_count_equals_published_total(name: str) -> None:
    total, _source, preset = PUBLISHED[name]
    arch = parse_config(text(name))
    assert abs(arch.params - total) <= 0.005 * total, (name, arch.params, total)
    if preset is not None:  # the same weights as a preset: the same architecture, field by field
        assert arch == catalog.model(preset).arch


def test_family_shapes() -> None:
    mix = parse_config(text("mixtral-8x7b-v0.1"))
    assert (mix.experts, mix.experts_active, mix.expert_ffn, mix.shared_experts) == (8, 2, 14336, 0)
    q = parse_config(text("qwen3-30b-a3b"))
    assert (q.experts, q.experts_active, q.expert_ffn, q.moe_every, q.dense_layers) == (128, 8, 768, 1, 0)
    lite = parse_config(text("deepseek-v2-lite-chat"))
    assert (lite.q_lora_rank, lite.kv_lora_rank, lite.qk_rope_head_dim, lite.qk_nope_head_dim,
            lite.v_head_dim) == (0, 512, 64, 128, 128)  # q_lora_rank null: no query compression
    assert (lite.experts, lite.experts_active, lite.shared_experts, lite.dense_layers) == (64, 6, 2, 1)
    v3 = parse_config(text("deepseek-r1"))
    assert (v3.q_lora_rank, v3.dense_layers, v3.experts, v3.shared_experts) == (1536, 3, 256, 1)
    oss = read_config(text("gpt-oss-20b"))
    assert oss.experts_checkpoint == "mxfp4" and oss.layout.sinks and oss.layout.expert_bias
    assert read_config(text("qwen3-30b-a3b")).experts_checkpoint is None
    assert parse_config(text("gemma-2-2b")).tied  # Gemma2Config ties embeddings by default
    assert read_config(text("llama-3.1-8b")).part == "all"
    one = read_config(text("gemma-3-1b-it"))  # Gemma3ForCausalLM: text only, nothing left out
    assert (one.part, one.left_out, one.arch.tied, one.arch.head_dim) == ("all", (), True, 256)
    twelve = read_config(text("gemma-3-12b-it"))
    assert (twelve.part, twelve.left_out, twelve.arch.vocab) == ("text", ("vision_config",), 262_208)


def test_multimodal_config_counts_the_text_part() -> None:
    """A ...ForConditionalGeneration config: the language model is read from text_config and
    the reading says what it left out. (The wrapper is made here around a real text config.)"""
    inner = json.loads(text("llama-3.1-8b"))
    wrapped = {"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
               "text_config": inner, "vision_config": {"hidden_size": 1024, "num_hidden_layers": 24}}
    got = read_config(json.dumps(wrapped))
    assert got.part == "text" and got.left_out == ("vision_config",)
    assert got.arch == parse_config(text("llama-3.1-8b"))


def test_gemma3_text_config_takes_its_class_defaults() -> None:
    """Gemma 3 4B-27B's text_config omits heads, kv heads, head_dim and vocab: Gemma3TextConfig's
    defaults (transformers 5.24.0) fill them. Keys as in google/gemma-3-4b-pt's text_config."""
    cfg = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
           "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
                           "num_hidden_layers": 34, "sliding_window": 1024},
           "vision_config": {"model_type": "siglip_vision_model"}}
    got = read_config(json.dumps(cfg))
    assert got.part == "text" and got.arch == catalog.model("gemma-3-4b").arch
    # Gemma 3 technical report (arXiv:2503.19786) Table 1: 675M + 3,209M text parameters
    assert abs(got.arch.params - 3_884e6) <= 0.005 * 3_884e6


BAD = [
    # (fixture, changes, code, key)
    ("mixtral-8x7b-v0.1", {"num_experts_per_tok": None}, "json_missing", "num_experts_per_tok"),
    ("mixtral-8x7b-v0.1", {"num_experts": 16}, "json_conflict", "num_experts"),
    ("mixtral-8x7b-v0.1", {"num_experts_per_tok": 9}, "json_conflict", "num_experts_per_tok"),
    ("mixtral-8x7b-v0.1", {"num_local_experts": 1}, "json_bad_value", "num_local_experts"),
    ("mixtral-8x7b-v0.1", {"num_local_experts": None}, "json_missing", "num_local_experts"),
    ("qwen3-30b-a3b", {"moe_intermediate_size": None}, "json_missing", "moe_intermediate_size"),
    ("qwen3-30b-a3b", {"mlp_only_layers": [5, 7]}, "json_bad_value", "mlp_only_layers"),
    ("gpt-oss-20b", {"experts_per_token": 2}, "json_conflict", "experts_per_token"),
    ("deepseek-v2-lite-chat", {"moe_layer_freq": 2}, "json_bad_value", "moe_layer_freq"),
    ("deepseek-v2-lite-chat", {"kv_lora_rank": "512"}, "json_bad_value", "kv_lora_rank"),
    ("deepseek-v2-lite-chat", {"v_head_dim": None}, "json_missing", "v_head_dim"),
    ("deepseek-v2-lite-chat", {"first_k_dense_replace": 27}, "json_bad_value", "dense_layers"),
    ("llama-3.1-8b", {"num_local_experts": 8}, "json_moe_on_dense", "num_local_experts"),
    ("qwen3-8b", {"num_experts": 64}, "json_moe_on_dense", "num_experts"),
]


@pytest.mark.parametrize(("name", "changes", "code", "key"), BAD)
def test_bad_expert_keys_are_errors_naming_the_key(name: str, changes: dict, code: str, key: str) -> None:
    with pytest.raises(CalcError) as info:
        parse_config(mutated(name, **changes))
    (problem,) = info.value.problems
    assert (problem.field, problem.code, dict(problem.params)["key"]) == ("config", code, key)
    for loc in LOCALES:
        message = info.value.message(loc)
        assert key in message and "{" not in message and "error." not in message, (loc, message)


def test_llama4_moe_layers_must_agree_with_the_step() -> None:
    cfg = {"model_type": "llama4_text", "num_hidden_layers": 4, "hidden_size": 64, "intermediate_size": 32,
           "intermediate_size_mlp": 128, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
           "vocab_size": 100, "num_local_experts": 4, "num_experts_per_tok": 1,
           "interleave_moe_layer_step": 2, "moe_layers": [1, 3]}
    arch = parse_config(json.dumps(cfg))
    assert (arch.moe_every, arch.shared_experts, arch.router_linear, arch.ffn) == (2, 1, True, 128)
    with pytest.raises(CalcError) as info:
        parse_config(json.dumps({**cfg, "moe_layers": [0, 1, 2, 3]}))
    assert info.value.problems[0].code == "json_conflict"


def test_the_same_architecture_through_the_form_fields() -> None:
    """A parsed MoE config gives the same Inputs as the preset; the URL form round-trips."""
    from calc.fields import parse, to_query

    via_config = parse({"config": text("qwen3-30b-a3b")})
    again = parse(to_query(via_config))
    assert again.arch == replace(via_config.arch)
    assert again.arch == catalog.model("qwen3-30b-a3b").arch


def test_olmoe_from_its_published_shapes_equals_its_checkpoints_count() -> None:
    """OLMoE-1B-7B-0924: no verbatim copy of its config.json is stored here (fixtures README), so
    the configuration is written in the test from the shapes of the OLMoE paper
    (arXiv:2409.02060, Table 1: 16 layers, d_model 2048, 16 heads, 64 experts of which 8 active,
    expert FFN 1024, vocabulary 50304, untied head), under OlmoeConfig's key names. Its count
    must equal the checkpoint's safetensors total, 6,919,161,856 (recorded at Hub revision
    6d84c48 in github.com/WildPino/SiliconLLM @99556ac), which the hand sum below also gives:
    per layer q, k, v, o (4 x 2048^2), the full-width q and k norms (OlmoeAttention), the router
    (2048 x 64), 64 experts of gate, up and down (3 x 2048 x 1024) and two norms; then the
    embedding, the untied head and the final norm."""
    cfg = {"architectures": ["OlmoeForCausalLM"], "model_type": "olmoe", "vocab_size": 50304,
           "hidden_size": 2048, "intermediate_size": 1024, "num_hidden_layers": 16,
           "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 64,
           "num_experts_per_tok": 8, "tie_word_embeddings": False}
    per_layer = 4 * 2048 * 2048 + 2 * 2048 + 2048 * 64 + 64 * 3 * 2048 * 1024 + 2 * 2048
    by_hand = 16 * per_layer + 2 * 50304 * 2048 + 2048
    assert by_hand == 6_919_161_856
    reading = read_config(json.dumps(cfg))
    assert reading.arch.params == by_hand
    assert (reading.arch.experts, reading.arch.experts_active) == (64, 8)
