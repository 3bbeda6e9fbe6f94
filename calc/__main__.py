"""`python -m calc --model llama-3.1-8b --method qlora [--json]`: the engine from a shell.

Flags are the interface's field names. Bad input: exit status 2, the message on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from .engine import KNOBS, estimate, gpu_fit
from .errors import CalcError
from .export import FORMATS, export
from .fields import FIELDS, parse
from .i18n import DEFAULT_LOCALE, LOCALES
from .plan import PLAN_FIELDS, parse_plan
from . import plan_report
from .scale import SCALE_FIELDS, Scale, cards_needed, parse_scale, scaled


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m calc",
                                description="GPU memory needed to fine-tune an LLM (full, LoRA, QLoRA).")
    # The engine's fields, then those of the GPUs (calc.scale) and of time and cost (calc.plan),
    # each once (`gpus` is both a scale and a plan field).
    for name in dict.fromkeys((*FIELDS, *SCALE_FIELDS, *PLAN_FIELDS)):
        flags = dict.fromkeys((f"--{name}", f"--{name.replace('_', '-')}"))  # --kv_heads, --kv-heads
        help_ = "pasted config.json text, a path to one, or - for stdin" if name == "config" else None
        p.add_argument(*flags, dest=name, metavar="VALUE", help=help_)
    p.add_argument("--export", choices=FORMATS, default=None,
                   help="print the estimated configuration as a training config instead")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--locale", default=DEFAULT_LOCALE, choices=LOCALES,
                   help="language and number format of the readable breakdown")
    return p


def _read_config(value: str) -> str:
    if value.lstrip().startswith("{"):
        return value
    try:
        if value == "-":
            return sys.stdin.read()
        with open(value, encoding="utf-8") as fh:
            return fh.read()
    except OSError as err:
        raise CalcError.one("config", "generic", value=str(err)) from None


def _width(text: str) -> int:
    """Columns `text` takes in a terminal: bidi marks and isolates (fa) take none."""
    return sum(1 for ch in text if ch not in "\u200e\u200f\u2066\u2067\u2068\u2069")


def breakdown(est, locale: str = DEFAULT_LOCALE) -> str:
    """A readable breakdown in the reader's language: the inputs, each component, the total,
    and for every catalog GPU whether one card holds the run or how many do with ZeRO-3."""
    from .catalog import gpu_label, model, model_label
    from .errors import CalcError as _E
    from .fmt import fmt, small_bytes_unit
    from .i18n import t

    i = est.inputs
    unit = i.unit.value
    try:
        name = model_label(model(i.model), locale)
    except _E:
        name = t("ui.custom_model", locale)
    settings = [t(f"method.{i.method.value}", locale)]
    if i.method.value != "full":
        settings.append(f"{t('field.rank', locale)} {fmt(i.rank, 'number', locale)}, "
                        f"{t(f'targets.{i.targets.value}', locale)}")
    settings += [f"{t('field.seq', locale)} {fmt(i.seq, 'number', locale)}",
                 f"{t('field.batch', locale)} {fmt(i.batch, 'number', locale)}",
                 f"{t('field.ckpt', locale)}: {t(f'bool.{str(i.ckpt).lower()}', locale)}",
                 t(f"optimizer.{i.optimizer.value}", locale)]
    model_line = f"{t(f'mode.{i.mode.value}', locale)} · {t('field.framework', locale)}: " \
                 f"{t(f'framework.{i.framework.value}', locale)}"
    if i.mode.value == "detailed":  # the knobs the estimate used
        k = i.knobs
        knob_texts = [f"{t(f'field.{n}', locale)}: " + (t(f"bool.{str(v).lower()}", locale)
                      if isinstance(v, bool) else t(f"{n}.{v.value}", locale))
                      for n, v in ((n, getattr(k, n)) for n in KNOBS) if v is not None]
        model_line += "\n" + " · ".join(knob_texts)
    rows = [(t(f"component.{n}", locale), fmt(v, unit, locale, 2)) for n, v in est.components]
    rows.append((t("component.total", locale), fmt(est.total, unit, locale, 2)))
    width = max(len(a) for a, _ in rows) + 2
    lines = [f"{name} ({fmt(i.arch.params, 'params', locale)})", " · ".join(settings), model_line, ""]
    lines += [f"  {a:<{width}}{b:>14}" for a, b in rows[:-1]]
    lines += ["  " + "-" * (width + 14), f"  {rows[-1][0]:<{width}}{rows[-1][1]:>14}"]
    if i.mode.value == "detailed":  # the textbook formula beside the realistic total
        from dataclasses import replace as _replace
        from .types import Mode

        textbook = estimate(_replace(i, mode=Mode.PLANNING)).total
        lines.append(f"  {t('mode.planning', locale):<{width}}{fmt(textbook, unit, locale, 2):>14}")
        if est.off_peak_side:  # with checkpointing, the moment that is not the peak
            off_unit, digits = small_bytes_unit(est.off_peak_bytes, unit)
            off = fmt(est.off_peak_bytes, off_unit, locale, digits)
            lines.append("  " + t(f"ui.off_peak.{est.off_peak_side}", locale, figure=off))
        if est.cpu_bytes:
            lines.append(f"  {t('field.act_offload', locale)} (CPU): {fmt(est.cpu_bytes, unit, locale, 2)}")
    lines.append("")
    share = est.trainable_params / i.arch.params
    lines.append(f"{t('component.trainable_params', locale)}: "
                 f"{fmt(est.trainable_params, 'params', locale)} ({fmt(share, 'percent', locale, 2)})")
    from .engine import DISCRETE_USABLE, UNIFIED_USABLE

    lines += ["", f"{t('ui.which_gpus', locale)} ({fmt(float(DISCRETE_USABLE), 'percent', locale)}"
                  f" / {fmt(float(UNIFIED_USABLE), 'percent', locale)}):"]
    fits = gpu_fit(est)
    names = {f.gpu.id: gpu_label(f.gpu, locale) for f in fits}
    gw = max(_width(n) for n in names.values()) + 2
    for f in fits:
        if f.fits:
            verdict = t("ui.fits", locale)
        elif f.cards:
            verdict = t("ui.cards_needed", locale, n=f.cards)
        else:
            verdict = t("ui.does_not_fit", locale)
        name = names[f.gpu.id]
        lines.append(f"  {name}{' ' * (gw - _width(name))}{fmt(f.usable, unit, locale):>12}  {verdict}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    query = {k: v for k, v in vars(args).items() if k in FIELDS and v is not None}
    plan_query = {k: v for k, v in vars(args).items() if k in PLAN_FIELDS and v is not None}
    scale_query = {k: v for k, v in vars(args).items() if k in SCALE_FIELDS and v is not None}
    problems = []
    try:
        if "config" in query:
            query["config"] = _read_config(query["config"])
        inputs = parse(query, strict=True)
    except CalcError as err:
        problems += err.problems
    try:
        plan_inputs = parse_plan(plan_query, args.locale)
    except CalcError as err:
        problems += err.problems
    try:
        scale = parse_scale(scale_query)
    except CalcError as err:
        problems += err.problems
    try:
        if problems:
            raise CalcError(problems)
        if args.export:
            print(export(inputs, args.export, plan_inputs.epochs, plan_inputs.gpus), end="")
            return 0
        run = scaled(inputs, scale)
        est = estimate(inputs)  # the single-card SFT figures the readable breakdown and `fits` show
        result = plan_report.run_plan(inputs, plan_inputs, est, scale)
    except CalcError as err:
        print(f"error: {err.message(args.locale)}", file=sys.stderr)
        return 2
    if args.json:
        out = est.to_json()
        # `fits`: the engine's single-card / ZeRO-3 answer for SFT, as before; `cards`: this
        # run's (objective, offload, every strategy)
        out["fits"] = [{"gpu": f.gpu.id, "fits": f.fits, "cards": f.cards} for f in gpu_fit(est)]
        out.update(run.to_json())
        out["cards"] = cards_needed(inputs, scale)
        plan_report.add_json(out, result)
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        try:
            print("\n".join([breakdown(est, args.locale), *plan_report.breakdown(result, args.locale)]))
            if scale != Scale():
                print("\n" + scale_breakdown(run, args.locale))
        except BrokenPipeError:  # e.g. piped into `head`
            pass
    return 0


def scale_breakdown(run, locale: str = "en") -> str:
    """The per-GPU components and the host RAM of a multi-GPU / offload / DPO run."""
    from .fmt import fmt
    from .i18n import t

    s, unit = run.scale, run.inputs.unit.value
    head = t("ui.per_gpu_of", locale, n=s.gpus, sharding=t(f"sharding.{s.sharding.value}", locale),
             objective=t(f"objective.{s.objective.value}", locale))
    rows = [(t(f"component.{n}", locale), fmt(v, unit, locale, 2)) for n, v in run.gpu_components]
    rows.append((t("ui.per_gpu_total", locale), fmt(run.per_gpu_total, unit, locale, 2)))
    host = [(t(f"component.{n}", locale), fmt(v, unit, locale, 2)) for n, v in run.cpu_components]
    if host:
        host.append((t("ui.host_total", locale), fmt(run.cpu_bytes, unit, locale, 2)))
    width = max(_width(a) for a, _ in rows + host) + 2
    line = lambda a, b: f"  {a}{' ' * (width - _width(a))}{b:>14}"  # noqa: E731
    lines = [head] + [line(a, b) for a, b in rows[:-1]] + ["  " + "-" * (width + 14), line(*rows[-1])]
    if host:
        lines += ["", t("ui.host_ram", locale, offload=t(f"offload.{s.offload.value}", locale))]
        lines += [line(a, b) for a, b in host[:-1]] + ["  " + "-" * (width + 14), line(*host[-1])]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
