"""The stacks' facts (calc/data/stacks.json `facts`): what a stack's own code keeps that no knob
chooses. Each expected value is written out here from the rule the source states (bytes per
element, which tensors), not taken from calc.engine:

- LitGPT's LoRA dropout (p = 0.05 in every config hub file): per adapted layer input and token
  a one-byte bool mask plus the dropped BF16 copy LoRA's A keeps; one dropout for the fused
  q, k, v linear (litgpt/lora.py LoRAQKVLinear);
- the QLoRA paper's PEFT dropout (p = 0.05): one per adapted module (q, k and v each), on BF16
  adapters: the same 1 + 2 bytes;
- bitsandbytes before 0.43.2 (LitGPT pins 0.42.0, the QLoRA paper 0.40.0): MatMul4Bit keeps
  the input of every 4-bit linear; new tensors per layer and token: the two normed inputs and
  down_proj's input, BF16 (2 h + 2 h + 2 ffn);
- LitGPT's 4-bit path quantizes its lm_head too (NF4, 4 bits + an FP32 absmax per 64 weights
  without double quantisation) and dequantizes it whole to FP16 and to BF16 (2 + 2 bytes per
  weight) for each use;
- a tied embedding (full fine-tuning): its two partial gradients and their sum at once.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from calc.engine import Inputs, estimate
from calc.engine.stacks import parse_stacks, stacks_doc, stack
from calc.types import AdapterDtype, Architecture, Framework, Loss, Method, Mode, Optimizer, Targets

L8B = Architecture(params=8_030_261_248, layers=32, hidden=4096, ffn=14336, heads=32, kv_heads=8,
                   head_dim=128, vocab=128256, tied=False)
L1B = Architecture(params=1_235_814_400, layers=16, hidden=2048, ffn=8192, heads=32, kv_heads=8,
                   head_dim=64, vocab=128256, tied=True)
H, Q, F, L, V = 4096, 4096, 14336, 32, 128256
SEQ = 512


def est(**kw):
    return estimate(Inputs(arch=kw.pop("arch", L8B), mode=Mode.DETAILED, seq=SEQ, ckpt=False, **kw))


def litgpt_as_hf(method: Method, **kw) -> dict:
    """The hf stack with LitGPT's knob values spelt out (stacks.json litgpt), no facts."""
    knobs = dict(adapter_dtype=AdapterDtype.BF16, loss=Loss.CHUNKED, kbit_upcast=False)
    return dict(method=method, **knobs, **kw)


def test_litgpt_lora_dropout_keeps_a_mask_and_a_bf16_copy_per_adapted_input():
    kw = litgpt_as_hf(Method.LORA, optimizer=Optimizer.ADAMW_BF16)
    hf, lit = est(**kw), est(framework=Framework.LITGPT, **kw)
    # all-linear: one input for q, k, v (fused) + o's (q_dim) + gate's + up's + down's (ffn)
    features = H + Q + H + H + F
    assert lit.get("activations") - hf.get("activations") == L * SEQ * (1 + 2) * features
    assert {n for n, v in lit.components if dict(hf.components).get(n) != v} == {"activations"}
    # q and v only: the fused linear's one input
    qv = est(framework=Framework.LITGPT, targets=Targets.QV, **kw)
    qv_hf = est(targets=Targets.QV, **kw)
    assert qv.get("activations") - qv_hf.get("activations") == L * SEQ * 3 * H


def test_qlora_paper_dropout_is_per_module():
    kw = dict(method=Method.LORA, adapter_dtype=AdapterDtype.BF16, loss=Loss.FULL,
              targets=Targets.QV)
    paper, hf = est(framework=Framework.QLORA_PAPER, **kw), est(**kw)
    # q_proj and v_proj each wrap their own nn.Dropout: two copies of the h-wide input
    assert paper.get("activations") - hf.get("activations") == L * SEQ * 3 * (H + H)


def test_old_bitsandbytes_keeps_every_4bit_input_and_litgpt_quantizes_its_head():
    kw = litgpt_as_hf(Method.QLORA, optimizer=Optimizer.ADAMW_NO_MASTER, targets=Targets.QV,
                      dquant=False)
    hf, lit = est(**kw), est(framework=Framework.LITGPT, **kw)
    dropout = L * SEQ * 3 * H
    kept = L * SEQ * 2 * (H + H + F)
    assert lit.get("activations") - hf.get("activations") == dropout + kept
    # lm_head: BF16 (2 bytes) -> NF4 without double quantisation (1/2 + 4/64 bytes)
    head = V * H
    nf4 = Fraction(1, 2) + Fraction(4, 64)
    assert abs(hf.get("base_weights") - lit.get("base_weights") - (2 - nf4) * head) <= 1
    # its FP16 and BF16 dequantized copies beside the loss buffers
    assert lit.get("logits") - hf.get("logits") == 4 * head


def test_current_bitsandbytes_keeps_nothing_more():
    for fw in (Framework.HF, Framework.TORCHTUNE, Framework.UNSLOTH):
        s = stack(fw)
        assert not s.fact("kbit_saves_input") and not s.fact("kbit_output_layer")
        assert not s.fact("lora_dropout")


def test_tied_embedding_gradient_accumulation_at_the_end_of_the_backward_pass():
    """Llama 3.2 1B (tied), full fine-tuning, 128 tokens, checkpointing on, fused AdamW: the
    activations and loss buffers freed by the end of the backward pass are smaller than the
    tied weight's two extra gradient-sized tensors, so the peak holds the gradients plus them
    (with gradient accumulation: the gradients are alive at the loss as well)."""
    e = estimate(Inputs(arch=L1B, method=Method.FULL, seq=128, mode=Mode.DETAILED, grad_accum=8))
    h, f, layers, tokens = 2048, 8192, 16, 128
    q, kv = 2048, 512
    layer = (2 * h + 2 * q + 4 * kv + 2 * q + 2 * h + 8 * f + 8 * h) * tokens
    freed = layers * 2 * h * tokens + layer + tokens * 128256 * 12
    tied = 2 * 128256 * h * 2
    assert e.get("gradients") == 2 * L1B.params + tied - freed
    untied = estimate(Inputs(arch=L8B, method=Method.FULL, seq=128, mode=Mode.DETAILED,
                             grad_accum=8))
    assert untied.get("gradients") == 2 * L8B.params


def test_facts_are_cited_and_checked():
    doc = stacks_doc()
    for fid, body in doc["stacks"].items():
        for name, fact in body.get("facts", {}).items():
            assert isinstance(fact["value"], bool)
            for key in ("repo", "version", "path", "where", "says"):
                assert fact["source"][key].strip(), (fid, name, key)
    bad = {**doc, "stacks": {**doc["stacks"], "litgpt": {**doc["stacks"]["litgpt"],
                                                        "facts": {"compiled": {"value": True}}}}}
    with pytest.raises(ValueError, match="unknown facts"):
        parse_stacks(bad)
    bad["stacks"]["litgpt"]["facts"] = {"lora_dropout": {"value": "yes"}}
    with pytest.raises(ValueError, match="true or false"):
        parse_stacks(bad)


# --- LitGPT keeps the previous step's graph (keeps_previous_graph with kbit_saves_input) -------


def test_previous_step_kept_inputs_at_the_output_layers_last_chunk():
    """LitGPT's loop rebinds `logits` only once the next forward pass returns, and bitsandbytes
    0.42.0 keeps every 4-bit layer's input as a ctx attribute: during the next forward the
    previous step's inputs are alive. Per layer and token, BF16: the attention's normed input,
    the attention output, the MLP's normed input, down_proj's input (2 h + 2 q + 2 h + 2 ffn);
    once per token the output layer's input (2 h). At the output layer's last chunk they sit
    beside the previous FP32 logits (4), this step's BF16 chunks (2) per token and vocabulary
    entry and the dequantized NF4 output layer (2 + 2 per weight); the component is what that
    moment holds beyond the loss stage (BF16 logits 2, FP32 log-softmax 4, one FP32 chunk of 8:
    6.5 per entry, plus the same dequantized layer)."""
    tokens = SEQ * 2
    e = est(method=Method.QLORA, rank=32, targets=Targets.QV, batch=2, framework=Framework.LITGPT)
    kept = L * tokens * (2 * H + 2 * Q + 2 * H + 2 * F) + 2 * H * tokens
    moment = kept + 6 * tokens * V + 4 * V * H
    loss_stage = round(Fraction(13, 2) * tokens * V) + 4 * V * H
    assert e.get("logits") == loss_stage
    assert e.get("previous_step") == moment - loss_stage
    # only where both facts hold: the hf stack's current bitsandbytes keeps no input, and LoRA
    # has no 4-bit layer
    assert est(method=Method.QLORA, batch=2).get("previous_step") == 0
    assert est(method=Method.LORA, batch=2, framework=Framework.LITGPT).get("previous_step") == 0
    assert stack(Framework.LITGPT).fact("keeps_previous_graph")
    assert not any(stack(f).fact("keeps_previous_graph") for f in Framework if f is not Framework.LITGPT)


def test_previous_step_explains_the_config_hub_runs():
    """LitGPT's config-hub table (torch.cuda.max_memory_allocated, GB): Llama 2 7B QLoRA 13.68 GB
    (calc/data/measurements.json, litgpt-hub-llama-2-7b-qlora); calc counts tensors without the
    1 GiB overhead for allocated memory. Without the previous step the estimate is 11 % low."""
    from calc.accuracy import measurements

    run = next(r for r in measurements() if r.id == "litgpt-hub-llama-2-7b-qlora")
    e = run.detailed
    tensors = e.total - e.get("overhead")
    assert run.measured == 13_680_000_000
    assert abs(tensors - run.measured) / run.measured < 0.02
    assert (tensors - e.get("previous_step") - run.measured) / run.measured < -0.10
