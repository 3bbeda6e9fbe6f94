"""The estimated configuration as a training config that runs: what was estimated is what runs.

Three targets, each written as plain text by the standard library (no YAML library: calc is
standard library only; the tests parse the output with Python's `ast`, PyYAML and `shlex`):

- `trl`: a Python script for Transformers + TRL's `SFTTrainer` + PEFT (names of TRL 1.9.0,
  trl/trainer/sft_config.py and sft_trainer.py at commit f2cd577, and of Transformers v5's
  `TrainingArguments.optim`);
- `axolotl`: an Axolotl YAML config (field names of src/axolotl/utils/schemas at v0.18.0);
- `torchtune`: a `tune run` command with overrides of the recipe config that torchtune ships
  for the model (calc/data/export.json lists them, torchtune commit bd2a0fc).

Each carries the model (its Hugging Face id: the repository of the preset's `source`), the
method, LoRA rank and target modules, sequence length, micro-batch, gradient checkpointing,
the optimizer, attention without or with an s x s score matrix, NF4 double quantisation and,
when the inputs have them (the training-stack fields), the loss, the optimizer step,
activation offloading and torch.compile (TRL's `torch_compile`, Axolotl's `torch_compile`,
torchtune's `compile`). LoRA's alpha is not a memory setting: it is written as 2 x rank, the
rule torchtune's configs state ("usually alpha=2*rank"). Where a stack cannot express a calc
setting the text says so in a comment next to the nearest setting, never silently.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from importlib.resources import files
from typing import Any

from .engine import Inputs
from .errors import CalcError
from .types import Method, Optimizer

__all__ = ["FORMATS", "ExportSettings", "settings", "export", "hf_id", "hf_modules",
           "expert_parameters"]

FORMATS = ("trl", "axolotl", "torchtune")
PLACEHOLDER_MODEL = "your-org/your-model"
_HUB = re.compile(r"^https://huggingface\.co/([^/]+/[^/]+)/")
#: Optimizers that, in calc, update an FP32 master copy of fully fine-tuned weights
#: (engine.OPTIMIZER_BYTES): the weights are loaded in FP32 and trained with BF16 autocast.
_MASTER = frozenset(Optimizer) - {Optimizer.ADAMW_NO_MASTER, Optimizer.ADAMW_BF16}


@lru_cache(maxsize=None)
def _data() -> dict[str, Any]:
    return json.loads((files("calc") / "data" / "export.json").read_text(encoding="utf-8"))


def hf_id(model_id: str) -> str | None:
    """The Hugging Face repository of a preset (from its `source` URL); None for a custom model."""
    from . import catalog

    try:
        source = catalog.model(model_id).source
    except CalcError:
        return None
    m = _HUB.match(source)
    return m.group(1) if m else None


def _module_names(inputs: Inputs) -> dict[str, str]:
    from . import catalog

    family = "default"
    try:
        family = catalog.model(inputs.model).family
    except CalcError:
        pass
    return _data()["hf_modules"].get(family) or _data()["hf_modules"]["default"]


def expert_parameters(inputs: Inputs) -> tuple[str, ...]:
    """The fused 3-D expert parameters PEFT's `target_parameters` adapts when `lora_experts` is
    on (calc/data/export.json `hf_expert_parameters`, by the preset's family); () otherwise."""
    if not inputs.lora_experts:  # Inputs keeps it False unless LoRA/QLoRA on an MoE model
        return ()
    from . import catalog

    table = _data()["hf_expert_parameters"]
    try:
        family = catalog.model(inputs.model).family
    except CalcError:
        family = "default"
    return tuple(table.get(family) or table["default"])


def hf_modules(inputs: Inputs) -> list[str]:
    """The module names PEFT targets for `inputs.targets` (fused modules once)."""
    names = _module_names(inputs)
    out: list[str] = []
    for short in inputs.targets.modules:
        if names[short] not in out:
            out.append(names[short])
    return out


@dataclass(frozen=True)
class ExportSettings:
    """What every export carries, read once from the inputs (stack fields when present)."""

    model: str | None  # Hugging Face id
    method: Method
    rank: int
    alpha: int
    modules: tuple[str, ...]
    seq: int
    batch: int
    grad_accum: int  # micro-batches per optimizer step
    ckpt: bool
    optimizer: Optimizer
    flash: bool
    dquant: bool
    loss: str  # "full" or "chunked"
    opt_step: str  # "fused", "foreach" or "in-backward"
    act_offload: bool
    compile: bool  # torch.compile on the model and the loss
    epochs: Decimal
    cards: int
    also_adapted: tuple[str, ...] = ()  # projections a fused module adapts beyond the targets
    experts: tuple[str, ...] = ()  # fused expert parameters adapted (PEFT target_parameters)


def _loss(value: str) -> str:
    """The stack's loss as these configs can ask for it: a fused linear cross-entropy
    (Unsloth, Liger) is not among their loss options, and the chunked loss is the nearest."""
    return "chunked" if value == "fused" else value


def settings(inputs: Inputs, epochs: Decimal = Decimal(1), cards: int = 1) -> ExportSettings:
    """What the exports carry: the inputs with the stack's knobs resolved (`Inputs.knobs`)."""
    k = inputs.knobs
    names, modules = _module_names(inputs), hf_modules(inputs)
    extra = tuple(k for k, n in names.items() if n in modules and k not in inputs.targets.modules)
    return ExportSettings(
        model=hf_id(inputs.model), method=inputs.method, rank=inputs.rank, alpha=2 * inputs.rank,
        modules=tuple(modules), seq=inputs.seq, batch=inputs.batch, grad_accum=inputs.grad_accum,
        ckpt=inputs.ckpt,
        optimizer=inputs.optimizer, flash=getattr(inputs, "flash", True),
        dquant=getattr(inputs, "dquant", True),
        loss=_loss(k.loss.value), opt_step=k.opt_step.value,
        act_offload=bool(k.act_offload), compile=bool(k.compile), epochs=epochs, cards=cards,
        also_adapted=extra if inputs.method is not Method.FULL else (),
        experts=expert_parameters(inputs))


def _epochs(s: ExportSettings) -> str:
    e = s.epochs.normalize()
    return str(int(e)) if e == e.to_integral_value() else format(e, "f")


def _model_dtype(s: ExportSettings) -> str:
    return "float32" if s.method is Method.FULL and s.optimizer in _MASTER else "bfloat16"


# --- Transformers / TRL + PEFT -----------------------------------------------------------

#: calc optimizer -> `TrainingArguments.optim` (Transformers' OptimizerNames).
HF_OPTIM: dict[Optimizer, str] = {
    Optimizer.ADAMW: "adamw_torch_fused",
    Optimizer.ADAMW_NO_MASTER: "adamw_anyprecision",
    Optimizer.ADAMW_BF16: "adamw_torch_fused",
    Optimizer.ADAMW_8BIT: "adamw_bnb_8bit",
    Optimizer.SGD_MOMENTUM: "sgd",
    Optimizer.SGD: "sgd",
    Optimizer.ADAFACTOR: "adafactor",
    Optimizer.LION: "lion_32bit",
}


def _hf_optim(s: ExportSettings) -> tuple[str, str | None, list[str]]:
    """(optim, optim_args, comments) for the Trainer."""
    optim, args, notes = HF_OPTIM[s.optimizer], None, []
    if s.optimizer is Optimizer.ADAMW_NO_MASTER:
        args = "use_kahan_summation=False,momentum_dtype=float32,variance_dtype=float32"
        notes.append("FP32 moments on BF16 weights (calc's adamw-no-master): torchdistx's "
                     "AnyPrecisionAdamW; needs `pip install torchdistx`.")
    if s.optimizer in (Optimizer.ADAMW, Optimizer.ADAMW_BF16):
        if s.opt_step == "foreach":
            optim = "adamw_torch"  # torch.optim.AdamW, multi-tensor (foreach) step on CUDA
        elif s.opt_step == "in-backward":
            notes.append("The Trainer cannot step the optimizer inside the backward pass "
                         "(calc's opt_step in-backward); the fused step is the nearest.")
    if s.optimizer is Optimizer.SGD_MOMENTUM:
        notes.append("The Trainer's 'sgd' has no momentum: optimizer_cls_and_kwargs below adds it.")
    return optim, args, notes


def export_trl(s: ExportSettings) -> str:
    optim, optim_args, notes = _hf_optim(s)
    lora = s.method is not Method.FULL
    model = s.model or PLACEHOLDER_MODEL
    lines = [
        '"""Fine-tuning script generated by calc (the GPU memory guide) from the estimated',
        "configuration. Transformers + TRL (SFTTrainer) + PEFT. Replace the dataset with yours.",
        '"""',
        "",
        "import torch",
        "from datasets import load_dataset",
    ]
    if lora:
        lines.append("from peft import LoraConfig")
    if s.method is Method.QLORA:
        lines.append("from transformers import BitsAndBytesConfig")
    lines += ["from trl import SFTConfig, SFTTrainer", ""]
    if s.model is None:
        lines.append("# A custom architecture: put the Hugging Face id or local path of your model here.")
    lines += [f"model_id = {model!r}", 'dataset = load_dataset("trl-lib/Capybara", split="train")', ""]
    if lora:
        lines += ["peft_config = LoraConfig(",
                  f"    r={s.rank},", f"    lora_alpha={s.alpha},", "    lora_dropout=0.0,",
                  f"    target_modules={list(s.modules)!r},"]
        if s.experts:
            lines += ["    # The routed experts are fused 3-D nn.Parameters, not nn.Linear: PEFT (>= 0.17)",
                      "    # adapts them through target_parameters, as the estimate does (lora_experts).",
                      f"    target_parameters={list(s.experts)!r},"]
        lines += ['    task_type="CAUSAL_LM",', ")"]
    if s.method is Method.QLORA:
        lines += ["quantization_config = BitsAndBytesConfig(", "    load_in_4bit=True,",
                  '    bnb_4bit_quant_type="nf4",',
                  f"    bnb_4bit_use_double_quant={s.dquant},",
                  "    bnb_4bit_compute_dtype=torch.bfloat16,", ")"]
    if s.method is Method.FULL and s.optimizer in _MASTER:
        lines.append("# FP32 weights trained with BF16 autocast: the FP32 master copy of calc's "
                     f"{s.optimizer.value}.")
    if s.also_adapted:
        lines.append(f"# {', '.join(s.modules)}: fused projections, so this also adapts "
                     f"{', '.join(s.also_adapted)}, which the estimate leaves out.")
    lines += [f"# {n}" for n in notes]
    if s.loss == "full":
        lines.append("# loss_type 'nll' materialises the logits, as the estimate assumes; "
                     "'chunked_nll' needs less memory.")
    attn = "sdpa" if s.flash else "eager"
    lines += ["args = SFTConfig(",
              f'    output_dir="{(s.model or "model").split("/")[-1]}-{s.method.value}",',
              f"    max_length={s.seq},",
              f"    per_device_train_batch_size={s.batch},",
              f"    gradient_accumulation_steps={s.grad_accum},",
              f"    num_train_epochs={_epochs(s)},",
              f"    gradient_checkpointing={s.ckpt},",
              f"    optim={optim!r},"]
    if optim_args:
        lines.append(f"    optim_args={optim_args!r},")
    lines += ["    bf16=True,",
              f"    loss_type={'chunked_nll' if s.loss == 'chunked' else 'nll'!r},",
              f"    activation_offloading={s.act_offload},",
              f"    torch_compile={s.compile},",
              f'    model_init_kwargs={{"dtype": "{_model_dtype(s)}", "attn_implementation": "{attn}"}},',
              ")", "trainer = SFTTrainer(", "    model=model_id,", "    args=args,",
              "    train_dataset=dataset,"]
    if lora:
        lines.append("    peft_config=peft_config,")
    if s.method is Method.QLORA:
        lines.append("    quantization_config=quantization_config,")
    if s.optimizer is Optimizer.SGD_MOMENTUM:
        lines.append('    optimizer_cls_and_kwargs=(torch.optim.SGD, {"momentum": 0.9}),')
    lines += [")", "trainer.train()"]
    if s.cards > 1:
        lines += ["", f"# On {s.cards} cards: accelerate launch --num_processes {s.cards} "
                  "this_script.py (with FSDP or DeepSpeed ZeRO-3 when one card cannot hold the run)."]
    return "\n".join(lines) + "\n"


# --- Axolotl ----------------------------------------------------------------------------


def _yaml_scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)  # a double-quoted JSON string is YAML


def export_axolotl(s: ExportSettings) -> str:
    optim, optim_args, notes = _hf_optim(s)
    rows: list[tuple[str, object]] = [("base_model", s.model or PLACEHOLDER_MODEL)]
    if s.method is Method.QLORA:
        rows += [("load_in_4bit", True), ("adapter", "qlora")]
    elif s.method is Method.LORA:
        rows.append(("adapter", "lora"))
    out = ["# Axolotl config generated by calc (the GPU memory guide) from the estimated",
           "# configuration (Axolotl v0.18 field names). Replace the dataset with yours."]
    if s.model is None:
        out.append("# A custom architecture: put the Hugging Face id or local path of your model here.")
    out += [f"# {n}" for n in notes]
    if s.also_adapted:
        out.append(f"# {', '.join(s.modules)}: fused projections, so this also adapts "
                   f"{', '.join(s.also_adapted)}, which the estimate leaves out.")
    if s.method is Method.FULL and s.optimizer in _MASTER:
        out.append("# calc's estimate keeps an FP32 master copy of the weights; with bf16: true "
                   "Axolotl trains the BF16 weights directly (calc's adamw-bf16).")
    out += [f"{k}: {_yaml_scalar(v)}" for k, v in rows]
    if s.method is Method.QLORA:
        out += ["bnb_config_kwargs:", f"  bnb_4bit_use_double_quant: {_yaml_scalar(s.dquant)}"]
    if s.method is not Method.FULL:
        out += [f"lora_r: {s.rank}", f"lora_alpha: {s.alpha}", "lora_dropout: 0.0",
                "lora_target_modules:"] + [f"  - {_yaml_scalar(m)}" for m in s.modules]
        if s.experts:
            out += ["# The routed experts are fused 3-D parameters, adapted as the estimate does "
                    "(lora_experts): PEFT's target_parameters; lora_dropout must be 0 with it.",
                    "lora_target_parameters:"] + [f"  - {_yaml_scalar(m)}" for m in s.experts]
    rows = [("sequence_len", s.seq), ("micro_batch_size", s.batch),
            ("gradient_accumulation_steps", s.grad_accum), ("gradient_checkpointing", s.ckpt),
            ("optimizer", optim)]
    out += [f"{k}: {_yaml_scalar(v)}" for k, v in rows]
    out.append(f"num_epochs: {_epochs(s)}")
    if optim_args:
        out.append(f"optim_args: {_yaml_scalar(optim_args)}")
    out += ["bf16: true", f"attn_implementation: {_yaml_scalar('sdpa' if s.flash else 'eager')}",
            f"chunked_cross_entropy: {_yaml_scalar(s.loss == 'chunked')}",
            f"activation_offloading: {_yaml_scalar(s.act_offload)}",
            f"torch_compile: {_yaml_scalar(s.compile)}",
            "datasets:", '  - path: "tatsu-lab/alpaca"', '    type: "alpaca"',
            f'output_dir: "./outputs/{(s.model or "model").split("/")[-1]}-{s.method.value}"']
    if s.cards > 1:
        out.append(f"# On {s.cards} cards: axolotl train config.yaml --num-processes {s.cards} "
                   "(add an fsdp or deepspeed section when one card cannot hold the run).")
    return "\n".join(out) + "\n"


# --- torchtune --------------------------------------------------------------------------

#: calc optimizer -> torchtune `optimizer._component_` (PyTorch and bitsandbytes classes).
TT_OPTIM: dict[Optimizer, str] = {
    Optimizer.ADAMW: "torch.optim.AdamW",
    Optimizer.ADAMW_NO_MASTER: "torch.optim.AdamW",
    Optimizer.ADAMW_BF16: "torch.optim.AdamW",
    Optimizer.ADAMW_8BIT: "bitsandbytes.optim.PagedAdamW8bit",
    Optimizer.SGD_MOMENTUM: "torch.optim.SGD",
    Optimizer.SGD: "torch.optim.SGD",
    Optimizer.ADAFACTOR: "torch.optim.Adafactor",
    Optimizer.LION: "bitsandbytes.optim.Lion32bit",
}
#: The optimizers that take a `fused` argument (torch.optim.AdamW and SGD).
TT_FUSED = frozenset({Optimizer.ADAMW, Optimizer.ADAMW_NO_MASTER, Optimizer.ADAMW_BF16,
                      Optimizer.SGD_MOMENTUM, Optimizer.SGD})


def _torchtune_config(model_id: str | None, s: ExportSettings,
                      inputs: Inputs) -> tuple[str, str, bool]:
    """(recipe, config, whether the config sets optimizer.fused) for the preset, method and
    card count; CalcError if torchtune has none."""
    entry = _data()["torchtune"]["models"].get(inputs.model) if model_id else None
    kind = s.method.value
    if entry is not None:
        order = [f"{kind}_single_device", kind] if s.cards == 1 else [kind]
        for k in order:
            if k in entry["kinds"]:
                base = "full" if s.method is Method.FULL else "lora"
                place = "single_device" if k.endswith("_single_device") else "distributed"
                return (f"{base}_finetune_{place}", f"{entry['config']}_{k}",
                        k in entry["fused"])
    raise CalcError.one("export", "export_unsupported", value="torchtune")


def _tt_modules(inputs: Inputs) -> tuple[list[str], bool]:
    """torchtune's lora_attn_modules and apply_lora_to_mlp for calc's targets."""
    names = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "output_proj"}
    attn = [names[m] for m in inputs.targets.modules if m in names]
    return attn, any(m in ("gate", "up", "down") for m in inputs.targets.modules)


def export_torchtune(s: ExportSettings, inputs: Inputs) -> str:
    recipe, config, has_fused = _torchtune_config(s.model, s, inputs)
    launch = f"tune run --nproc_per_node {s.cards} {recipe}" if recipe.endswith("distributed") \
        else f"tune run {recipe}"
    opts: list[str] = []
    notes = ["# torchtune command generated by calc (the GPU memory guide) from the estimated",
             f"# configuration, for torchtune's recipe config {config} (torchtune commit "
             f"{_data()['torchtune']['commit'][:7]}).",
             "# The config reads the weights from its checkpointer.checkpoint_dir: download them "
             "as the header of the config says."]
    if s.method is not Method.FULL:
        attn, mlp = _tt_modules(inputs)
        opts += [f"model.lora_rank={s.rank}", f"model.lora_alpha={s.alpha}",
                 '"model.lora_attn_modules=[' + ",".join(f"'{m}'" for m in attn) + ']"',
                 f"model.apply_lora_to_mlp={mlp}"]
        notes.append("# torchtune keeps the adapters in the model's dtype (BF16), not in FP32 as PEFT does.")
        if s.experts:
            notes.append("# Adapting the routed experts (calc's lora_experts) has no override in this "
                         "recipe config: not supported here.")
    tt_accum = 1 if s.opt_step == "in-backward" else s.grad_accum
    if tt_accum != s.grad_accum:
        notes.append("# optimizer_in_bwd steps each gradient as soon as it is complete: torchtune's "
                     "recipes refuse gradient accumulation with it (gradient_accumulation_steps=1).")
    opts += [f"tokenizer.max_seq_len={s.seq}", f"batch_size={s.batch}",
             f"gradient_accumulation_steps={tt_accum}", f"epochs={_epochs(s)}",
             f"enable_activation_checkpointing={s.ckpt}",
             f"enable_activation_offloading={s.act_offload}",
             f"compile={s.compile}",
             f"optimizer._component_={TT_OPTIM[s.optimizer]}"]
    if s.optimizer in TT_FUSED:
        opts.append(f"optimizer.fused={s.opt_step != 'foreach'}")
    elif has_fused:
        opts.append("~optimizer.fused")
    if s.optimizer is Optimizer.SGD_MOMENTUM:
        opts.append("optimizer.momentum=0.9")
    if s.method is Method.FULL:
        opts.append(f"optimizer_in_bwd={s.opt_step == 'in-backward'}")
        if s.optimizer in _MASTER or s.optimizer is Optimizer.ADAMW_NO_MASTER:
            notes.append("# torchtune keeps no FP32 master copy: with dtype=bf16 the moments "
                         "follow the BF16 weights (calc's adamw-bf16).")
    loss = "torchtune.modules.loss.LinearCrossEntropyLoss" if s.loss == "chunked" \
        else "torch.nn.CrossEntropyLoss"
    opts += [f"loss._component_={loss}", "dtype=bf16"]
    if not s.flash:
        notes.append("# torchtune always uses fused attention (SDPA): calc's flash=false has no "
                     "equivalent here.")
    if s.method is Method.QLORA and not s.dquant:
        notes.append("# torchtune's NF4 (torchao) always quantises the scales as well "
                     "(double quantisation).")
    body = " \\\n  ".join([f"{launch} --config {config}"] + opts)
    return "\n".join(notes) + "\n" + body + "\n"


def export(inputs: Inputs, fmt: str, epochs: Decimal = Decimal(1), cards: int = 1) -> str:
    """The training config of `inputs` in `fmt` (one of FORMATS)."""
    if fmt not in FORMATS:
        raise CalcError.one("export", "unknown_choice", value=fmt)
    s = settings(inputs, epochs, cards)
    if fmt == "trl":
        return export_trl(s)
    if fmt == "axolotl":
        return export_axolotl(s)
    return export_torchtune(s, inputs)
