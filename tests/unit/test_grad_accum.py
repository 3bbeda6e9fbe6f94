"""grad_accum: micro-batches per optimizer step (the Trainer's gradient_accumulation_steps).

At 1 (the default) a step frees its gradients with zero_grad(set_to_none=True), so the next
micro-batch's loss has none alive: they are allocated in the backward pass while the
activations are freed, and the realistic model counts them only beyond what is freed. Above 1
they are alive at the loss. The expected figures are computed here from the architecture
(Llama 3.2 1B: 16 layers, hidden 2,048, q 2,048, kv 512, ffn 8,192, vocabulary 128,256, tied)
and checked against our own MemTracker run of that configuration (calc/data/ground_truth.json).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from calc import catalog
from calc.accuracy import ground_truth
from calc.engine import Inputs, estimate
from calc.errors import CalcError
from calc.export import export
from calc.fields import parse, to_query
from calc.i18n import LOCALES, t
from calc.scale import Scale, scaled
from calc.types import Method, Mode, OptStep, Optimizer, Sharding

ROOT = Path(__file__).resolve().parents[2]
L1B = catalog.model("llama-3.2-1b").arch
L8B = catalog.model("llama-3.1-8b").arch
H, Q, KV, F, LAYERS, VOCAB = 2048, 2048, 512, 8192, 16, 128_256


def one_b(**kw) -> Inputs:
    base = dict(arch=L1B, model="llama-3.2-1b", method=Method.FULL, seq=2048, ckpt=True,
                optimizer=Optimizer.ADAMW_BF16, mode=Mode.DETAILED)
    return Inputs(**{**base, **kw})


def freed_1b(tokens: int) -> int:
    """What the end of the backward pass has freed (checkpointing on, the Trainer's full loss):
    every layer's BF16 input, one recomputed layer, 12 bytes per token and vocabulary entry."""
    layer = 2 * H + 2 * Q + 4 * KV + 2 * Q + 2 * H + 8 * F + 8 * H
    return LAYERS * 2 * H * tokens + layer * tokens + 12 * tokens * VOCAB


def test_one_step_per_micro_batch_counts_the_gradients_beyond_the_freed():
    grads, tied = 2 * L1B.params, 2 * VOCAB * H * 2
    freed = freed_1b(2048)
    assert grads + tied > freed  # this configuration peaks at the end of the backward pass
    one = estimate(one_b(opt_step=OptStep.FUSED))
    many = estimate(one_b(opt_step=OptStep.FUSED, grad_accum=4))
    assert one.get("gradients") == grads + tied - freed
    assert many.get("gradients") == grads  # the tied copies fit in what the loss freed
    assert many.total - one.total == freed - tied
    assert one.inputs.grad_accum == 1 and one.to_json()["grad_accum"] == 1


def test_the_measured_run_is_the_default_and_not_the_accumulating_one():
    """llama-3.2-1b-full-s2048-ckpt-loss=full-opt_step=fused: one step per micro-batch."""
    row = next(r for r in ground_truth()["runs"]
               if r.get("name") == "llama-3.2-1b-full-s2048-ckpt-loss=full-opt_step=fused")
    measured = row["peak_bytes"]
    tensors = lambda e: e.total - e.get("overhead")  # MemTracker counts tensors only
    one = estimate(one_b(opt_step=OptStep.FUSED))
    many = estimate(one_b(opt_step=OptStep.FUSED, grad_accum=4))
    assert abs(tensors(one) - measured) / measured < 0.02
    assert (tensors(many) - measured) / measured > 0.15


def test_foreach_step_after_the_gradients():
    """The multi-tensor step's list (one BF16 moment's size) comes with the whole gradients
    once the activations are gone: at 1 the step's peak is grads + list beyond the freed."""
    grads, tied, step = 2 * L1B.params, 2 * VOCAB * H * 2, 2 * L1B.params
    freed = freed_1b(2048)
    e = estimate(one_b(opt_step=OptStep.FOREACH))
    assert e.get("gradients") == grads + tied - freed
    assert e.get("step_temporaries") == grads + step - (grads + tied)
    # accumulating: the gradients are there from the loss on, and the list (2.5 GB) fits in
    # the 3.5 GB the loss and the activations leave behind
    acc = estimate(one_b(opt_step=OptStep.FOREACH, grad_accum=2))
    assert step < freed
    assert acc.get("gradients") == grads and acc.get("step_temporaries") == 0


def test_lora_gradients_vanish_under_the_loss_buffers():
    e = estimate(Inputs(arch=L8B, method=Method.LORA, mode=Mode.DETAILED))
    acc = estimate(Inputs(arch=L8B, method=Method.LORA, mode=Mode.DETAILED, grad_accum=8))
    t_ = 41_943_040  # r = 16 on every linear layer of Llama 3.1 8B
    assert e.get("gradients") == 0 and acc.get("gradients") == 4 * t_  # FP32 adapters (PEFT)
    assert acc.total - e.total == 4 * t_


def test_in_backward_and_the_textbook_ignore_it():
    for kw in ({"opt_step": OptStep.IN_BACKWARD}, {"mode": Mode.PLANNING}):
        assert estimate(one_b(**kw)).components == estimate(one_b(grad_accum=16, **kw)).components


def test_ddp_buckets_hold_every_gradient_whatever_the_step_keeps():
    i = one_b(opt_step=OptStep.FUSED)
    run = dict(scaled(i, Scale(2, Sharding.DDP)).gpu_components)
    assert run["ddp_buckets"] == 2 * L1B.params
    assert run["gradients"] == estimate(i).get("gradients") < 2 * L1B.params


def test_fields_url_and_canonical_query():
    assert parse({}).grad_accum == 1 and "grad_accum" not in to_query(parse({}))
    i = parse({"grad_accum": "8"})
    assert i.grad_accum == 8 and to_query(i)["grad_accum"] == "8"
    assert parse(to_query(i)) == i
    assert parse({"grad_accum": "۱۶"}, "fa").grad_accum == 16


def test_a_blank_field_is_the_default():
    assert parse({"grad_accum": "   "}).grad_accum == 1


@pytest.mark.parametrize("raw,code", [("0", "zero"), ("-2", "negative"), ("1.5", "not_integer"),
                                      ("abc", "not_a_number"), ("70000", "too_large"),
                                      ("nan", "not_finite")])
def test_bad_values_name_the_field_in_every_language(raw, code):
    with pytest.raises(CalcError) as err:
        parse({"grad_accum": raw})
    (problem,) = err.value.problems
    assert (problem.field, problem.code) == ("grad_accum", code)
    for loc in LOCALES:
        text = err.value.message(loc)
        assert t("field.grad_accum", loc) in text and "{" not in text


@pytest.mark.skipif(sys.platform == "emscripten", reason="Pyodide has no subprocesses")
def test_cli_flag_json_and_exit_2():
    ok = subprocess.run([sys.executable, "-m", "calc", "--method", "full", "--grad-accum", "4",
                         "--json"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["grad_accum"] == 4
    bad = subprocess.run([sys.executable, "-m", "calc", "--grad-accum", "0"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert t("field.grad_accum", "en") in bad.stderr


@pytest.mark.parametrize("fmt,line", [("trl", "gradient_accumulation_steps=4,"),
                                      ("axolotl", "gradient_accumulation_steps: 4"),
                                      ("torchtune", "gradient_accumulation_steps=4")])
def test_exports_carry_it(fmt, line):
    i = replace(parse({"model": "llama-3.1-8b", "method": "qlora"}), grad_accum=4)
    assert line in export(i, fmt)


def test_torchtune_export_refuses_accumulation_in_the_backward_step():
    i = parse({"model": "llama-3.1-8b", "method": "full", "framework": "torchtune",
               "grad_accum": "4"})
    assert i.knobs.opt_step is OptStep.IN_BACKWARD  # torchtune's full recipes' default
    text = export(i, "torchtune")
    assert "gradient_accumulation_steps=1" in text and "optimizer_in_bwd=True" in text
