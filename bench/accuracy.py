"""The realistic model and the textbook formula against the published runs (issue 13's targets).

    .venv/bin/python bench/accuracy.py [--truth] [--by-stack]

Prints, for each run of calc/data/measurements.json (each estimated with its own training
stack), the measured peak, both estimates and their relative errors, then for each model the
summary: median absolute error, worst under-estimate, worst error, runs within 10 %. Exit status
0 whatever the figures (a report, not a test); the targets are printed beside the summary:

- median absolute error <= 7 %,
- no under-estimate worse than -10 % (an under-estimate is an out-of-memory error),
- no run off by more than 20 %.

--truth adds our own MemTracker runs (calc/data/ground_truth.json, tensors only).
--by-stack adds the summary of each stack's runs.
Uses calc only (standard library).
"""

from __future__ import annotations

import statistics
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calc import accuracy  # noqa: E402

GIB = 2**30
MODELS = (("realistic", "detailed"), ("textbook", "planning"))
TARGET_MEDIAN = Fraction(7, 100)
TARGET_UNDER = Fraction(-10, 100)
TARGET_WORST = Fraction(20, 100)


def pct(x: Fraction) -> str:
    return f"{float(x) * 100:+6.1f} %"


def summary_line(name: str, runs: tuple[accuracy.Run, ...], mode: str) -> str:
    errors = [(r.error(mode), r.id) for r in runs]
    median = Fraction(statistics.median(abs(e) for e, _ in errors))
    under, under_id = min(errors)
    worst, worst_id = max(errors, key=lambda x: abs(x[0]))
    within = sum(1 for e, _ in errors if abs(e) <= Fraction(1, 10))
    marks = ["median " + ("ok" if median <= TARGET_MEDIAN else "MISSED"),
             "under " + ("ok" if under >= TARGET_UNDER else "MISSED"),
             "worst " + ("ok" if abs(worst) <= TARGET_WORST else "MISSED")]
    return (f"{name:10} n={len(runs):3}  median |error| {float(median) * 100:5.1f} %   "
            f"worst under-estimate {pct(under)} ({under_id})   worst {pct(worst)} ({worst_id})   "
            f"within 10 %: {within}/{len(runs)}   [{', '.join(marks)}]")


def table(runs: tuple[accuracy.Run, ...]) -> list[str]:
    lines = [f"{'run':44} {'stack':11} {'kind':11} {'measured':>9} {'realistic':>10} {'error':>8} "
             f"{'textbook':>9} {'error':>8}"]
    for r in runs:
        lines.append(f"{r.id:44} {r.framework:11} {r.kind:11} {r.measured / GIB:9.2f} "
                     f"{r.compared('detailed') / GIB:10.2f} {pct(r.error('detailed'))} "
                     f"{r.compared('planning') / GIB:9.2f} {pct(r.error('planning'))}")
    return lines


def main(argv: list[str]) -> int:
    published = accuracy.measurements()
    print("Published runs (calc/data/measurements.json), GiB; error = (estimate - measured) / measured")
    print("Figures of live tensors (allocated, peak-active) are compared without the 1 GiB overhead.\n")
    print("\n".join(table(published)))
    print(f"\nTargets: median |error| <= {float(TARGET_MEDIAN):.0%}, no under-estimate below "
          f"{float(TARGET_UNDER):.0%}, none off by more than {float(TARGET_WORST):.0%}.")
    for name, mode in MODELS:
        print(summary_line(name, published, mode))
    if "--by-stack" in argv:
        for stack in sorted({r.framework for r in published}):
            runs = tuple(r for r in published if r.framework == stack)
            print(f"\n{stack}:")
            for name, mode in MODELS:
                print("  " + summary_line(name, runs, mode))
    if "--truth" in argv:
        truth = accuracy.ground_truth_runs()
        print("\nOur MemTracker runs (calc/data/ground_truth.json, tensors only)\n")
        print("\n".join(table(truth)))
        for name, mode in MODELS:
            print(summary_line(name, truth, mode))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
