"""Message catalogs: completeness, placeholders, fallbacks, error messages, scripts."""

from __future__ import annotations

import json
import re
import string
from decimal import Decimal
from pathlib import Path

import pytest

from calc.errors import CalcError, Problem
from calc.fmt import LOCALES
from calc.i18n import (
    PLURAL_CATEGORIES, catalog, error_message, locale_dir, lookup, normalize_locale,
    plural_category, t,
)
from calc.types import (AdapterDtype, Framework, GpuKind, Loss, Method, Mode, OptStep, Optimizer,
                        Quantized, Targets)

LOCALE_DIR = Path(__file__).resolve().parents[2] / "calc" / "locales"
CATEGORIES = ("zero", "one", "two", "few", "many", "other")
FSI, PDI = "\u2068", "\u2069"


def raw(loc: str) -> dict[str, str]:
    return json.loads((LOCALE_DIR / f"{loc}.json").read_text(encoding="utf-8"))


EN = raw("en")


def split_variant(key: str) -> tuple[str, str | None]:
    """`unit.hours.few` -> (`unit.hours`, `few`) when `unit.hours` is an English key."""
    base, _, last = key.rpartition(".")
    if last in CATEGORIES and base in EN:
        return base, last
    return key, None


def base_keys(d: dict[str, str]) -> set[str]:
    return {k for k in d if split_variant(k)[1] is None}


def placeholders(text: str) -> set[str]:
    names = set()
    for _, name, spec, conv in string.Formatter().parse(text):
        if name is not None:
            assert name.isidentifier(), (text, name)
            assert not spec and not conv, text
            names.add(name)
    return names


FIELDS = [
    "model", "params", "layers", "hidden", "ffn", "heads", "kv_heads", "head_dim", "vocab", "tied",
    "method", "rank", "targets", "seq", "batch", "ckpt", "optimizer", "unit", "mode", "config", "gpu",
    "hours", "price", "n", "bpp", "act", "d_in", "d_out", "dtype",
]
ERRORS = {
    "required": {"field"},
    "not_a_number": {"field", "value"},
    "not_finite": {"field"},
    "not_integer": {"field"},
    "negative": {"field"},
    "zero": {"field"},
    "too_large": {"field", "max"},
    "too_small": {"field", "min"},
    "too_long": {"field", "max"},
    "unknown_choice": {"field", "value"},
    "unknown_model": {"field", "value"},
    "bad_bool": {"field", "value"},
    "rank_too_large": {"field", "max"},
    "heads_mismatch": {"field"},
    "json_syntax": {"field", "line", "column"},
    "json_not_object": {"field"},
    "json_missing": {"field", "key"},
    "json_bad_value": {"field", "key"},
    "unsupported_arch": {"field", "value"},
    "unknown_framework": {"field", "value", "choices"},
    "unknown_knob_value": {"field", "value", "choices"},
    "generic": {"field"},
}
UI = {
    "loading": set(), "ready": set(), "error_load": set(), "error_timeout": set(), "error_worker": set(),
    "copy_link": set(), "link_copied": set(), "fits": set(), "does_not_fit": set(), "cards_needed": {"n"},
    "unified_usable": set(), "cost": set(), "per_gpu": set(), "advanced": set(), "custom_model": set(),
    "paste_config": set(), "apply_config": set(), "results": set(), "breakdown": set(),
    "chart_alt": {"parts"}, "which_gpus": set(), "example_cost": set(), "hours_on": {"hours", "gpu"},
    "reset": set(), "search_models": set(), "none_fit": set(),
}
COMPONENTS = ["base_weights", "gradients", "optimizer", "activations", "overhead", "total", "logits",
              "fp32_copies", "trainable_params", "kbit_upcast", "adapter_weights", "step_temporaries",
              "checkpoints", "adapter_inputs"]
UNITS = ["GiB", "GB", "MiB", "params", "hours", "bpp", "billions", "x"]


# keys the site's build hook (build_tables.py) uses for its tables
TABLE_KEYS = {
    "table.model_size": set(), "table.preset": set(), "table.method": set(), "table.total": set(),
    "table.one_card": set(), "table.zero3": set(), "table.and_larger": {"cards"},
    "table.cards_of": {"n", "card"}, "table.gpu": set(), "table.memory": set(), "table.kind": set(),
    "table.price": set(), "table.use": set(),
    **{f"table.{kind}.{m}": set() for kind in ("rot", "engine") for m in ("lora", "qlora", "full")},
    **{f"choice.method.{m.value}": set() for m in Method},
    **{f"gpu.kind.{k.value}": set() for k in GpuKind},
    **{f"gpu.use.{u}": set() for u in ("consumer", "workstation", "inference", "datacenter",
                                       "datacenter-training", "laptop", "desktop")},
}


def required_keys() -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {}
    for f in FIELDS:
        keys[f"field.{f}"] = set()
        keys[f"help.{f}"] = set()
    for enum, prefix in ((Method, "method"), (Targets, "targets"), (Optimizer, "optimizer"), (Mode, "mode"),
                         (GpuKind, "gpu_kind"), (Framework, "framework"), (AdapterDtype, "adapter_dtype"),
                         (Loss, "loss"), (OptStep, "opt_step"), (Quantized, "quantized")):
        for member in enum:
            keys[f"{prefix}.{member.value}"] = set()
    keys["bool.true"] = keys["bool.false"] = set()
    for c in COMPONENTS:
        keys[f"component.{c}"] = set()
    for u in UNITS:
        keys[f"unit.{u}"] = {"n"} if u in ("bpp", "billions", "x") else set()
    for code, params in ERRORS.items():
        keys[f"error.{code}"] = params
    for k, params in UI.items():
        keys[f"ui.{k}"] = params
    keys.update(TABLE_KEYS)
    return keys


# --- files ----------------------------------------------------------------------------------


@pytest.mark.parametrize("loc", LOCALES)
def test_catalog_file_is_clean_utf8_json(loc):
    data = (LOCALE_DIR / f"{loc}.json").read_bytes()
    text = data.decode("utf-8")  # valid UTF-8
    assert not text.startswith("\ufeff")
    assert "\\u" not in text  # real characters, as json.dumps(ensure_ascii=False) writes them
    obj = json.loads(text, object_pairs_hook=lambda pairs: _no_duplicates(pairs))
    assert isinstance(obj, dict) and obj
    assert all(isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in obj.items())
    assert all(v == v.strip() for v in obj.values())


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), "duplicate keys"
    return dict(pairs)


def test_loaded_through_importlib_resources():
    for loc in LOCALES:
        assert catalog(loc) == raw(loc)


def test_english_has_every_required_key_with_its_placeholders():
    for key, params in required_keys().items():
        assert key in EN, key
        assert placeholders(EN[key]) == params, key


# --- completeness and placeholders -----------------------------------------------------------


@pytest.mark.parametrize("loc", LOCALES)
def test_same_keys_as_english(loc):
    d = raw(loc)
    assert base_keys(d) == base_keys(EN), (base_keys(EN) - base_keys(d), base_keys(d) - base_keys(EN))


@pytest.mark.parametrize("loc", LOCALES)
def test_plural_variants(loc):
    """Variants `<key>.<category>` use the locale's CLDR categories; a locale that inflects a
    key gives every category but `other` (which may be the bare key)."""
    d = raw(loc)
    variants: dict[str, set[str]] = {}
    for k in d:
        base, cat = split_variant(k)
        if cat is not None:
            assert cat in PLURAL_CATEGORIES[loc], k
            variants.setdefault(base, set()).add(cat)
    needed = set(PLURAL_CATEGORIES[loc]) - {"other"}
    for base, cats in variants.items():
        assert needed <= cats, (base, needed - cats)
    if loc == "ru":
        for base in ("unit.params", "unit.hours", "unit.bpp"):
            assert {"one", "few", "many"} <= variants.get(base, set()), base


@pytest.mark.parametrize("loc", LOCALES)
def test_placeholders_match_english(loc):
    for key, text in raw(loc).items():
        base, _ = split_variant(key)
        assert placeholders(text) == placeholders(EN[base]), (loc, key, text)


@pytest.mark.parametrize("loc", [loc for loc in LOCALES if loc != "en"])
def test_nothing_left_untranslated(loc):
    same_as_english = {
        "tr": {"field.gpu", "field.model", "unit.GiB", "unit.GB", "unit.MiB", "unit.billions", "unit.x",
               "table.gpu", "table.cards_of", "list.separator"},
        "pt": {"field.gpu", "component.total", "unit.GiB", "unit.GB", "unit.MiB", "unit.billions", "unit.x",
               "unit.bytes",  # Portuguese writes "bytes" as English does
               "table.gpu", "table.cards_of", "list.separator"},
        "ru": {"field.gpu", "unit.billions", "unit.x", "table.gpu", "table.cards_of", "list.separator"},
        "fa": {"unit.GiB", "unit.GB", "unit.MiB",
               "ui.strategy_cards"},  # "ZeRO-2: ۴": Persian writes the colon as English does
    }[loc] | {"gpu.label.product-memory"} | (TEMPLATES if loc != "fa" else set())
    names = {"method.lora", "method.qlora", "choice.method.lora", "choice.method.qlora", "optimizer.sgd",
             "optimizer.adafactor", "optimizer.lion"} | STACK_NAMES
    if loc == "fa":
        names -= {"framework.hf"}  # "Transformers و PEFT"
    d = raw(loc)
    assert {k for k in base_keys(d) if d[k] == EN[k]} == same_as_english | names


# Messages that are only placeholders and signs ("{n} × {gpu}, {sharding}"): the same in every
# language but Persian, whose comma is its own.
TEMPLATES = {"accuracy.multi.config", "accuracy.throughput.config", "ui.strategy_cards"}

# Training stacks that are product names in every language (engine.md section 6).
STACK_NAMES = {"framework.hf", "framework.torchtune", "framework.litgpt", "framework.unsloth"}

# Keys whose Persian text is deliberately Latin: method and optimizer names, and the memory
# unit symbols, which stay GiB/GB/MiB (isolated by fmt) because "گیگابایت" would not say
# whether 2^30 or 10^9 bytes are meant; and a card's model name beside its memory size.
FA_LATIN = {"gpu.label.product-memory", "method.lora", "method.qlora", "choice.method.lora", "choice.method.qlora", "optimizer.sgd", "optimizer.adafactor", "optimizer.lion",
            "unit.GiB", "unit.GB", "unit.MiB", "list.separator",
            "framework.torchtune", "framework.litgpt", "framework.unsloth"} | TEMPLATES
PERSIAN_LETTER = re.compile(r"[\u0621-\u063a\u0641-\u064a\u067e\u0686\u0698\u06a9\u06af\u06cc]")


def test_fa_is_persian():
    fa = raw("fa")
    latin_only = {k for k, v in fa.items() if not PERSIAN_LETTER.search(v)}
    assert latin_only == FA_LATIN
    for key, text in fa.items():
        # Persian yeh and keheh, not the Arabic letters
        assert "\u064a" not in text and "\u0643" not in text, key
        # standalone numbers in Persian digits; ASCII digits only inside Latin tokens (BF16, 8B)
        for token in re.findall(r"[0-9A-Za-z_.\-]*[0-9][0-9A-Za-z_.\-]*", text):
            assert re.search(r"[A-Za-z]", token), (key, token)
        assert not re.search(r"[\u0660-\u0669]", text), key  # not Arabic-Indic digits
        # the verb prefix mi- is joined with a zero-width non-joiner, not a space
        assert not re.search(r"(^|\s)نمی? ", text) and not re.search(r"(^|\s)می ", text), key


def test_ru_is_cyrillic():
    ru = raw("ru")
    latin = {k for k, v in ru.items() if not re.search("[а-яё]", v, re.IGNORECASE)}
    assert latin == {"gpu.label.product-memory", "field.gpu", "table.gpu", "table.cards_of", "method.lora", "method.qlora",
                     "choice.method.lora", "choice.method.qlora", "optimizer.sgd", "optimizer.adafactor",
                     "optimizer.lion", "unit.billions", "unit.x", "list.separator"} | STACK_NAMES | TEMPLATES


@pytest.mark.parametrize("loc", LOCALES)
def test_numbers_in_text_use_locale_separators(loc):
    """Grouped numbers written into help texts follow the locale (1,073,741,824 in en)."""
    expected = {"en": "1,073,741,824", "tr": "1.073.741.824", "pt": "1.073.741.824",
                "ru": "1\u00a0073\u00a0741\u00a0824", "fa": "۱٬۰۷۳٬۷۴۱٬۸۲۴"}[loc]
    assert expected in raw(loc)["help.unit"]


# --- t ---------------------------------------------------------------------------------------


def test_t_formats_and_falls_back(monkeypatch):
    assert t("ui.reset", "en") == "Reset"
    assert t("ui.reset", "ru") == "Сбросить"
    assert t("ui.hours_on", "en", hours="20 hours", gpu="H100") == "20 hours on H100"
    assert t("ui.reset", "de") == "Reset"  # unknown locale: English
    assert t("ui.reset", "pt_BR") == t("ui.reset", "pt-BR") == t("ui.reset", "pt") == "Redefinir"
    assert t("no.such.key", "fa") == "no.such.key"
    monkeypatch.delitem(catalog("tr"), "ui.reset")
    assert t("ui.reset", "tr") == "Reset"  # missing in the locale: English
    assert lookup("ui.reset", "tr") == "Reset"


def test_t_formats_numbers_in_the_locale():
    assert t("error.too_large", "en", field="Rank", max=1024) == "Rank must be at most 1,024."
    assert "1\u00a0024" in t("error.too_large", "ru", field="Ранг", max=1024)
    assert "۱٬۰۲۴" in t("error.too_large", "fa", field="رتبه", max=1024)
    assert "2,5" in t("error.too_small", "tr", field="X", min=2.5)
    assert "0,5" in t("error.too_small", "pt", field="X", min=Decimal("0.5"))


def test_t_plurals_from_n():
    assert t("ui.cards_needed", "en", n=1) == "1 GPU with ZeRO-3/FSDP"
    assert t("ui.cards_needed", "en", n=4) == "4 GPUs with ZeRO-3/FSDP"
    assert t("ui.cards_needed", "pt", n=2) == "2 GPUs com ZeRO-3/FSDP"
    assert t("ui.cards_needed", "tr", n=2) == "ZeRO-3/FSDP ile 2 GPU"
    assert t("ui.cards_needed", "fa", n=2) == "۲ GPU با ZeRO-3/FSDP"
    assert t("ui.cards_needed", "en", n="3") == "3 GPUs with ZeRO-3/FSDP"  # text: no plural choice


def test_t_leaves_user_text_alone():
    # a value is inserted once, never parsed as a template
    msg = t("error.not_a_number", "en", field="Rank", value="{field} {0} <b>")
    assert msg == "Rank: “{field} {0} <b>” is not a number."
    # params may be called `key` or `locale` (key and locale are positional-only)
    msg = t("error.json_missing", "en", field="config.json", key="hidden_size")
    assert msg == "config.json: the key “hidden_size” is missing."
    assert t("ui.reset", "en", locale="fa") == "Reset"
    # a missing parameter stays visible instead of raising
    assert t("error.too_large", "en", field="Rank") == "Rank must be at most {max}."


def test_plural_category():
    ru = {"1": "one", "21": "one", "11": "many", "2": "few", "3": "few", "4": "few", "12": "many",
          "14": "many", "22": "few", "5": "many", "0": "many", "100": "many", "101": "one", "111": "many",
          "1.5": "other", "0.5": "other", "1,001": "one", "131,072": "few"}
    for n, cat in ru.items():
        assert plural_category(n, "ru") == cat, n
    assert plural_category("1", "en") == "one" and plural_category("1.0", "en") == "other"
    assert plural_category("0", "en") == "other" and plural_category("2", "en") == "other"
    assert plural_category("1", "pt") == "one" and plural_category("0", "pt") == "other"
    assert plural_category("1", "tr") == "one" and plural_category("5", "tr") == "other"
    for loc in LOCALES:
        for n in ("0", "1", "2", "5", "1.5", "1,000", "21"):
            assert plural_category(n, loc) in PLURAL_CATEGORIES[loc]


def test_locale_dir_and_normalize():
    assert locale_dir("fa") == "rtl"
    assert locale_dir("fa_IR") == "rtl"
    assert [locale_dir(loc) for loc in ("en", "tr", "pt", "ru", "xx")] == ["ltr"] * 5
    assert [loc for loc in LOCALES if locale_dir(loc) == "rtl"] == ["fa"]
    assert normalize_locale("RU") == "ru"
    assert normalize_locale("es") == "en"
    assert normalize_locale(None) == "en"


# --- error messages ------------------------------------------------------------------------

SAMPLE = {"value": "llama-9000b", "max": 1024, "min": 1, "line": 3, "column": 14, "key": "hidden_size",
          "choices": "hf, torchtune"}


@pytest.mark.parametrize("loc", LOCALES)
@pytest.mark.parametrize("code", sorted(ERRORS))
def test_every_error_renders(code, loc):
    params = {k: SAMPLE[k] for k in ERRORS[code] - {"field"}}
    for field in FIELDS:
        problem = Problem.of(field, code, **params)
        msg = error_message(problem, loc)
        assert msg and "{" not in msg and "}" not in msg, msg
        assert t(f"field.{field}", loc) in msg, (field, msg)
        if "value" in params:
            assert "llama-9000b" in msg
        if "key" in params:
            assert "hidden_size" in msg
        if "choices" in params:
            assert "hf, torchtune" in msg
        for name in ("max", "min", "line", "column"):
            if name in params:
                from calc.fmt import fmt

                assert fmt(params[name], "number", loc) in msg, (name, msg)


def test_error_message_details():
    p = Problem.of("rank", "too_large", max=1048576)
    assert error_message(p, "en") == "LoRA rank (r) must be at most 1,048,576."
    assert "1\u00a0048\u00a0576" in error_message(p, "ru")
    assert "۱٬۰۴۸٬۵۷۶" in error_message(p, "fa")
    assert "1.048.576" in error_message(p, "tr")
    # decimals keep their digits
    assert "0,516" in error_message(Problem.of("bpp", "too_small", min="0.516"), "pt")
    # an unknown code falls back to the generic message, an unknown field to its name
    assert error_message(Problem.of("seq", "no_such_code"), "en") == "Sequence length is not valid."
    assert error_message(Problem.of("frobnicate", "required"), "en") == "frobnicate is required."
    # what the reader typed is echoed verbatim (numbers too), isolated in right-to-left text
    typed = Problem.of("seq", "not_a_number", value="12,5x {max}")
    assert "“12,5x {max}”" in error_message(typed, "en")
    assert FSI + "12,5x {max}" + PDI in error_message(typed, "fa")
    assert FSI not in error_message(typed, "ru")
    # unknown locale: English
    assert error_message(typed, "xx") == error_message(typed, "en")


def test_calc_error_messages():
    err = CalcError([Problem.of("seq", "zero"), Problem.of("batch", "required"),
                     Problem.of("seq", "negative")])
    assert err.messages("ru") == {
        "seq": "Длина последовательности: значение должно быть больше нуля.",
        "batch": "Заполните поле «Размер микробатча».",
    }
    assert err.message("en").splitlines() == [
        "Sequence length must be greater than zero.",
        "Micro-batch size is required.",
    ]


def test_every_gpu_use_and_kind_has_a_text():
    from calc import catalog as gpu_catalog

    for g in gpu_catalog.gpus():
        assert f"gpu.use.{g.use}" in EN, g.use
        assert f"gpu.kind.{g.kind.value}" in EN and f"gpu_kind.{g.kind.value}" in EN
