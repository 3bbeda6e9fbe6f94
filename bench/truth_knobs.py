"""The training-stack knobs that bench/ground_truth.py measures on CPU (engine spec section 6).

Each knob is implemented here as the stack that sets it does it, so a run with a knob is the
same training step as the run without it except for that knob:

- `loss`: `full` is Hugging Face's default, `LlamaForCausalLM(labels=...)` and its
  `ForCausalLMLoss` (transformers 5.24.0, `loss/loss_utils.py`): the whole BF16 logits, an FP32
  upcast of them, one cross-entropy. `chunked` is torchtune's `CEWithChunkedOutputLoss` at tag
  v0.6.1 (`torchtune/modules/loss/ce_chunked_output_loss.py`) with the decoder's
  `chunked_output` (`torchtune/modules/transformer.py`): the final hidden state split into
  8 chunks of tokens, the output projection applied per chunk, then per chunk the FP32 upcast
  and a summed cross-entropy; labels shifted as the recipe does (`lora_finetune_single_device.py`:
  `labels[..., 1:]` and one ignore index). Not compiled (the recipes' configs say
  `compile: False`). torchtune itself is not installed (it needs torchao); the two functions
  below are its code transcribed, tensor operation for tensor operation.
- `opt_step`: `fused` is `torch.optim.AdamW(fused=True)` (the Transformers Trainer's default
  `adamw_torch_fused`, torchtune's configs' `fused: True`); `foreach` is `foreach=True` (what
  `torch.optim.AdamW` picks by default for CUDA tensors); `in-backward` is torchtune's
  `optimizer_in_bwd` (v0.6.1 `torchtune/training/memory.py`, `register_optim_in_bwd_hooks`): one
  fused AdamW per parameter, stepped and its gradient freed in the parameter's
  post-accumulate-grad hook.
- `adapter_dtype`: `fp32` is PEFT's default (`autocast_adapter_dtype=True`), `bf16` is
  `get_peft_model(..., autocast_adapter_dtype=False)` on a BF16 model (set in `build`).

The training step of a run with knobs is the step of the stack: the model's outputs are dropped
before the backward pass (the Trainer's `compute_loss` returns the loss only; torchtune's recipe
does `del logits`). The earlier runs, recorded without knobs, keep the model's output (and so
the BF16 logits) alive through the backward pass and the optimizer step: `logits_kept`.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import torch
import torch.nn.functional as F

#: CEWithChunkedOutputLoss(num_output_chunks=8): its default, and the value of every torchtune
#: v0.6.1 config that names it.
CHUNKS = 8
IGNORE_INDEX = -100
LR = 1e-4
KNOB_MODEL = "llama-3.2-1b"


class Config(NamedTuple):
    """One run: the model, method, checkpointing, length, attention and (new runs) knobs."""

    model: str
    method: str
    ckpt: bool
    seq: int
    attn: str = "sdpa"
    knobs: tuple[tuple[str, str | None], ...] | None = None  # None: the earlier step, see above

    @property
    def name(self) -> str:
        parts = [self.model, self.method, f"s{self.seq}", "ckpt" if self.ckpt else "no-ckpt"]
        if self.attn == "eager":
            parts.append("eager")
        parts += [f"{k}={v}" for k, v in self.knobs or () if v is not None]
        return "-".join(parts)


def knobs(method: str, adapter_dtype: str | None, loss: str, opt_step: str):
    """The knob values of a run, in the spec's names; adapter_dtype is None for full tuning."""
    return (("adapter_dtype", adapter_dtype if method != "full" else None), ("loss", loss),
            ("opt_step", opt_step))


def knob_configurations() -> list[Config]:
    """The knob runs: Llama 3.2 1B, batch 1, the two lengths; each knob against its baseline
    with every other setting equal (fused step, full loss, FP32 adapters unless varied)."""
    m, runs = KNOB_MODEL, []
    for method in ("lora", "full"):  # 1. loss: full vs chunked (checkpointing on)
        for seq in (512, 2048):
            for loss in ("full", "chunked"):
                kn = knobs(method, "fp32", loss, "fused")
                runs.append(Config(m, method, True, seq, knobs=kn))
    for seq in (512, 2048):  # 2. optimizer step: fused (above) vs foreach vs in-backward
        for step in ("foreach", "in-backward"):
            runs.append(Config(m, "full", True, seq, knobs=knobs("full", None, "full", step)))
    for ckpt in (True, False):  # 3. adapters: FP32 (ckpt on: above) vs BF16
        for seq in (512, 2048):
            for dtype in (("bf16",) if ckpt else ("fp32", "bf16")):
                kn = knobs("lora", dtype, "full", "fused")
                runs.append(Config(m, "lora", ckpt, seq, knobs=kn))
    return runs


class ChunkedOutput(torch.nn.Module):
    """The decoder's forward with torchtune v0.6.1 `TransformerDecoder.chunked_output`: the
    layers, then the output projection applied per chunk of tokens. (A module, as in torchtune:
    MemTracker refuses a top-level module called several times in one iteration.)"""

    def __init__(self, lm) -> None:
        super().__init__()
        object.__setattr__(self, "lm", lm)  # not a submodule: the model is tracked on its own

    def forward(self, ids: torch.Tensor, pos: torch.Tensor) -> list[torch.Tensor]:
        hidden = self.lm.model(input_ids=ids, position_ids=pos).last_hidden_state
        return [self.lm.lm_head(chunk) for chunk in hidden.chunk(CHUNKS, dim=1)]


_CHUNKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def ce_with_chunked_output_loss(logits: list[torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
    """torchtune v0.6.1 `CEWithChunkedOutputLoss.forward` (with `compute_cross_entropy`)."""
    total_elements = (labels != IGNORE_INDEX).sum()
    labels = [target_chunk.reshape(-1) for target_chunk in labels.chunk(CHUNKS, dim=1)]
    logits = [logit_chunk.reshape(-1, logit_chunk.size(-1)) for logit_chunk in logits]
    total_loss = 0.0
    for logits_chunk, labels_chunk in zip(logits, labels):
        total_loss += F.cross_entropy(logits_chunk.float(), labels_chunk,
                                      ignore_index=IGNORE_INDEX, reduction="sum")
    return total_loss / total_elements


def loss_of(model, ids: torch.Tensor, pos: torch.Tensor, loss: str) -> torch.Tensor:
    """The loss of one batch; every other output of the model is dropped on return."""
    if loss == "full":  # the Trainer's compute_loss: outputs = model(**inputs); loss = outputs.loss
        return model(input_ids=ids, position_ids=pos, labels=ids).loss
    lm = model.get_base_model() if hasattr(model, "get_base_model") else model  # PEFT wrapper
    if lm not in _CHUNKED:
        _CHUNKED[lm] = ChunkedOutput(lm)
    logits = _CHUNKED[lm](ids, pos)
    # the recipe's shift: labels[..., 1:] and one ignore index at the end
    labels = torch.hstack((ids[..., 1:], torch.full((ids.shape[0], 1), IGNORE_INDEX)))
    out = ce_with_chunked_output_loss(logits, labels)
    del logits  # the recipe's `del logits` before backward
    return out


def optimizers(trainable: list[torch.nn.Parameter], opt_step: str) -> list[torch.optim.Optimizer]:
    """The optimizers of a run; for `in-backward` one per parameter, stepped by its hook (then
    the training loop has no step of its own)."""
    if opt_step != "in-backward":
        kind = {"fused": {"fused": True}, "foreach": {"foreach": True}}[opt_step]
        return [torch.optim.AdamW(trainable, lr=LR, **kind)]
    per_param = {p: torch.optim.AdamW([p], lr=LR, fused=True) for p in trainable}

    def optim_step(param) -> None:  # torchtune's register_optim_in_bwd_hooks
        per_param[param].step()
        per_param[param].zero_grad()

    for p in trainable:
        p.register_post_accumulate_grad_hook(optim_step)
    return list(per_param.values())


NOTES = [
    "Runs with 'knobs' (engine spec section 6 names; bench/truth_knobs.py): loss 'full' is "
    "transformers' ForCausalLMLoss, 'chunked' torchtune v0.6.1 CEWithChunkedOutputLoss with "
    "the output projection per chunk (8 chunks, not compiled); opt_step 'fused' is "
    "AdamW(fused=True), 'foreach' AdamW(foreach=True), 'in-backward' torchtune's "
    "optimizer_in_bwd (one fused AdamW per parameter, stepped in its post-accumulate-grad hook); "
    "adapter_dtype 'bf16' is PEFT's autocast_adapter_dtype=False on the BF16 model (AdamW "
    "moments then BF16 too).",
    "logits_kept: true for the runs without knobs, whose loop keeps the model output (the BF16 "
    "logits) alive through backward and the optimizer step; false for the runs with knobs, "
    "which drop it before backward as the Trainer's compute_loss and torchtune's recipes do.",
]
