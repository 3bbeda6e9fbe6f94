"""Training stacks (engine.md section 6): the data file, each knob's named component, the
interface fields, bad input.

Expected byte counts are written out here from the model's stated formulas (the derivations in
calc/engine/constants.py's comments, which cite the libraries' code) with the architecture's
own numbers, never read back from the engine's components.
"""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction

import pytest

from calc import engine
from calc.engine import Inputs, estimate, stacks
from calc.engine.stacks import FACTS, KNOBS, parse_stacks, stacks_doc
from calc.errors import CalcError
from calc.fields import STACK_FIELDS, parse, to_query
from calc.i18n import t
from calc.types import (AdapterDtype, Architecture, Framework, Loss, Method, Mode, OptStep,
                        Optimizer, Quantized, Targets)

LOCALES = ("en", "tr", "pt", "ru", "fa")
GIB = 2**30

# Llama 3.1 8B and Llama 3.2 1B as their config.json files give them.
L8B = Architecture(params=8_030_261_248, layers=32, hidden=4096, ffn=14336, heads=32, kv_heads=8,
                   head_dim=128, vocab=128256, tied=False)
L1B = Architecture(params=1_235_814_400, layers=16, hidden=2048, ffn=8192, heads=32, kv_heads=8,
                   head_dim=64, vocab=128256, tied=True)
SHAPES_8B = {"q": (4096, 4096), "k": (4096, 1024), "v": (4096, 1024), "o": (4096, 4096),
             "gate": (4096, 14336), "up": (4096, 14336), "down": (14336, 4096)}
ALL = ("q", "k", "v", "o", "gate", "up", "down")


def realistic(**kw) -> engine.Estimate:
    return estimate(Inputs(arch=kw.pop("arch", L8B), mode=Mode.DETAILED, **kw))


def parts(e: engine.Estimate) -> dict[str, int]:
    return dict(e.components)


def only_changed(a: engine.Estimate, b: engine.Estimate) -> dict[str, int]:
    """{component: b - a} for the components that differ (absent = 0)."""
    pa, pb = parts(a), parts(b)
    return {k: pb.get(k, 0) - pa.get(k, 0) for k in set(pa) | set(pb) if pa.get(k, 0) != pb.get(k, 0)}


def lora_params(r: int, modules=ALL, shapes=SHAPES_8B, layers=32) -> int:
    return layers * sum(r * (shapes[m][0] + shapes[m][1]) for m in modules)


# --- the data file -----------------------------------------------------------------------------


def test_every_stack_loads_with_every_knob_cited():
    loaded = stacks()
    assert set(loaded) == set(Framework)
    doc = stacks_doc()
    assert doc["default"] == "hf"
    for fid, body in doc["stacks"].items():
        assert body["name"].strip()
        assert set(body["knobs"]) == set(KNOBS), fid
        for knob, setting in body["knobs"].items():
            for where, s in [("", setting), *[(m, v) for m, v in setting.get("by_method", {}).items()]]:
                src = s["source"]
                for key in ("repo", "version", "path", "where", "says"):
                    assert isinstance(src[key], str) and len(src[key].strip()) >= 3, (fid, knob, where, key)
                assert "/" in src["repo"], (fid, knob, where)  # owner/name
                assert any(ch.isdigit() for ch in src["version"]), (fid, knob, where)  # a named version


def test_stack_values_are_the_libraries_defaults():
    """The values engine.md section 6 and the cited code give (the citations are in the file);
    compile is off in every stack (torchtune's stock configs: compile: False; the Trainer's
    torch_compile defaults to False; LitGPT's finetune scripts never compile)."""
    expect = {
        Framework.HF: ("fp32", "full", "fused", False, "all-linear", True, False),
        Framework.TORCHTUNE: ("bf16", "chunked", "fused", False, "all-linear", False, False),
        Framework.LITGPT: ("bf16", "chunked", "foreach", False, "all-linear", False, False),
        Framework.UNSLOTH: ("fp32", "fused", "fused", True, "all-linear", False, False),
        Framework.QLORA_PAPER: ("bf16", "full", "fused", False, "all-linear", False, False),
    }
    for fw, values in expect.items():
        s = stacks()[fw]
        assert tuple(s.value(k, Method.LORA) for k in KNOBS) == values, fw
    assert stacks()[Framework.TORCHTUNE].value("opt_step", Method.FULL) is OptStep.IN_BACKWARD
    assert stacks()[Framework.LITGPT].value("opt_step", Method.QLORA) is OptStep.FUSED


def test_a_bad_data_file_is_refused():
    doc = json.loads(json.dumps(stacks_doc()))
    doc["stacks"]["hf"]["knobs"]["loss"]["value"] = "sparse"
    with pytest.raises(ValueError, match="loss"):
        parse_stacks(doc)
    doc = json.loads(json.dumps(stacks_doc()))
    del doc["stacks"]["unsloth"]["knobs"]["opt_step"]["source"]["path"]
    with pytest.raises(ValueError, match="path"):
        parse_stacks(doc)
    doc = json.loads(json.dumps(stacks_doc()))
    del doc["stacks"]["litgpt"]
    with pytest.raises(ValueError, match="litgpt"):
        parse_stacks(doc)


# --- the hf stack's optimizer step -------------------------------------------------------------


@pytest.mark.parametrize("method", list(Method))
@pytest.mark.parametrize("seq", [128, 2048])
def test_hf_has_no_step_temporaries(method, seq):
    """Transformers' Trainer defaults to adamw_torch_fused (torch >= 2.8): one kernel, no lists."""
    for arch in (L8B, L1B):
        e = realistic(arch=arch, method=method, seq=seq, optimizer=Optimizer.ADAMW_BF16)
        assert e.get("step_temporaries") == 0
        assert "step_temporaries" not in parts(e)


def test_foreach_step_adds_a_moment_sized_list_beyond_what_is_freed():
    """Full fine-tuning of Llama 3.2 1B, pure BF16 AdamW, 128 tokens: the foreach step computes
    sqrt(v) for all parameters at once, 2 bytes each (BF16 moments), while the activations and
    logits are already freed; the estimate's peak grows by what exceeds them and what the end of
    the backward pass already holds beyond the gradients: Llama 3.2 1B's tied embedding, whose
    two partial gradients and their sum are alive at once (2 x 128,256 x 2,048 x 2 bytes, more
    than the 128 tokens' activations and loss buffers)."""
    fused = realistic(arch=L1B, method=Method.FULL, seq=128, optimizer=Optimizer.ADAMW_BF16)
    foreach = realistic(arch=L1B, method=Method.FULL, seq=128, optimizer=Optimizer.ADAMW_BF16,
                        opt_step=OptStep.FOREACH)
    h, q, kv, f, L, tokens = 2048, 2048, 512, 8192, 16, 128
    layer = (2 * h + 2 * q + 4 * kv + 2 * q + 2 * h + 8 * f + 8 * h) * tokens
    freed = L * 2 * h * tokens + layer + tokens * 128256 * (4 + 4 + 4)
    tied = 2 * 128256 * h * 2
    assert tied > freed
    assert fused.get("gradients") == 2 * L1B.params + tied - freed
    assert only_changed(fused, foreach) == {"step_temporaries": 2 * L1B.params - tied}


# --- each knob changes exactly its named component ---------------------------------------------


def test_adapter_dtype():
    """FP32 -> BF16 adapters: weights and gradients halve; PEFT's FP32 input copies (one
    recomputed layer with checkpointing: 4 bytes x the sum of the adapted inputs' widths per
    token) disappear; AdamW's FP32 moments stay."""
    fp32 = realistic(method=Method.LORA, seq=2048, grad_accum=4)  # gradients alive at the loss
    bf16 = realistic(method=Method.LORA, seq=2048, grad_accum=4, adapter_dtype=AdapterDtype.BF16)
    t = lora_params(16)
    assert t == 41_943_040
    copies = 4 * sum(SHAPES_8B[m][0] for m in ALL) * 2048
    assert only_changed(fp32, bf16) == {"adapter_weights": -2 * t, "gradients": -2 * t,
                                        "adapter_inputs": -copies}


@pytest.mark.parametrize("ckpt", [True, False])
def test_loss(ckpt):
    """full: 4 + 4 + 4 bytes per token and vocabulary entry (FP32 log-softmax, two FP32
    gradients; the BF16 logits are gone: the Trainer's compute_loss returns the loss only); chunked: 2 + 4 + 4/8 (BF16 logits, FP32 log-softmax of all chunks, one
    chunk's upcast); fused: no logits, 2 + 2 x 2 bytes per token and hidden unit."""
    tokens = 4096 * 2
    full = realistic(seq=4096, batch=2, ckpt=ckpt)
    chunked = realistic(seq=4096, batch=2, ckpt=ckpt, loss=Loss.CHUNKED)
    fused = realistic(seq=4096, batch=2, ckpt=ckpt, loss=Loss.FUSED)
    assert full.get("logits") == 12 * tokens * 128256
    assert only_changed(full, chunked) == {"logits": round(Fraction(13, 2) * tokens * 128256) - 12 * tokens * 128256}
    assert only_changed(full, fused) == {"logits": 6 * tokens * 4096 - 12 * tokens * 128256}


def test_opt_step_in_backward_keeps_one_gradient():
    """torchtune's optimizer_in_bwd: each gradient is stepped and freed as soon as it is
    complete, so the largest tensor's gradient is what remains (Llama 3.2 1B: the embedding,
    128,256 x 2,048, in BF16), with the tied embedding's two partial gradients while they are
    summed; torchtune allows no gradient accumulation with it, so that comes after the loss
    and counts only beyond the activations and loss buffers freed by then."""
    # accumulating, 2,048 tokens: the loss buffers are larger than the embedding's gradients
    fused = realistic(arch=L1B, method=Method.FULL, grad_accum=4)
    inbwd = realistic(arch=L1B, method=Method.FULL, grad_accum=4, opt_step=OptStep.IN_BACKWARD)
    assert only_changed(fused, inbwd) == {"gradients": -2 * L1B.params}
    short = realistic(arch=L1B, method=Method.FULL, seq=128, opt_step=OptStep.IN_BACKWARD)
    h, q, kv, f, tokens = 2048, 2048, 512, 8192, 128
    layer = (2 * h + 2 * q + 4 * kv + 2 * q + 2 * h + 8 * f + 8 * h) * tokens
    freed = 16 * 2 * h * tokens + layer + tokens * 128256 * 12
    assert short.get("gradients") == 128256 * h * 2 + 2 * 128256 * h * 2 - freed
    lora = realistic(method=Method.LORA, opt_step=OptStep.IN_BACKWARD)  # largest: B of gate/up
    assert lora.get("gradients") == max(0, 16 * 14336 * 4 - sum(
        lora.get(n) for n in ("checkpoints", "activations", "adapter_inputs", "logits"))) == 0


def test_act_offload_moves_the_checkpoints_to_the_cpu():
    """The checkpointed layer inputs (L x 2 bytes x hidden per token) go to host memory; the GPU
    keeps the one being recomputed and the next one being copied back."""
    kept = realistic(seq=2048)
    off = realistic(seq=2048, act_offload=True)
    per_layer = 2 * 4096 * 2048
    assert only_changed(kept, off) == {"checkpoints": 2 * per_layer - 32 * per_layer}
    assert off.cpu_bytes == 30 * per_layer and kept.cpu_bytes == 0
    # without checkpointing there is nothing offloaded: the knob does not apply
    assert realistic(ckpt=False, act_offload=True) == realistic(ckpt=False)


# Llama 3.2 3B as its config.json gives it (tied embeddings).
L3B = Architecture(params=3_212_749_824, layers=28, hidden=3072, ffn=8192, heads=24, kv_heads=8,
                   head_dim=128, vocab=128256, tied=True)


def test_compile_changes_only_the_loss_term():
    """torch.compile on the model and the loss (torchtune's compile: True, the Trainer's
    torch_compile=True): the compiled cross-entropy fuses the FP32 upcast, the log-softmax and
    the NLL. Per token and vocabulary entry: chunked 2 (all BF16 chunks) + 2/8 (one chunk's
    BF16 gradient) = 9/4 instead of eager 2 + 4 + 4/8 = 13/2; full 2 + 2 = 4 instead of 12,
    or 4 + 4 = 8 where the model returns FP32 logits itself (torchtune's TransformerDecoder:
    the stack fact fp32_logits_output); fused: no logits tensor, nothing changes. Llama 3.2 3B,
    4096 tokens x batch 2."""
    entries = 4096 * 2 * 128256
    kw = dict(arch=L3B, seq=4096, batch=2)
    eager = realistic(loss=Loss.CHUNKED, **kw)
    compiled = realistic(loss=Loss.CHUNKED, compile=True, **kw)
    assert compiled.get("logits") == entries * 9 // 4 == 8192 * 128256 * 9 // 4
    assert eager.get("logits") == entries * 13 // 2
    assert only_changed(eager, compiled) == {"logits": entries * 9 // 4 - entries * 13 // 2}
    full = realistic(loss=Loss.FULL, **kw)
    assert only_changed(full, realistic(loss=Loss.FULL, compile=True, **kw)) == \
        {"logits": entries * 4 - entries * 12}
    tt = realistic(framework=Framework.TORCHTUNE, loss=Loss.FULL, **kw)
    assert only_changed(tt, realistic(framework=Framework.TORCHTUNE, loss=Loss.FULL,
                                      compile=True, **kw)) == {"logits": entries * 8 - entries * 12}
    tt_chunked = realistic(framework=Framework.TORCHTUNE, **kw)  # the stack's loss: chunked
    assert realistic(framework=Framework.TORCHTUNE, compile=True, **kw).get("logits") == \
        entries * 9 // 4 and tt_chunked.get("logits") == entries * 13 // 2
    fused = realistic(loss=Loss.FUSED, **kw)
    assert realistic(loss=Loss.FUSED, compile=True, **kw).components == fused.components
    for fw in Framework:  # off in every stack
        assert stacks()[fw].value("compile", Method.LORA) is False
        assert realistic(framework=fw, **kw).inputs.knobs.compile is False


def test_quantized_adapted_keeps_the_other_linears_in_bf16():
    """QLoRA on q and v only: with quantized=adapted (torchtune <= 0.2) k, o, gate, up and down
    stay BF16: 2 bytes instead of NF4's 0.5 + 1/64 + 4/(64 x 256) for each of their weights;
    PEFT's k-bit upcast then doubles them as well."""
    allq = realistic(method=Method.QLORA, targets=Targets.QV)
    adapted = realistic(method=Method.QLORA, targets=Targets.QV, quantized=Quantized.ADAPTED)
    n = 32 * sum(SHAPES_8B[m][0] * SHAPES_8B[m][1] for m in ("k", "o", "gate", "up", "down"))
    nf4 = Fraction(1, 2) + Fraction(1, 64) + Fraction(4, 64 * 256)
    base_delta = n * 2 - round(nf4 * (8_030_261_248 - 2 * 128256 * 4096 - 65 * 4096)) \
        + round(nf4 * (8_030_261_248 - 2 * 128256 * 4096 - 65 * 4096 - n))
    assert only_changed(allq, adapted) == {"base_weights": base_delta, "kbit_upcast": 2 * n}
    # all-linear targets: every linear has an adapter, the two values agree
    assert realistic(method=Method.QLORA).components == \
        realistic(method=Method.QLORA, quantized=Quantized.ADAPTED).components


def test_kbit_upcast():
    """PEFT's prepare_model_for_kbit_training: the parameters left out of NF4 (embedding and
    lm_head, 128,256 x 4,096 each, and 2 x 32 + 1 RMSNorm weights of 4,096) go from 2 to 4 bytes."""
    on = realistic(method=Method.QLORA)
    off = realistic(method=Method.QLORA, kbit_upcast=False)
    keep = 2 * 128256 * 4096 + 65 * 4096
    assert only_changed(off, on) == {"kbit_upcast": 2 * keep}


def test_knobs_that_do_not_apply_change_nothing():
    assert realistic(method=Method.LORA, quantized=Quantized.ADAPTED, kbit_upcast=False) == realistic()
    assert realistic(method=Method.FULL, adapter_dtype=AdapterDtype.BF16) == realistic(method=Method.FULL)
    for fw in Framework:  # the textbook formula ignores the stack
        for method in Method:
            base = estimate(Inputs(arch=L8B, method=method, mode=Mode.PLANNING))
            other = estimate(Inputs(arch=L8B, method=method, mode=Mode.PLANNING, framework=fw,
                                    loss=Loss.FUSED, opt_step=OptStep.FOREACH))
            assert base.components == other.components


def test_a_stack_is_its_knobs_and_facts():
    """Choosing a stack estimates exactly as the hf stack with that stack's knobs spelt out,
    but for what its facts (stacks.json `facts`, tests/unit/test_engine_facts.py) add: the
    LoRA dropout's activations, the old bitsandbytes' kept inputs and 4-bit output layer, the
    previous step's kept inputs; full fine-tuning has none of them. A stack that drops the
    model's output before the backward pass (drops_output_before_backward) keeps, with
    checkpointing, the larger of the loss's buffers and the recomputed layer: the other side's
    components leave the peak (tests/unit/test_recompute.py), whatever the method."""
    recompute = {"activations", "adapter_inputs", "logits", "previous_step", "gradients"}
    for fw in Framework:
        s = stacks()[fw]
        facts = [n for n in FACTS if s.fact(n) and n != "drops_output_before_backward"]
        drops = s.fact("drops_output_before_backward")
        for method in Method:
            explicit = {k: s.value(k, method) for k in KNOBS}
            a = realistic(method=method, framework=fw)
            b = realistic(method=method, **explicit)
            if (not facts or method is Method.FULL) and not drops:
                assert a.components == b.components, (fw, method)
            else:
                allowed = {"activations"} if method is Method.LORA else \
                    {"activations", "base_weights", "logits", "previous_step"}
                assert set(only_changed(b, a)) <= allowed | (recompute if drops else set()), (fw, method)


def test_qlora_65b_on_48_gb_with_both_stacks():
    """The guide's story (issue 13): with PEFT's defaults QLoRA 65B (r = 64, all linear layers,
    512 tokens) does not fit a 48 GB card under the 95 % rule; with the paper's setup (BF16
    adapters, no k-bit upcast) it does. The textbook formula gives 43.3 GiB."""
    llama65 = Architecture(65 * 10**9, 80, 8192, 22016, 64, 64, 128, 32000, False)
    kw = dict(arch=llama65, method=Method.QLORA, rank=64, seq=512)
    usable = 48 * GIB * 95 // 100
    assert round(estimate(Inputs(mode=Mode.PLANNING, **kw)).total / GIB, 1) == 43.3
    assert realistic(**kw).total > usable
    assert realistic(framework=Framework.QLORA_PAPER, **kw).total <= usable


# --- the interface -------------------------------------------------------------------------------


def test_realistic_and_hf_are_the_defaults_everywhere():
    i = parse({})
    assert i.mode is Mode.DETAILED and i.framework is Framework.HF
    assert all(v is None for v in i.explicit_knobs)
    assert Inputs(arch=L8B).mode is Mode.DETAILED


@pytest.mark.parametrize("query, expected", [
    ({"framework": "torchtune"}, {}),
    ({"framework": "torchtune", "loss": "full"}, {"loss": "full"}),
    ({"framework": "torchtune", "loss": "chunked"}, {}),  # the stack's own value: not repeated
    ({"loss": "fused", "opt_step": "foreach", "adapter_dtype": "bf16"},
     {"loss": "fused", "opt_step": "foreach", "adapter_dtype": "bf16"}),
    ({"method": "qlora", "quantized": "adapted", "kbit_upcast": "false"},
     {"quantized": "adapted", "kbit_upcast": "false"}),
    ({"method": "lora", "quantized": "adapted", "kbit_upcast": "false"}, {}),  # not QLoRA: ignored
    ({"act_offload": "true"}, {"act_offload": "true"}),
    ({"act_offload": "true", "ckpt": "false"}, {}),  # no checkpointing: nothing to offload
    ({"framework": "unsloth", "act_offload": "false"}, {"act_offload": "false"}),
    ({"compile": "true"}, {"compile": "true"}),
    ({"framework": "torchtune", "compile": "on", "method": "full"}, {"compile": "true"}),
    ({"framework": "litgpt", "compile": "false"}, {}),  # the stack's own value
    ({"framework": "QLoRA-Paper", "method": "full", "opt_step": "in-backward"}, {"opt_step": "in-backward"}),
])
def test_fields_round_trip_with_only_the_knobs_that_differ(query, expected):
    i = parse(query)
    q = to_query(i)
    assert {k: v for k, v in q.items() if k in STACK_FIELDS[1:]} == expected
    assert q["framework"] == i.framework.value
    assert parse(q) == i
    assert parse(q, strict=True) == i


def test_explicit_knob_overrides_the_stack():
    i = parse({"framework": "torchtune", "loss": "full", "method": "lora"})
    assert i.knobs.loss is Loss.FULL and i.knobs.adapter_dtype is AdapterDtype.BF16


@pytest.mark.parametrize("field, value, code", [
    ("framework", "deepspeed", "unknown_framework"),
    ("framework", "hf; rm -rf /", "unknown_framework"),
    ("adapter_dtype", "fp16", "unknown_knob_value"),
    ("loss", "chunky", "unknown_knob_value"),
    ("opt_step", "lazy", "unknown_knob_value"),
    ("quantized", "none", "unknown_knob_value"),
    ("act_offload", "maybe", "bad_bool"),
    ("kbit_upcast", "2", "bad_bool"),
    ("compile", "maybe", "bad_bool"),
])
def test_bad_stack_input_names_the_field_in_every_locale(field, value, code):
    with pytest.raises(CalcError) as err:
        parse({"method": "qlora", field: value})
    assert [(p.field, p.code) for p in err.value.problems] == [(field, code)]
    for loc in LOCALES:
        msg = err.value.messages(loc)[field]
        assert t(f"field.{field}", loc) in msg and value.strip().lower() in msg, (loc, msg)
        if code != "bad_bool":  # the valid values are listed
            enum = {"framework": Framework, "adapter_dtype": AdapterDtype, "loss": Loss,
                    "opt_step": OptStep, "quantized": Quantized}[field]
            assert all(m.value in msg for m in enum), msg


# --- JSON and the command line -------------------------------------------------------------------


def test_json_reports_stack_knobs_and_both_totals():
    e = realistic(method=Method.QLORA, framework=Framework.TORCHTUNE, loss=Loss.FULL)
    j = e.to_json()
    assert j["framework"] == "torchtune" and j["mode"] == "detailed"
    assert j["knobs"] == {"adapter_dtype": "bf16", "loss": "full", "opt_step": "fused",
                          "act_offload": False, "quantized": "all-linear", "kbit_upcast": False,
                          "compile": False}
    assert j["explicit_knobs"] == {"loss": "full"}
    assert j["total_bytes"] == j["realistic_total_bytes"] == sum(j["components"].values())
    textbook = estimate(replace(e.inputs, mode=Mode.PLANNING))
    assert j["textbook_total_bytes"] == textbook.total == sum(j["textbook_components"].values())
    lora = realistic(method=Method.LORA).to_json()
    assert lora["knobs"]["quantized"] is None and lora["knobs"]["kbit_upcast"] is None


@pytest.mark.parametrize("loc", LOCALES)
def test_bad_compile_in_a_link_and_in_json_names_the_field(loc):
    """compile=maybe: as a URL gives it (a list: the last value wins) and as a JSON body gives
    it; the engine's translated message names the field, no traceback."""
    url = {"model": ["llama-3.2-3b"], "compile": ["true", "maybe"]}
    body = json.loads('{"model": "llama-3.2-3b", "framework": "torchtune", "compile": "maybe"}')
    for query in (url, body):
        with pytest.raises(CalcError) as err:
            parse(query, loc)
        assert [(p.field, p.code) for p in err.value.problems] == [("compile", "bad_bool")]
        msg = err.value.messages(loc)["compile"]
        assert t("field.compile", loc) in msg and "maybe" in msg, (loc, msg)
    assert parse(json.loads('{"compile": true}'), loc).compile is True
