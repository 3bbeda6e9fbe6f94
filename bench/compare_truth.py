"""Ground truth against calc's detailed mode, component by component (prints a table).

    .venv/bin/python bench/compare_truth.py [path/to/ground_truth.json]

Uses calc only (no torch): reads the recorded runs and estimates each with calc.

Runs recorded with training-stack knobs (`knobs`: adapter_dtype, loss, opt_step; engine spec
section 6) are estimated with those knobs where calc's interface has the field; a knob that
calc does not know yet is listed under the table, and then that run's estimate ignores it.
A second table pairs the runs that differ in one knob only: what the knob changes, measured
and estimated.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calc import accuracy  # noqa: E402
from calc.fields import FIELDS  # noqa: E402

GIB = 2**30
KNOBS = ("adapter_dtype", "loss", "opt_step")
#: The value each knob effect is measured from (the Trainer's: PEFT's FP32 adapters, HF loss,
#: fused AdamW).
BASE = {"adapter_dtype": "fp32", "loss": "full", "opt_step": "fused"}


def _with_knobs(run: accuracy.Run, row: dict, ignored: set[str]) -> accuracy.Run:
    """The run estimated with its row's knobs, those calc's interface has."""
    kn = {k: v for k, v in (row.get("knobs") or {}).items() if v is not None}
    ignored.update(k for k in kn if k not in FIELDS)
    extra = tuple((k, str(v)) for k, v in kn.items() if k in FIELDS)
    if not extra:
        return run
    query = tuple(q for q in run.query if q[0] not in dict(extra)) + extra
    planning, detailed = accuracy._estimates(query)
    return dataclasses.replace(run, query=query, planning=planning, detailed=detailed)


def _pairs(labelled: list[tuple[str, dict, accuracy.Run]]) -> None:
    """Runs with knobs that differ in one knob only: the knob's effect, measured and estimated."""
    def key(row: dict, without: str) -> tuple:
        kn = {k: v for k, v in row["knobs"].items() if k != without}
        return (row["model"], row["method"], row["seq"], row["ckpt"], row.get("logits_kept"),
                tuple(sorted(kn.items())))

    rows = [(n, r, run) for n, r, run in labelled if "knobs" in r and not r.get("logits_kept")]
    print(f"\n{'knob effect (same run otherwise)':66} {'measured':>9} {'detailed':>9}  GiB")
    for knob in KNOBS:
        groups: dict[tuple, list] = {}
        for n, r, run in rows:
            groups.setdefault(key(r, knob), []).append((r["knobs"][knob], r, run))
        for members in groups.values():
            members.sort(key=lambda m: (m[0] != BASE[knob], str(m[0])))
            for value, r, run in members[1:]:
                base_value, base_row, base_run = members[0]
                what = (f"{r['method']} s{r['seq']} {'ckpt' if r['ckpt'] else 'no-ckpt'}: "
                        f"{knob} {value} - {base_value}")
                d_meas = run.measured - base_run.measured
                d_det = run.compared("detailed") - base_run.compared("detailed")
                print(f"{what:66} {d_meas / GIB:+9.3f} {d_det / GIB:+9.3f}")


def main(argv: list[str]) -> int:
    if argv:
        doc = json.loads(Path(argv[0]).read_text())
        accuracy.ground_truth.cache_clear()
        accuracy.ground_truth_runs.cache_clear()
        accuracy.ground_truth = lambda: doc  # type: ignore[assignment]
    rows = accuracy.ground_truth()["runs"]
    ignored: set[str] = set()
    labelled = []
    for run, row in zip(accuracy.ground_truth_runs(), rows):
        name = row.get("name", run.id)
        labelled.append((name, row, dataclasses.replace(_with_knobs(run, row, ignored), id=name)))
    runs = tuple(run for _, _, run in labelled)
    groups = tuple(accuracy.COMPONENT_MAP)
    width = max(len(n) for n, _, _ in labelled)
    print(f"{'run':{width}} {'peak':>7} {'plan':>7} {'det':>7} {'err':>6}  "
          + "  ".join(f"{g[:6]:>13}" for g in groups))
    for name, _, r in labelled:
        comp = accuracy.component_errors(r)
        cells = "  ".join(f"{m / GIB:6.2f}/{d / GIB:6.2f}" for m, d in comp.values())
        print(f"{name:{width}} {r.measured / GIB:7.2f} {r.compared('planning') / GIB:7.2f} "
              f"{r.compared('detailed') / GIB:7.2f} {float(r.error('detailed')):+6.1%}  {cells}")
    for mode in accuracy.MODES:
        s = accuracy.summary(runs, mode)
        print(f"{mode}: median |error| {float(s.median_abs):.1%}, worst {float(s.worst):+.1%} "
              f"({s.worst_id}), within 10 %: {s.within_10}/{s.n}")
    if ignored:
        print(f"calc has no field {', '.join(sorted(ignored))} yet: the estimates ignore "
              "those knobs")
    _pairs(labelled)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
