"""Training stacks as data: `calc/data/stacks.json`, read with importlib.resources and checked
on load (every stack sets every knob, to a valid value, and every value cites its source).

A stack's value of a knob may depend on the method (`by_method`, e.g. torchtune's full
fine-tuning steps the optimizer in the backward pass). `knobs_of` resolves the knobs of one
configuration: an explicit knob wins over the stack's value; a knob that does not apply to the
configuration is None (see `applies`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Mapping, Union

from ..types import AdapterDtype, Framework, Loss, Method, OptStep, Quantized

KnobValue = Union[AdapterDtype, Loss, OptStep, Quantized, bool]

#: The knobs (engine.md section 6) and the type of each one's values.
KNOB_TYPES: dict[str, type] = {
    "adapter_dtype": AdapterDtype,
    "loss": Loss,
    "opt_step": OptStep,
    "act_offload": bool,
    "quantized": Quantized,
    "kbit_upcast": bool,
    "compile": bool,
}
KNOBS = tuple(KNOB_TYPES)
#: Facts of a stack's own code that shape what a step keeps but that no knob chooses (stacks.json
#: `facts`, each with its source; see `_about.facts` there): `lora_dropout` (its LoRA layers
#: apply dropout with p > 0: a mask and the dropped copy are kept), `kbit_saves_input` (its
#: bitsandbytes 4-bit matmul keeps every input for the backward pass: before bitsandbytes
#: 0.43.2) and `kbit_output_layer` (its 4-bit path quantizes the output layer too and
#: dequantizes it whole, through FP16, for each use) and `fp32_logits_output` (its model's
#: forward upcasts the whole logits tensor to FP32 itself, outside what `compile` compiles:
#: a compiled `loss=full` then keeps FP32 logits) and `keeps_previous_graph` (its training loop
#: keeps the previous step's outputs, and so their graph, until the next forward pass returns).
#: A stack that states none has none.
FACTS = ("lora_dropout", "kbit_saves_input", "kbit_output_layer", "fp32_logits_output",
         "keeps_previous_graph", "drops_output_before_backward")
#: What a code citation must say; a paper citation names the paper instead of a repository.
SOURCE_KEYS = ("repo", "version", "path", "where", "says")


@dataclass(frozen=True)
class Source:
    repo: str
    version: str
    path: str
    where: str
    says: str
    url: str = ""


@dataclass(frozen=True)
class Setting:
    """One knob's value in a stack, and where the stack's code says so."""

    value: KnobValue
    source: Source


@dataclass(frozen=True)
class Stack:
    id: Framework
    name: str
    notes: str
    settings: tuple[tuple[str, Setting], ...]  # knob -> the value for every method
    by_method: tuple[tuple[str, Method, Setting], ...]  # overrides for one method
    facts: tuple[tuple[str, Setting], ...] = ()  # FACTS -> value and source

    def fact(self, name: str) -> bool:
        """A fact of the stack's code (FACTS); False where the stack states none."""
        if name not in FACTS:
            raise KeyError(name)
        return bool(dict(self.facts)[name].value) if name in dict(self.facts) else False

    def setting(self, knob: str, method: Method) -> Setting:
        for name, m, s in self.by_method:
            if name == knob and m is method:
                return s
        return dict(self.settings)[knob]

    def value(self, knob: str, method: Method) -> KnobValue:
        return self.setting(knob, method).value


@dataclass(frozen=True)
class Knobs:
    """The knob values one estimate uses; None where a knob does not apply."""

    adapter_dtype: AdapterDtype | None
    loss: Loss
    opt_step: OptStep
    act_offload: bool | None
    quantized: Quantized | None
    kbit_upcast: bool | None
    compile: bool | None

    def to_json(self) -> dict[str, object]:
        return {k: (v.value if hasattr(v, "value") else v) for k, v in
                ((k, getattr(self, k)) for k in KNOBS)}


def applies(knob: str, method: Method, ckpt: bool) -> bool:
    """Whether `knob` changes anything for this method and checkpointing setting."""
    if knob == "adapter_dtype":
        return method is not Method.FULL
    if knob in ("quantized", "kbit_upcast"):
        return method is Method.QLORA
    if knob == "act_offload":  # the checkpointed layer inputs are what is offloaded
        return ckpt
    return True


def _value(knob: str, raw: Any, where: str) -> KnobValue:
    kind = KNOB_TYPES[knob]
    if kind is bool:
        if not isinstance(raw, bool):
            raise ValueError(f"stacks.json: {where}: {knob} must be true or false, not {raw!r}")
        return raw
    try:
        return kind(raw)  # type: ignore[return-value]
    except ValueError:
        raise ValueError(f"stacks.json: {where}: {knob} = {raw!r} is not one of "
                         f"{[m.value for m in kind]}") from None  # type: ignore[attr-defined]


def _source(raw: Any, where: str) -> Source:
    if not isinstance(raw, Mapping):
        raise ValueError(f"stacks.json: {where}: no source")
    for key in SOURCE_KEYS:
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ValueError(f"stacks.json: {where}: the source has no {key}")
    return Source(raw["repo"], raw["version"], raw["path"], raw["where"], raw["says"],
                  raw.get("url", ""))


def _setting(knob: str, raw: Any, where: str) -> Setting:
    if not isinstance(raw, Mapping) or "value" not in raw:
        raise ValueError(f"stacks.json: {where}: {knob} has no value")
    return Setting(_value(knob, raw["value"], where), _source(raw.get("source"), f"{where}.{knob}"))


def _facts(raw: Any, where: str) -> tuple[tuple[str, Setting], ...]:
    if not isinstance(raw, Mapping):
        raise ValueError(f"stacks.json: {where}: facts must be an object")
    unknown = [k for k in raw if k not in FACTS]
    if unknown:
        raise ValueError(f"stacks.json: {where}: unknown facts {unknown}")
    out = []
    for name in FACTS:
        if name not in raw:
            continue
        body = raw[name]
        if not isinstance(body, Mapping) or not isinstance(body.get("value"), bool):
            raise ValueError(f"stacks.json: {where}: fact {name} must be true or false")
        out.append((name, Setting(body["value"], _source(body.get("source"), f"{where}.facts.{name}"))))
    return tuple(out)


def parse_stacks(doc: Mapping[str, Any]) -> dict[Framework, Stack]:
    """The stacks of a stacks.json document, checked. Raises ValueError naming what is wrong."""
    raw = doc.get("stacks")
    if not isinstance(raw, Mapping):
        raise ValueError("stacks.json: no stacks")
    out: dict[Framework, Stack] = {}
    for fid, body in raw.items():
        try:
            framework = Framework(fid)
        except ValueError:
            raise ValueError(f"stacks.json: unknown stack {fid!r}") from None
        knobs = body.get("knobs", {})
        missing = [k for k in KNOBS if k not in knobs]
        extra = [k for k in knobs if k not in KNOB_TYPES]
        if missing or extra:
            raise ValueError(f"stacks.json: {fid}: missing knobs {missing}, unknown knobs {extra}")
        settings, by_method = [], []
        for knob in KNOBS:
            settings.append((knob, _setting(knob, knobs[knob], fid)))
            for m, sub in knobs[knob].get("by_method", {}).items():
                by_method.append((knob, Method(m), _setting(knob, sub, f"{fid}.{knob}.{m}")))
        if not str(body.get("name", "")).strip():
            raise ValueError(f"stacks.json: {fid}: no name")
        out[framework] = Stack(framework, body["name"], body.get("notes", ""), tuple(settings),
                               tuple(by_method), _facts(body.get("facts", {}), fid))
    if set(out) != set(Framework):
        raise ValueError(f"stacks.json: stacks {sorted(f.value for f in set(Framework) - set(out))} missing")
    if doc.get("default") != Framework.HF.value:
        raise ValueError("stacks.json: the default stack must be hf (engine.md section 6)")
    return out


@lru_cache(maxsize=None)
def stacks_doc() -> dict[str, Any]:
    text = (resources.files("calc") / "data" / "stacks.json").read_text(encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=None)
def stacks() -> dict[Framework, Stack]:
    return parse_stacks(stacks_doc())


def stack(framework: Framework) -> Stack:
    return stacks()[framework]


@lru_cache(maxsize=4096)
def knobs_of(framework: Framework, method: Method, ckpt: bool,
             explicit: tuple[KnobValue | None, ...]) -> Knobs:
    """The knobs of a configuration: `explicit` (in KNOBS order, None = the stack's value)
    over the stack's values; None for a knob that does not apply."""
    s = stack(framework)
    values = {}
    for knob, given in zip(KNOBS, explicit):
        if not applies(knob, method, ckpt):
            values[knob] = None
        else:
            values[knob] = s.value(knob, method) if given is None else given
    return Knobs(**values)  # type: ignore[arg-type]


def normalized(framework: Framework, method: Method, ckpt: bool,
               explicit: tuple[KnobValue | None, ...]) -> tuple[KnobValue | None, ...]:
    """`explicit` with None wherever a knob equals the stack's value or does not apply, so that
    two configurations that estimate the same are equal and the canonical query is minimal."""
    s = stack(framework)
    return tuple(None if given is None or not applies(knob, method, ckpt)
                 or given == s.value(knob, method) else given
                 for knob, given in zip(KNOBS, explicit))
