"""calc.scale: many GPUs, sharding stages, CPU offload and DPO (engine spec section 8).

Expected figures are computed here from the spec's formulas (section 1) and the rules the
sources state (ZeRO's stages, DeepSpeed's host buffers, TRL's DPO batch), not by calling the
code under test twice."""

import itertools
import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from calc import catalog
from calc.engine import MAX_CARDS, Inputs, estimate, fewest_cards, usable_bytes
from calc.errors import CalcError
from calc.i18n import LOCALES, t
from calc.scale import (COMPONENT_PARTS, Part, Scale, cards_needed, parse_scale, scaled,
                        to_query)
from calc.types import (Architecture, GpuKind, Method, Mode, Objective, Offload, Optimizer,
                        Sharding, Targets)

ROOT = Path(__file__).resolve().parents[2]
GIB = 2**30

# Llama 3.1 8B and 70B, from their config.json (as calc/data/models.json has them).
LLAMA3_8B = Architecture(params=8_030_261_248, layers=32, hidden=4096, ffn=14336, heads=32,
                         kv_heads=8, head_dim=128, vocab=128256, tied=False)
LLAMA3_70B = Architecture(params=70_553_706_496, layers=80, hidden=8192, ffn=28672, heads=64,
                          kv_heads=8, head_dim=128, vocab=128256, tied=False)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def inputs(arch=LLAMA3_8B, **kw) -> Inputs:
    return Inputs(arch=arch, model="custom", **kw)


# --- the hand-computed case ----------------------------------------------------------------


def test_8_gpus_zero3_full_fine_tuning_by_hand():
    """Textbook formula (section 1), Llama 3.1 70B, full fine-tuning, AdamW, s = 2048, b = 1,
    checkpointing on, 8 GPUs with ZeRO-3: (weights + gradients + optimizer) / 8 per GPU plus
    the activations and the overhead in full (section 1, "Which GPUs fit")."""
    p, arch = LLAMA3_70B.params, LLAMA3_70B
    weights, grads, opt = 2 * p, 2 * p, 12 * p  # BF16, BF16, FP32 master + two moments
    acts = arch.layers * 2048 * 1 * arch.hidden * 2  # L x s x b x h x 2 with checkpointing
    expected = ceil_div(weights, 8) + ceil_div(grads, 8) + ceil_div(opt, 8) + acts + GIB
    run = scaled(inputs(LLAMA3_70B, method=Method.FULL, mode=Mode.PLANNING), Scale(8, Sharding.ZERO3))
    assert run.per_gpu_total == expected
    # 70.55e9 x 16 / 8 = 141.1e9 bytes = 131.4 GiB of states, 2.5 GiB of activations, 1 GiB
    assert round(expected / GIB, 1) == 134.9
    assert run.cpu_bytes == 0


def test_8_gpus_zero3_detailed_adds_the_gathered_layers():
    """Detailed mode: the same division plus what FSDP holds unsharded at once: two decoder
    layers' weights, the root unit's (embeddings and output layer) and one layer's gradients,
    computed here from the architecture (full fine-tuning: every weight BF16)."""
    i = inputs(LLAMA3_70B, method=Method.FULL, mode=Mode.DETAILED, optimizer=Optimizer.ADAMW)
    est = estimate(i)
    c = dict(est.components)
    root = 2 * LLAMA3_70B.vocab * LLAMA3_70B.hidden  # parameters of embed_tokens + lm_head
    layer = ceil_div(2 * (LLAMA3_70B.params - root), LLAMA3_70B.layers)  # BF16 bytes
    # one layer's gradients: every parameter trains, in BF16 (whatever of them the step's
    # peak holds, the `gradients` component)
    gathered = 2 * layer + 2 * root + ceil_div(2 * LLAMA3_70B.params, LLAMA3_70B.layers)
    sharded = ("base_weights", "gradients", "optimizer", "step_temporaries")
    local = ("activations", "checkpoints", "adapter_inputs", "logits", "overhead")
    assert set(c) <= set(sharded) | set(local), "a component this test does not place"
    expected = (sum(ceil_div(c[k], 8) for k in sharded if k in c)
                + sum(c[k] for k in local if k in c) + gathered)
    run = scaled(i, Scale(8, Sharding.ZERO3))
    assert dict(run.gpu_components)["gathered_weights"] == gathered
    assert run.per_gpu_total == expected


# --- every strategy shards exactly its components ------------------------------------------

SHARDS = {  # ZeRO stages (Rajbhandari et al. 2019, section 5): what each one partitions
    Sharding.DDP: set(),
    Sharding.ZERO1: {"optimizer", "step_temporaries"},
    Sharding.ZERO2: {"optimizer", "step_temporaries", "gradients"},
    Sharding.ZERO3: {"optimizer", "step_temporaries", "gradients", "base_weights", "fp32_copies", "adapter_weights",
                     "kbit_upcast", "reference_model"},
}


@pytest.mark.parametrize("sharding", list(Sharding))
@pytest.mark.parametrize("method", list(Method))
def test_each_strategy_shards_exactly_its_components(sharding, method):
    i = inputs(method=method, mode=Mode.DETAILED, seq=1024)
    single = dict(estimate(i).components)
    per_gpu = dict(scaled(i, Scale(4, sharding)).gpu_components)
    for name, value in single.items():
        want = ceil_div(value, 4) if name in SHARDS[sharding] else value
        assert per_gpu[name] == want, name
    extra = set(per_gpu) - set(single)
    if sharding is Sharding.ZERO3:
        assert extra == {"gathered_weights"}
    elif sharding is Sharding.DDP:
        # DDP's all-reduce buckets hold a second copy of every gradient, from the start: full
        # fine-tuning's BF16 gradients of every weight, or PEFT's FP32 gradients of rank-16
        # adapters on every linear layer of Llama 3.1 8B (41,943,040 parameters)
        whole = 2 * LLAMA3_8B.params if method is Method.FULL else 4 * 41_943_040
        assert extra == {"ddp_buckets"} and per_gpu["ddp_buckets"] == whole
    else:
        assert extra == set()


@pytest.mark.parametrize("sharding", list(Sharding))
def test_textbook_mode_only_divides(sharding):
    i = inputs(method=Method.FULL, mode=Mode.PLANNING)
    single = dict(estimate(i).components)
    per_gpu = dict(scaled(i, Scale(16, sharding)).gpu_components)
    assert per_gpu == {k: ceil_div(v, 16) if k in SHARDS[sharding] else v for k, v in single.items()}


@pytest.mark.parametrize("sharding", list(Sharding))
@pytest.mark.parametrize("mode", list(Mode))
def test_one_gpu_is_the_single_card_estimate(sharding, mode):
    i = inputs(method=Method.QLORA, mode=mode)
    run = scaled(i, Scale(1, sharding))
    assert run.gpu_components == estimate(i).components
    assert run.per_gpu_total == estimate(i).total == run.total


def every_input():
    for method, mode, opt, ckpt, flash, dquant in itertools.product(
            Method, Mode, Optimizer, (True, False), (True, False), (True, False)):
        yield inputs(method=method, mode=mode, optimizer=opt, ckpt=ckpt, flash=flash,
                     dquant=dquant, seq=512, targets=Targets.QV)


def test_every_component_of_the_engine_is_classified():
    """A new term in estimate() must be placed (sharded as state, or kept on every card)
    before the multi-GPU figures use it: an unknown name would silently stay unsharded."""
    names = set()
    for i in every_input():
        names |= {n for n, _ in estimate(i).components}
        for objective in Objective:
            names |= {n for n, _ in scaled(i, Scale(2, Sharding.ZERO3, objective=objective)).components}
    unclassified = names - set(COMPONENT_PARTS)
    assert not unclassified, f"classify these in calc.scale.COMPONENT_PARTS: {unclassified}"
    # and by what they are: activations-like terms never shard
    assert {n for n, p in COMPONENT_PARTS.items() if p is Part.LOCAL} >= {"activations", "logits", "overhead"}
    assert COMPONENT_PARTS["fp32_copies"] is Part.WEIGHTS  # PEFT's FP32 adapters, k-bit upcast


def test_component_names_have_labels_in_every_locale():
    for loc in LOCALES:
        for name in COMPONENT_PARTS:
            assert t(f"component.{name}", loc) != f"component.{name}", (loc, name)
        assert t("component.offload_buffers", loc) != "component.offload_buffers"


# --- offload ---------------------------------------------------------------------------------


def test_offload_optimizer_textbook_moves_exactly_the_state():
    """ZeRO-2/3 + optimizer offload: the optimizer state and the gradient partitions live on
    the host; what leaves the GPUs is what the host holds."""
    i = inputs(method=Method.FULL, mode=Mode.PLANNING)
    single = dict(estimate(i).components)
    for sharding in (Sharding.ZERO2, Sharding.ZERO3):
        run = scaled(i, Scale(8, sharding, Offload.OPTIMIZER))
        assert dict(run.cpu_components) == {"optimizer": single["optimizer"], "gradients": single["gradients"]}
        assert "optimizer" not in dict(run.gpu_components) and "gradients" not in dict(run.gpu_components)
        weights = ceil_div(single["base_weights"], 8) if sharding is Sharding.ZERO3 else single["base_weights"]
        assert run.per_gpu_total == weights + single["activations"] + single["overhead"]
    # ZeRO-1 keeps the full gradients on the card until the step: only the state moves
    run = scaled(i, Scale(8, Sharding.ZERO1, Offload.OPTIMIZER))
    assert dict(run.cpu_components) == {"optimizer": single["optimizer"]}
    assert dict(run.gpu_components)["gradients"] == single["gradients"]


def test_offload_optimizer_and_params_moves_the_weights_too():
    i = inputs(method=Method.FULL, mode=Mode.PLANNING)
    single = dict(estimate(i).components)
    run = scaled(i, Scale(4, Sharding.ZERO3, Offload.OPTIMIZER_PARAMS))
    assert run.cpu_bytes == single["optimizer"] + single["gradients"] + single["base_weights"]
    assert run.per_gpu_total == single["activations"] + single["overhead"]


def test_offload_detailed_host_follows_deepspeed():
    """DeepSpeed v0.19.5 with offload_optimizer allocates on the host, per trainable parameter:
    the FP32 master partition (4), CPU Adam's exp_avg and exp_avg_sq in FP32 (4 + 4), the
    pinned FP32 gradient partition (4) and a pinned 16-bit partition (2)."""
    for method in Method:
        i = inputs(method=method, mode=Mode.DETAILED)
        est = estimate(i)
        run = scaled(i, Scale(8, Sharding.ZERO3, Offload.OPTIMIZER))
        t_ = est.trainable_params
        assert dict(run.cpu_components) == {"optimizer": t_ * (4 + 4 + 4), "offload_buffers": t_ * (4 + 2)}
        run = scaled(i, Scale(8, Sharding.ZERO3, Offload.OPTIMIZER_PARAMS))
        weights = sum(v for k, v in est.components
                      if k in ("base_weights", "fp32_copies", "adapter_weights", "kbit_upcast"))
        assert run.cpu_bytes == t_ * 18 + weights
        assert not ({"base_weights", "fp32_copies", "adapter_weights", "kbit_upcast", "optimizer",
                     "gradients"} & set(dict(run.gpu_components)))


def test_offload_on_one_gpu_still_frees_the_card():
    """ZeRO-Offload's main use: one card, optimizer state in host RAM."""
    i = inputs(method=Method.FULL, mode=Mode.PLANNING)
    single = dict(estimate(i).components)
    run = scaled(i, Scale(1, Sharding.ZERO2, Offload.OPTIMIZER))
    assert run.per_gpu_total == single["base_weights"] + single["activations"] + single["overhead"]


# --- DPO -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", list(Mode))
def test_dpo_full_adds_a_frozen_reference_and_doubles_the_batch(mode):
    i = inputs(method=Method.FULL, mode=mode, batch=2, ckpt=True, grad_accum=4)
    sft = dict(estimate(i).components)
    doubled = dict(estimate(replace(i, batch=4)).components)
    dpo = dict(scaled(i, Scale(objective=Objective.DPO)).components)
    assert dpo["reference_model"] == 2 * LLAMA3_8B.params  # BF16 frozen copy, no grads/state
    assert dpo["base_weights"] == sft["base_weights"] and dpo["gradients"] == sft["gradients"]
    for name in ("activations", "logits"):
        if name in sft:
            assert dpo[name] == doubled[name]
            assert dpo[name] == 2 * sft[name]  # linear in the number of sequences
    assert set(dpo) == set(sft) | {"reference_model"}


@pytest.mark.parametrize("method", [Method.LORA, Method.QLORA])
def test_dpo_with_adapters_has_no_reference_model(method):
    """TRL: ref_model=None with a PEFT model -> the base with adapters disabled is the reference."""
    i = inputs(method=method, mode=Mode.DETAILED)
    dpo = scaled(i, Scale(objective=Objective.DPO))
    assert "reference_model" not in dict(dpo.components)
    assert dpo.components == estimate(replace(i, batch=2)).components


def test_dpo_reference_shards_with_zero3_only():
    """TRL's prepare_deepspeed: ZeRO-3 shards the reference, other stages keep a whole copy."""
    i = inputs(method=Method.FULL, mode=Mode.PLANNING)
    ref = 2 * LLAMA3_8B.params
    for sharding in Sharding:
        per_gpu = dict(scaled(i, Scale(8, sharding, objective=Objective.DPO)).gpu_components)
        assert per_gpu["reference_model"] == (ceil_div(ref, 8) if sharding is Sharding.ZERO3 else ref)


# --- the fit table ---------------------------------------------------------------------------


def per_gpu_by_rule(components: dict, sharding: Sharding, n: int) -> int:
    """The textbook per-GPU total written out: sharded components / n, the rest whole."""
    return sum(ceil_div(v, n) if (n > 1 and k in SHARDS[sharding]) else v for k, v in components.items())


CASES = [
    inputs(LLAMA3_70B, method=Method.FULL, mode=Mode.PLANNING),
    inputs(LLAMA3_70B, method=Method.QLORA, mode=Mode.PLANNING, seq=4096),
    inputs(LLAMA3_8B, method=Method.FULL, mode=Mode.PLANNING, batch=8, ckpt=False),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_cards_needed_is_the_fewest_that_fit(case):
    i = CASES[case]
    components = dict(estimate(i).components)
    table = cards_needed(i)
    for g in catalog.gpus():
        usable = usable_bytes(g)
        for sharding in Sharding:
            n = table[g.id][sharding.value]
            if g.kind is GpuKind.UNIFIED:
                assert n == (1 if per_gpu_by_rule(components, sharding, 1) <= usable else None)
                continue
            if n is None:
                # not even MAX_CARDS hold it (the whole part alone may be too big)
                assert per_gpu_by_rule(components, sharding, MAX_CARDS) > usable
                continue
            assert per_gpu_by_rule(components, sharding, n) <= usable, (g.id, sharding, n)
            if n > 1:
                assert per_gpu_by_rule(components, sharding, n - 1) > usable, (g.id, sharding, n)
            assert scaled(i, Scale(n, sharding)).per_gpu_total <= usable


def test_zero3_column_agrees_with_the_engines_fewest_cards():
    """Textbook mode, SFT: calc.engine's own ZeRO-3 answer (fewest_cards) is the same."""
    for i in CASES:
        est = estimate(i)
        table = cards_needed(i)
        for g in catalog.gpus():
            if g.kind is GpuKind.DISCRETE:
                u = usable_bytes(g)
                want = 1 if est.total <= u else fewest_cards(est.sharded, est.per_card, u)
                assert table[g.id]["zero3"] == want, g.id


def test_ddp_never_fits_what_one_card_cannot_hold():
    i = CASES[0]  # 70B full: 16 bytes per parameter on every DDP card
    assert all(row["ddp"] is None for row in cards_needed(i).values())


def test_cards_needed_detailed_and_offload_agree_with_scaled():
    for i, scale in ((inputs(LLAMA3_70B, method=Method.FULL, mode=Mode.DETAILED), Scale()),
                     (inputs(LLAMA3_70B, method=Method.FULL, mode=Mode.DETAILED),
                      Scale(offload=Offload.OPTIMIZER)),
                     (inputs(LLAMA3_8B, method=Method.LORA, mode=Mode.DETAILED),
                      Scale(objective=Objective.DPO))):
        table = cards_needed(i, scale)
        for g in catalog.gpus():
            for s, n in table[g.id].items():
                if n is None:
                    continue
                u = usable_bytes(g)
                assert scaled(i, replace(scale, gpus=n, sharding=Sharding(s))).per_gpu_total <= u
                if n > 1:
                    assert scaled(i, replace(scale, gpus=n - 1, sharding=Sharding(s))).per_gpu_total > u
        if scale.offload is Offload.OPTIMIZER:  # DDP cannot offload: left out of the table
            assert all("ddp" not in row for row in table.values())


def test_cards_needed_is_fast():
    i = inputs(LLAMA3_70B, method=Method.FULL, mode=Mode.DETAILED)
    cards_needed(i, Scale(objective=Objective.DPO))
    best = min(_timed(lambda: cards_needed(i, Scale(objective=Objective.DPO))) for _ in range(3))
    assert best < 0.1


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# --- fields and bad input --------------------------------------------------------------------


def test_parse_scale_defaults_and_round_trip():
    assert parse_scale({}) == Scale(1, Sharding.ZERO3, Offload.NONE, Objective.SFT)
    assert to_query(Scale()) == {}
    s = Scale(8, Sharding.ZERO2, Offload.OPTIMIZER, Objective.DPO)
    assert to_query(s) == {"gpus": "8", "sharding": "zero2", "offload": "optimizer", "objective": "dpo"}
    assert parse_scale(to_query(s)) == s
    assert parse_scale({"gpus": "۸"}, "fa").gpus == 8
    assert parse_scale({"offload": "optimizer+params"}).offload is Offload.OPTIMIZER_PARAMS


BAD = [
    ({"gpus": "0"}, "gpus", "zero"),
    ({"gpus": "1.5"}, "gpus", "not_integer"),
    ({"gpus": "-2"}, "gpus", "negative"),
    ({"gpus": "two"}, "gpus", "not_a_number"),
    ({"gpus": str(MAX_CARDS + 1)}, "gpus", "too_large"),
    ({"sharding": "zero4"}, "sharding", "unknown_choice"),
    ({"offload": "nvme"}, "offload", "unknown_choice"),
    ({"objective": "ppo"}, "objective", "unknown_choice"),
    ({"sharding": "ddp", "offload": "optimizer"}, "offload", "offload_needs_zero"),
    ({"sharding": "zero2", "offload": "optimizer+params"}, "offload", "offload_params_needs_zero3"),
]


@pytest.mark.parametrize("query,field,code", BAD)
@pytest.mark.parametrize("loc", LOCALES)
def test_bad_input_names_the_field_in_every_locale(query, field, code, loc):
    with pytest.raises(CalcError) as err:
        parse_scale(query, loc)
    assert [(p.field, p.code) for p in err.value.problems] == [(field, code)]
    message = err.value.messages(loc)[field]
    assert t(f"field.{field}", loc) in message
    assert "{" not in message and "error." not in message


@pytest.mark.parametrize("loc", LOCALES)
def test_offload_with_an_optimizer_deepspeed_cannot_offload(loc):
    i = inputs(method=Method.FULL, optimizer=Optimizer.ADAMW_8BIT)
    with pytest.raises(CalcError) as err:
        scaled(i, Scale(4, Sharding.ZERO3, Offload.OPTIMIZER))
    assert [p.field for p in err.value.problems] == ["offload"]
    assert t("field.offload", loc) in err.value.message(loc)
    with pytest.raises(CalcError):
        cards_needed(i, Scale(offload=Offload.OPTIMIZER))
    scaled(replace(i, optimizer=Optimizer.LION), Scale(4, Sharding.ZERO3, Offload.OPTIMIZER))


def test_labels_for_every_field_and_value():
    for loc in LOCALES:
        for key in ([f"field.{f}" for f in ("gpus", "sharding", "offload", "objective")]
                    + [f"help.{f}" for f in ("gpus", "sharding", "offload", "objective")]
                    + [f"sharding.{s.value}" for s in Sharding] + [f"offload.{o.value}" for o in Offload]
                    + [f"objective.{o.value}" for o in Objective]):
            assert t(key, loc) != key, (loc, key)


# --- the command line ------------------------------------------------------------------------


no_subprocess = pytest.mark.skipif(sys.platform == "emscripten", reason="Pyodide has no subprocesses")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "calc", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


@no_subprocess
def test_cli_json_has_the_per_gpu_and_host_figures():
    out = cli("--model", "llama-3.1-70b", "--method", "full", "--gpus", "8", "--sharding", "zero3",
              "--offload", "optimizer", "--mode", "planning", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert (data["gpus"], data["sharding"], data["offload"], data["objective"]) == (8, "zero3", "optimizer", "sft")
    assert data["per_gpu_total_bytes"] == sum(data["per_gpu_components"].values())
    assert data["cpu_bytes"] == sum(data["cpu_components"].values())
    p = 70_553_706_496
    assert data["cpu_components"] == {"optimizer": 12 * p, "gradients": 2 * p}
    assert data["per_gpu_components"]["base_weights"] == ceil_div(2 * p, 8)
    assert set(data["cards"]["h100-80"]) == {"zero1", "zero2", "zero3"}


@no_subprocess
def test_cli_readable_and_bad_input():
    out = cli("--model", "llama-3.1-8b", "--gpus", "4", "--objective", "dpo", "--locale", "ru")
    assert out.returncode == 0, out.stderr
    assert t("ui.per_gpu_total", "ru") in out.stdout
    out = cli("--gpus", "0")
    assert out.returncode == 2 and t("field.gpus", "en") in out.stderr
    out = cli("--sharding", "ddp", "--offload", "optimizer", "--locale", "tr")
    assert out.returncode == 2 and t("field.offload", "tr") in out.stderr
