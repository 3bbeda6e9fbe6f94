"""The engine's numbers: units, bytes per parameter and per activation, and where each comes from.

Everything is integer bytes or an exact fraction. The textbook formula (engine.md section 1,
`mode=planning`) uses the first block; the realistic model (section 6, `mode=detailed`) adds the
second. Each constant names its source; the site's "How it is calculated" page shows them.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from ..types import Optimizer

GB = 10**9
GIB = 2**30

# --- the textbook formula (engine.md section 1) ---------------------------------------------

#: Bytes per weight of the frozen or trained base in BF16/FP16.
BF16_BYTES = 2
#: NF4 with double quantisation: 4 bits + 0.127 bits of constants per weight
#: (Dettmers et al. 2023, QLoRA, section 3) ~ 0.516 bytes, as the spec fixes it.
NF4_BYTES_PER_PARAM = Decimal("0.516")
#: Gradients of the trainable parameters, BF16.
GRAD_BYTES = 2
#: Activation bytes per layer, token and hidden unit: 34 with flash attention
#: (Korthikanti et al. 2022, "Reducing Activation Recomputation", eq. 1 without the 5as/h term),
#: 2 with full recomputation (only each layer's BF16 input is kept).
ACT_BYTES = 34
ACT_BYTES_CKPT = 2
#: CUDA context, allocator reserve and framework buffers.
OVERHEAD_BYTES = 1 * GIB
#: Share of a discrete card's memory a run may plan on (what vLLM-style servers take), and of
#: unified memory (Apple silicon) that training can use.
DISCRETE_USABLE = Fraction(95, 100)
UNIFIED_USABLE = Fraction(3, 4)
#: Extra step time gradient checkpointing costs (one more forward pass per layer, partly
#: hidden by the backward pass): the range practitioners measure, as the content brief gives it.
CKPT_EXTRA_TIME = (Fraction(20, 100), Fraction(30, 100))
#: LoRA's trainable share stays "well under" this bound for the usual ranks.
LORA_SHARE_BOUND = Fraction(1, 100)
#: Fewest-cards search stops here; beyond it the answer is "does not fit".
MAX_CARDS = 4096

#: Optimizer state in bytes per trainable parameter, on top of the BF16 weight and gradient.
#: In mixed precision every optimizer updates an FP32 master copy of the weights (4 bytes)
#: and keeps its own state beside it.
OPTIMIZER_BYTES: dict[Optimizer, int] = {
    # FP32 master (4) + first and second moments in FP32 (4 + 4): ZeRO, Rajbhandari et al. 2019.
    Optimizer.ADAMW: 12,
    # Two FP32 moments, weights updated in 16 bits (no master copy).
    Optimizer.ADAMW_NO_MASTER: 8,
    # Plain PyTorch AdamW on BF16 parameters: both moments are created in the parameter dtype.
    Optimizer.ADAMW_BF16: 4,
    # bitsandbytes AdamW8bit: two 8-bit block-wise quantised moments (1 + 1; the per-block
    # absmax constants add ~0.004 bytes, not counted) + FP32 master (4). Dettmers et al. 2021.
    Optimizer.ADAMW_8BIT: 6,
    # torch.optim.SGD(momentum>0): one FP32 momentum buffer (4) + FP32 master (4).
    Optimizer.SGD_MOMENTUM: 8,
    # torch.optim.SGD without momentum keeps no state: FP32 master only.
    Optimizer.SGD: 4,
    # Adafactor (Shazeer & Stern 2018), no first moment: factored second moment of
    # rows + columns per matrix (well under 0.1 % of the parameters, not counted) + FP32 master.
    Optimizer.ADAFACTOR: 4,
    # Lion (Chen et al. 2023): one momentum buffer (FP32, 4) + FP32 master (4).
    Optimizer.LION: 8,
}

#: Quick full fine-tuning calculator presets (bytes per parameter, all states): the round
#: figures practitioners quote, kept as the spec gives them.
QUICK_PRESETS: dict[str, int] = {"adamw": 16, "adamw-8bit": 12, "sgd-momentum": 8}

#: Rule of thumb: GB per billion parameters and fixed GB, by method.
RULE_OF_THUMB: dict[str, tuple[Fraction, int]] = {
    "lora": (Fraction(2), 3),
    "qlora": (Fraction(6, 10), 4),
    "full": (Fraction(12), 4),  # no FP32 master copy: 2 + 2 + 4 + 4 bytes
    "full-master": (Fraction(16), 4),
}

#: Bytes per adapter parameter, by the adapter's storage precision.
ADAPTER_DTYPE_BYTES: dict[str, int] = {"bf16": 2, "fp32": 4}

#: The textbook formula's components, in order.
COMPONENTS = ("base_weights", "gradients", "optimizer", "activations", "overhead")

# --- the realistic model (engine.md section 6) -----------------------------------------------

#: NF4 storage exactly (Dettmers et al. 2023, QLoRA): 4 bits per weight plus one absmax
#: constant per block of 64 weights. Without double quantisation the constant is FP32
#: (4/64 byte per weight); with it, an 8-bit constant (1/64) plus one FP32 second-level
#: constant per 256 blocks (4/(64 x 256)).
NF4_BLOCK = 64
NF4_DQ_BLOCK = 256
NF4_BYTES_EXACT = Fraction(1, 2) + Fraction(4, NF4_BLOCK)
NF4_BYTES_EXACT_DQ = Fraction(1, 2) + Fraction(1, NF4_BLOCK) + Fraction(4, NF4_BLOCK * NF4_DQ_BLOCK)
FP32_BYTES = 4
#: Optimizer state of an adapter parameter (no master copy: FP32 adapters are their own
#: master, and the stacks with BF16 adapters update them in BF16), by optimizer, as a function
#: of the adapter's bytes per parameter `a`. AdamW keeps FP32 moments (PEFT's FP32 adapters
#: with torch's AdamW; bitsandbytes' 32-bit paged AdamW of the QLoRA paper on BF16 adapters);
#: adamw-bf16 keeps them in the parameter's dtype (torch's AdamW: torch.zeros_like(p));
#: bitsandbytes' 8-bit state adds one FP32 absmax per block of 256 values per moment.
def adapter_state_bytes(optimizer: Optimizer, a: int) -> Fraction:
    return {
        Optimizer.ADAMW: Fraction(8),
        Optimizer.ADAMW_NO_MASTER: Fraction(8),
        Optimizer.ADAMW_BF16: Fraction(2 * a),
        Optimizer.ADAMW_8BIT: 2 + Fraction(2 * 4, 256),
        Optimizer.SGD_MOMENTUM: Fraction(a),
        Optimizer.SGD: Fraction(0),
        Optimizer.ADAFACTOR: Fraction(0),
        Optimizer.LION: Fraction(a),
    }[optimizer]


#: The same for FP32 parameters (kept under its old name: the accuracy page quotes it).
STATE_BYTES_FP32: dict[Optimizer, Fraction] = {o: adapter_state_bytes(o, FP32_BYTES) for o in Optimizer}

#: Logits and loss with `loss=full`, per token and vocabulary entry, at the loss's backward
#: pass (Hugging Face's `ForCausalLMLoss`, transformers loss/loss_utils.py: logits upcast to
#: FP32, then cross-entropy): the FP32 log-softmax kept for the backward pass (4) + the FP32
#: gradients of the log-probabilities and of the upcast logits, alive at once (4 + 4). The
#: BF16 logits the model returns are gone by then: the Trainer's `compute_loss` returns the loss
#: only (`return (loss, outputs) if return_outputs else loss`, transformers trainer.py), and
#: torchtune's recipes `del logits` before the backward pass (recipes/full_finetune_single_
#: device.py `_loss_step`, 1814feb). A loop that keeps the model's output through the backward
#: pass (`outputs = model(...); outputs.loss.backward()`) holds them too: 2 more.
#: Evidence (bench/ground_truth.py, PyTorch MemTracker): the knob runs, which drop the output
#: as the Trainer does, peak at 12 bytes per token and vocabulary entry above the layers'
#: activations (Llama 3.2 1B, full fine-tuning, length 2048, in-backward step: 3.1 GiB of
#: activations and temporaries, 0.3 GiB of them the layers'); the earlier runs, which keep the
#: output (`logits_kept`), at 14.07.
LOGITS_BYTES = 4 + 4 + 4
#: `loss=chunked` (torchtune's CEWithChunkedOutputLoss, LitGPT's chunked_cross_entropy), per
#: token and vocabulary entry, in eager mode (torchtune's stock configs: `compile: False`): the
#: model returns the BF16 logits in chunks (2); each chunk is upcast and passed to
#: F.cross_entropy, whose log-softmax keeps its FP32 output for the backward pass (4 for all the
#: chunks together); while the last chunk's loss runs, its FP32 upcast is alive too (4 over the
#: number of chunks, torchtune's num_output_chunks = 8). That is the peak: torchtune's recipes
#: `del logits` before the backward pass, which then holds the FP32 log-softmax (4) and one
#: chunk's gradients ((4 + 4 + 2) / 8). LitGPT keeps the log-softmax in BF16 (less), and a
#: compiled loss (`compile`) keeps only the BF16 logits: both below this term.
CHUNKED_LOSS_CHUNKS = 8
CHUNKED_LOGITS_BYTES = Fraction(2 + 4) + Fraction(4, CHUNKED_LOSS_CHUNKS)
#: `compile` (torch.compile on the model and the loss), per token and vocabulary entry. Only
#: the loss term changes; what Inductor's fusion saves inside the compiled layers (fewer
#: intermediate activations) is not modelled: an over-estimate, stated. Off in every stack:
#: torchtune's stock configs say `compile: False` (recipes/configs/llama3_1/
#: 8B_lora_single_device.yaml, 1814feb), TrainingArguments.torch_compile defaults to False.
#: - `loss=chunked`: torchtune's `compile: True` (recipes/lora_finetune_single_device.py,
#:   1814feb: `compile_model=cfg.compile` -> training.compile_model, and `if self._compile:
#:   self._loss_fn = training.compile_loss(self._loss_fn)`) compiles, for
#:   CEWithChunkedOutputLoss, only `compute_cross_entropy` (torchtune/training/_compile.py
#:   compile_loss: `loss.compute_cross_entropy = torch.compile(loss.compute_cross_entropy)`),
#:   which is `F.cross_entropy(logits.float(), labels, ...)` on one BF16 chunk
#:   (torchtune/modules/loss/ce_chunked_output_loss.py). Inductor fuses the upcast, the
#:   log-softmax and the NLL into one kernel: neither the FP32 upcast nor the log-softmax is
#:   materialised, and the backward keeps the chunk's BF16 logits (the model's output,
#:   TransformerDecoder.chunked_output) and a per-row log-sum-exp (negligible). Peak: all
#:   the BF16 chunks (2) + one chunk's BF16 gradient in the backward pass (2 / 8).
COMPILED_CHUNKED_LOGITS_BYTES = Fraction(2) + Fraction(2, CHUNKED_LOSS_CHUNKS)
#: - `loss=full`, where the upcast is part of the compiled code (the Trainer's
#:   `torch_compile=True` compiles the model, whose forward calls the loss:
#:   LlamaForCausalLM.forward `loss = self.loss_function(logits=logits, ...)`, and
#:   ForCausalLMLoss upcasts there): the whole BF16 logits tensor saved for the compiled
#:   cross-entropy's backward (2) and its BF16 gradient, written in one go (2).
COMPILED_LOGITS_BYTES = 2 + 2
#: - `loss=full` where the model's own forward returns FP32 logits outside what is compiled
#:   (the stack fact `fp32_logits_output`: torchtune's TransformerDecoder.forward, without
#:   output chunks, `output = self.output(h).float()`, and training.compile_model compiles
#:   the decoder layers only, 1814feb): the compiled loss receives the FP32 logits and keeps
#:   them for its backward (4), which writes their FP32 gradient (4); the BF16 projection
#:   output is not kept (the cast's backward needs nothing). `loss=fused`: no logits tensor,
#:   `compile` changes nothing.
COMPILED_FP32_LOGITS_BYTES = 4 + 4
#: `loss=fused` (fused linear cross-entropy: Unsloth's unsloth_fused_ce_loss, Liger's
#: LigerFusedLinearCrossEntropyLoss): no logits tensor; the gradient of the final hidden states
#: is computed during the forward pass and kept (BF16: 2 bytes per token and hidden unit), and
#: one chunk of logits is alive at a time. Liger sizes a chunk so that it holds about as many
#: elements as the hidden states (liger_kernel/ops/fused_linear_cross_entropy.py:
#: inc_factor = cdiv(V, H), chunk_size = next_power_of_2(cdiv(BT, inc_factor))), up to twice
#: that after the power-of-two rounding: 2 x 2 bytes in BF16. Per token and hidden unit.
FUSED_LOSS_BYTES = 2 + 2 * 2
#: Attention scores without flash attention, per score element and layer (a s^2 b per layer).
#: Korthikanti et al. count 5 (BF16 scores 2 + softmax 2 + dropout mask 1); Hugging Face's eager
#: attention keeps the softmax in FP32 (4) and its BF16 copy for the product with v (2), and
#: with attention dropout 0 (Llama's default) no mask: 6. Evidence: eager minus SDPA on
#: Llama 3.2 1B, LoRA, batch 1, length 2048: 5.87 bytes per score element and layer.
ATTN_SCORE_BYTES = 6
#: With FP32 adapters PEFT casts each adapted layer's input to the adapter's dtype before
#: `lora_A` (peft src/peft/tuners/lora/layer.py, Linear.forward: x = self._cast_input_dtype(x,
#: lora_A.weight.dtype)): an FP32 copy of every adapted projection's input, kept for the
#: backward pass (bytes per input feature and token; q, k and v each make their own copy).
#: BF16 adapters need no cast. Evidence: Llama 3.2 1B, LoRA r = 16 on all linear layers, no
#: checkpointing: 179 kB per layer and token measured (slope between lengths 512 and 2048),
#: against 100 kB from the layer formula alone and 182 kB with this term.
ADAPTER_INPUT_BYTES = 4
#: `opt_step=foreach`: PyTorch's multi-tensor AdamW computes sqrt(v) for every parameter at once,
#: a list the size of one moment (4 bytes per parameter for FP32 moments, the parameter's bytes
#: for BF16 ones), while weights, gradients and state are alive and the activations are freed.
#: Evidence: full fine-tuning, pure BF16, of Llama 3.2 1B and Llama 3.1 8B peaks at the step with
#: 2 bytes per parameter of optimizer temporaries (1B: 6.91 GiB of optimizer memory for 4.60 GiB
#: of moments). Optimizers without an entry have no such list (bitsandbytes' 8-bit step is one
#: kernel; SGD's and Lion's updates are in place): 0.
STEP_TEMP_BYTES: dict[Optimizer, int] = {
    Optimizer.ADAMW: 4,
    Optimizer.ADAMW_NO_MASTER: 4,
    Optimizer.ADAMW_BF16: 2,  # for BF16 parameters; FP32 adapters: 4 (moments follow the dtype)
}
#: `lora_dropout` (a stack fact, calc/data/stacks.json): torch's dropout in training keeps its
#: mask for the backward pass, one byte (bool) per element (aten native_dropout returns the
#: output and a bool mask; its backward multiplies by the mask), and the LoRA A matrix keeps
#: its input, the dropped copy: in the adapter's dtype. With FP32 adapters (PEFT) the dropped
#: copy takes the place of the FP32 input copy `adapter_inputs` already counts; with BF16
#: adapters it is a copy of its own (2). Per input feature of each adapted module and token.
DROPOUT_MASK_BYTES = 1
#: `kbit_saves_input` (a stack fact): bitsandbytes before 0.43.2 kept the input of every 4-bit
#: linear layer (MatMul4Bit: ctx.tensors = (A, B)). A frozen nn.Linear keeps none, so per layer
#: and token this keeps, in BF16, the attention's normed input (read by q, k and v), the MLP's
#: normed input (gate and up) and down_proj's input: 2 h + 2 h + 2 ffn (o_proj's input is the
#: attention output, which SDPA keeps anyway). Evidence: LitGPT's resource tables (bitsandbytes
#: 0.41.1), Llama 2 7B and 13B, QLoRA minus LoRA at the same settings: 56 and 68 kB per layer
#: and token, against 38 and 48 kB from this term (the rest: the 4-bit lm_head's dequantized
#: copies, not modelled).
KBIT_INPUT_BYTES = 2
#: The end of the backward pass with tied input and output embeddings (full fine-tuning): the
#: output layer's gradient, the embedding's and their sum are alive at once while autograd
#: accumulates the shared weight's gradient: two gradient-sized tensors beyond the gradients.
#: Evidence: Llama 3.2 1B (tied), full fine-tuning, fused or in-backward step: the peak holds
#: 1.47 GiB of temporaries = 3 x the 0.49 GiB embedding gradient (calc/data/ground_truth.json).
TIED_GRAD_COPIES = 2
#: `grad_accum`, micro-batches per optimizer step: by default 1, the Trainer's
#: (transformers main at commit 00349ae87eddc872ffa21a8a54f264375a0056a8,
#: src/transformers/training_args.py: "gradient_accumulation_steps (`int`, *optional*,
#: defaults to 1)"; TRL's configs inherit it). Its step ends with model.zero_grad(), whose
#: set_to_none is True since PyTorch 2.0, so no gradient is alive at the next loss. At 1 the
#: realistic model counts the gradients only beyond what the backward pass has freed; above 1
#: with the activations. Evidence: Llama 3.2 1B, full fine-tuning, 2,048 tokens, fused step,
#: one step per micro-batch: the peak (10.19 GiB) is the end of the backward pass, with the
#: weights, the state, the gradients and the tied embedding's accumulation, not the loss with
#: 2.3 GiB of gradients beside 3.2 GiB of loss buffers (calc/data/ground_truth.json).
DEFAULT_GRAD_ACCUM = 1
#: `kbit_output_layer` (a stack fact): the output layer in NF4, dequantized whole for each use to
#: its FP16 quantization dtype (2) and copied to BF16 (2) while the loss's buffers and every
#: activation are alive: per output-layer weight, in `logits`. Evidence: LitGPT's resource
#: tables (Llama 2 7B and 13B, QLoRA) sit 0.5 and 0.6 GiB above the layers' terms, 4 x the
#: 131 M and 164 M output weights.
KBIT_OUTPUT_DEQUANT_BYTES = 2 + 2
#: `keeps_previous_graph` with `kbit_saves_input` (stack facts; QLoRA): the previous step's
#: graph is alive until this step's forward pass returns, and with it the inputs bitsandbytes
#: kept of every 4-bit layer: per layer and token, in BF16, the attention's normed input (2h),
#: the attention output (2 q_dim: SDPA's own saved copy was freed by the backward pass, this
#: one was not), the MLP's normed input (2h) and down_proj's input (2 ffn); once per token the
#: output layer's input (2h). They peak at the output layer's last chunk, with the previous
#: step's FP32 logits (4) and this step's BF16 logit chunks (2) per token and vocabulary entry
#: and the dequantized output layer: the component `previous_step` is what that moment holds
#: beyond the loss's `logits`. Evidence: LitGPT's config-hub QLoRA runs (bitsandbytes 0.42.0)
#: sat 0.2 to 1.5 GiB above the model without it, most for the 32k-vocabulary models (Llama 2
#: 7B: 1.43 GiB); the resource tables' runs, whose peak is their first iteration, did not.
PREVIOUS_STEP_LOGITS_BYTES = 4 + 2

#: `act_offload`: both stacks that offload (Unsloth's "unsloth" checkpointing, torchtune's
#: OffloadActivations) move each checkpointed layer input to the CPU in the forward pass and
#: bring it back for the recomputation; the GPU holds the one being recomputed and the next one
#: being copied in.
OFFLOAD_RESIDENT_LAYERS = 2

#: With gradient checkpointing, two moments that need not be alive together: the end of the
#: forward pass, where the loss's buffers sit beside the checkpoints (LOSS_SIDE), and the first
#: layer the backward pass recomputes (RECOMPUTE_SIDE). Autograd runs the loss's and the output
#: layer's backward nodes first and frees each node's saved tensors once it has run (no
#: retain_graph); the checkpointed layer is recomputed only when the engine reaches its node
#: (torch/utils/checkpoint.py: CheckpointFunction.backward, or the non-reentrant unpack hook).
#: What survives is what the training loop itself still references: a stack whose loop drops
#: the model's output before the backward pass (stack fact drops_output_before_backward:
#: torchtune's `del logits`) peaks at the larger of the two moments; the others are counted with
#: both, on the safe side. Evidence, larger moment: torchtune's published LoRA and QLoRA runs
#: (README 'Optimization flags', 1814feb) are 0.3 GiB below it and 1.2 GiB below the sum; our
#: MemTracker runs of a loop that drops the output as the Trainer's compute_loss does
#: (calc/data/ground_truth.json, Llama 3.2 1B, LoRA, 2,048 tokens: the peak holds the
#: checkpoints, the FP32 log-softmax and the loss's backward temporaries, 1.14 + 1.97 GiB, and
#: no recomputed layer) fit it within 1.2 %, the sum 2-7 % over. Evidence, sum: loops that keep
#: the output through the backward pass, as hand-written ones over Transformers models do
#: (Answer.AI's fsdp_qlora train.py, `output = model(...)` until `loss.backward()`; before
#: transformers 4.45 the output is the FP32-upcast logits), fit the sum (Answer.AI's 7B FSDP
#: runs, calc/data/measurements_multi.json: 11 of 14 within 10 % with it, the larger moment
#: alone falls to -36 %), and so does our loop that keeps the BF16 logits. The hf stack names
#: such loops as well as the Trainer, so it keeps the sum.
LOSS_SIDE = ("logits", "previous_step")
RECOMPUTE_SIDE = ("activations", "adapter_inputs")

#: Every component the realistic model can report, in the breakdown's order.
REALISTIC_COMPONENTS = ("base_weights", "kbit_upcast", "adapter_weights", "gradients", "optimizer",
                        "step_temporaries", "checkpoints", "activations", "adapter_inputs", "logits",
                        "previous_step", "overhead")
#: Components that shard across cards with ZeRO-3/FSDP (the model states and the step's
#: temporaries, which follow the states' shards).
SHARDED = frozenset({"base_weights", "kbit_upcast", "adapter_weights", "gradients", "optimizer",
                     "step_temporaries"})
#: Names pages used before the realistic model named each term (issue 13): a name -> the
#: components it now adds up.
LEGACY_COMPONENTS: dict[str, tuple[str, ...]] = {"fp32_copies": ("adapter_weights", "kbit_upcast")}
