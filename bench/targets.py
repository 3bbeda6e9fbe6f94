"""What the benchmark measures and the targets it checks (issue #6), shared by bench.py (the
measurements) and report.py (BENCHMARKS.md)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from calc.i18n import LOCALES  # noqa: E402  (the site's locales)

__all__ = ["ROOT", "BENCH", "LOCALES", "PAGES", "WIDGET_PAGES", "LIGHTHOUSE_PAGES",
           "LH_CATEGORIES", "T_READY_RATIO", "T_P95_MS", "T_GUIDE_BYTES", "T_BUILD_S", "T_LH",
           "T_NET_LIVE_S", "T_NET_RATIO", "T_NET_BYTES", "T_LOOPBACK_RATIO", "WARM_MS", "yes"]

PAGES = ("", "how-it-works", "rule-of-thumb", "full-fine-tuning", "lora-qlora",
         "choosing-a-gpu", "calculator", "faq", "accuracy")
WIDGET_PAGES = {"calculator": "calculator", "lora-qlora": "adapter",
                "full-fine-tuning": "quick", "choosing-a-gpu": "cost"}
#: Issue 18: every page of every locale (`bench.py --lh-pages` narrows it for a quick look).
LIGHTHOUSE_PAGES = PAGES
LH_CATEGORIES = ("performance", "accessibility", "best-practices", "seo")

# Targets of issue #6.
T_READY_RATIO = 1.10
T_P95_MS = 16.0
T_GUIDE_BYTES = 300 * 1024
T_BUILD_S = 30.0
T_LH = {"performance": 95, "accessibility": 100, "best-practices": 100, "seo": 100}

# Targets of issue #18 (measured by bench.py's throttled profiles, network.py, and section 1-2).
T_NET_LIVE_S = 6.0  # fast 4G, cold: live within 6 s
T_NET_RATIO = 1.0  # fast 4G, cold: at most 1.0 x the bare boot on the same line
T_NET_BYTES = 5_000_000  # fast 4G, cold: at most 5 MB transferred before live
T_LOOPBACK_RATIO = 0.6  # loopback, cold: at most 0.6 x the bare boot


def _js_const(name: str, path: Path) -> int:
    """A numeric `const NAME = N;` of the site's scripts, for the report's explanations."""
    found = re.search(rf"^const {name} = (\d+);", path.read_text(encoding="utf-8"), re.M)
    if not found:
        raise LookupError(f"{path.name} has no const {name}")
    return int(found.group(1))


#: The worker's warm-up before ready (docs/assets/calc/worker-python.js WARM_MS).
WARM_MS = _js_const("WARM_MS", ROOT / "docs" / "assets" / "calc" / "worker-python.js")


def yes(ok: bool) -> str:
    """A target's verdict as BENCHMARKS.md's tables write it."""
    return "met" if ok else "**not met**"
