"""Multimodal and Llama 4 configs read from real configurations (tests/fixtures/configs, sources
in its README.md): what part is counted, the message that says so in every locale, Llama 4
Scout's text part against hand arithmetic, and bad expert keys in these families."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calc import arch as arch_mod
from calc import catalog
from calc.errors import CalcError
from calc.hfconfig import read_config, reading_notes
from calc.i18n import LOCALES, lookup

CONFIGS = Path(__file__).resolve().parents[1] / "fixtures" / "configs"
SCOUT = "llama-4-scout-17b-16e"


def cfg(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text(encoding="utf-8"))


def scout_text_params_by_hand() -> int:
    """Llama-4-Scout-17B-16E's language model from its config.json, term by term (modeling
    shapes of transformers' Llama4TextModel: Llama4TextAttention q/k/v/o without bias and its
    weightless L2 qk-norm; Llama4TextMoe: 16 fused experts gate_up_proj (E, h, 2f) and
    down_proj (E, f, h), one shared expert Llama4TextMLP of intermediate_size, the router an
    nn.Linear(h, E) without bias; interleave_moe_layer_step 1, so every one of the 48 layers is
    a MoE layer and intermediate_size_mlp (16384) is not used; two RMSNorms per layer)."""
    h, layers, vocab, heads, kv, head_dim, f, experts = 5120, 48, 202048, 40, 8, 128, 8192, 16
    embeddings = vocab * h  # embed_tokens
    lm_head = vocab * h  # tie_word_embeddings false
    attention = h * heads * head_dim + 2 * h * kv * head_dim + heads * head_dim * h
    routed = experts * (h * 2 * f + f * h)
    shared = 3 * h * f
    router = h * experts
    norms = 2 * h
    return embeddings + lm_head + layers * (attention + routed + shared + router + norms) + h


def test_scout_text_part_equals_hand_arithmetic_and_the_preset() -> None:
    reading = read_config(json.dumps(cfg(SCOUT)))
    assert reading.part == "text" and reading.left_out == ("vision_config",)
    assert reading.arch.params == scout_text_params_by_hand() == 107_769_861_120
    assert reading.arch == catalog.model("llama-4-scout").arch
    assert (reading.arch.experts, reading.arch.experts_active, reading.arch.expert_ffn,
            reading.arch.shared_experts, reading.arch.moe_every, reading.arch.router_linear) == (
        16, 1, 8192, 1, 1, True)


def test_scout_active_parameters_round_to_metas_17b() -> None:
    """Meta's model card: 17B activated. A token passes one routed expert of 16 and the
    shared one: the text part less 15 routed experts per layer, rounded to a billion."""
    active = arch_mod.active_params(catalog.model("llama-4-scout").arch)
    by_hand = scout_text_params_by_hand() - 48 * 15 * (3 * 5120 * 8192)
    assert active == by_hand
    assert round(active / 1e9) == 17


def scout_vision_params_by_hand() -> int:
    """What the text part leaves out, from the fixture's vision_config (hidden 1408, 34 layers,
    intermediate 5632, patch 14 on 336-pixel tiles, projector 4096 -> 4096, output 4096) and
    the shapes of transformers' Llama4VisionModel and Llama4MultiModalProjector: a class
    embedding, a positional embedding of (336 / 14)^2 + 1 positions, the unfolded patch
    embedding (3 x 14 x 14 -> 1408, no bias), pre/post LayerNorms with bias, per layer q/k/v/o
    with bias, fc1/fc2 with bias and two LayerNorms with bias, the vision adapter's two linears
    (1408 x 4 pixel-shuffled channels -> 4096 -> 4096, no bias) and the projector 4096 -> 5120 (no bias).
    The stored note the fixture comes from lists the same tensor sizes for these modules."""
    h, layers, f, patch, image, proj, text_h = 1408, 34, 5632, 14, 336, 4096, 5120
    positions = (image // patch) ** 2 + 1
    embeddings = h + positions * h + 3 * patch * patch * h + 2 * 2 * h
    layer = 4 * (h * h + h) + (h * f + f) + (f * h + h) + 2 * 2 * h
    adapter = h * 4 * proj + proj * proj  # pixel_shuffle_ratio 0.5: 1408 x 4 channels in
    projector = proj * text_h
    return embeddings + layers * layer + adapter + projector


def test_scout_text_and_vision_add_up_to_metas_109b() -> None:
    """Meta's model card: 109B total parameters for the checkpoint with its vision encoder.
    The text part (hand arithmetic above) and the vision part left out add up to it within
    0.5 %, so what the preset leaves out is the vision tower and nothing else."""
    total = scout_text_params_by_hand() + scout_vision_params_by_hand()
    assert abs(total - 109e9) <= 0.005 * 109e9, total
    assert scout_vision_params_by_hand() < 0.01 * scout_text_params_by_hand()


def test_scout_preset_note_says_what_it_covers() -> None:
    preset = catalog.model("llama-4-scout")
    assert preset.published is not None and preset.params < preset.published.params
    note = preset.published.note
    assert "text" in note and "vision" in note and "109B" in note


@pytest.mark.parametrize(("name", "preset"), [(SCOUT, "llama-4-scout"), ("gemma-3-4b-it", "gemma-3-4b")])
def test_a_multimodal_reading_says_the_text_part_in_every_locale(name: str, preset: str) -> None:
    reading = read_config(json.dumps(cfg(name)))
    assert reading.part == "text" and reading.arch == catalog.model(preset).arch
    for loc in LOCALES:
        (note,) = reading_notes(reading, loc)
        assert note == lookup("ui.config_text_part", loc) and "{" not in note


def test_a_text_only_reading_has_no_note() -> None:
    reading = read_config((CONFIGS / "mistral-7b-instruct-v0.3.json").read_text(encoding="utf-8"))
    assert reading.part == "all" and reading_notes(reading, "en") == ()


def test_family_layouts_of_the_new_fixtures() -> None:
    phi = read_config(json.dumps(cfg("phi-4-mini-instruct")))
    assert phi.arch.fused_qkv and phi.arch.tied and (phi.arch.heads, phi.arch.kv_heads) == (24, 8)
    olmo = read_config(json.dumps(cfg("olmo-2-1124-7b-instruct")))
    assert olmo.layout.qk_norm == "full" and olmo.arch.experts == 0
    mistral = read_config(json.dumps(cfg("mistral-7b-instruct-v0.3")))
    assert mistral.arch == catalog.model("mistral-7b").arch


def _mutated(name: str, text_config: bool, **changes: object) -> str:
    data = cfg(name)
    target = data["text_config"] if text_config else data
    for key, value in changes.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = value
    return json.dumps(data)


BAD = [
    # (fixture, keys inside text_config?, changes, code, key)
    (SCOUT, True, {"num_local_experts": None}, "json_missing", "num_local_experts"),
    (SCOUT, True, {"num_experts_per_tok": 17}, "json_conflict", "num_experts_per_tok"),
    (SCOUT, True, {"num_experts_per_tok": None}, "json_missing", "num_experts_per_tok"),
    (SCOUT, True, {"moe_layers": [1, 3, 5]}, "json_conflict", "moe_layers"),
    (SCOUT, True, {"num_experts": 8}, "json_conflict", "num_experts"),
    (SCOUT, True, {"intermediate_size_mlp": None}, "json_missing", "intermediate_size_mlp"),
    ("olmo-2-1124-7b-instruct", False, {"num_experts": 64}, "json_moe_on_dense", "num_experts"),
    ("mistral-7b-instruct-v0.3", False, {"num_local_experts": 8}, "json_moe_on_dense", "num_local_experts"),
    ("phi-4-mini-instruct", False, {"n_routed_experts": 16}, "json_moe_on_dense", "n_routed_experts"),
    ("gemma-3-4b-it", True, {"num_experts": 4}, "json_moe_on_dense", "num_experts"),
]


@pytest.mark.parametrize(("name", "inner", "changes", "code", "key"), BAD)
def test_bad_expert_keys_name_the_key_in_every_locale(name: str, inner: bool, changes: dict,
                                                      code: str, key: str) -> None:
    with pytest.raises(CalcError) as info:
        read_config(_mutated(name, inner, **changes))
    (problem,) = info.value.problems
    assert (problem.field, problem.code, dict(problem.params)["key"]) == ("config", code, key)
    for loc in LOCALES:
        message = info.value.message(loc)
        assert key in message and "{" not in message and "error." not in message, (loc, message)


@pytest.mark.parametrize("locale", LOCALES)
def test_the_calculator_says_what_a_pasted_multimodal_config_counts(locale):
    """A pasted multimodal config.json: the results say, in the page's language, that only the
    language model is counted; a text-only config gets no such line."""
    from calc.i18n import t
    from calc.render import results

    from html import unescape
    import re

    def note(name: str) -> str | None:
        text = (CONFIGS / name).read_text(encoding="utf-8")
        out = results("calculator", {"model": "custom", "config": text}, locale)
        assert out["ok"], out["errors"]
        found = re.search(r'<p class="calc-note calc-config-note">(.*?)</p>', out["html"])
        return None if found is None else unescape(re.sub(r"<[^>]+>", "", found.group(1)))

    assert note("gemma-3-4b-it.json") == t("ui.config_text_part", locale)
    assert note("llama-4-scout-17b-16e.json") == t("ui.config_text_part", locale)
    assert note("qwen3-8b.json") is None
