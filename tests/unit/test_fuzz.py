"""Fuzz targets of the engine: whatever arrives in any field (a mangled link, a paste, a typed
value from code), only the typed error escapes, every figure is finite and non-negative, no
value comes back as markup, and every call returns quickly.

Targets: `fields.parse` (lenient and strict) -> `estimate` (planning and detailed) -> `gpu_fit`;
the training stack's fields (`framework` and the knobs, valid values mixed with hostile ones);
the small widgets' readers (`parse_adapter`, `parse_quick`, `parse_cost`) and their engine
functions; `hfconfig.parse_config` over arbitrary JSON documents and arbitrary text;
`render.results` / `render.results_json` / `render.widget` of every widget.

Size: CALC_FUZZ_EXAMPLES examples per target (default 60, the test suite's size);
`make fuzz` runs 10,000. CALC_FUZZ_CALL_LIMIT (seconds, default 1) bounds every single call.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from calc import CalcError, catalog, engine
from calc.engine import estimate, gpu_fit
from calc.fields import FIELDS, parse, to_query
from calc.hfconfig import ALIASES, parse_config
from calc.i18n import LOCALES, error_message
from calc.render import WIDGETS, results, results_json, widget
from calc.types import Architecture, Mode
from calc.widgets.adapter import parse as parse_adapter
from calc.widgets.cost import parse as parse_cost
from calc.widgets.quick import parse as parse_quick

EXAMPLES = int(os.environ.get("CALC_FUZZ_EXAMPLES", "60"))
CALL_LIMIT = float(os.environ.get("CALC_FUZZ_CALL_LIMIT", "1.0"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])


#: The slowest call of each function (seconds), printed at the end (`make fuzz` shows it).
SLOWEST: dict[str, float] = {}


def timed(fn, *args, **kwargs):
    """fn(...) under the per-call bound; the typed error passes through, timed as well."""
    start = time.perf_counter()
    try:
        return fn(*args, **kwargs)
    finally:
        took = time.perf_counter() - start
        name = f"{fn.__module__}.{fn.__name__}"
        SLOWEST[name] = max(SLOWEST.get(name, 0.0), took)
        assert took < CALL_LIMIT, f"{name} took {took:.2f} s (limit {CALL_LIMIT} s)"


@pytest.fixture(scope="module", autouse=True)
def _report_slowest():
    yield
    if SLOWEST:
        print(f"\nfuzz: {EXAMPLES} examples per target; slowest call of each function:")
        for name, took in sorted(SLOWEST.items(), key=lambda kv: -kv[1]):
            print(f"  {took * 1000:8.1f} ms  {name}")


# --- strategies ------------------------------------------------------------------------------

HOSTILE = [
    "", " ", "-0", "−0", "-0.0", "0", "00", "+1", "NaN", "nan", "-NaN", "sNaN", "inf", "-inf",
    "Infinity", "1e400", "-1e400", "1e-400", "1e-999999999", "9e999999", "9e999999B", "1e15",
    "1e425000000", "1e425000001", "1e-849999999", "1e-850000000", "0e999999999",
    "2.5", "2048.0", "2048.5", "1,5", "1.000", "1.000,5", "1,000.5", "1 000", "1_000", "٫۵",
    "۴۰۹۶", "٤٠٩٦", "0x10", "1/2", "½", "①", "𝟗", "8B", "0.5B", "350M", "7b", "1T", "B", "e",
    "true", "false", "yes", "off", "None", "null", "undefined", "[]", "{}",
    "<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "javascript:alert(1)",
    "../../etc/passwd", "..\\..\\windows", "%00", "\x00", "\u202e4096", "\ufeff1", "😀",
    "👩‍👩‍👧", "9" * 64, "9" * 65, "9" * 5000, "a" * 5000, "custom", "llama-3.1-8b",
    "LLAMA-3.1-8B", "full", "lora", "qlora", "qv", "attention", "all-linear", "adamw",
    "adamw-8bit", "GiB", "GB", "MiB", "planning", "detailed", "bf16", "fp32", "a40", "h100-80",
    "__proto__", "constructor",
    # training stacks and their knobs (engine.md section 6)
    "hf", "HF", "torchtune", "litgpt", "unsloth", "qlora-paper", "qlora_paper", "deepspeed",
    "full", "chunked", "fused", "foreach", "in-backward", "in_backward", "adapted", "fp16",
]
number_like = st.from_regex(
    r"\A[ +\-−]?[0-9٠-٩۰-۹]{0,12}([.,٫][0-9۰-۹]{0,30})?([eE][+\-]?[0-9]{1,10})?[kmbgtKMBGT]?\s?\Z")
grouped = st.from_regex(r"\A[0-9]{1,3}([., \u00a0\u202f٬][0-9]{3}){1,4}([.,][0-9]{1,3})?\Z")
scalar = st.one_of(
    st.sampled_from(HOSTILE),
    number_like,
    grouped,
    st.text(st.characters(codec=None), max_size=80),
    st.text(max_size=6000).filter(lambda s: len(s) > 60),
    st.integers(min_value=-10**40, max_value=10**40),
    st.integers(min_value=-10**40, max_value=10**40).map(str),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.decimals(allow_nan=True, allow_infinity=True).map(str),
    st.booleans(),
    st.none(),
)
#: A URL key may repeat: the value is then a list (the last one wins).
value = st.one_of(scalar, st.lists(scalar, max_size=4))

WIDGET_KEYS = ("n", "bpp", "bpp_custom", "act", "hours", "price", "gpu", "d_in", "d_out",
               "dtype")
keys = st.one_of(st.sampled_from(FIELDS + WIDGET_KEYS), st.text(max_size=12))
queries = st.dictionaries(keys, value, max_size=10)
#: Valid and invalid values of the stack fields, mixed with the main choices they depend on.
STACK_VALUES = {
    "framework": ["hf", "torchtune", "litgpt", "unsloth", "qlora-paper", "TorchTune", "megatron", ""],
    "adapter_dtype": ["fp32", "bf16", "BF16", "fp16", "int8"],
    "loss": ["full", "chunked", "fused", "FULL", "sparse"],
    "opt_step": ["fused", "foreach", "in-backward", "in_backward", "lazy"],
    "act_offload": ["true", "false", "yes", "0", "maybe", True, False],
    "quantized": ["all-linear", "adapted", "none"],
    "kbit_upcast": ["true", "false", "on", "2", False],
    "compile": ["true", "false", "off", "maybe", True, False],
    "grad_accum": ["1", "8", "0", "-1", "1.5", "1e9", "۴", "x", 4],
    "method": ["full", "lora", "qlora"],
    "ckpt": ["true", "false"],
    "mode": ["detailed", "planning"],
    "optimizer": ["adamw", "adamw-bf16", "adamw-8bit", "sgd", "lion"],
    "targets": ["qv", "attention", "all-linear"],
    "model": ["llama-3.1-8b", "llama-3.2-1b", "qwen2.5-0.5b", "llama-65b"],
    "seq": ["128", "4096", "131072"],
    "batch": ["1", "8"],
}
stack_queries = st.fixed_dictionaries({}, optional={k: st.one_of(st.sampled_from(v), scalar)
                                                    for k, v in STACK_VALUES.items()})
locales = st.one_of(st.sampled_from(LOCALES), st.text(max_size=8))
#: The mixture-of-experts and latent-attention fields (engine.md section 7) and lora_experts,
#: valid and invalid values, over MoE presets, dense presets and a custom model.
MOE_VALUES = {
    "model": ["mixtral-8x7b", "qwen3-30b-a3b", "gpt-oss-20b", "deepseek-v2-lite", "llama-4-scout",
              "llama-3.1-8b", "custom"],
    "experts": ["0", "1", "2", "8", "16", "128", "4096", "-1", "1e9"],
    "experts_active": ["0", "1", "2", "8", "9", "129", "-3"],
    "expert_ffn": ["0", "768", "14336", "10000000"],
    "shared_experts": ["0", "1", "2", "64"],
    "dense_layers": ["0", "1", "3", "32", "48", "1000"],
    "moe_every": ["0", "1", "2", "49"],
    "q_lora_rank": ["0", "1536", "-1"],
    "kv_lora_rank": ["0", "512", "99999999"],
    "qk_rope_head_dim": ["0", "64"],
    "qk_nope_head_dim": ["0", "128"],
    "v_head_dim": ["0", "128"],
    "lora_experts": ["true", "false", "yes", "1", "maybe"],
    "method": ["full", "lora", "qlora"],
    "targets": ["qv", "attention", "all-linear"],
    "layers": ["1", "32", "61"], "hidden": ["2048", "7168"], "ffn": ["8192"], "heads": ["16", "32"],
    "vocab": ["32000"],
}
moe_queries = st.fixed_dictionaries({}, optional={k: st.one_of(st.sampled_from(v), scalar)
                                                  for k, v in MOE_VALUES.items()})

json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                        st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20))
json_any = st.recursive(json_scalar,
                        lambda kids: st.one_of(st.lists(kids, max_size=4),
                                               st.dictionaries(st.text(max_size=10), kids,
                                                               max_size=4)),
                        max_leaves=20)
config_keys = st.sampled_from(sorted({k for names in ALIASES.values() for k in names}
                                     | {"model_type", "tie_word_embeddings", "text_config",
                                        "num_local_experts", "num_experts", "attention_bias",
                                        "architectures", "torch_dtype",
                                        # mixture-of-experts and latent-attention keys
                                        "n_routed_experts", "num_experts_per_tok",
                                        "experts_per_token", "moe_intermediate_size",
                                        "n_shared_experts", "first_k_dense_replace",
                                        "moe_layer_freq", "decoder_sparse_step",
                                        "mlp_only_layers", "interleave_moe_layer_step",
                                        "moe_layers", "intermediate_size_mlp", "q_lora_rank",
                                        "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
                                        "v_head_dim", "quantization_config", "vision_config"}))
config_value = st.one_of(json_scalar, st.integers(0, 10**8), st.integers(-5, 5),
                         st.sampled_from(["llama", "qwen2", "gemma2", "mixtral", "qwen3_moe",
                                          "olmoe", "deepseek_v2", "deepseek_v3", "gpt_oss",
                                          "llama4", "llama4_text", "gemma3", "gemma3_text",
                                          "phi3", "olmo2"]),
                         st.lists(st.integers(-2, 64), max_size=6), json_any)
config_doc = st.one_of(
    json_any,
    st.dictionaries(config_keys, config_value, max_size=12),
    st.builds(lambda base, extra: {**base, **extra},
              st.just({"num_hidden_layers": 16, "hidden_size": 2048, "intermediate_size": 8192,
                       "num_attention_heads": 32, "num_key_value_heads": 8,
                       "vocab_size": 128256}),
              st.dictionaries(config_keys, config_value, max_size=4)),
    st.builds(lambda inner: {"text_config": inner},
              st.dictionaries(config_keys, config_value, max_size=10)),
)
config_text = st.one_of(
    config_doc.map(json.dumps),  # NaN and Infinity become JSON's non-standard literals
    st.text(max_size=200),
    st.sampled_from(["[" * 5000, '{"a":' * 3000, "{" + "\"k\": 1," * 20000 + "}", "\x00",
                     '{"hidden_size": 1e400}', '{"hidden_size": -0}', "  ", "null"]),
)


# --- what every output must be ---------------------------------------------------------------


def check_error(err: CalcError, locale: str) -> None:
    assert err.problems, "a CalcError without a problem"
    for p in err.problems:
        assert isinstance(p.field, str) and isinstance(p.code, str) and p.code
        assert p.field or p.code == "unknown_field"  # strict mode names any key, even ""
        for loc in LOCALES:
            text = error_message(p, loc)
            assert isinstance(text, str) and text.strip()
            if not any("{" in v for _, v in p.params) and "{" not in p.field:
                assert not re.search(r"\{[a-z_]+\}", text), (p, loc, text)  # slots filled
    assert err.messages(locale)


def check_number(x, name: str = "") -> None:
    assert not isinstance(x, bool), name
    if isinstance(x, int):
        assert x >= 0, (name, x)
    elif isinstance(x, Decimal):
        assert x.is_finite() and not x.is_signed(), (name, x)
    else:
        assert math.isfinite(x) and x >= 0, (name, x)


def check_estimate(est) -> None:
    for name, v in est.components:
        assert isinstance(v, int), name
        check_number(v, name)
    check_number(est.total, "total")
    check_number(est.cpu_bytes, "cpu_bytes")
    check_number(est.trainable_params, "trainable_params")
    for fit in timed(gpu_fit, est):
        assert fit.cards is None or 1 <= fit.cards <= engine.MAX_CARDS
        assert fit.usable > 0


def check_arch(arch: Architecture) -> None:
    for name in ("params", "layers", "hidden", "ffn", "heads", "kv_heads", "head_dim", "vocab"):
        v = getattr(arch, name)
        assert isinstance(v, int) and not isinstance(v, bool) and v > 0, (name, v)
    assert isinstance(arch.tied, bool)
    assert arch.heads % arch.kv_heads == 0


#: Markup calc.render may emit: a value from a query never adds an element or attribute.
TAGS = frozenset({"p", "span", "strong", "div", "section", "table", "caption", "thead",
                  "tbody", "tfoot", "tr", "th", "td", "ul", "li", "bdi", "svg", "g", "rect",
                  "text", "title", "desc", "line", "path", "circle", "form", "fieldset",
                  "legend", "label", "input", "select", "option", "textarea", "datalist",
                  "details", "summary", "button", "noscript", "tspan",
                  # the calculator's sections, picker groups and training-config export
                  "h3", "optgroup", "pre", "code"})
ATTR = re.compile(r"^(?:data-[a-z-]+|aria-[a-z]+|id|class|role|tabindex|name|type|value|dir|"
                  r"lang|for|form|hidden|checked|selected|rows|placeholder|list|inputmode|"
                  r"autocomplete|spellcheck|novalidate|open|scope|viewbox|xmlns|width|height|"
                  r"x|y|x1|x2|y1|y2|rx|fill|stroke|stroke-width|stroke-dasharray|d|r|cx|cy|"
                  r"text-anchor|dominant-baseline|focusable|preserveaspectratio|"
                  r"font-size|transform|opacity|readonly|colspan|label)$")
FIGURE_VALUE = re.compile(r"^(?:none|true|false|[a-z0-9][a-z0-9.\-]*|\d+(?:\.\d+)?(?:E[+-]?\d+)?)$")


class _Markup(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.figures: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag not in TAGS:
            self.problems.append(f"tag <{tag}>")
        for name, val in attrs:
            if not ATTR.match(name):
                self.problems.append(f"attribute {name}= on <{tag}>")
        a = dict(attrs)
        for kind in ("data-bytes", "data-value"):
            if kind in a and "data-calc" in a:
                self.figures.append((a["data-calc"], kind, a[kind] or ""))


def check_html(html: str, words: bool = True) -> None:
    assert isinstance(html, str)
    parser = _Markup()
    parser.feed(html)
    parser.close()
    assert parser.problems == [], parser.problems[:5]
    for name, kind, raw in parser.figures:
        assert FIGURE_VALUE.match(raw), (name, kind, raw)
        if kind == "data-bytes":
            assert raw.isdigit(), (name, raw)  # integer bytes, never negative
        elif raw[:1].isdigit():
            number = Decimal(raw)
            assert number.is_finite() and number >= 0, (name, raw)
    for bad in ("NaN", "Infinity", "undefined", "Traceback") if words else ():
        assert bad not in html, bad


def check_result(res: dict, name: str) -> None:
    assert set(res) >= {"ok", "html", "errors", "query", "form", "placeholders", "status"}
    assert isinstance(res["ok"], bool)
    check_html(res["html"])
    assert all(isinstance(k, str) and isinstance(v, str) and v for k, v in res["errors"].items())
    assert res["ok"] == (not res["errors"])
    assert isinstance(res["status"], str) and res["status"]
    if res["ok"]:
        assert all(isinstance(v, str) for v in res["query"].values())
        assert all(isinstance(v, str) for v in res["form"].values())
        # the canonical query reads back to the same result (a link reproduces it)
        again = timed(results, name, res["query"], "en")
        assert again["ok"], (res["query"], again["errors"])


def _dumps(query) -> str:
    return json.dumps(query, default=str)


# --- the targets -----------------------------------------------------------------------------


@FUZZ
@given(queries, locales, st.booleans())
def test_parse_estimate_gpu_fit(query, locale, strict):
    try:
        inputs = timed(parse, query, locale, strict=strict)
    except CalcError as err:
        check_error(err, locale)
        return
    check_estimate(timed(estimate, inputs))
    if inputs.mode is not Mode.DETAILED:
        from dataclasses import replace

        check_estimate(timed(estimate, replace(inputs, mode=Mode.DETAILED)))


@FUZZ
@given(stack_queries, locales, st.booleans())
def test_stack_fields(query, locale, strict):
    """The training stack and its knobs: only the typed error escapes; a valid query estimates
    in both models, its JSON is whole, and its canonical query reads back to the same inputs."""
    try:
        inputs = timed(parse, query, locale, strict=strict)
    except CalcError as err:
        check_error(err, locale)
        return
    est = timed(estimate, inputs)
    check_estimate(est)
    out = timed(est.to_json)
    json.dumps(out)
    for key in ("total_bytes", "realistic_total_bytes", "textbook_total_bytes", "cpu_bytes"):
        check_number(out[key], key)
    assert out["framework"] == inputs.framework.value
    assert timed(parse, to_query(inputs)) == inputs


@FUZZ
@given(moe_queries, locales, st.booleans())
def test_moe_fields(query, locale, strict):
    """The expert and latent-attention fields and lora_experts: only the typed error escapes
    (naming a field), a valid query estimates in both models with active <= stored parameters,
    and its canonical query reads back to the same inputs."""
    try:
        inputs = timed(parse, query, locale, strict=strict)
    except CalcError as err:
        check_error(err, locale)
        return
    from calc import arch as arch_mod

    assert 0 < arch_mod.active_params(inputs.arch) <= inputs.arch.params
    est = timed(estimate, inputs)
    check_estimate(est)
    json.dumps(timed(est.to_json))
    assert timed(parse, to_query(inputs)) == inputs


@FUZZ
@given(queries, locales)
def test_widget_readers(query, locale):
    try:
        d_in, d_out, rank, dtype = timed(parse_adapter, query, locale)
    except CalcError as err:
        check_error(err, locale)
    else:
        check_number(timed(engine.lora_layer_params, d_in, d_out, rank))
        check_number(timed(engine.adapter_bytes, d_in, d_out, rank, dtype))
    try:
        n, bpp, act = timed(parse_quick, query, locale)
    except CalcError as err:
        check_error(err, locale)
    else:
        for x in (n, bpp, act):
            check_number(x)
        check_number(timed(engine.quick_full, n, bpp, act))
    try:
        hours, price, gpu_id = timed(parse_cost, query, locale)
    except CalcError as err:
        check_error(err, locale)
    else:
        check_number(hours)
        check_number(price)
        assert gpu_id is None or catalog.gpu(gpu_id)
        check_number(timed(engine.cost, hours, price))


@FUZZ
@given(config_text)
def test_config_documents(text):
    try:
        arch = timed(parse_config, text)
    except CalcError as err:
        check_error(err, "en")
        assert {p.field for p in err.problems} == {"config"}
        return
    check_arch(arch)
    # and through the interface, as a pasted config.json
    try:
        inputs = timed(parse, {"config": text, "method": "qlora"})
    except CalcError as err:
        check_error(err, "en")
        return
    check_estimate(timed(estimate, inputs))


@FUZZ
@given(st.sampled_from(WIDGETS), queries, locales)
def test_render_results(name, query, locale):
    res = timed(results, name, query, locale)
    check_result(res, name)


@FUZZ
@given(st.sampled_from(WIDGETS), st.one_of(queries.map(_dumps), st.text(max_size=100),
                                           json_any.map(json.dumps)), locales)
def test_results_json(name, text, locale):
    """The worker's entry point: whatever JSON (or not) the page sends."""
    out = timed(results_json, name, text, locale)
    check_result(json.loads(out), name)


@FUZZ
@given(st.sampled_from(WIDGETS), queries, locales)
def test_widget_markup(name, query, locale):
    """The whole widget as the build renders it for a query: a link's values end up in form
    values, escaped, never as markup (the form shows what was given, even "NaN")."""
    check_html(timed(widget, name, locale, query), words=False)
