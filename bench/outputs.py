"""Every widget's output over a fixed set of states, as one digest per (widget, locale, state):
the guard rail of a refactor that must not change a byte (`git stash` / another checkout, run
it twice, compare).

    python bench/outputs.py dump OUT.jsonl      # widget() and results_json() of every state
    python bench/outputs.py compare A.jsonl B.jsonl

The states are deterministic (random.Random(0)): each widget's default, its warm-up states
(`render.warm_queries`), and states drawn from the hostile values of the fuzz targets and from
the valid values of every field, one to four fields at a time, in every locale.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calc import render  # noqa: E402
from calc.fields import FIELDS  # noqa: E402
from calc.i18n import LOCALES  # noqa: E402

#: Values each field may take: valid ones and the hostile ones of tests/unit/test_fuzz.py.
VALUES = [
    "", " ", "-0", "0", "+1", "NaN", "inf", "1e400", "2.5", "2048.5", "1,5", "1.000,5",
    "1 000", "٫۵", "۴۰۹۶", "٤٠٩٦", "0x10", "8B", "0.5B", "350M", "7b", "1T", "true", "false",
    "<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "\u202e4096", "9" * 65,
    "custom", "llama-3.1-8b", "qwen2.5-0.5b", "llama-65b", "full", "lora", "qlora", "qv",
    "attention", "all-linear", "adamw", "adamw-8bit", "sgd", "lion", "GiB", "GB", "MiB",
    "planning", "detailed", "bf16", "fp32", "a40", "h100-80", "rtx-4090", "1", "2", "4", "8",
    "16", "64", "512", "4096", "32768", "7", "20", "0.74", "12", "16", "8", "4096", "11008",
    "32", "128256", "__proto__",
]
WIDGET_KEYS = ("n", "bpp", "bpp_custom", "act", "hours", "price", "gpu", "d_in", "d_out",
               "dtype")
STATES_PER_LOCALE = 150


def states(name: str, locale: str) -> list[dict[str, str]]:
    rng = random.Random(f"{name}:{locale}")
    out: list[dict[str, str]] = [dict(render.DEFAULT_QUERY.get(name) or {})]
    out += [json.loads(q) for q in json.loads(render.warm_queries(name, locale, 40))]
    keys = list(FIELDS) + list(WIDGET_KEYS)
    for _ in range(STATES_PER_LOCALE):
        out.append({rng.choice(keys): rng.choice(VALUES) for _ in range(rng.randint(1, 4))})
    return out


def dump(path: str) -> None:
    n = 0
    with open(path, "w", encoding="utf-8") as f:
        for name in render.WIDGETS:
            for loc in LOCALES:
                for q in states(name, loc):
                    qj = json.dumps(q, sort_keys=True, ensure_ascii=False)
                    out = render.results_json(name, qj, loc)
                    html = render.widget(name, loc, q)
                    row = {"widget": name, "locale": loc, "query": qj,
                           "results": hashlib.sha256(out.encode()).hexdigest(),
                           "widget_html": hashlib.sha256(html.encode()).hexdigest()}
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
                    n += 1
    print(f"{n} states ({len(render.WIDGETS)} widgets x {len(LOCALES)} locales) -> {path}")


def compare(a: str, b: str) -> int:
    rows_a = [json.loads(x) for x in Path(a).read_text(encoding="utf-8").splitlines()]
    rows_b = [json.loads(x) for x in Path(b).read_text(encoding="utf-8").splitlines()]
    if len(rows_a) != len(rows_b):
        print(f"different number of states: {len(rows_a)} vs {len(rows_b)}")
        return 1
    bad = [(x, y) for x, y in zip(rows_a, rows_b) if x != y]
    for x, y in bad[:10]:
        print("differs:", x["widget"], x["locale"], x["query"][:120])
    print(f"{len(rows_a)} states compared, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        dump(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
