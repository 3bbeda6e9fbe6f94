"""Helpers of the browser tests: drive a widget like a reader, read its figures, and compute
what they must be by running calc in CPython (never numbers copied from the page)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from calc import catalog, engine
from calc.engine import estimate
from calc.fields import parse
from expected_figures import expected_calculator, expected_cost  # noqa: F401 - the tests import them from here
from calc.widgets.adapter import parse as parse_adapter
from calc.widgets.quick import parse as parse_quick
from calc.fmt import fmt
from calc.i18n import LOCALES  # noqa: F401 - the tests import it from here
from calc.render import EXAMPLE_HOURS, WIDGETS
from calc.types import GpuKind

ROOT = Path(__file__).resolve().parents[2]


def nav_pages(root: Path = ROOT) -> tuple[str, ...]:
    """The pages of mkdocs.yml's nav, in its order, as page paths: "" for the home page,
    "calculator" for calculator.md."""
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)  # !ENV and friends
    config = yaml.load((root / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)

    def files(items):
        for item in items:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            if isinstance(value, list):
                yield from files(value)
            elif isinstance(value, str) and value.endswith(".md"):
                yield value

    return tuple("" if f == "index.md" else f.removesuffix(".md").removesuffix("/index")
                 for f in files(config["nav"]))


def widget_pages(root: Path = ROOT) -> dict[str, str]:
    """{widget: the nav page whose (English) source places it with the widget() macro}."""
    out: dict[str, str] = {}
    for page in nav_pages(root):
        source = (root / "docs" / f"{page or 'index'}.md").read_text(encoding="utf-8")
        for name in re.findall(r"""\{\{\s*widget\(\s*["']([\w-]+)["']""", source):
            out.setdefault(name, page)
    return out


#: Every page of the nav; the page of each widget.
NAV_PAGES = nav_pages()
PAGES = widget_pages()
assert set(PAGES) == set(WIDGETS), f"widgets without a page: {set(WIDGETS) - set(PAGES)}"
BOOT_TIMEOUT_MS = 60_000  # generous for a loaded 2-core CI runner; the page itself gives up at 20 s


@dataclass
class Watch:
    """Everything a page did that a test may need to refuse."""

    origin: str
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def attach(self, page) -> "Watch":
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("requestfailed", lambda r: self.failed.append(f"{r.method} {r.url}: {r.failure}"))
        page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.url}: HTTP {r.status}"))
        page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text))
        page.on("pageerror", lambda e: self.page_errors.append(str(e)))
        return self

    def foreign(self) -> list[str]:
        return [u for u in self.requests
                if not (u.startswith(self.origin + "/") or u.startswith(("data:", "blob:")))]

    def check(self) -> None:
        assert self.foreign() == [], "requests left the site's origin"
        assert self.failed == [], "failed requests"
        assert self.console_errors == [], "console errors"
        assert self.page_errors == [], "uncaught errors"


def root(page, name: str):
    return page.locator(f'[data-calc-widget="{name}"]')


def wait_ready(page, name: str) -> None:
    """Until Python has taken over and the first result is on the page."""
    page.wait_for_selector(f'[data-calc-widget="{name}"][data-state="ready"][data-busy="false"]',
                           state="attached", timeout=BOOT_TIMEOUT_MS)


def wait_idle(page, name: str) -> None:
    page.wait_for_selector(f'[data-calc-widget="{name}"][data-busy="false"]', state="attached",
                           timeout=10_000)


FIGURES_JS = """(root) => {
  const out = {};
  for (const el of root.querySelectorAll('[data-calc-results] [data-calc]')) {
    const name = el.getAttribute('data-calc');
    if (name in out) throw new Error('data-calc=' + name + ' twice');
    out[name] = el.hasAttribute('data-bytes')
      ? ['bytes', el.getAttribute('data-bytes'), el.textContent]
      : ['value', el.getAttribute('data-value'), el.textContent];
  }
  return out;
}"""


def figures(page, name: str) -> dict[str, tuple[str, str, str]]:
    got = root(page, name).evaluate(FIGURES_JS)
    return {k: tuple(v) for k, v in got.items()}


def assert_figures(got: dict, expected: dict) -> None:
    """Same names; raw values equal; visible text equal where the expectation has one."""
    got = dict(got)
    got.pop("trainable_share", None)  # a ratio, checked separately where it matters
    for moe in ("experts_share", "active_params"):  # a mixture-of-experts model's line
        got.pop(moe, None)
    assert set(got) == set(expected), (set(got) ^ set(expected))
    for name, (kind, raw, text) in expected.items():
        assert got[name][:2] == (kind, raw), (name, got[name], (kind, raw))
        if text is not None:
            assert got[name][2] == text, (name, got[name][2], text)


def set_form(page, name: str, query: dict[str, str], *, reset: bool = True) -> None:
    """Reset the widget's form, then enter `query` field by field as a reader would."""
    r = root(page, name)
    if reset:
        r.locator('button[type="reset"]').click()
        wait_idle(page, name)
    if "config" in query and "model" not in query:  # the paste box is the custom model's
        query = {"model": "custom", **query}
    for field, value in query.items():
        control = r.locator(f'[name="{field}"]').first
        details = control.locator("xpath=ancestor::details[1]")  # the group that holds it
        if details.count() and not control.is_visible():
            if details.get_attribute("open") is None:
                details.locator("summary").first.click()
        kind = control.evaluate("el => el.type || el.tagName.toLowerCase()")
        if kind == "radio":
            r.locator(f'input[name="{field}"][value="{value}"]').check()
        elif kind == "checkbox":
            control.set_checked(value == "true")
        elif kind.startswith("select"):
            control.select_option(value)
        else:
            control.fill(value)
    wait_idle(page, name)


# --- what the page must show, from calc in CPython -----------------------------------------


def expected_adapter(query: dict, locale: str) -> dict:
    d_in, d_out, rank, dtype = parse_adapter(query, locale)
    params = engine.lora_layer_params(d_in, d_out, rank)
    size = engine.adapter_bytes(d_in, d_out, rank, dtype)
    return {"adapter_params": ("value", str(params), fmt(params, "params", locale)),
            "adapter_bytes": ("bytes", str(size), fmt(size, "MiB", locale, 2))}


def expected_quick(query: dict, locale: str) -> dict:
    q = dict(query)
    if q.get("bpp") == "custom":
        q["bpp"] = q.pop("bpp_custom")
    n, bpp, act = parse_quick(q, locale)
    unit = q.get("unit", "GB")
    total = engine.quick_full(n, bpp, act)
    states = engine.quick_full(n, bpp, 0)
    acts = engine.quick_full(0, 0, act)
    fitting = [g for g in catalog.gpus()
               if g.kind is GpuKind.DISCRETE and total <= engine.usable_bytes(g)]
    return {"quick_total": ("bytes", str(total), fmt(total, unit, locale)),
            "quick_states": ("bytes", str(states), fmt(states, unit, locale)),
            "quick_activations": ("bytes", str(acts), fmt(acts, unit, locale)),
            "smallest_gpu": ("value", min(fitting, key=lambda g: g.memory_bytes).id
                             if fitting else "none", None)}


EXPECTED = {"calculator": expected_calculator, "adapter": expected_adapter,
            "quick": expected_quick, "cost": expected_cost}


class Held:
    """Requests held back until release(): Python's runtime arriving when a test says (while
    Python is still loading). A request after the release goes through (e.g. the GET after the
    worker's HEAD check)."""

    def __init__(self):
        self.routes = []
        self.released = False

    def __call__(self, route):
        if self.released:
            route.continue_()
        else:
            self.routes.append(route)

    def release(self):
        self.released = True
        for route in self.routes:
            route.continue_()
        self.routes.clear()

    def release_once_asked(self, page, seconds: float = 10):
        """Release as soon as the page has asked for a held request (or after `seconds`)."""
        for _ in range(int(seconds * 10)):
            if self.routes:
                break
            page.wait_for_timeout(100)
        self.release()


def throttle(context, page, mbit: float, latency_ms: int) -> None:
    """Chromium's network emulation on the page and its workers: `mbit` Mbit/s each way,
    `latency_ms` added to each round trip."""
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    bps = mbit * 1e6 / 8
    cdp.send("Network.emulateNetworkConditions", {
        "offline": False, "latency": latency_ms, "downloadThroughput": bps,
        "uploadThroughput": bps})
