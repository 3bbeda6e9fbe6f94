"""The detailed calculator: a model (a preset, a custom architecture or a pasted config.json),
the method and its settings, the training stack, the GPUs and the objective -> the realistic
total per GPU (the textbook figure beside it), its breakdown (table and stacked bar), the
verdict for the reader's card, which GPUs fit and how many cards each sharding strategy needs,
the time and cost to train, the most that fits and the run's training config.

Its parsers are the engine's interface itself (`calc.fields.parse` / `to_query`,
`calc.scale.parse_scale`, `calc.plan.parse_plan`), run together so that every invalid field is
named at once. The results region is assembled in `calculator_results` (summary, breakdown),
`calculator_gpus` (the fit tables) and `calculator_plan` (time, cost, most that fits, export);
the form in `calculator_form`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Mapping

from .. import scale as scale_mod
from ..engine import Estimate, Inputs, estimate
from ..errors import CalcError
from ..fields import ARCH_FIELDS, CUSTOM, STACK_FIELDS, first, parse as parse_fields, to_query
from ..fmt import fmt_memo
from ..plan import PLAN_FIELDS, PlanInputs, parse_plan
from ..scale import SCALE_FIELDS, Scale, ScaledEstimate, parse_scale, scaled
from ..types import Mode
from . import calculator_form, calculator_gpus, calculator_plan, calculator_results
from .base import Form, Outcome, collect, dec, summary

__all__ = ["NAME", "DEFAULT_QUERY", "FORM_FIELDS", "NUMERIC_FIELDS", "EXAMPLE_HOURS", "State",
           "parse", "run", "form"]

NAME = "calculator"
DEFAULT_QUERY: Mapping[str, str] = {}
FORM_FIELDS = ("model", "config", "method", "rank", "targets", "seq", "batch", "grad_accum", "ckpt",
               "framework", "objective", "gpu", "unit", *SCALE_FIELDS[:3],
               *(n for n in PLAN_FIELDS if n not in ("gpu", "gpus")),
               "optimizer", "mode", "flash", "dquant", "lora_experts", *STACK_FIELDS[1:], *ARCH_FIELDS)
NUMERIC_FIELDS = frozenset({"rank", "seq", "batch", "grad_accum", "gpus", "epochs", "tokens_per_s", "price",
                            *(n for n in ARCH_FIELDS if n != "tied")})
#: Hours of the example cost column of the GPU table.
EXAMPLE_HOURS = calculator_gpus.EXAMPLE_HOURS
#: The architecture a custom model needs before anything can be computed (calc.fields._arch).
_CUSTOM_REQUIRED = ("layers", "hidden", "ffn", "heads", "vocab")


@dataclass(frozen=True)
class State:
    """One parsed configuration: the single-card inputs, the scale and the plan's fields."""

    inputs: Inputs
    scale: Scale
    plan: PlanInputs


def _given(query: Mapping[str, Any], name: str) -> bool:
    v = first(query.get(name))  # type: ignore[arg-type]
    return v is not None and str(v).strip() != ""


def _effective(query: Mapping[str, Any]) -> Mapping[str, Any]:
    """The picker names a preset: a config.json left in the (hidden) paste box is not read; the
    paste box belongs to "custom model" (issue 19: a config with a preset selected switched to a
    custom model while the picker still named the preset)."""
    model = first(query.get("model"))  # type: ignore[arg-type]
    if (_given(query, "config") and model is not None and str(model).strip()
            and str(model).strip().lower() != CUSTOM):
        return {k: v for k, v in query.items() if k != "config"}
    return query


def pristine_custom(query: Mapping[str, Any]) -> bool:
    """"Custom model" chosen and nothing of it typed yet: no config, no architecture field."""
    model = first(query.get("model"))  # type: ignore[arg-type]
    return (model is not None and str(model).strip().lower() == CUSTOM
            and not _given(query, "config")
            and not any(_given(query, n) for n in ARCH_FIELDS))


def parse(query: Mapping[str, Any], locale: str = "en") -> State:
    """Raw fields -> State; CalcError names every invalid field of the three parsers at once."""
    q = _effective(query)
    inputs, sc, pl = collect(lambda: parse_fields(q, locale), lambda: parse_scale(q, locale),
                             lambda: parse_plan(q, locale))
    found = scale_mod.problems(sc, inputs.optimizer)  # offload with an optimizer it cannot run
    if found:
        raise CalcError(found)
    return State(inputs, sc, pl)


def canonical_query(state: State) -> dict[str, str]:
    """The URL: the engine's fields, the scale's that differ from the defaults, the plan's given."""
    q = to_query(state.inputs)
    q.update(scale_mod.to_query(state.scale))
    p = state.plan
    if p.tokens is not None:
        q["tokens"] = str(p.tokens)
    if p.epochs != PlanInputs().epochs:
        q["epochs"] = dec(p.epochs)
    if p.gpu is not None:
        q["gpu"] = p.gpu
    if p.tokens_per_s is not None:
        q["tokens_per_s"] = dec(p.tokens_per_s)
    if p.price is not None:
        q["price"] = dec(p.price)
    return q


# --- memoized engine calls (the worker runs on every edit; most edits change one piece) ----------


@lru_cache(maxsize=128)
def scaled_of(inputs: Inputs, sc: Scale) -> ScaledEstimate:
    return scaled(inputs, sc)


@lru_cache(maxsize=128)
def textbook_of(inputs: Inputs, sc: Scale) -> int:
    """The figure of the other model (the textbook formula beside the realistic headline, or
    the realistic one beside a planning headline), per GPU as the headline is."""
    mode = Mode.PLANNING if inputs.mode is Mode.DETAILED else Mode.DETAILED
    return scaled(replace(inputs, mode=mode), sc).per_gpu_total


@lru_cache(maxsize=128)
def _estimate(inputs: Inputs) -> Estimate:
    return estimate(inputs)


# --- run --------------------------------------------------------------------------------------


def run(q: dict[str, str], loc: str, wid: str) -> Outcome:
    if pristine_custom(q):
        return _pristine(q, loc, wid)
    state = parse(q, loc)
    inputs, sc = state.inputs, state.scale
    s = scaled_of(inputs, sc)
    canonical = canonical_query(state)
    placeholders = dict(calculator_form.placeholders(inputs.arch, loc))
    head = "ui.per_gpu_total" if calculator_results.scaled_view(sc) else "component.total"
    line = summary(head, fmt_memo(s.per_gpu_total, inputs.unit.value, loc), loc)
    html = "".join((
        calculator_results.summary_block(state, s, textbook_of(inputs, sc), loc, wid),
        config_notes(first(q.get("config")), loc) if inputs.model == CUSTOM else "",
        calculator_results.details_block(state, s, loc, wid),
        calculator_gpus.tables(state, loc, wid),
        calculator_plan.panel(state, s, loc, wid),
    ))
    return Outcome(html, canonical, form_values(state, canonical, q), placeholders, line)


@lru_cache(maxsize=64)
def config_notes(text: object, loc: str) -> str:
    """What the reader is told about a pasted config.json (calc.hfconfig.reading_notes: for a
    multimodal model, that only its language model is counted)."""
    if not isinstance(text, str) or not text.strip():
        return ""
    from ..hfconfig import read_config, reading_notes
    from .base import e, iso

    try:
        notes = reading_notes(read_config(text), loc)
    except CalcError:
        return ""  # the field's own message says what is wrong
    return "".join(iso(f'<p class="calc-note calc-config-note">{e(n)}</p>', loc) for n in notes)


def form_values(state: State, canonical: Mapping[str, str], q: Mapping[str, str]
                ) -> dict[str, str]:
    """What the form holds: the canonical values, every yes/no and choice field, empty knobs
    ("as the stack does"), and the plan's fields as the reader typed them (50M stays 50M)."""
    i, sc = state.inputs, state.scale
    out = {**canonical, "flash": str(i.flash).lower(), "dquant": str(i.dquant).lower(),
           "lora_experts": str(i.lora_experts).lower(),
           "gpus": str(sc.gpus), "sharding": sc.sharding.value, "offload": sc.offload.value,
           "objective": sc.objective.value}
    for name in (*STACK_FIELDS[1:], "gpu", "tokens", "epochs", "tokens_per_s", "price"):
        out.setdefault(name, "")
    for name in ("tokens", "epochs", "tokens_per_s", "price"):
        if _given(q, name):
            out[name] = str(first(q[name])).strip()  # type: ignore[arg-type]
    return out


def _pristine(q: Mapping[str, str], loc: str, wid: str) -> Outcome:
    """"Custom model" with nothing typed: every other field is still read (and an invalid one
    named), the architecture is not asked for yet: the results region asks for a config.json."""
    rest = {k: v for k, v in q.items() if k != "model"}
    state = parse(rest, loc)
    canonical = {**canonical_query(state), "model": CUSTOM}
    html = calculator_results.custom_prompt(loc)
    values = {**form_values(state, canonical, q), **{n: "" for n in ARCH_FIELDS}}
    return Outcome(html, canonical, values, {}, calculator_results.prompt_text(loc))


def form(f: Form, loc: str, placeholders: Mapping[str, str]) -> str:
    return calculator_form.form(f, loc, placeholders)
