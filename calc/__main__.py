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
from .fields import FIELDS, parse


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m calc",
                                description="GPU memory needed to fine-tune an LLM (full, LoRA, QLoRA).")
    for name in FIELDS:
        flags = dict.fromkeys((f"--{name}", f"--{name.replace('_', '-')}"))  # --kv_heads, --kv-heads
        help_ = "pasted config.json text, a path to one, or - for stdin" if name == "config" else None
        p.add_argument(*flags, dest=name, metavar="VALUE", help=help_)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--locale", default="en", choices=("en", "tr", "pt", "ru", "fa"),
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


def breakdown(est, locale: str = "en") -> str:
    """A readable breakdown in the reader's language: the inputs, each component, the total,
    and for every catalog GPU whether one card holds the run or how many do with ZeRO-3."""
    from .catalog import gpu_label, model
    from .errors import CalcError as _E
    from .fmt import fmt
    from .i18n import t

    i = est.inputs
    unit = i.unit.value
    try:
        name = model(i.model).name
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
    try:
        if "config" in query:
            query["config"] = _read_config(query["config"])
        est = estimate(parse(query, strict=True))
    except CalcError as err:
        print(f"error: {err.message(args.locale)}", file=sys.stderr)
        return 2
    if args.json:
        out = est.to_json()
        out["fits"] = [{"gpu": f.gpu.id, "fits": f.fits, "cards": f.cards} for f in gpu_fit(est)]
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        try:
            print(breakdown(est, args.locale))
        except BrokenPipeError:  # e.g. piped into `head`
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
