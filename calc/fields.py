"""The interface: one set of field names for the URL query, the CLI flags and JSON.

`parse` turns a mapping of raw values (strings from a URL or a form, or typed values) into
`Inputs`, collecting a `Problem` for every invalid field so that a form can mark each one.
Nothing but `CalcError` leaves this module.

`parse` and `to_query` are the detailed calculator's; the small widgets' parsers live in their
own modules (`calc.widgets.adapter`, `quick`, `cost`) and use the readers and the `Collector`
here, so that every widget reads numbers, yes/no and choices the same way.
"""

from __future__ import annotations

import re
from dataclasses import fields as dc_fields, replace
from decimal import Context, Decimal, InvalidOperation
from typing import Callable, Iterable, Mapping, Sequence, TypeVar, Union

from . import arch as arch_mod
from .engine import DEFAULT_GRAD_ACCUM, Inputs, max_rank
from .errors import CalcError, Problem
from .fmt import group_symbol
from .types import (AdapterDtype, Architecture, Framework, Loss, Method, Mode, OptStep, Optimizer,
                    Quantized, Targets, Unit)

Raw = Union[str, int, float, bool, Decimal, None]
Query = Mapping[str, Union[Raw, Sequence[Raw]]]
E = TypeVar("E")

DEFAULT_MODEL = "llama-3.1-8b"
CUSTOM = "custom"
#: Longest value accepted for one scalar field, and for a pasted config.json.
MAX_LEN = 64
MAX_CONFIG_LEN = 100_000

#: Architecture fields: (lower bound, upper bound). Upper bounds reject absurd sizes.
ARCH_LIMITS: dict[str, tuple[int, int]] = {
    "params": (1, 10**14),
    "layers": (1, 2_000),
    "hidden": (1, 1_048_576),
    "ffn": (1, 4_194_304),
    "heads": (1, 4_096),
    "kv_heads": (1, 4_096),
    "head_dim": (1, 16_384),
    "vocab": (1, 16_777_216),
}
INT_LIMITS: dict[str, tuple[int, int]] = {
    **ARCH_LIMITS,
    **arch_mod.FIELD_LIMITS,  # mixture-of-experts and latent attention (0: dense / standard)
    "rank": (1, 65_536),
    "seq": (1, 16_777_216),
    "batch": (1, 65_536),
    "grad_accum": (1, 65_536),
    "d_in": (1, 1_048_576),
    "d_out": (1, 1_048_576),
}
#: Interface fields of the architecture. The yes/no facts about a checkpoint's modeling code
#: (experts_fused, router_linear, fused_qkv: calc.arch.BOOL_FIELDS) come with a preset or a
#: config.json, not from the form; a custom model takes their defaults.
ARCH_FIELDS = tuple(f.name for f in dc_fields(Architecture) if f.name not in arch_mod.BOOL_FIELDS)
#: The training stack and its knobs (engine.md section 6); a knob left out takes the stack's value.
STACK_FIELDS = ("framework", "adapter_dtype", "loss", "opt_step", "act_offload", "quantized",
                "kbit_upcast", "compile")
FIELDS = ("model", "config", *ARCH_FIELDS, "method", "rank", "targets", "seq", "batch",
          "grad_accum", "ckpt", "optimizer", "unit", "mode", "flash", "dquant", "lora_experts",
          *STACK_FIELDS)
#: The knobs that take one of an enumeration's values (the others are true/false).
KNOB_CHOICES: dict[str, type] = {"adapter_dtype": AdapterDtype, "loss": Loss, "opt_step": OptStep,
                                 "quantized": Quantized}

#: Digits after the decimal point beyond which a value is rounded (no figure shows them).
MAX_FRACTION_DIGITS = 24
_QUANTUM = Decimal(1).scaleb(-MAX_FRACTION_DIGITS)
_WIDE = Context(prec=200)
#: The exponents libmpdec accepts on 32-bit platforms (Pyodide, where the calculators run):
#: beyond them Decimal() refuses the text there, so it is refused here too, and a link gives
#: the same answer at build time and in the browser ("1e-999999999": not a number, in both).
_MAX_ADJUSTED, _MIN_EXPONENT = 425_000_000, -849_999_999
#: What a yes/no field accepts (lower case); a form sends "true" or "false".
TRUE_WORDS = ("true", "1", "yes", "on")
FALSE_WORDS = ("false", "0", "no", "off")
_SUFFIX = {"k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}
_FA_DIGITS = str.maketrans("۰۱۲۳۴۵۶۷۸۹٠١٢٣٤٥٦٧٨٩", "01234567890123456789")
_GROUP_DOT = re.compile(r"^[+-]?\d{1,3}(\.\d{3})+$")
_GROUP_COMMA = re.compile(r"^[+-]?\d{1,3}(,\d{3})+$")


class _Bad(Exception):
    def __init__(self, code: str, **params: object):
        self.code, self.params = code, params


def first(value: Raw | Sequence[Raw]) -> Raw:
    """A repeated URL key: the last value wins (as when a link is edited by appending)."""
    if isinstance(value, (list, tuple)):
        return value[-1] if value else None
    return value  # type: ignore[return-value]


def read_text(value: Raw, max_len: int = MAX_LEN) -> str:
    """A value as stripped text, neither empty nor longer than `max_len`."""
    if value is None:
        raise _Bad("required")
    s = str(value).strip()
    if not s:
        raise _Bad("required")
    if len(s) > max_len:
        raise _Bad("too_long", max=max_len)
    return s


def read_decimal(value: Raw, locale: str = "en") -> Decimal:
    """A finite number from what a person types: Persian/Arabic digits, a decimal comma
    (tr, pt, ru, fa), group separators, spaces. Raises _Bad."""
    if isinstance(value, bool):
        raise _Bad("not_a_number", value=value)
    if isinstance(value, (int, Decimal)):
        d = Decimal(value)
    elif isinstance(value, float):
        d = Decimal(repr(value)) if value == value and abs(value) != float("inf") else Decimal("NaN")
    else:
        s = read_text(value).translate(_FA_DIGITS)
        s = s.replace("٫", ".").replace("٬", "").replace("\u00a0", "").replace("\u202f", "")
        s = s.replace(" ", "").replace("_", "").replace("−", "-")
        if "," in s and "." in s:  # the last separator is the decimal one
            dec = "," if s.rfind(",") > s.rfind(".") else "."
            s = s.replace("." if dec == "," else ",", "").replace(",", ".")
        elif "," in s:
            grouped = group_symbol(locale) == "," and _GROUP_COMMA.match(s)
            s = s.replace(",", "") if grouped or s.count(",") > 1 else s.replace(",", ".")
        elif group_symbol(locale) == "." and _GROUP_DOT.match(s):
            s = s.replace(".", "")
        try:
            d = Decimal(s)
        except InvalidOperation:
            raise _Bad("not_a_number", value=str(value).strip()[:MAX_LEN]) from None
    if not d.is_finite():
        raise _Bad("not_finite")
    exponent = d.as_tuple().exponent
    if d.adjusted() > _MAX_ADJUSTED or exponent < _MIN_EXPONENT:  # type: ignore[operator]
        raise _Bad("not_a_number", value=str(value).strip()[:MAX_LEN])
    if d < 0:
        raise _Bad("negative")
    if exponent < -MAX_FRACTION_DIGITS:  # type: ignore[operator]
        # "1e-999999999" is 12 characters but an exact fraction with a billion-digit
        # denominator: round what no figure can show, so that every call stays fast.
        try:
            d = d.quantize(_QUANTUM, context=_WIDE)
        except InvalidOperation:
            raise _Bad("not_a_number", value=str(value).strip()[:MAX_LEN]) from None
    if d.is_zero():
        d = d.copy_abs()  # "-0" is zero, never a negative zero
    return d


def read_int(value: Raw, name: str, locale: str = "en") -> int:
    lo, hi = INT_LIMITS[name]
    if name == "params" and isinstance(value, str):
        d = read_count(value, locale)
    elif name == "seq" and isinstance(value, str) and read_text(value).strip()[-1:] in ("k", "K"):
        # context lengths are written "4k", "32K", "128k": thousands of 1,024 tokens
        d = read_decimal(read_text(value).strip()[:-1], locale) * 1024
        if d != d.to_integral_value():
            raise _Bad("not_integer")
    else:
        d = read_decimal(value, locale)
        if d != d.to_integral_value():
            raise _Bad("not_integer")
    if d == 0 and lo > 0:
        raise _Bad("zero")
    if d > hi:
        raise _Bad("too_large", max=hi)
    if d < lo:
        raise _Bad("too_small", min=lo)
    return int(d)


def read_cards(value: Raw, locale: str = "en") -> int:
    """A number of GPUs: a whole number from 1 to the engine's MAX_CARDS (the `gpus` field of
    calc.scale and calc.plan)."""
    from .engine import MAX_CARDS

    d = read_decimal(value, locale)
    if d != d.to_integral_value():
        raise _Bad("not_integer")
    if d == 0:
        raise _Bad("zero")
    if d > MAX_CARDS:
        raise _Bad("too_large", max=MAX_CARDS)
    return int(d)


def read_count(value: str, locale: str = "en") -> Decimal:
    """A parameter count: `8e9`, `8B`, `0.5B`, `350M`, `8030261248`."""
    s = read_text(value)
    mult = _SUFFIX.get(s[-1].lower()) if s[-1].isalpha() and s.lower() not in ("nan", "inf") else None
    d = read_decimal(s[:-1] if mult else s, locale)
    if d > 10**15:  # before multiplying: "9e999999B" would overflow the decimal context
        raise _Bad("too_large", max=ARCH_LIMITS["params"][1])
    d *= mult or 1
    if d > 10**15:
        raise _Bad("too_large", max=ARCH_LIMITS["params"][1])
    if d != d.to_integral_value():
        raise _Bad("not_integer")
    return d


def read_bool(value: Raw) -> bool:
    if isinstance(value, bool):
        return value
    s = read_text(value).lower()
    if s in TRUE_WORDS:
        return True
    if s in FALSE_WORDS:
        return False
    raise _Bad("bad_bool", value=s)


def read_choice(value: Raw, enum: type[E]) -> E:
    s = read_text(value).lower() if not isinstance(value, enum) else value
    if isinstance(s, enum):
        return s
    for member in enum:  # type: ignore[attr-defined]
        if member.value.lower() == s:
            return member
    raise _Bad("unknown_choice", value=s)


def read_knob(value: Raw, enum: type[E], code: str) -> E:
    """One of a stack setting's values; `code` names the error (its message lists the values)."""
    try:
        return read_choice(value, enum)
    except _Bad as bad:
        if bad.code != "unknown_choice":
            raise
        raise _Bad(code, value=bad.params["value"],
                   choices=", ".join(m.value for m in enum)) from None  # type: ignore[attr-defined]


def read_positive_decimal(value: Raw, locale: str = "en", hi: int = 10**9) -> Decimal:
    d = read_decimal(value, locale)
    if d == 0:
        raise _Bad("zero")
    if d > hi:
        raise _Bad("too_large", max=hi)
    return d


class Collector:
    """Runs readers field by field and keeps every problem (the widgets' parsers use it too)."""

    def __init__(self, query: Query):
        self.query = query
        self.problems: list[Problem] = []

    def has(self, name: str) -> bool:
        v = first(self.query.get(name))
        return v is not None and str(v).strip() != ""

    def read(self, name: str, reader: Callable[[Raw], E], default: E | None = None) -> E | None:
        if not self.has(name):
            return default
        try:
            return reader(first(self.query[name]))
        except _Bad as bad:
            self.problems.append(Problem.of(name, bad.code, **bad.params))
        except CalcError as err:  # a catalog or config.json reader: re-address to this field
            self.problems.extend(replace(p, field=name) for p in err.problems)
        return None

    def add(self, name: str, code: str, **params: object) -> None:
        self.problems.append(Problem.of(name, code, **params))

    def done(self) -> None:
        if self.problems:
            raise CalcError(self.problems)


def _read_model(value: Raw) -> str:
    """A preset by its id, display name or Hugging Face id (`catalog.resolve_model`), or
    `custom`; anything else is kept as typed, for the catalog's unknown-model message."""
    from . import catalog

    text = read_text(value).strip()
    if text.lower() == CUSTOM:
        return CUSTOM
    return catalog.resolve_model(text) or text.lower()


def _arch(c: Collector, locale: str) -> tuple[str, Architecture | None]:
    from . import catalog

    model = c.read("model", _read_model, DEFAULT_MODEL) or DEFAULT_MODEL
    base: Architecture | None = None
    given = {n: c.read(n, lambda v, n=n: read_bool(v) if n == "tied" else read_int(v, n, locale))
             for n in ARCH_FIELDS if c.has(n)}
    if c.has("config"):
        from .hfconfig import parse_config

        cfg = c.read("config", lambda v: parse_config(read_text(v, MAX_CONFIG_LEN)))
        if cfg is None:
            return CUSTOM, None
        base, model = cfg, CUSTOM
    elif model == CUSTOM:
        missing = [n for n in ("layers", "hidden", "ffn", "heads", "vocab") if n not in given]
        for n in missing:
            c.add(n, "required")
        if missing or None in given.values():
            return model, None
        heads = given["heads"]
        hidden = given["hidden"]
        head_dim = given.get("head_dim") or max(1, hidden // heads)
        kv = given.get("kv_heads") or heads
        tied = bool(given.get("tied", False))
        params = given.get("params")
        extra = {n: given[n] for n in arch_mod.FIELD_LIMITS if n in given}
        base = Architecture(params or 0, given["layers"], hidden, given["ffn"], heads, kv,
                            head_dim, given["vocab"], tied, **extra)
        if params is None and not arch_mod.problems(base):
            base = replace(base, params=arch_mod.params(base))
        given = {}
    else:
        try:
            base = catalog.model(model).arch
        except CalcError as err:
            c.problems.extend(err.problems)
            return model, None
    if None in given.values():
        return model, None
    arch = replace(base, **given) if given else base
    if arch.heads % arch.kv_heads:
        c.add("kv_heads", "heads_mismatch")
        return model, None
    found = arch_mod.problems(arch)  # experts_active > experts, expert fields on a dense model
    if found:
        c.problems.extend(found)
        return model, None
    return model, arch


def parse(query: Query, locale: str = "en", *, strict: bool = False) -> Inputs:
    """Raw fields -> Inputs. Unknown keys are ignored (a URL may carry tracking keys) unless
    `strict`. Raises CalcError listing every invalid field.

    The realistic model (`mode=detailed`) is the default. `framework` names a training stack
    (default `hf`); each knob given overrides the stack's value. An unknown stack or knob value
    is an error naming the field. A valid knob that does not apply to the configuration
    (`quantized` or `kbit_upcast` without QLoRA, `adapter_dtype` with full fine-tuning,
    `act_offload` without gradient checkpointing) is ignored, not an error: a link keeps working
    when the method or checkpointing changes, and the estimate's JSON shows the knob as null."""
    c = Collector(query)
    if strict:
        for key in query:
            if key not in FIELDS:
                c.add(key, "unknown_field")
    model, arch = _arch(c, locale)
    for name in ("seq", "batch"):  # a length or micro-batch the reader emptied is not a default
        if name in query and not c.has(name):
            c.add(name, "required")
    kw = dict(
        method=c.read("method", lambda v: read_choice(v, Method), Method.LORA),
        rank=c.read("rank", lambda v: read_int(v, "rank", locale), 16),
        targets=c.read("targets", lambda v: read_choice(v, Targets), Targets.ALL_LINEAR),
        seq=c.read("seq", lambda v: read_int(v, "seq", locale), 2048),
        batch=c.read("batch", lambda v: read_int(v, "batch", locale), 1),
        grad_accum=c.read("grad_accum", lambda v: read_int(v, "grad_accum", locale),
                          DEFAULT_GRAD_ACCUM),
        ckpt=c.read("ckpt", read_bool, True),
        optimizer=c.read("optimizer", lambda v: read_choice(v, Optimizer), Optimizer.ADAMW),
        unit=c.read("unit", lambda v: read_choice(v, Unit), Unit.GIB),
        mode=c.read("mode", lambda v: read_choice(v, Mode), Mode.DETAILED),
        flash=c.read("flash", read_bool, True),
        dquant=c.read("dquant", read_bool, True),
        lora_experts=c.read("lora_experts", read_bool, False),
        framework=c.read("framework", lambda v: read_knob(v, Framework, "unknown_framework"),
                         Framework.HF),
        act_offload=c.read("act_offload", read_bool),
        kbit_upcast=c.read("kbit_upcast", read_bool),
        compile=c.read("compile", read_bool),
        **{name: c.read(name, lambda v, e=enum: read_knob(v, e, "unknown_knob_value"))
           for name, enum in KNOB_CHOICES.items()},
    )
    if kw["unit"] is Unit.MIB:
        c.add("unit", "unknown_choice", value="MiB")
    if arch is not None and kw["targets"] and kw["rank"] and kw["method"] is not Method.FULL:
        top = max_rank(arch, kw["targets"], True if kw["lora_experts"] else None)
        if kw["rank"] > top:
            c.add("rank", "rank_too_large", max=top)
    c.done()
    return Inputs(arch=arch, model=model, **kw)  # type: ignore[arg-type]


def to_query(inputs: Inputs) -> dict[str, str]:
    """Inputs -> the canonical query (every interface field; architecture only when it is not
    the preset's own)."""
    from . import catalog

    q = {"model": inputs.model}
    preset = None
    if inputs.model != CUSTOM:
        try:
            preset = catalog.model(inputs.model).arch
        except CalcError:
            preset = None
    for name in ARCH_FIELDS:
        value = getattr(inputs.arch, name)
        if preset is None or getattr(preset, name) != value:
            q[name] = str(value).lower() if isinstance(value, bool) else str(value)
    q.update(
        method=inputs.method.value, rank=str(inputs.rank), targets=inputs.targets.value,
        seq=str(inputs.seq), batch=str(inputs.batch), ckpt=str(inputs.ckpt).lower(),
        optimizer=inputs.optimizer.value, unit=inputs.unit.value, mode=inputs.mode.value,
    )
    if inputs.mode.value == "detailed":  # the realistic model's options only matter there
        q.update(flash=str(inputs.flash).lower(), dquant=str(inputs.dquant).lower())
    if inputs.grad_accum != DEFAULT_GRAD_ACCUM:  # links made before the field stay canonical
        q["grad_accum"] = str(inputs.grad_accum)
    if inputs.lora_experts:  # only where it changes the estimate (Inputs keeps it False elsewhere)
        q["lora_experts"] = "true"
    q["framework"] = inputs.framework.value
    for name, value in zip(STACK_FIELDS[1:], inputs.explicit_knobs):
        if value is not None:  # only the knobs that differ from the stack's (Inputs keeps no other)
            q[name] = str(value).lower() if isinstance(value, bool) else value.value
    return q


# --- readers the widgets share (calc.widgets.*) ------------------------------------------------


def read_decimal_max(value: Raw, locale: str, hi: int) -> Decimal:
    """A finite number from 0 to `hi`."""
    d = read_decimal(value, locale)
    if d > hi:
        raise _Bad("too_large", max=hi)
    return d


def read_one_of(value: Raw, choices: Iterable[str]) -> str:
    """One of `choices` (case-insensitive), as written there."""
    s = read_text(value).lower()
    if s not in choices:
        raise _Bad("unknown_choice", value=s)
    return s
