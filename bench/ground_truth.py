"""Ground truth for the accuracy page: real training steps counted byte by byte, on CPU.

Not part of the test suite. Run it in its own environment (see `bench/requirements-truth.txt`):

    python3 -m venv .venv-truth
    .venv-truth/bin/pip install -r bench/requirements-truth.txt
    .venv-truth/bin/python bench/ground_truth.py            # writes calc/data/ground_truth.json
    .venv/bin/python bench/compare_truth.py                 # against calc's detailed mode
    .venv-truth/bin/python bench/ground_truth.py --new      # only the knob runs, merged in
    .venv-truth/bin/python bench/ground_truth.py --list     # the configurations' names
    .venv-truth/bin/python bench/ground_truth.py --only loss=chunked 8b-lora   # by name

About 30 minutes on two CPU cores: 18 runs under fake tensors (the 8B ones take 25-75 s
each), the QLoRA run with real tensors (about 7 minutes), and 18 runs of Llama 3.2 1B with
the training-stack knobs (bench/truth_knobs.py: chunked loss, fused / foreach / in-backward
optimizer step, BF16 adapters; about 10 minutes). `--only` and `--new` merge their runs into
the recorded file (a run's `name` is its key) and refuse to when the library versions differ.

What it does, per configuration:

- builds a Llama-shaped `LlamaForCausalLM` from an explicit `LlamaConfig` (the shapes of calc's
  presets `llama-3.2-1b` and `llama-3.1-8b`), with random initialisation, inside PyTorch's
  `FakeTensorMode`: tensors carry shape, dtype and storage size but no data, so an 8B model
  costs no memory and no download;
- full fine-tuning (all parameters BF16, `torch.optim.AdamW`: BF16 moments, what calc calls
  `adamw-bf16`) or LoRA with PEFT (r = 16 on all linear layers, adapters kept in FP32 as PEFT
  does by default, AdamW with FP32 moments);
- gradient checkpointing on (non-reentrant `torch.utils.checkpoint`, HF's
  `gradient_checkpointing_enable`) or off; batch 1; the lengths in LENGTHS; SDPA attention
  (a fused, flash-style kernel: no s x s score matrix is kept), plus a few runs with HF's
  "eager" attention (scores materialised) to check the no-flash term;
- `torch.optim.AdamW` in its `foreach` form, which is what PyTorch picks by default for CUDA
  tensors (on the CPU it would default to the per-parameter loop, with smaller temporaries);
  the knob runs name their form in `knobs.opt_step` (fused, foreach, in backward);
- QLoRA once, on a small custom Llama-shaped model with real tensors (bitsandbytes' 4-bit
  layers do not run on fake tensors; on the CPU they are slow): `run_qlora`;
- three real training steps (forward, loss, backward, optimizer step, zero_grad) under
  `torch.distributed._tools.mem_tracker.MemTracker`, which sees every tensor storage that
  is created or freed and files it under parameters, buffers, gradients, activations,
  temporaries (backward-pass tensors) or optimizer state, rounding each allocation up to 512
  bytes as the CUDA caching allocator does. The peak and its breakdown are recorded.

The tracker reports allocated bytes (what `torch.cuda.max_memory_allocated` would show), not
the reserved memory of the caching allocator and not the CUDA context.

Work-arounds (known pitfalls under fake tensors):
1. the stock tracker registers gradient hooks on every parameter and fails on frozen ones:
   `TrueTracker` installs them on trainable parameters only;
2. PEFT's internal `.to(device)` moves fail on fake tensors; everything is on the CPU here, so
   they are skipped (`_no_device_moves`);
3. without explicit `position_ids` HF may take the fake input for packed sequences and build
   a different attention path: `position_ids` are always passed.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import json
import sys
import time
from pathlib import Path

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.distributed._tools.mem_tracker import MemTracker, _MemRefType

sys.path.insert(0, str(Path(__file__).resolve().parent))
from truth_knobs import (CHUNKS, NOTES, Config, knob_configurations, loss_of,  # noqa: E402
                         optimizers)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "calc" / "data" / "ground_truth.json"

#: The shapes of calc's presets (calc/data/models.json), as LlamaConfig fields.
MODELS = {
    "llama-3.2-1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
                         num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                         vocab_size=128256, tie_word_embeddings=True),
    "llama-3.1-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                         num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                         vocab_size=128256, tie_word_embeddings=False),
}
#: A small Llama-shaped model (calc's `custom` architecture) for the QLoRA run, which needs real
#: tensors: bitsandbytes' 4-bit layers run on the CPU, but slowly (about 7 minutes for this one).
QLORA_ARCH = dict(layers=4, hidden=1024, ffn=4096, heads=16, kv_heads=4, head_dim=64,
                  vocab=32000, tied=False)
QLORA_SEQ = 512
LENGTHS = (512, 2048)
RANK = 16
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
STEPS = 3

CATEGORIES = {
    _MemRefType.PARAM: "parameters",
    _MemRefType.BUFFER: "buffers",
    _MemRefType.GRAD: "gradients",
    _MemRefType.ACT: "activations",
    _MemRefType.TEMP: "temporaries",
    _MemRefType.OPT: "optimizer_state",
    _MemRefType.OTH: "other",
}


class TrueTracker(MemTracker):
    """MemTracker that installs gradient hooks on trainable parameters only (pitfall 1)."""

    def _track_module_params_and_buffers(self, module, install_grad_hooks=True):
        def _grad_hook(grad):
            self._update_and_maybe_create_winfos(grad, _MemRefType.GRAD)

        param_memory = 0
        for param in module.parameters():
            winfos = self._update_and_maybe_create_winfos(param, _MemRefType.PARAM)
            param_memory += sum(w.mem_consumed for w in winfos)
            if param.grad is not None:
                self._update_and_maybe_create_winfos(param.grad, _MemRefType.GRAD)
            if (install_grad_hooks and param.requires_grad
                    and self._param_to_grad_hook_handles.get(param, None) is None):
                self._param_to_grad_hook_handles[param] = (
                    param.register_hook(_grad_hook),
                    # p.grad is None here when an in-backward step has already freed it
                    param.register_post_accumulate_grad_hook(
                        lambda p: None if p.grad is None else _grad_hook(p.grad)),
                )
        buffer_memory = 0
        for buffer in module.buffers():
            winfos = self._update_and_maybe_create_winfos(buffer, _MemRefType.BUFFER)
            buffer_memory += sum(w.mem_consumed for w in winfos)
        return param_memory, buffer_memory

    def _update_peak_stats(self, peak_state):
        """Only the global peak (the stock method also updates every active module's own peak
        on every operation, which makes an 8B step take minutes)."""
        for dev, dev_snap in self._curr_mem_snap.items():
            if self._peak_mem.get(dev, 0) < dev_snap["Total"]:
                self._peak_mem[dev] = dev_snap["Total"]
                self._peak_mem_snap[dev] = dict(dev_snap)


@contextlib.contextmanager
def _no_device_moves():
    """PEFT moves new adapter modules `.to(weight.device)` of the base layer; under fake
    tensors that move fails ("Couldn't swap Linear.weight"), and on a CPU-only run it is a
    no-op anyway (pitfall 2). While PEFT wraps the model, `Module.to` keeps everything on the
    CPU and applies a dtype change by re-creating the parameters."""
    orig = torch.nn.Module.to

    def to(self, *args, **kwargs):
        device, dtype, _, _ = torch._C._nn._parse_to(*args, **kwargs)
        if device is not None and device.type != "cpu":
            return orig(self, *args, **kwargs)
        if dtype is not None:  # re-create the floating-point parameters in the new dtype
            for mod in self.modules():
                for name, p in list(mod._parameters.items()):
                    if p is not None and p.is_floating_point() and p.dtype != dtype:
                        mod._parameters[name] = torch.nn.Parameter(
                            p.detach().to(dtype), requires_grad=p.requires_grad)
        return self

    torch.nn.Module.to = to
    try:
        yield
    finally:
        torch.nn.Module.to = orig


def build(model_id: str, method: str, ckpt: bool, attn: str, adapter_dtype: str = "fp32"):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(**MODELS[model_id], max_position_embeddings=8192,
                      attn_implementation=attn, use_cache=False)
    torch.set_default_dtype(torch.bfloat16)
    try:
        model = LlamaForCausalLM(cfg)
    finally:
        torch.set_default_dtype(torch.float32)
    model.train()
    if ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if method == "lora":
        from peft import LoraConfig, get_peft_model

        model.enable_input_require_grads() if ckpt else None
        with _no_device_moves():
            # autocast_adapter_dtype=True (PEFT's default) upcasts BF16 adapters to FP32;
            # False leaves them in the base layer's dtype (BF16 here)
            model = get_peft_model(model, LoraConfig(r=RANK, lora_alpha=2 * RANK, lora_dropout=0.0,
                                                     target_modules=TARGETS, bias="none",
                                                     task_type="CAUSAL_LM"),
                                   autocast_adapter_dtype=adapter_dtype == "fp32")
    trainable = [p for p in model.parameters() if p.requires_grad]
    return model, trainable


def run(cfg: Config) -> dict:
    """One configuration under the tracker. Without knobs: the earlier loop (foreach step, HF
    loss, the output kept until after the step); with knobs: the stack's step (truth_knobs)."""
    model_id, method, ckpt, seq, attn = cfg.model, cfg.method, cfg.ckpt, cfg.seq, cfg.attn
    kn = dict(cfg.knobs or ())
    t0 = time.perf_counter()
    with FakeTensorMode(allow_non_fake_inputs=True):
        model, trainable = build(model_id, method, ckpt, attn, kn.get("adapter_dtype") or "fp32")
        if cfg.knobs is None:
            # foreach=True: what AdamW picks by default for CUDA tensors (one list-sized temporary
            # during the step); on CPU it would default to the per-parameter loop.
            opts = [torch.optim.AdamW(trainable, lr=1e-4, foreach=True)]
        else:
            opts = optimizers(trainable, kn["opt_step"])
        vocab = MODELS[model_id]["vocab_size"]
        ids = torch.randint(0, vocab, (1, seq))
        pos = torch.arange(seq).unsqueeze(0)
        tracker = TrueTracker()
        tracker.track_external(model, *opts)
        per_step = []
        with tracker:
            for _ in range(STEPS):
                if cfg.knobs is None:
                    out = model(input_ids=ids, position_ids=pos, labels=ids)
                    out.loss.backward()
                    opts[0].step()
                    opts[0].zero_grad(set_to_none=True)
                    del out
                else:
                    loss_of(model, ids, pos, kn["loss"]).backward()
                    if kn["opt_step"] != "in-backward":  # else stepped in backward
                        opts[0].step()
                        opts[0].zero_grad(set_to_none=True)
                tracker.reset_mod_stats()  # per-module stats are per iteration
                snap = tracker.get_tracker_snapshot("peak")
                per_step.append(sum(v.get("Total", 0) for v in snap.values()))
        peak = tracker.get_tracker_snapshot("peak")
        n_train = sum(p.numel() for p in trainable)
        n_all = sum(p.numel() for p in model.parameters())
    (dev_snap,) = peak.values()
    cats = {CATEGORIES[k]: int(v) for k, v in dev_snap.items() if k in CATEGORIES}
    row = {
        "model": model_id,
        "method": method,
        "rank": RANK if method == "lora" else None,
        "targets": "all-linear" if method == "lora" else None,
        "seq": seq,
        "batch": 1,
        "ckpt": ckpt,
        "optimizer": "adamw" if method == "lora" else "adamw-bf16",
        # calc's training stack: PEFT + Transformers (hf), with the foreach step built above
        "framework": "hf", "opt_step": "foreach",
        "flash": attn != "eager",
        "attn_implementation": attn,
        "params_counted": int(n_all),
        "trainable_params": int(n_train),
        "peak_bytes": int(dev_snap["Total"]),
        "components": cats,
        "peak_after_step": per_step,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    if cfg.knobs is not None:
        row.update(name=cfg.name, knobs=kn, logits_kept=False, date=dt.date.today().isoformat())
        if kn["loss"] == "chunked":
            row["loss_chunks"] = CHUNKS
    del model, opts, tracker
    gc.collect()
    return row


def run_qlora(seq: int = QLORA_SEQ) -> dict:
    """QLoRA as PEFT users run it: a BF16 checkpoint (random weights, saved locally) loaded with
    bitsandbytes NF4 and double quantisation, `prepare_model_for_kbit_training`, LoRA r = 16 on
    all linear layers; real tensors on the CPU (bitsandbytes' 4-bit layers cannot run on fake
    tensors), no gradient checkpointing."""
    import tempfile

    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
    from transformers import BitsAndBytesConfig, LlamaConfig, LlamaForCausalLM

    t0 = time.perf_counter()
    a = QLORA_ARCH
    cfg = LlamaConfig(hidden_size=a["hidden"], intermediate_size=a["ffn"],
                      num_hidden_layers=a["layers"], num_attention_heads=a["heads"],
                      num_key_value_heads=a["kv_heads"], head_dim=a["head_dim"],
                      vocab_size=a["vocab"], tie_word_embeddings=a["tied"],
                      attn_implementation="sdpa", use_cache=False)
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    try:
        base = LlamaForCausalLM(cfg)
    finally:
        torch.set_default_dtype(torch.float32)
    with tempfile.TemporaryDirectory() as tmp:
        base.save_pretrained(tmp)
        del base
        quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                   bnb_4bit_use_double_quant=True,
                                   bnb_4bit_compute_dtype=torch.bfloat16)
        model = LlamaForCausalLM.from_pretrained(tmp, quantization_config=quant,
                                                 device_map="cpu", dtype=torch.bfloat16)
    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
    model = get_peft_model(model, LoraConfig(r=RANK, lora_alpha=2 * RANK, lora_dropout=0.0,
                                             target_modules=TARGETS, bias="none",
                                             task_type="CAUSAL_LM"))
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=1e-4, foreach=True)
    ids = torch.randint(0, a["vocab"], (1, seq))
    pos = torch.arange(seq).unsqueeze(0)
    tracker = TrueTracker()
    tracker.track_external(model, opt)
    per_step = []
    with tracker:
        for _ in range(STEPS):
            out = model(input_ids=ids, position_ids=pos, labels=ids)
            out.loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del out
            tracker.reset_mod_stats()
            snap = tracker.get_tracker_snapshot("peak")
            per_step.append(sum(v.get("Total", 0) for v in snap.values()))
    (dev_snap,) = tracker.get_tracker_snapshot("peak").values()
    row = {
        "model": "custom", **a,
        "method": "qlora", "rank": RANK, "targets": "all-linear", "seq": seq, "batch": 1,
        "ckpt": False, "optimizer": "adamw", "framework": "hf", "opt_step": "foreach",
        "flash": True, "attn_implementation": "sdpa",
        "tensors": "real (bitsandbytes on CPU)",
        "params_counted": int(sum(p.numel() for p in model.parameters())),
        "trainable_params": int(sum(p.numel() for p in trainable)),
        "peak_bytes": int(dev_snap["Total"]),
        "components": {CATEGORIES[k]: int(v) for k, v in dev_snap.items() if k in CATEGORIES},
        "peak_after_step": per_step,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    return row


def configurations() -> list[Config]:
    """Every run of the suite: the earlier ones (no knobs), then the knob runs (truth_knobs)."""
    runs = []
    for model_id in MODELS:
        for method in ("full", "lora"):
            for ckpt in (True, False):
                for seq in LENGTHS:
                    runs.append(Config(model_id, method, ckpt, seq))
    # attention without flash (HF "eager": the s x s scores are kept), small model only
    for seq in LENGTHS:
        runs.append(Config("llama-3.2-1b", "lora", False, seq, "eager"))
    runs.append(Config("custom", "qlora", False, QLORA_SEQ))  # real tensors, see run_qlora
    return runs + knob_configurations()


def earlier_knobs(row: dict) -> dict:
    """What the runs without knobs did, in knob names: PEFT's default FP32 adapters, HF's
    loss, AdamW(foreach=True), the model output kept until after the step."""
    cfg = Config(row["model"], row["method"], row["ckpt"], row["seq"],
                 row.get("attn_implementation", "sdpa"))
    return {"name": cfg.name,
            "knobs": {"adapter_dtype": None if row["method"] == "full" else "fp32",
                      "loss": "full", "opt_step": "foreach"},
            "logits_kept": True}


def _bnb_version() -> str | None:
    try:
        import bitsandbytes
    except ImportError:
        return None
    return bitsandbytes.__version__


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", metavar="NAME",
                    help="run only the configurations whose name contains one of these texts "
                         "(names as --list prints them: model-method-sLENGTH-ckpt[-knob=value])")
    ap.add_argument("--new", action="store_true",
                    help="run only the knob configurations (bench/truth_knobs.py)")
    ap.add_argument("--list", action="store_true", help="print the configurations' names")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--merge", action="store_true",
                    help="keep the other runs already in --out, replace those run again "
                         "(always so with --only or --new)")
    args = ap.parse_args(argv)

    configs = knob_configurations() if args.new else configurations()
    if args.only:
        configs = [c for c in configs if any(t in c.name for t in args.only)]
    if args.list:
        print("\n".join(c.name for c in configs))
        return 0
    if not configs:
        print("no configuration matches", file=sys.stderr)
        return 2
    merge = (args.merge or args.only or args.new) and args.out.exists()

    import peft
    import transformers

    versions = {"torch": torch.__version__, "transformers": transformers.__version__,
                "peft": peft.__version__, "bitsandbytes": _bnb_version(),
                "python": sys.version.split()[0]}
    old = json.loads(args.out.read_text()) if merge else None
    if old is not None and {k: v for k, v in old["_about"]["versions"].items() if k != "python"} \
            != {k: v for k, v in versions.items() if k != "python"}:
        print(f"{args.out} was recorded with {old['_about']['versions']}, this environment has "
              f"{versions}: run the whole suite instead of merging", file=sys.stderr)
        return 2
    rows = []
    for cfg in configs:
        row = run_qlora(cfg.seq) if cfg.method == "qlora" else run(cfg)
        if cfg.knobs is None:
            row.update(earlier_knobs(row), date=dt.date.today().isoformat())
        print(f"{cfg.name:70} peak {row['peak_bytes'] / 2**30:7.2f} GiB  ({row['seconds']} s)",
              flush=True)
        rows.append(row)
    if old is not None:
        for r in old["runs"]:  # rows recorded before the knobs existed: say what they did
            if "name" not in r:
                r.update(earlier_knobs(r), date=old["_about"]["date"])
        new = {r["name"] for r in rows}
        rows = [r for r in old["runs"] if r["name"] not in new] + rows
    doc = {
        "_about": {
            "what": "Peak allocated bytes of real training steps of Llama-shaped models, counted "
                    "per category by PyTorch's MemTracker under FakeTensorMode on CPU "
                    "(bench/ground_truth.py). Allocated, not reserved: no allocator cache, no "
                    "CUDA context.",
            "command": ".venv-truth/bin/python bench/ground_truth.py",
            "date": dt.date.today().isoformat(),  # of the last run; each row has its own
            "versions": versions,
            "steps": STEPS,
            "notes": [
                "Full fine-tuning: all parameters BF16, torch.optim.AdamW (moments in the "
                "parameter dtype, BF16): calc optimizer adamw-bf16; its form (foreach, fused, "
                "in backward) is the row's knobs.opt_step.",
                "LoRA: PEFT, r=16 on q,k,v,o,gate,up,down, lora_alpha=32, dropout 0; adapter "
                "weights FP32 (PEFT's autocast_adapter_dtype default) unless knobs.adapter_dtype "
                "is bf16; AdamW moments in the adapters' dtype.",
                "Gradient checkpointing: HF gradient_checkpointing_enable, non-reentrant.",
                "Attention: 'sdpa' (fused kernel, no s x s scores) unless attn_implementation "
                "says 'eager'.",
                "QLoRA (model 'custom', a small Llama-shaped architecture given field by "
                "field): real tensors, bitsandbytes NF4 with double quantisation on the CPU, "
                "prepare_model_for_kbit_training (non-quantised parameters upcast to FP32), "
                "LoRA r=16 on all linear layers.",
                "components: the breakdown at the moment of the peak; 'temporaries' are tensors "
                "created during the backward pass (activation gradients and recomputed "
                "activations).",
                *NOTES,
            ],
        },
        "runs": rows,
    }
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out} ({len(rows)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
