"""The interface: parsing a query (URL, form, CLI) into Inputs, with typed, per-field errors."""

import json
from decimal import Decimal

import pytest

from calc import CalcError, Method, Optimizer, Targets, estimate, parse, to_query
from calc.widgets.adapter import parse as parse_adapter
from calc.widgets.cost import parse as parse_cost
from calc.widgets.quick import parse as parse_quick


def problems(query, **kw):
    with pytest.raises(CalcError) as err:
        parse(query, **kw)
    return {p.field: p.code for p in err.value.problems}


def test_defaults_are_the_specs():
    i = parse({})
    assert (i.model, i.method, i.rank, i.targets, i.seq, i.batch, i.ckpt, i.optimizer, i.unit.value) == (
        "llama-3.1-8b", Method.LORA, 16, Targets.ALL_LINEAR, 2048, 1, True, Optimizer.ADAMW, "GiB")


def test_values_from_a_url():
    i = parse({"model": "qwen2.5-0.5b", "method": "QLoRA", "rank": "64", "seq": "4096",
               "batch": ["1", "2"], "ckpt": "false", "optimizer": "adamw-8bit", "unit": "GB"})
    assert i.method is Method.QLORA and i.rank == 64 and i.seq == 4096 and i.batch == 2
    assert i.ckpt is False and i.optimizer is Optimizer.ADAMW_8BIT and i.unit.value == "GB"


@pytest.mark.parametrize("value, code", [
    ("abc", "not_a_number"), ("NaN", "not_finite"), ("inf", "not_finite"), ("1e400", "too_large"),
    ("-5", "negative"), ("0", "zero"), ("2.5", "not_integer"), ("9" * 5000, "too_long"),
    ("<script>alert(1)</script>", "not_a_number"), ("<b>1</b>", "not_a_number"),
    ("", "required"), ("  ", "required"), ("\U0001F600", "not_a_number")])
def test_bad_numbers_name_their_field(value, code):
    # an emptied length is an error, not the default (issue 19); a query without it is
    assert problems({"seq": value}) == {"seq": code}


def test_a_missing_length_is_the_default():
    assert parse({}).seq == 2048 and parse({"model": "llama-3.1-8b"}).batch == 1


@pytest.mark.parametrize("text, tokens", [("4k", 4096), ("32K", 32768), ("128k", 131072),
                                          ("1.5k", 1536), ("4096", 4096)])
def test_lengths_in_k(text, tokens):
    """Context lengths as practitioners write them: k = 1,024 tokens."""
    assert parse({"seq": text}).seq == tokens


@pytest.mark.parametrize("typed", ["llama-3.1-8b", "Llama 3.1 8B", "llama 3.1 8b",
                                   "meta-llama/Llama-3.1-8B", "Llama-3.1-8B"])
def test_a_model_by_its_name_or_hub_id(typed):
    """The picker's display name and the Hugging Face id find the preset (issue 19); the
    canonical query names it by its id."""
    i = parse({"model": typed})
    assert i.model == "llama-3.1-8b" and to_query(i)["model"] == "llama-3.1-8b"


def test_an_unknown_model_is_still_an_error():
    assert problems({"model": "Llama 9 800B"}) == {"model": "unknown_model"}


def test_every_bad_field_is_reported_at_once():
    got = problems({"seq": "-1", "batch": "x", "method": "dpo", "rank": "0", "ckpt": "maybe"})
    assert got == {"seq": "negative", "batch": "not_a_number", "method": "unknown_choice",
                   "rank": "zero", "ckpt": "bad_bool"}


def test_unknown_model_and_unknown_keys():
    assert problems({"model": "../../etc/passwd"}) == {"model": "unknown_model"}
    assert parse({"utm_source": "mail"}).model == "llama-3.1-8b"
    assert problems({"utm_source": "mail"}, strict=True) == {"utm_source": "unknown_field"}


def test_rank_larger_than_the_layer():
    got = problems({"model": "qwen2.5-0.5b", "rank": "4096", "targets": "all-linear"})
    assert got == {"rank": "rank_too_large"}
    # full fine-tuning ignores rank
    assert parse({"model": "qwen2.5-0.5b", "rank": "4096", "method": "full"}).method is Method.FULL


@pytest.mark.parametrize("text, locale, expected", [
    ("8e9", "en", 8 * 10**9), ("8B", "en", 8 * 10**9), ("0.5B", "en", 5 * 10**8),
    ("350M", "en", 350 * 10**6), ("0,5B", "tr", 5 * 10**8), ("8,030,261,248", "en", 8_030_261_248),
    ("۸B", "fa", 8 * 10**9), ("1.5b", "ru", 15 * 10**8)])
def test_params_notations(text, locale, expected):
    q = {"model": "custom", "params": text, "layers": "32", "hidden": "4096", "ffn": "14336",
         "heads": "32", "kv_heads": "8", "vocab": "128256"}
    assert parse(q, locale).arch.params == expected


def test_persian_digits_and_decimal_comma():
    assert parse({"seq": "۴۰۹۶"}, "fa").seq == 4096
    assert parse({"seq": "4.096"}, "tr").seq == 4096
    assert parse_quick({"n": "0,5"}, "pt")[0] == Decimal("0.5")
    assert parse_quick({"n": "۰٫۵"}, "fa")[0] == Decimal("0.5")


def test_custom_model_needs_its_shape():
    got = problems({"model": "custom", "layers": "32"})
    assert set(got) == {"hidden", "ffn", "heads", "vocab"} and set(got.values()) == {"required"}


def test_custom_model_counts_its_parameters():
    i = parse({"model": "custom", "layers": "32", "hidden": "4096", "ffn": "14336", "heads": "32",
               "kv_heads": "8", "vocab": "128256"})
    assert abs(i.arch.params - 8_030_261_248) / 8_030_261_248 < 0.001


def test_kv_heads_must_divide_heads():
    assert problems({"kv_heads": "7"}) == {"kv_heads": "heads_mismatch"}


def test_url_round_trip():
    q = {"model": "mistral-7b", "method": "qlora", "rank": "32", "targets": "qv", "seq": "1024",
         "batch": "4", "ckpt": "false", "optimizer": "lion", "unit": "GB", "mode": "planning",
         "framework": "hf"}
    i = parse(q)
    assert to_query(i) == q
    assert parse(to_query(i)) == i


def test_override_of_a_preset_shows_in_the_query():
    i = parse({"model": "llama-3.1-8b", "layers": "16"})
    assert i.arch.layers == 16 and to_query(i)["layers"] == "16"
    assert parse(to_query(i)) == i


def test_pasted_config_json():
    cfg = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
           "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 128256, "tie_word_embeddings": False}
    i = parse({"config": json.dumps(cfg), "method": "lora"})
    assert i.model == "custom" and i.arch.kv_heads == 8 and i.arch.head_dim == 128
    assert estimate(i).trainable_params == 41_943_040


@pytest.mark.parametrize("text, code", [
    ("{not json", "json_syntax"), ("[1, 2]", "json_not_object"), ('"x"', "json_not_object"),
    ('{"hidden_size": 4096}', "json_missing"), ('{"num_hidden_layers": -1}', "json_bad_value"),
    ('{"num_hidden_layers": "32"}', "json_bad_value"), ("[" * 100 + "]" * 100, "json_too_deep"),
    # Mixtral is read now (calc.hfconfig); without its top-k the config is incomplete
    ('{"num_local_experts": 8, "model_type": "mixtral"}', "json_missing"),
    ('{"num_experts": 60, "model_type": "qwen2_moe"}', "unsupported_arch")])
def test_malformed_config_json(text, code):
    assert problems({"config": text}) == {"config": code}


def test_adapter_widget():
    assert parse_adapter({}) == (4096, 4096, 16, "bf16")
    assert parse_adapter({"rank": "64", "dtype": "FP32"})[2:] == (64, "fp32")
    with pytest.raises(CalcError):
        parse_adapter({"d_in": "8", "rank": "16"})


def test_quick_and_cost_widgets():
    assert parse_quick({"n": "7", "bpp": "16", "act": "20"}) == (7, 16, 20)
    state = parse_cost({"gpu": "a40", "tokens": "50M", "epochs": "2", "price": "0,5"}, "tr")
    assert (state.plan.gpu, state.plan.tokens, state.plan.epochs, state.plan.price) == \
        ("a40", 50_000_000, 2, Decimal("0.5"))
    with pytest.raises(CalcError) as err:
        parse_cost({"gpu": "nope", "tokens": "-1"})
    assert {p.field for p in err.value.problems} == {"gpu", "tokens"}


@pytest.mark.parametrize("text", ["-0", "-0.0", "−0", "-0e5", "-۰"])
def test_negative_zero_is_zero(text):
    from calc.fields import read_decimal

    d = read_decimal(text)
    assert d == 0 and not d.is_signed()
    assert problems({"seq": text}) == {"seq": "zero"}  # zero, not "negative"
    assert parse_quick({"act": text})[2] == 0
    assert not read_decimal(-0.0).is_signed()


def test_absurd_exponents_stay_fast_and_typed():
    """Short texts with huge exponents: an exact fraction of 1e-999999999 would take forever,
    and 9e999999 billions overflows the decimal context."""
    import time

    start = time.perf_counter()
    assert {p.field: p.code for p in _errors(parse_quick, {"n": "1e-400000000"})} == {"n": "zero"}
    assert parse_quick({"act": "1e-400000000"})[2] == 0
    assert problems({"params": "9e999999B"}) == {"params": "too_large"}
    # beyond what Pyodide's 32-bit libmpdec reads: not a number, in CPython as in the browser
    for text in ("1e-999999999", "1e999999999", "0e999999999", "1e425000001"):
        assert problems({"seq": text}) == {"seq": "not_a_number"}, text
        assert [p.code for p in _errors(parse_quick, {"act": text})] == ["not_a_number"], text
    assert problems({"seq": "1e425000000"}) == {"seq": "too_large"}
    # what rounds to nothing is zero, which a price, a rate or a token count cannot be
    for name in ("tokens", "epochs", "tokens_per_s", "price"):
        q = {"tokens": "1M", "gpu": "a40", name: "1e-30"}
        assert [p.code for p in _errors(parse_cost, q)] == ["zero"], name
    assert time.perf_counter() - start < 1


def _errors(reader, query):
    with pytest.raises(CalcError) as err:
        reader(query)
    return err.value.problems
