"""calc.accuracy and calc.render_accuracy: the accuracy page's data and its rendering.

Expected values are computed here from the JSON files and the engine directly (parse +
estimate), never copied from calc.accuracy's own results.
"""

from __future__ import annotations

import json
import re
import statistics
from decimal import Decimal
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path

import pytest

from calc import accuracy, engine
from calc.fields import FIELDS, parse
from calc.i18n import LOCALES, catalog
from calc.render_accuracy import TARGET, accuracy_table
from calc.types import Mode

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "calc" / "data"
MEAS = json.loads((DATA / "measurements.json").read_text(encoding="utf-8"))
TRUTH = json.loads((DATA / "ground_truth.json").read_text(encoding="utf-8"))
CONFIG_FIELDS = ("method", "seq", "batch", "ckpt", "optimizer")
CATEGORIES = {"parameters", "buffers", "gradients", "activations", "temporaries",
              "optimizer_state", "other"}


def interface(row: dict) -> dict[str, str]:
    out = {}
    for k, v in row.items():
        if k in FIELDS and v is not None:
            out[k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
    return out


def measured_bytes(row: dict) -> int:
    if "measured_bytes" in row:
        return int(row["measured_bytes"])
    return int((Decimal(row["measured_gib"]) * 2**30).to_integral_value())


def total(q: dict[str, str], mode: str) -> engine.Estimate:
    return engine.estimate(parse({**q, "mode": mode}))


# --- the data files ----------------------------------------------------------------------------


def test_measurements_are_complete():
    runs = MEAS["runs"]
    # issue 13: at least 25 fully specified published runs, from 5 sources and 3 stacks
    assert 25 <= len(runs) <= 200
    assert len({r["id"] for r in runs}) == len(runs)
    sources = {re.sub(r"#.*$", "", r["source"]).split("/blob/")[0] + "/" + r["source"].rsplit("/", 1)[-1].split("#")[0]
               for r in runs}
    assert len(sources) >= 5, sources
    assert len({r["framework"] for r in runs}) >= 3
    for r in runs:
        for key in ("id", "gpu", "kind", "source", "notes", "model", "framework", *CONFIG_FIELDS):
            assert r.get(key) not in (None, ""), (r["id"], key)
        assert r["source"].startswith("https://"), r["id"]
        assert r["kind"] in ("allocated", "peak-active", "reserved", "nvidia-smi"), r["id"]
        if r["model"] == "custom":  # the architecture field by field, and where it comes from
            assert r.get("arch_source", "").startswith("https://"), r["id"]
        assert ("measured_bytes" in r) != ("measured_gib" in r), r["id"]
        assert measured_bytes(r) > 2**28, r["id"]
        if r["method"] != "full":
            assert r.get("rank") and r.get("targets"), r["id"]
        for reason in r.get("reasons", ()):
            for loc in LOCALES:
                assert f"accuracy.reason.{reason}" in catalog(loc), (loc, reason)


def test_ground_truth_is_complete():
    about = TRUTH["_about"]
    for pkg in ("torch", "transformers", "peft"):
        assert about["versions"][pkg], pkg
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", about["date"])
    assert about["steps"] >= 2
    runs = TRUTH["runs"]
    assert len(runs) >= 4
    models = {r["model"] for r in runs}
    assert "llama-3.2-1b" in models
    for r in runs:
        for key in ("model", *CONFIG_FIELDS):
            assert r.get(key) is not None, key
        assert set(r["components"]) == CATEGORIES
        # the breakdown is the tracker's snapshot at the peak: it adds up to the peak
        assert sum(r["components"].values()) == r["peak_bytes"]
        assert r["peak_bytes"] == max(r["peak_after_step"])
        if r["method"] == "full":
            assert r["trainable_params"] == r["params_counted"]
        else:
            arch = parse(interface(r)).arch
            assert r["trainable_params"] == engine.lora_trainable_params(
                arch, r["rank"], parse(interface(r)).targets)
    # methods, checkpointing and lengths all vary
    assert {r["method"] for r in runs} >= {"full", "lora"}
    assert {r["ckpt"] for r in runs} == {True, False}
    assert len({r["seq"] for r in runs}) >= 2


def test_ground_truth_models_are_the_presets():
    """The script's LlamaConfig shapes are the presets' (so its parameter count is calc's)."""
    for r in TRUTH["runs"]:
        if r["method"] == "full":
            arch = parse({"model": r["model"]}).arch
            assert r["params_counted"] == arch.params, r["model"]


@pytest.mark.parametrize("row", MEAS["runs"] + TRUTH["runs"], ids=lambda r: r.get("id") or
                         f'{r["model"]}-{r["method"]}-{r["seq"]}-{r["ckpt"]}')
def test_every_row_parses_strictly(row):
    q = interface(row)
    for mode in ("planning", "detailed"):
        inputs = parse({**q, "mode": mode}, strict=True)
        assert inputs.mode is Mode(mode)


# --- the errors ------------------------------------------------------------------------------


def test_errors_match_an_independent_computation():
    runs = {r.id: r for r in accuracy.measurements()}
    assert set(runs) == {r["id"] for r in MEAS["runs"]}
    for row in MEAS["runs"]:
        q, m = interface(row), measured_bytes(row)
        run = runs[row["id"]]
        assert run.measured == m
        for mode in ("planning", "detailed"):
            est = total(q, mode).total
            if row["kind"] in ("allocated", "peak-active"):  # live tensors: no CUDA context, no cache
                est -= engine.OVERHEAD_BYTES
            if row.get("peak_step") == "first":  # the first step: no earlier step's memory
                est -= total(q, mode).get("previous_step")
            assert run.compared(mode) == est
            assert run.error(mode) == Fraction(est - m, m)


def test_ground_truth_errors_leave_out_the_overhead():
    runs = accuracy.ground_truth_runs()
    assert len(runs) == len(TRUTH["runs"])
    for run, row in zip(runs, TRUTH["runs"]):
        q = interface(row)
        for mode in ("planning", "detailed"):
            e = total(q, mode)
            expected = e.total - engine.OVERHEAD_BYTES
            assert run.compared(mode) == expected
            assert run.error(mode) == Fraction(expected - row["peak_bytes"], row["peak_bytes"])


@pytest.mark.parametrize("mode", ["planning", "detailed"])
def test_summary_median_and_worst(mode):
    runs = accuracy.measurements()
    errors = []
    for row in MEAS["runs"]:
        m = measured_bytes(row)
        e = total(interface(row), mode)
        est = e.total
        if row["kind"] in ("allocated", "peak-active"):
            est -= engine.OVERHEAD_BYTES
        if row.get("peak_step") == "first":
            est -= e.get("previous_step")
        errors.append(Fraction(est - m, m))
    s = accuracy.summary(runs, mode)
    assert s.n == len(errors)
    assert s.median_abs == statistics.median(sorted(abs(e) for e in errors))
    assert abs(s.worst) == max(abs(e) for e in errors)
    assert s.worst in errors
    assert s.within_10 == sum(1 for e in errors if abs(e) <= Fraction(1, 10))


def test_component_groups_cover_every_category_and_component():
    cats = {c for group in accuracy.COMPONENT_MAP.values() for c in group[0]}
    assert cats == CATEGORIES - {"other"} | {"other"}
    run = accuracy.ground_truth_runs()[0]
    groups = accuracy.component_errors(run)
    assert sum(m for m, _ in groups.values()) == run.measured
    assert sum(d for _, d in groups.values()) == run.detailed.total - engine.OVERHEAD_BYTES


# --- the realistic model is the default; planning mode is the spec's formula ----------------


def test_realistic_is_the_default_and_planning_unchanged():
    for row in MEAS["runs"] + TRUTH["runs"]:
        q = interface(row)
        default = engine.estimate(parse(q))
        realistic = total(q, "detailed")
        planning = total(q, "planning")
        assert default.components == realistic.components
        assert [k for k, _ in planning.components] == list(engine.COMPONENTS)
    # the spec's QLoRA 65B figure, through the same path
    e = total({"model": "llama-65b", "params": "65e9", "method": "qlora", "rank": "64", "seq": "512",
               "batch": "1", "ckpt": "true"}, "planning")
    assert round(Decimal(e.total) / 2**30, 1) == Decimal("43.3")


# --- the page block ---------------------------------------------------------------------------


class _Check(HTMLParser):
    VOID = {"br", "img", "input", "meta", "link", "hr", "col", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.figs: list[dict[str, str]] = []
        self.svg_img = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "span" and "calc-fig" in (a.get("class") or ""):
            self.figs.append(a)
        if tag == "svg" and a.get("role") == "img":
            self.svg_img = True
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (self.stack[-3:], tag)
        self.stack.pop()


@pytest.mark.parametrize("loc", LOCALES)
def test_accuracy_table_renders(loc):
    out = accuracy_table(loc)
    assert "\n\n" not in out  # one Markdown HTML block
    p = _Check()
    p.feed(out)
    p.close()
    assert p.stack == []
    assert p.svg_img and "<title" in out and "<desc" in out
    # published single- and multi-GPU runs, our runs, our runs by component, throughput
    assert out.count("<table") == 5
    assert "{" not in re.sub(r"<[^>]*>", "", out)  # no unfilled placeholder
    for fig in p.figs:
        assert fig.get("data-calc")
        assert ("data-bytes" in fig) != ("data-value" in fig)
        if "data-bytes" in fig:
            assert int(fig["data-bytes"]) >= 0
    # every published measurement and every estimate is on the page, as raw bytes
    raw = {int(f["data-bytes"]) for f in p.figs if "data-bytes" in f}
    for run in accuracy.measurements() + accuracy.ground_truth_runs():
        assert run.measured in raw
        assert run.compared("planning") in raw and run.compared("detailed") in raw
    for row in MEAS["runs"]:
        assert row["source"] in out
    if loc == "fa":
        assert re.search("[۰-۹]", out)
    # the summary states both modes' median
    for mode in ("planning", "detailed"):
        s = accuracy.summary(accuracy.measurements(), mode)
        med = [f for f in p.figs if f["data-calc"] == f"median.{mode}"]
        assert med and abs(Decimal(med[0]["data-value"]) - Decimal(s.median_abs.numerator)
                           / Decimal(s.median_abs.denominator)) < Decimal("0.000001")


def test_target_sentence_follows_the_data():
    s = accuracy.summary(accuracy.measurements(), "detailed")
    key = "accuracy.target.met" if s.median_abs <= TARGET else "accuracy.target.missed"
    text = catalog("en")[key].split("{target}")[0]
    assert text in accuracy_table("en")
