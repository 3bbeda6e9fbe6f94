"""The time estimate against published throughput: the calibration and every run's error.

    .venv/bin/python bench/throughput.py

For each run of calc/data/throughput.json: the training FLOPs per token calc counts
(calc.flops.train_flops), the utilisation the published tokens per second imply on the card's
datasheet peak, and the error of calc's time estimate with the calibrated utilisation of the
run's method (estimated time / measured time - 1: positive means the estimate is too slow).
Then the calibration (median per method), the median and largest absolute error, and the
median per source, which shows how the sources differ (torch.compile and packing, hardware).
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calc.catalog import gpu  # noqa: E402
from calc.flops import calibration, train_flops  # noqa: E402


def source_of(url: str) -> str:
    return "/".join(url.split("/")[3:5])


def main() -> int:
    cal = calibration()
    print(f"{'run':48} {'card':>13} {'tok/s/card':>10} {'GFLOP/tok':>9} {'implied':>7} {'error':>7}")
    by_source: dict[str, list[float]] = defaultdict(list)
    for (run, u), (_, err) in zip(cal.runs, cal.errors()):
        f = train_flops(run.inputs).per_token
        card = f"{run.cards} x {run.gpu}"
        print(f"{run.id:48} {card:>13} {float(run.tokens_per_s):10.0f} {f / 1e9:9.1f} "
              f"{float(u):7.1%} {float(err):+7.1%}")
        by_source[source_of(run.source)].append(abs(float(err)))
    print()
    print("calibrated utilisation (median of the runs' implied utilisation, per method):")
    for method, u in cal.by_method:
        n = sum(1 for r, _ in cal.runs if r.inputs.method is method)
        print(f"  {method.value:6} {float(u):6.1%}  ({n} runs)")
    errors = [abs(float(e)) for _, e in cal.errors()]
    print()
    print(f"runs: {len(errors)}; median absolute error of the time estimate: "
          f"{statistics.median(errors):.1%} (target: within 25 %); largest: {max(errors):.1%}")
    print("median absolute error by source:")
    for source, errs in by_source.items():
        print(f"  {source:24} {statistics.median(errs):6.1%}  ({len(errs)} runs)")
    peaks = sorted({r.gpu for r, _ in cal.runs})
    print("peaks used (dense BF16 TFLOPS, calc/data/gpus.json): "
          + ", ".join(f"{g} {gpu(g).peak_bf16_tflops}" for g in peaks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
