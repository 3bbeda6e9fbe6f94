"""Ground truth against calc's detailed mode, component by component (prints a table).

    .venv/bin/python bench/compare_truth.py [path/to/ground_truth.json]

Uses calc only (no torch): reads the recorded runs and estimates each with calc.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calc import accuracy  # noqa: E402

GIB = 2**30


def main(argv: list[str]) -> int:
    if argv:
        doc = json.loads(Path(argv[0]).read_text())
        accuracy.ground_truth.cache_clear()
        accuracy.ground_truth_runs.cache_clear()
        accuracy.ground_truth = lambda: doc  # type: ignore[assignment]
    runs = accuracy.ground_truth_runs()
    groups = tuple(accuracy.COMPONENT_MAP)
    print(f"{'run':40} {'peak':>7} {'plan':>7} {'det':>7} {'err':>6}  "
          + "  ".join(f"{g[:6]:>13}" for g in groups))
    for r in runs:
        comp = accuracy.component_errors(r)
        cells = "  ".join(f"{m / GIB:6.2f}/{d / GIB:6.2f}" for m, d in comp.values())
        print(f"{r.id:40} {r.measured / GIB:7.2f} {r.compared('planning') / GIB:7.2f} "
              f"{r.compared('detailed') / GIB:7.2f} {float(r.error('detailed')):+6.1%}  {cells}")
    for mode in accuracy.MODES:
        s = accuracy.summary(runs, mode)
        print(f"{mode}: median |error| {float(s.median_abs):.1%}, worst {float(s.worst):+.1%} "
              f"({s.worst_id}), within 10 %: {s.within_10}/{s.n}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
