"""The engine against the spec's figures (engine.md, "Figures the engine must reproduce") and
against counts derived independently of the code (hand computation from published configs,
PEFT's printed trainable-parameter counts).

The spec's figures are the textbook formula's: every test of them asks for `mode=planning`
explicitly (the realistic model is the default since issue 13; tests/unit/test_stacks.py)."""

from decimal import Decimal

import pytest

from calc import engine
from calc.engine import Inputs, estimate
from calc.types import Architecture, GpuKind, Method, Mode, Optimizer, Targets

GIB = 2**30
GB = 10**9

# LLaMA-65B as the QLoRA paper used it (no GQA).
LLAMA_65B = Architecture(params=65 * 10**9, layers=80, hidden=8192, ffn=22016, heads=64,
                         kv_heads=64, head_dim=128, vocab=32000, tied=False)
# Llama 3.1 8B: 32 layers, 4096 hidden, 14336 FFN, 32 heads, 8 KV heads of 128.
LLAMA3_8B = Architecture(params=8_030_261_248, layers=32, hidden=4096, ffn=14336, heads=32,
                         kv_heads=8, head_dim=128, vocab=128256, tied=False)
# Llama 2 7B and Mistral 7B (v0.1-0.3 shapes).
LLAMA2_7B = Architecture(params=6_738_415_616, layers=32, hidden=4096, ffn=11008, heads=32,
                         kv_heads=32, head_dim=128, vocab=32000, tied=False)
MISTRAL_7B = Architecture(params=7_241_732_096, layers=32, hidden=4096, ffn=14336, heads=32,
                          kv_heads=8, head_dim=128, vocab=32000, tied=False)


def gib(n: int) -> float:
    return round(n / GIB, 1)


def Textbook(**kw) -> Inputs:
    """Inputs of the textbook formula (mode=planning), the spec's figures' model."""
    return Inputs(mode=Mode.PLANNING, **kw)


def test_realistic_is_the_default():
    assert Inputs(arch=LLAMA3_8B).mode is Mode.DETAILED


def test_qlora_65b_on_one_48gb_card():
    est = estimate(Textbook(arch=LLAMA_65B, model="llama-65b", method=Method.QLORA, rank=64,
                          targets=Targets.ALL_LINEAR, seq=512, batch=1, ckpt=True,
                          optimizer=Optimizer.ADAMW))
    assert gib(est.total) == 43.3
    # fits a 48 GB card under the 95 % rule (card memory is binary: 48 GiB)
    assert est.total <= 48 * GIB * 95 // 100


def test_full_7b_states_only_16_bytes_per_param():
    arch = Architecture(7 * 10**9, 32, 4096, 11008, 32, 32, 128, 32000, False)
    est = estimate(Textbook(arch=arch, method=Method.FULL, optimizer=Optimizer.ADAMW))
    states = est.get("base_weights") + est.get("gradients") + est.get("optimizer")
    assert states == 16 * 7 * 10**9
    assert gib(states) == 104.3
    assert states / GB == 112


def test_8b_base_weights_bf16_and_nf4():
    arch = Architecture(8 * 10**9, 32, 4096, 14336, 32, 8, 128, 128256, False)
    bf16 = estimate(Textbook(arch=arch, method=Method.LORA)).get("base_weights")
    nf4 = estimate(Textbook(arch=arch, method=Method.QLORA)).get("base_weights")
    assert gib(bf16) == 14.9
    assert gib(nf4) == 3.8


def test_one_adapted_4096_layer():
    assert engine.lora_layer_params(4096, 4096, 16) == 131_072
    assert engine.adapter_bytes(4096, 4096, 16, "bf16") == 262_144
    assert engine.adapter_bytes(4096, 4096, 16, "bf16") / 2**20 == 0.25
    assert engine.lora_layer_params(4096, 4096, 64) == 4 * 131_072
    assert engine.adapter_bytes(4096, 4096, 16, "fp32") == 2 * 262_144


@pytest.mark.parametrize("billions, lora, full", [
    ("0.5", 4, 10), ("1.5", 6, 22), ("3", 9, 40), ("7", 17, 88), ("14", 31, 172)])
def test_rule_of_thumb(billions, lora, full):
    assert engine.rule_of_thumb(billions, "lora") == lora * GB
    assert engine.rule_of_thumb(billions, "full") == full * GB


def test_rule_of_thumb_8b_lora_vs_qlora():
    assert engine.rule_of_thumb(8, "lora") == 19 * GB
    assert round(engine.rule_of_thumb(8, "qlora") / GB) == 9


def test_rule_of_thumb_accepts_floats_exactly():
    assert engine.rule_of_thumb(0.5, "lora") == 4 * GB
    assert engine.rule_of_thumb(1.5, "full-master") == 28 * GB


def test_quick_calculator():
    assert engine.quick_full(7, 16, 0) == 112 * GB
    assert engine.quick_full(7, 16, 20) == 132 * GB
    assert engine.quick_full(7, 16, 20) > 80 * GIB  # over one 80 GB card


def test_cost():
    assert engine.cost(20, "0.74") == Decimal("14.80")
    assert str(engine.cost(20, "0.74")) == "14.80"


# --- LoRA trainable parameters against independently known counts ---------------------------

def _hand_count(arch: Architecture, r: int, modules: tuple[str, ...]) -> int:
    """Written out without the engine's shape table."""
    h, kv, f = arch.hidden, arch.kv_heads * arch.head_dim, arch.ffn
    q = arch.heads * arch.head_dim
    size = {"q": h + q, "k": h + kv, "v": h + kv, "o": q + h, "gate": h + f, "up": h + f, "down": f + h}
    return arch.layers * sum(r * size[m] for m in modules)


def test_lora_counts_peft_printed():
    # PEFT print_trainable_parameters(): Llama-2-7b, r=8, q_proj+v_proj -> 4,194,304
    assert engine.lora_trainable_params(LLAMA2_7B, 8, Targets.QV) == 4_194_304
    # Llama-3-8B / Mistral-7B, r=16, all linear layers -> 41,943,040 (GQA: k, v are 4096 -> 1024)
    assert engine.lora_trainable_params(LLAMA3_8B, 16, Targets.ALL_LINEAR) == 41_943_040
    assert engine.lora_trainable_params(MISTRAL_7B, 16, Targets.ALL_LINEAR) == 41_943_040


@pytest.mark.parametrize("arch", [LLAMA_65B, LLAMA3_8B, LLAMA2_7B])
@pytest.mark.parametrize("targets", list(Targets))
@pytest.mark.parametrize("r", [1, 8, 64])
def test_lora_counts_by_hand(arch, targets, r):
    assert engine.lora_trainable_params(arch, r, targets) == _hand_count(arch, r, targets.modules)


def test_gqa_makes_k_v_smaller_than_q():
    s = LLAMA3_8B.linear_shapes()
    assert s["q"] == (4096, 4096) and s["k"] == (4096, 1024) and s["v"] == (4096, 1024)


def test_full_fine_tuning_trains_everything_lora_only_adapters():
    full = estimate(Textbook(arch=LLAMA3_8B, method=Method.FULL))
    lora = estimate(Textbook(arch=LLAMA3_8B, method=Method.LORA))
    assert full.trainable_params == LLAMA3_8B.params
    assert lora.get("gradients") == 2 * 41_943_040
    assert lora.get("optimizer") == 12 * 41_943_040
    assert lora.get("activations") == full.get("activations")  # LoRA does not cut activations


def test_activations_formula_and_checkpointing():
    on = estimate(Textbook(arch=LLAMA3_8B, seq=2048, batch=1, ckpt=True)).get("activations")
    off = estimate(Textbook(arch=LLAMA3_8B, seq=2048, batch=1, ckpt=False)).get("activations")
    assert on == 32 * 2048 * 4096 * 2
    assert off == 32 * 2048 * 4096 * 34
    assert estimate(Textbook(arch=LLAMA3_8B, seq=4096, batch=2)).get("activations") == 4 * on


def test_overhead_is_one_gib():
    assert estimate(Textbook(arch=LLAMA3_8B)).get("overhead") == GIB


@pytest.mark.parametrize("opt, state", [
    (Optimizer.ADAMW, 12), (Optimizer.ADAMW_NO_MASTER, 8), (Optimizer.ADAMW_BF16, 4)])
def test_spec_optimizer_bytes(opt, state):
    est = estimate(Textbook(arch=LLAMA3_8B, method=Method.FULL, optimizer=opt))
    assert est.get("optimizer") == state * LLAMA3_8B.params


def test_every_optimizer_has_bytes():
    assert set(engine.OPTIMIZER_BYTES) == set(Optimizer)
    assert all(v >= 0 for v in engine.OPTIMIZER_BYTES.values())


# --- GPU fit and sharding --------------------------------------------------------------------

class _Card:
    def __init__(self, gib_: int, kind=GpuKind.DISCRETE):
        self.memory_bytes, self.kind, self.id, self.name = gib_ * GIB, kind, f"c{gib_}", f"c{gib_}"


def test_fits_95_percent_of_a_card():
    est = estimate(Textbook(arch=LLAMA_65B, method=Method.QLORA, rank=64, seq=512))
    [fit48] = engine.gpu_fit(est, (_Card(48),))
    assert fit48.fits and fit48.cards == 1
    assert fit48.usable == 48 * GIB * 95 // 100
    [fit40] = engine.gpu_fit(est, (_Card(40),))
    assert not fit40.fits and fit40.cards == 2


def test_unified_memory_three_quarters():
    [fit] = engine.gpu_fit(estimate(Textbook(arch=LLAMA3_8B)), (_Card(36, GpuKind.UNIFIED),))
    assert fit.usable == 27 * GIB


def test_zero3_fewest_cards_divides_states_not_activations():
    est = estimate(Textbook(arch=LLAMA3_8B, method=Method.FULL, seq=2048, ckpt=True))
    usable = 80 * GIB * 95 // 100
    per_card = est.get("activations") + est.get("overhead")
    states = est.total - per_card
    [fit] = engine.gpu_fit(est, (_Card(80),))
    n = fit.cards
    assert states / n + per_card <= usable < states / (n - 1) + per_card


def test_no_number_of_cards_when_activations_alone_overflow():
    est = estimate(Textbook(arch=LLAMA3_8B, seq=131072, batch=8, ckpt=False))
    [fit] = engine.gpu_fit(est, (_Card(24),))
    assert fit.cards is None and not fit.fits


# --- the realistic model (mode=detailed): extra terms, planning figures untouched ------------

def test_nf4_exact_storage_matches_the_specs_0516_with_double_quantisation():
    # 4 bits + an 8-bit absmax per 64 weights + an FP32 constant per 256 blocks (QLoRA paper)
    dq = 0.5 + 1 / 64 + 4 / (64 * 256)
    assert float(engine.NF4_BYTES_EXACT_DQ) == dq and round(dq, 3) == 0.516
    assert float(engine.NF4_BYTES_EXACT) == 0.5 + 4 / 64


def _detailed(**kw):
    return estimate(Inputs(arch=LLAMA3_8B, mode=Mode.DETAILED, **kw))


ACTIVATION_PARTS = ("checkpoints", "activations", "adapter_inputs")


def test_detailed_adds_terms_and_never_goes_below_planning_activations():
    """With gradient accumulation (the gradients alive at the loss, as the textbook counts
    them) the realistic total is above the textbook's; see test_grad_accum.py for one step per
    micro-batch."""
    for method in Method:
        for ckpt in (True, False):
            plan = estimate(Textbook(arch=LLAMA3_8B, method=method, ckpt=ckpt))
            det = _detailed(method=method, ckpt=ckpt, grad_accum=4)
            assert det.get("logits") == 2048 * 128256 * engine.LOGITS_BYTES  # hf: full loss
            assert sum(det.get(n) for n in ACTIVATION_PARTS) >= plan.get("activations")
            assert det.total > plan.total


def test_detailed_lora_keeps_fp32_adapters_without_master_copy():
    det = _detailed(method=Method.LORA, grad_accum=2)  # gradients alive at the loss
    t = 41_943_040
    assert det.get("adapter_weights") == 4 * t and det.get("gradients") == 4 * t
    assert det.get("fp32_copies") == 4 * t  # the pages' earlier name (adapters + k-bit upcast)
    assert det.get("optimizer") == 8 * t


def test_detailed_without_flash_attention_adds_the_score_matrix():
    on, off = _detailed(flash=True), _detailed(flash=False)
    # one recomputed layer keeps ATTN_SCORE_BYTES x a s^2 b bytes more (checkpointing on)
    score = engine.ATTN_SCORE_BYTES
    assert off.get("activations") - on.get("activations") == score * 32 * 2048 * 2048
    off_nockpt = _detailed(flash=False, ckpt=False)
    on_nockpt = _detailed(flash=True, ckpt=False)
    assert off_nockpt.get("activations") - on_nockpt.get("activations") == 32 * score * 32 * 2048 * 2048
