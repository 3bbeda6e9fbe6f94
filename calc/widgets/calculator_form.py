"""The detailed calculator's form: every interface field (engine.md), under its interface name.

Main fields first (model, method and its settings, the training stack, the objective, the
reader's GPU, the unit); the config.json paste box right under them when "custom model" is
chosen; the GPUs group (count, sharding, offload); the time-and-cost fields; the advanced
options (optimizer, mode, the stack's knobs, the architecture).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Mapping

from .. import catalog
from ..fields import ARCH_FIELDS, CUSTOM, KNOB_CHOICES
from ..fmt import fmt
from ..types import (Architecture, Framework, Method, Mode, Objective, Offload, Optimizer, Sharding,
                     Targets, Unit)
from .base import Form, e, form_layout, tx
from .base import GROUPS, gpu_group, gpu_option_text

__all__ = ["form", "placeholders", "model_groups", "gpu_groups"]

#: Example values shown in empty fields (what help.tokens names as examples).
_EXAMPLES = {"tokens": "50M"}


@lru_cache(maxsize=256)
def placeholders(arch: Architecture, loc: str) -> tuple[tuple[str, str], ...]:
    """The architecture fields' placeholders: the model's own values."""
    return tuple((n, fmt(getattr(arch, n), "number", loc)) for n in ARCH_FIELDS if n != "tied")


def model_groups(loc: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The picker: dense models, then mixture-of-experts models, each kind by family (in the
    catalog's order), display names; "custom model" last, on its own."""
    out: list[tuple[str, list[tuple[str, str]]]] = []
    for kind in ("dense", "moe"):
        families: dict[str, list[tuple[str, str]]] = {}
        for m in catalog.models():
            if m.kind == kind:
                families.setdefault(m.family, []).append((m.id, catalog.model_label(m, loc)))
        for family, items in families.items():
            out.append((tx(f"ui.model_kind.{kind}", loc, family=family), items))
    out.append((tx("ui.custom_model", loc), [(CUSTOM, tx("ui.custom_model", loc))]))
    return out


def gpu_groups(loc: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The reader's card: by group (data centre, workstation, consumer, Macs)."""
    groups: dict[str, list[tuple[str, str]]] = {g: [] for g in GROUPS}
    for g in catalog.gpus():
        groups[gpu_group(g)].append((g.id, gpu_option_text(g.id, loc)))
    return [(tx(f"ui.gpu_group.{name}", loc), items) for name, items in groups.items() if items]


def _choices(prefix: str, values: Iterable[str], loc: str, default_key: str = "ui.stack_default"
             ) -> list[tuple[str, str]]:
    return [("", tx(default_key, loc))] + [(v, tx(f"{prefix}.{v}", loc)) for v in values]


def form(f: Form, loc: str, placeholders: Mapping[str, str]) -> str:
    custom = f.values.get("model", "").strip().lower() == CUSTOM
    common = [
        f.grouped_select("model", model_groups(loc), cls="calc-field-wide"),
        f.radios("method", [(m.value, tx(f"method.{m.value}", loc)) for m in Method]),
        f.text("rank", inputmode="numeric"),
        f.select("targets", [(x.value, tx(f"targets.{x.value}", loc)) for x in Targets]),
        f.text("seq", inputmode="numeric"),
        f.text("batch", inputmode="numeric"),
        f.text("grad_accum", inputmode="numeric"),
        f.checkbox("ckpt"),
        f.select("framework", [(x.value, tx(f"framework.{x.value}", loc)) for x in Framework]),
        f.select("objective", [(o.value, tx(f"objective.{o.value}", loc)) for o in Objective]),
        f.grouped_select("gpu", [("", [("", tx("ui.gpu_none", loc))])] + gpu_groups(loc),
                         label=tx("ui.my_gpu", loc)),
        f.radios("unit", [(u.value, u.value) for u in (Unit.GIB, Unit.GB)]),
    ]
    paste = (f'<fieldset class="calc-group calc-paste" data-show-when="model={CUSTOM}"'
             f'{"" if custom else " hidden"}><legend>{e(tx("ui.paste_config", loc))}</legend>'
             f'{f.textarea("config", rows=8)}'
             f'<p class="calc-help">{e(tx("ui.paste_or_arch", loc))}</p></fieldset>')
    gpus = (f'<fieldset class="calc-group calc-gpus-group"><legend>{e(tx("ui.gpus_group", loc))}'
            f'</legend><div class="calc-grid">'
            f'{f.text("gpus", inputmode="numeric")}'
            f'{f.select("sharding", [(s.value, tx(f"sharding.{s.value}", loc)) for s in Sharding])}'
            f'{f.select("offload", [(o.value, tx(f"offload.{o.value}", loc)) for o in Offload])}'
            f"</div></fieldset>")
    plan = (f'<details class="calc-advanced calc-plan-fields"'
            f'{" open" if any(f.values.get(n) for n in ("tokens", "tokens_per_s", "price")) else ""}>'
            f'<summary>{e(tx("ui.time_cost", loc))}</summary><div class="calc-grid">'
            f'{f.text("tokens", inputmode="text", ltr=True, placeholder=_EXAMPLES["tokens"])}'
            f'{f.text("epochs", inputmode="decimal")}'
            f'{f.text("tokens_per_s", inputmode="decimal")}'
            f'{f.text("price", inputmode="decimal")}'
            f"</div></details>")
    arch = []
    for n in ARCH_FIELDS:
        if n == "tied":
            arch.append(f.select("tied", [("", tx("ui.from_model", loc)),
                                          ("true", tx("bool.true", loc)),
                                          ("false", tx("bool.false", loc))]))
        else:
            arch.append(f.text(n, inputmode="text" if n == "params" else "numeric", ltr=True,
                               placeholder=placeholders.get(n, "")))
    knobs = [f.select(name, _choices(name, [m.value for m in enum], loc))
             for name, enum in KNOB_CHOICES.items()]
    knobs += [f.select(name, _choices("bool", ("true", "false"), loc))
              for name in ("act_offload", "kbit_upcast", "compile")]
    advanced = [
        f.select("optimizer", [(o.value, tx(f"optimizer.{o.value}", loc)) for o in Optimizer]),
        f.select("mode", [(m.value, tx(f"mode.{m.value}", loc)) for m in Mode]),
        f.checkbox("flash"),
        f.checkbox("dquant"),
        f.checkbox("lora_experts"),
        f'<fieldset class="calc-group"><legend>{e(tx("ui.stack_knobs", loc))}</legend>'
        f'<p class="calc-help">{e(tx("ui.stack_knobs_help", loc))}</p>'
        f'<div class="calc-grid">{"".join(knobs)}</div></fieldset>',
        f'<fieldset class="calc-group"><legend>{e(tx("ui.custom_model", loc))}</legend>'
        f'<p class="calc-help">{e(tx("ui.arch_help", loc))}</p>'
        f'<div class="calc-grid">{"".join(arch)}</div></fieldset>',
    ]
    return form_layout(f.wid, loc, common, advanced, middle=[paste, gpus, plan])
