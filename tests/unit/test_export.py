"""Exports (calc.export; spec engine.md section 10): each parses and carries the settings.

The TRL script is read back with Python's `ast`, the Axolotl YAML with PyYAML (a test-only
dependency: calc writes the YAML itself), the torchtune command with `shlex`; each setting
found there is compared with the inputs it was made from.
"""

from __future__ import annotations

import ast
import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from calc.catalog import models
from calc.engine import Inputs
from calc.errors import CalcError
from calc.export import FORMATS, export
from calc.fields import parse
from calc.i18n import LOCALES

ROOT = Path(__file__).resolve().parents[2]
EXPORT_DATA = json.loads((ROOT / "calc" / "data" / "export.json").read_text())
HF_NAMES = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "gate": "gate_proj",
            "up": "up_proj", "down": "down_proj"}
TT_NAMES = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "output_proj"}
HF_OPTIM = {"adamw": "adamw_torch_fused", "adamw-bf16": "adamw_torch_fused",
            "adamw-8bit": "adamw_bnb_8bit", "sgd": "sgd", "sgd-momentum": "sgd",
            "adafactor": "adafactor", "lion": "lion_32bit", "adamw-no-master": "adamw_anyprecision"}


def q(**kw) -> Inputs:
    return parse({k: str(v) for k, v in kw.items()})


def hub_id(preset_id: str) -> str:
    """The repository of the preset's config.json URL, read here from models.json."""
    source = next(m.source for m in models() if m.id == preset_id)
    return "/".join(source.split("/")[3:5])


CASES = [
    dict(model="llama-3.1-8b", method="qlora", rank=64, targets="all-linear", seq=4096, batch=2,
         ckpt="true", optimizer="adamw-8bit"),
    dict(model="llama-3.2-1b", method="lora", rank=8, targets="qv", seq=1024, batch=4,
         ckpt="false", optimizer="adamw", flash="false", mode="detailed"),
    dict(model="qwen2.5-7b", method="lora", rank=16, targets="attention", seq=2048, batch=1,
         ckpt="true", optimizer="lion"),
    dict(model="llama-3.2-3b", method="full", seq=8192, batch=1, ckpt="true", optimizer="adamw"),
    dict(model="qwen3-0.6b", method="full", seq=512, batch=8, ckpt="false",
         optimizer="sgd-momentum"),
    dict(model="gemma-2-2b", method="full", seq=2048, batch=2, ckpt="true", optimizer="adafactor"),
]


def calls(tree: ast.AST) -> dict[str, dict[str, object]]:
    """Keyword arguments of every call by the called name, as literals where they are."""
    out: dict[str, dict[str, object]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            kw = {}
            for k in node.keywords:
                try:
                    kw[k.arg] = ast.literal_eval(k.value)
                except ValueError:
                    kw[k.arg] = ast.unparse(k.value)
            out[node.func.id] = kw
    return out


def assigned(tree: ast.AST, name: str) -> object:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(name)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['model']}-{c['method']}")
def test_trl_script_parses_and_carries_the_settings(case):
    i = q(**case)
    text = export(i, "trl", Decimal(2))
    tree = ast.parse(text)
    c = calls(tree)
    assert assigned(tree, "model_id") == hub_id(case["model"])
    cfg = c["SFTConfig"]
    assert cfg["max_length"] == case["seq"] and cfg["per_device_train_batch_size"] == case["batch"]
    assert cfg["gradient_checkpointing"] is (case["ckpt"] == "true")
    assert cfg["optim"] == HF_OPTIM[case["optimizer"]] and cfg["num_train_epochs"] == 2
    assert cfg["loss_type"] == "nll" and cfg["activation_offloading"] is False
    assert cfg["torch_compile"] is False
    attn = "eager" if case.get("flash") == "false" else "sdpa"
    assert cfg["model_init_kwargs"]["attn_implementation"] == attn
    master = case["method"] == "full" and case["optimizer"] not in ("adamw-bf16", "adamw-no-master")
    assert cfg["model_init_kwargs"]["dtype"] == ("float32" if master else "bfloat16")
    if case["method"] == "full":
        assert "LoraConfig" not in c and "peft_config" not in c["SFTTrainer"]
    else:
        lora = c["LoraConfig"]
        assert lora["r"] == case["rank"] and lora["lora_alpha"] == 2 * case["rank"]
        assert lora["target_modules"] == [HF_NAMES[m] for m in i.targets.modules]
        assert c["SFTTrainer"]["peft_config"] == "peft_config"
    if case["method"] == "qlora":
        bnb = c["BitsAndBytesConfig"]
        assert bnb["load_in_4bit"] is True and bnb["bnb_4bit_quant_type"] == "nf4"
        assert bnb["bnb_4bit_use_double_quant"] is True
    if case["optimizer"] == "sgd-momentum":
        assert "momentum" in c["SFTTrainer"]["optimizer_cls_and_kwargs"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['model']}-{c['method']}")
def test_axolotl_yaml_parses_and_carries_the_settings(case):
    i = q(**case)
    cfg = yaml.safe_load(export(i, "axolotl", Decimal("1.5")))
    assert cfg["base_model"] == hub_id(case["model"])
    assert cfg["sequence_len"] == case["seq"] and cfg["micro_batch_size"] == case["batch"]
    assert cfg["gradient_checkpointing"] is (case["ckpt"] == "true")
    assert cfg["optimizer"] == HF_OPTIM[case["optimizer"]] and cfg["num_epochs"] == 1.5
    assert cfg["attn_implementation"] == ("eager" if case.get("flash") == "false" else "sdpa")
    assert cfg["chunked_cross_entropy"] is False and cfg["activation_offloading"] is False
    assert cfg["torch_compile"] is False
    assert isinstance(cfg["datasets"], list) and cfg["datasets"][0]["path"]
    if case["method"] == "full":
        assert "adapter" not in cfg and "lora_r" not in cfg
    else:
        assert cfg["adapter"] == case["method"] and cfg["lora_r"] == case["rank"]
        assert cfg["lora_target_modules"] == [HF_NAMES[m] for m in i.targets.modules]
    if case["method"] == "qlora":
        assert cfg["load_in_4bit"] is True
        assert cfg["bnb_config_kwargs"]["bnb_4bit_use_double_quant"] is True


def overrides(text: str) -> tuple[list[str], dict[str, str]]:
    """The command's words (comments dropped, line continuations joined as a shell does)."""
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    words = shlex.split("\n".join(lines).replace("\\\n", " "))
    kv = dict(w.split("=", 1) for w in words if "=" in w)
    return words, kv


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['model']}-{c['method']}")
def test_torchtune_command_parses_and_carries_the_settings(case):
    i = q(**case)
    words, kv = overrides(export(i, "torchtune", Decimal(3)))
    assert words[:2] == ["tune", "run"]
    config = words[words.index("--config") + 1]
    entry = EXPORT_DATA["torchtune"]["models"][case["model"]]
    kind = config[len(entry["config"]) + 1:]
    assert config.startswith(entry["config"] + "_") and kind in entry["kinds"], config
    recipe = words[words.index("--config") - 1]
    assert recipe.startswith("full" if case["method"] == "full" else "lora")
    if kind.endswith("single_device"):
        assert recipe.endswith("single_device") and words[2] == recipe
    else:  # a distributed config, on one process when one card is asked for
        assert recipe.endswith("distributed") and words[2:4] == ["--nproc_per_node", "1"]
    assert kv["tokenizer.max_seq_len"] == str(case["seq"]) and kv["batch_size"] == str(case["batch"])
    assert kv["epochs"] == "3"
    assert kv["enable_activation_checkpointing"] == str(case["ckpt"] == "true")
    if case["method"] != "full":
        assert kv["model.lora_rank"] == str(case["rank"])
        attn = [TT_NAMES[m] for m in i.targets.modules if m in TT_NAMES]
        assert ast.literal_eval(kv["model.lora_attn_modules"]) == attn
        assert kv["model.apply_lora_to_mlp"] == str(case["targets"] == "all-linear")
    assert kv["loss._component_"] == "torch.nn.CrossEntropyLoss"
    expected = {"adamw-8bit": "bitsandbytes.optim.PagedAdamW8bit", "lion": "bitsandbytes.optim.Lion32bit",
                "adafactor": "torch.optim.Adafactor", "sgd-momentum": "torch.optim.SGD",
                "adamw": "torch.optim.AdamW"}[case["optimizer"]]
    assert kv["optimizer._component_"] == expected
    if case["optimizer"] == "sgd-momentum":
        assert kv["optimizer.momentum"] == "0.9"
    if case["optimizer"] in ("adamw-8bit", "lion", "adafactor") and kind in entry["fused"]:
        assert "~optimizer.fused" in words  # those classes take no `fused`


def test_stack_fields_when_present():
    i = q(model="llama-3.1-8b", method="lora", optimizer="adamw", loss="chunked",
          opt_step="foreach", act_offload="true", compile="true")
    trl = calls(ast.parse(export(i, "trl")))["SFTConfig"]
    assert trl["loss_type"] == "chunked_nll" and trl["activation_offloading"] is True
    assert trl["torch_compile"] is True  # TrainingArguments.torch_compile
    assert trl["optim"] == "adamw_torch"  # foreach step: torch.optim.AdamW without fused
    axo = yaml.safe_load(export(i, "axolotl"))
    assert axo["chunked_cross_entropy"] is True and axo["activation_offloading"] is True
    assert axo["torch_compile"] is True
    _, kv = overrides(export(i, "torchtune"))
    assert kv["loss._component_"] == "torchtune.modules.loss.LinearCrossEntropyLoss"
    assert kv["enable_activation_offloading"] == "True" and kv["optimizer.fused"] == "False"
    assert kv["compile"] == "True"  # the recipe's `compile` key (model and loss)


def test_several_cards():
    i = q(model="llama-3.1-70b", method="lora")
    words, _ = overrides(export(i, "torchtune", cards=8))
    assert words[:5] == ["tune", "run", "--nproc_per_node", "8", "lora_finetune_distributed"]
    assert "accelerate launch --num_processes 8" in export(i, "trl", cards=8)


@pytest.mark.parametrize("preset", [m.id for m in models()])
def test_every_preset_exports(preset):
    i = q(model=preset, method="lora")
    tree = ast.parse(export(i, "trl"))
    assert assigned(tree, "model_id") == hub_id(preset)
    assert yaml.safe_load(export(i, "axolotl"))["base_model"] == hub_id(preset)
    entry = EXPORT_DATA["torchtune"]["models"].get(preset)
    if entry and {"lora", "lora_single_device"} & set(entry["kinds"]):
        words, _ = overrides(export(i, "torchtune"))
        assert words[0] == "tune"
    else:
        with pytest.raises(CalcError) as err:
            export(i, "torchtune")
        assert err.value.problems[0].code == "export_unsupported"


def test_fused_projections_are_named_and_flagged():
    i = q(model="phi-4", method="lora", targets="qv")
    text = export(i, "trl")
    assert calls(ast.parse(text))["LoraConfig"]["target_modules"] == ["qkv_proj"]
    assert "also adapts k" in text


@pytest.mark.parametrize("loc", LOCALES)
def test_custom_model_and_unsupported_export_in_every_locale(loc):
    custom = parse({"model": "custom", "layers": "2", "hidden": "64", "ffn": "128", "heads": "4",
                    "vocab": "100"})
    assert assigned(ast.parse(export(custom, "trl")), "model_id") == "your-org/your-model"
    with pytest.raises(CalcError) as err:
        export(custom, "torchtune")
    msg = err.value.messages(loc)["export"]
    assert "torchtune" in msg and "{" not in msg
    with pytest.raises(CalcError):
        export(custom, "bogus")


def run(*args):
    return subprocess.run([sys.executable, "-m", "calc", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def test_cli_export():
    out = run("--model", "llama-3.1-8b", "--method", "qlora", "--rank", "32", "--export", "trl")
    assert out.returncode == 0, out.stderr
    assert calls(ast.parse(out.stdout))["LoraConfig"]["r"] == 32
    out = run("--model", "llama-3.2-1b", "--method", "full", "--epochs", "2", "--export", "axolotl")
    assert out.returncode == 0 and yaml.safe_load(out.stdout)["num_epochs"] == 2
    assert run("--export", "bogus").returncode == 2
    out = run("--model", "mistral-7b", "--export", "torchtune")
    assert out.returncode == 2 and "torchtune" in out.stderr and "Traceback" not in out.stderr


def test_cli_plan_json_and_errors():
    out = run("--model", "llama-3.2-1b", "--tokens", "50M", "--gpu", "rtx-4090", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["train_flops"]["per_token"] > 0 and data["max_fit"]["gpu"] == "rtx-4090"
    row = next(f for f in data["fits"] if f["gpu"] == "rtx-4090")
    assert row["hours"] > 0 and row["cards"] == 1 and Decimal(row["cost"]) > 0
    assert data["plan"]["by_cost"] and data["plan"]["by_time"]
    bad = run("--tokens", "0", "--seq", "-1", "--gpu", "nope", "--locale", "ru")
    assert bad.returncode == 2 and bad.stdout == "" and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 3  # the three fields, each named


def test_formats_are_the_three():
    assert FORMATS == ("trl", "axolotl", "torchtune")


# Fused 3-D experts (lora_experts): the parameter names PEFT's LoRA reference page gives for
# target_parameters (docs/source/package_reference/lora.md at PEFT commit 5d602fd): Mixtral,
# Qwen3-MoE and gpt-oss "mlp.experts.gate_up_proj" / "mlp.experts.down_proj", Llama 4
# "feed_forward.experts.gate_up_proj" / "feed_forward.experts.down_proj"; DeepSeek-V2 keeps the
# module path mlp.experts (transformers 5.7.0 prints DeepseekV2Moe at mlp, experts inside).
MLP_EXPERTS = ["mlp.experts.gate_up_proj", "mlp.experts.down_proj"]
EXPERT_NAMES = {"mixtral-8x7b": MLP_EXPERTS, "qwen3-30b-a3b": MLP_EXPERTS, "gpt-oss-20b": MLP_EXPERTS,
                "deepseek-v2-lite": MLP_EXPERTS,
                "llama-4-scout": ["feed_forward.experts.gate_up_proj", "feed_forward.experts.down_proj"]}


@pytest.mark.parametrize("method", ["lora", "qlora"])
@pytest.mark.parametrize("preset", sorted(EXPERT_NAMES))
def test_lora_experts_exports_target_parameters(preset: str, method: str) -> None:
    i = q(model=preset, method=method, targets="all-linear", lora_experts="true")
    assert i.lora_experts
    tree = ast.parse(export(i, "trl"))
    lora = calls(tree)["LoraConfig"]
    assert lora["target_parameters"] == EXPERT_NAMES[preset]
    assert lora["target_modules"] == [HF_NAMES[m] for m in ("q", "k", "v", "o", "gate", "up", "down")]
    axo = yaml.safe_load(export(i, "axolotl"))
    assert axo["lora_target_parameters"] == EXPERT_NAMES[preset]
    assert axo["lora_dropout"] == 0  # Axolotl v0.18.0 requires it with lora_target_parameters


@pytest.mark.parametrize("preset", sorted(EXPERT_NAMES))
def test_without_lora_experts_no_target_parameters(preset: str) -> None:
    i = q(model=preset, method="lora", targets="all-linear")
    assert "target_parameters" not in calls(ast.parse(export(i, "trl")))["LoraConfig"]
    assert "lora_target_parameters" not in yaml.safe_load(export(i, "axolotl"))


def test_lora_experts_on_a_custom_moe_config_uses_the_common_path() -> None:
    cfg = (ROOT / "tests" / "fixtures" / "configs" / "qwen3-30b-a3b.json").read_text(encoding="utf-8")
    i = parse({"config": cfg, "method": "lora", "targets": "all-linear", "lora_experts": "true"})
    assert calls(ast.parse(export(i, "trl")))["LoraConfig"]["target_parameters"] == MLP_EXPERTS
