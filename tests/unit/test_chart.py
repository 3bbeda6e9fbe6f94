"""calc.chart: the stacked bar as SVG (accessible, escaped, mirrored in RTL)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from decimal import Decimal

import pytest

from calc import estimate, parse
from calc.chart import HEIGHT, MIN_SEGMENT, WIDTH, stacked_bar, swatch
from calc.fmt import fmt
from calc.i18n import LOCALES, t

SVG = "{http://www.w3.org/2000/svg}"


def parts_of(query=None):
    return estimate(parse(query or {})).components


def svg_tree(text):
    return ET.fromstring(text)  # also proves the SVG is well-formed XML


def rects(root):
    return root.findall(f"{SVG}rect")


@pytest.mark.parametrize("locale", LOCALES)
def test_accessible_image_with_a_text_alternative(locale):
    parts = parts_of()
    root = svg_tree(stacked_bar(parts, "GiB", locale, id_prefix="x"))
    assert root.get("role") == "img"
    assert root.get("aria-labelledby") == "x-title x-desc"
    title = root.find(f"{SVG}title")
    desc = root.find(f"{SVG}desc")
    assert title.get("id") == "x-title" and desc.get("id") == "x-desc"
    total = sum(v for _, v in parts)
    assert fmt(total, "GiB", locale) in title.text
    # every part, with its translated name and its formatted size, is in the description
    for name, value in parts:
        assert t(f"component.{name}", locale) in desc.text
        assert fmt(value, "GiB", locale) in desc.text


def test_segments_are_proportional_and_fill_the_bar():
    parts = parts_of({"method": "full", "ckpt": "false", "seq": "4096"})
    root = svg_tree(stacked_bar(parts, "GiB", "en"))
    rs = rects(root)
    assert [r.get("data-part") for r in rs] == [n for n, v in parts if v > 0]
    assert [int(r.get("data-bytes")) for r in rs] == [v for _, v in parts if v > 0]
    widths = [float(r.get("width")) for r in rs]
    assert sum(widths) == pytest.approx(WIDTH, abs=0.05)
    total = sum(v for _, v in parts)
    shown = [v for _, v in parts if v > 0]  # a part of 0 bytes has no segment
    big = [(w, v) for w, v in zip(widths, shown) if v * WIDTH / total >= MIN_SEGMENT]
    # the large parts keep their ratios (the small ones got MIN_SEGMENT)
    ratios = [w / v for w, v in big]
    assert max(ratios) == pytest.approx(min(ratios), rel=1e-3)
    # contiguous, left to right
    x = 0.0
    for r in rs:
        assert float(r.get("x")) == pytest.approx(x, abs=0.02)
        assert r.get("height") == str(HEIGHT)
        x += float(r.get("width"))


def test_small_parts_stay_visible():
    root = svg_tree(stacked_bar([("base_weights", 10**12), ("overhead", 1)], "GiB", "en"))
    widths = [float(r.get("width")) for r in rects(root)]
    assert widths[1] == MIN_SEGMENT and sum(widths) == pytest.approx(WIDTH)


def test_zero_parts_are_not_drawn_but_listed():
    root = svg_tree(stacked_bar([("base_weights", 5), ("gradients", 0)], "GiB", "en"))
    assert len(rects(root)) == 1
    assert t("component.gradients", "en") in root.find(f"{SVG}desc").text


def test_right_to_left_starts_at_the_right_edge():
    parts = parts_of()
    ltr = {r.get("data-part"): r for r in rects(svg_tree(stacked_bar(parts, "GiB", "en")))}
    rtl = {r.get("data-part"): r for r in rects(svg_tree(stacked_bar(parts, "GiB", "fa")))}
    first = parts[0][0]
    assert float(ltr[first].get("x")) == 0
    w = float(rtl[first].get("width"))
    assert float(rtl[first].get("x")) + w == pytest.approx(WIDTH, abs=0.02)
    for name in ltr:  # each segment is the mirror image of its LTR twin
        lx, lw = float(ltr[name].get("x")), float(ltr[name].get("width"))
        rx = float(rtl[name].get("x"))
        assert rx == pytest.approx(WIDTH - lx - lw, abs=0.02)


def test_colours_are_left_to_css():
    text = stacked_bar(parts_of(), "GiB", "en")
    assert "fill=" not in text and "style=" not in text and "#" not in text.split("<title")[0]
    classes = [r.get("class").split() for r in rects(svg_tree(text))]
    assert all("calc-seg" in c for c in classes)
    # a component's colour is its place in the breakdown, whether or not a part before it is
    # empty (0 bytes: no segment)
    parts = parts_of()
    assert [c[1] for c in classes] == [f"calc-c{i}" for i, (_, v) in enumerate(parts) if v > 0]
    assert swatch(2) == '<span class="calc-swatch calc-c2" aria-hidden="true"></span>'


def test_text_is_escaped():
    hostile = '<script>alert(1)</script>"&'
    text = stacked_bar([("base_weights", 1)], "GiB", "en", id_prefix='a"b', title=hostile)
    root = svg_tree(text)
    assert root.find(f"{SVG}title").text == hostile  # round-trips as text, not markup
    assert "<script" not in text
    assert root.find(f"{SVG}script") is None


def test_other_units_in_the_text_alternative():
    parts = parts_of()
    desc = svg_tree(stacked_bar(parts, "GB", "ru")).find(f"{SVG}desc").text
    assert fmt(parts[0][1], "GB", "ru") in desc


def test_share_in_the_text_alternative():
    desc = svg_tree(stacked_bar([("base_weights", 3), ("overhead", 1)], "GiB", "en")).find(
        f"{SVG}desc").text
    assert fmt(Decimal("0.75"), "percent", "en") in desc and fmt(Decimal("0.25"), "percent", "en") in desc


def test_every_place_in_the_breakdown_has_a_colour():
    """A segment's colour is its place among the components a card can show (the realistic
    model's, DPO's reference model, the strategy's working set): the stylesheet defines each,
    in the light and the dark palette (an undefined class would fill black)."""
    import re
    from pathlib import Path

    from calc.engine import REALISTIC_COMPONENTS

    parts = sorted((Path(__file__).resolve().parents[2] / "docs/assets/calc/css").glob("*.css"))
    css = "".join(p.read_text(encoding="utf-8") for p in parts)  # the served file's parts
    places = len(REALISTIC_COMPONENTS) + 2  # + reference_model + gathered_weights or ddp_buckets
    for i in range(places):
        assert len(re.findall(rf"--calc-c{i}:", css)) == 2, i
        assert f".calc-c{i} {{ fill: var(--calc-c{i});" in css, i
