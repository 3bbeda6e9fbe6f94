"""The build's parts (site_build/) on their own: macros, escaping, errors, the translation
check, the digit check, Latin isolation, the search index per locale."""

from __future__ import annotations

import dataclasses
import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from mkdocs.exceptions import PluginError

from calc import catalog, engine
from calc.fields import parse
from calc.fmt import fmt
from site_build import pages, prose, search
from site_build.macros import constants, render_markdown


def render(text: str, locale: str = "en") -> str:
    return render_markdown(text, locale, "test.md")


def test_fig_emits_raw_value_and_formatted_text():
    out = render('{{ fig("total", 16060522496, "GiB") }}')
    assert out == ('<span class="calc-fig" data-calc="total" data-bytes="16060522496">'
                   f'{fmt(16060522496, "GiB", "en")}</span>')
    out = render('{{ num(C.DISCRETE_USABLE, "percent") }}')
    assert 'data-value="0.95"' in out and ">95%<" in out


def test_fig_escapes_everything_it_inserts():
    out = render('{{ fig("a\\"<b>", 1, "number") }}')
    assert "<b>" not in out and "&lt;b&gt;" in out and "&quot;" in out


def test_macros_use_the_page_locale():
    assert "۱۶" in render("{{ num(16) }}", "fa")
    assert ">16<" in render("{{ num(16) }}", "en")
    assert render("{{ locale }} {{ dir }}", "fa") == "fa rtl"
    assert render("{{ locale }} {{ dir }}", "tr") == "tr ltr"


def test_est_runs_the_engine():
    e = engine.estimate(parse({"model": "llama-3.1-8b", "method": "qlora"}))
    out = render('{{ est(model="llama-3.1-8b", method="qlora", unit="GB") }}')
    assert f'data-bytes="{e.total}"' in out and 'data-calc="total"' in out
    out = render('{{ est("trainable_params", model="llama-3.1-8b", ckpt=False) }}')
    assert f'data-value="{e.trainable_params}"' in out and "parameters" in out
    out = render('{{ est("activations", model="llama-3.1-8b", ckpt=False) }}')
    e2 = engine.estimate(parse({"model": "llama-3.1-8b", "ckpt": "false"}))
    assert f'data-bytes="{e2.get("activations")}"' in out


def test_small_calculators():
    assert f'data-bytes="{112 * 10**9}"' in render("{{ quick(7, 16, 0) }}")
    assert 'data-bytes="4000000000"' in render('{{ rot("lora", 0.5) }}')
    assert 'data-value="131072"' in render("{{ adapter(4096, 4096, 16) }}")
    assert 'data-bytes="262144"' in render('{{ adapter(4096, 4096, 16, unit="MiB") }}')
    assert 'data-value="14.80"' in render('{{ cost(20, "a40") }}')
    assert 'data-value="14.80"' in render("{{ cost(20, price=0.74) }}")
    mac = catalog.gpu("mac-36")
    assert f'data-bytes="{engine.usable_bytes(mac)}"' in render('{{ card("mac-36", "usable") }}')
    assert render('{{ model_name("llama-3.1-8b") }}') == "Llama 3.1 8B"
    assert render("{{ C.OPTIMIZER_BYTES['adamw'] }} {{ C.FULL_BYTES_PER_PARAM }}") == "12 16"


def test_constants_name_the_calculators_defaults():
    """C.DEFAULT_<FIELD> is what the calculator starts from: the inputs calc.fields.parse makes
    of an empty query, field by field (prose that names the defaults follows the calculator)."""
    inputs = parse({})
    defaults = {k: v for k, v in vars(constants()).items() if k.startswith("DEFAULT_")}
    fields = [f.name for f in dataclasses.fields(inputs) if f.name != "arch"]
    assert sorted(defaults) == sorted(f"DEFAULT_{name.upper()}" for name in fields)
    for name in fields:
        value = getattr(inputs, name)
        assert defaults[f"DEFAULT_{name.upper()}"] == getattr(value, "value", value), name
    assert render("{{ num(C.DEFAULT_RANK) }}") == render(f"{{{{ num({inputs.rank}) }}}}")
    assert render("{{ est(rank=C.DEFAULT_RANK, seq=C.DEFAULT_SEQ) }}") == render("{{ est() }}")


def test_t_reads_calcs_catalog_and_rejects_unknown_keys():
    assert render('{{ t("table.gpu") }}', "en")
    with pytest.raises(PluginError, match="no key"):
        render('{{ t("no.such.key") }}')


@pytest.mark.parametrize("text, message", [
    ("{{ nope }}", "undefined"),
    ('{{ est(model="no-such-model") }}', "calc rejected"),
    ('{{ est(seq="-1") }}', "calc rejected"),
    ('{{ fig("x", 1.5, "GiB") }}', "integer bytes"),
    ("{{ num(", "syntax"),
    ('{{ cost(20, "t4") }}', "no example price"),
])
def test_errors_fail_the_build_with_the_page_and_line(text, message):
    with pytest.raises(PluginError, match=message) as info:
        render_markdown("line one\n\n" + text, "en", "page.md", offset=2)
    assert "page.md" in str(info.value)


def test_attribute_lists_are_not_jinja_comments():
    assert render("## Q {#an-id}") == "## Q {#an-id}"
    assert render("a {## a comment ##}b") == "a b"


def test_widget_macro_gives_a_widget_root():
    out = render('{{ widget("calculator") }}', "fa")
    assert 'data-calc-widget="calculator"' in out


# --- the translation check ------------------------------------------------------------------


def test_a_missing_translation_fails(tmp_path, repo_root):
    docs = tmp_path / "docs"
    shutil.copytree(repo_root / "docs", docs, ignore=shutil.ignore_patterns("assets"))
    prose.check_translations(docs)  # complete
    (docs / "faq.ru.md").unlink()
    with pytest.raises(PluginError, match=r"faq\.ru\.md is missing"):
        prose.check_translations(docs)
    (docs / "faq.ru.md").write_text("# x\n", encoding="utf-8")
    (docs / "extra.de.md").write_text("# x\n", encoding="utf-8")
    with pytest.raises(PluginError, match="extra.de.md"):
        prose.check_translations(docs)


# --- the digit check ------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "a 7B model", "about 80 GB", "۱۶ بایت", "4-bit NF4", "year 2019", "x 0.5B", "3 cards",
    "description: 12 GB", "an A100 80 GB card", "Apple silicon Mac 36 GB",
])
def test_digit_check_rejects_typed_figures(text):
    assert prose.digit_problems(text) == [(1, text)]


@pytest.mark.parametrize("text", [
    "BF16, FP32, NF4 on an H100", "ZeRO-3/FSDP and Phi-3", "Llama 3.1 8B", "RTX 4090",
    "Qwen2.5", "S3-compatible storage", "1. first step", "## Q { #13b-on-24gb .faq }",
    "{{ num(16) }} bytes", "`--seq 2048`", "[link](faq.md#13b-on-24gb)",
    "<span data-x=\"12\">a</span>", "```\nseq 2048\n```", "{## 12 ##}",
    "<cite>8-bit Optimizers via Block-wise Quantization</cite>", "Mistral 7B v0.3",
    "«<cite dir=\"ltr\">8-bit Optimizers</cite>»",
    "{% if x > 1 %}a{% endif %}", "NVIDIA GeForce RTX 3060 and RTX PRO 6000 Blackwell",
])
def test_digit_check_allows_names_code_and_markup(text):
    assert prose.digit_problems(text) == []


def test_digit_check_reports_the_line():
    assert prose.digit_problems("ok\n\nnot 5 ok") == [(3, "not 5 ok")]


def test_pages_pass_the_digit_check(repo_root):
    problems = []
    for path in sorted((repo_root / "docs").glob("*.md")):
        problems += [f"{path.name}:{n}: {line}" for n, line in prose.digit_problems(
            path.read_text(encoding="utf-8"))]
    assert not problems, "\n".join(problems)


# --- right to left --------------------------------------------------------------------------


def test_persian_pages_isolate_latin_but_not_inside_code_or_figures(built_site):
    text = (built_site / "fa" / "faq" / "index.html").read_text(encoding="utf-8")
    assert '<span dir="ltr" lang="en">LoRA</span>' in text
    assert '<span dir="ltr"' not in "".join(re.findall(r'<span class="calc-fig".*?</span>', text))


def test_locale_search_index_keeps_the_locales_pages_relative_to_its_root():
    index = {"config": {"lang": ["en", "tr", "pt", "ru", "ar"], "separator": "[\\s\\-]+",
                        "pipeline": ["stopWordFilter"]},
             "docs": [{"location": loc, "title": loc, "text": ""}
                      for loc in ("", "#a", "faq/", "faq/#q", "tr/", "tr/faq/#q", "fa/faq/",
                                  "pt/", "ru/x/")]}
    en = search.locale_search_index(index, "en")
    assert [d["location"] for d in en["docs"]] == ["", "#a", "faq/", "faq/#q"]
    assert en["config"]["lang"] == ["en"]
    assert en["config"]["separator"] == "[\\s\\-]+"
    tr = search.locale_search_index(index, "tr")
    assert [d["location"] for d in tr["docs"]] == ["", "faq/#q"]
    assert tr["config"]["lang"] == ["en", "tr"]
    fa = search.locale_search_index(index, "fa")
    assert [d["location"] for d in fa["docs"]] == ["faq/"]
    assert fa["config"]["lang"] == ["en", "ar"]
    assert index["docs"][4]["location"] == "tr/"  # the plugin's index is left as it was


@pytest.mark.parametrize("base, locale, expected", [
    ("../..", "tr", "../../tr/"), ("..", "fa", "../fa/"), ("/", "ru", "/ru/"),
    ("/docs/", "pt", "/docs/pt/"), ("../..", "en", "../.."), (".", "en", "."),
])
def test_point_search_at_locale_sets_material_base(base, locale, expected):
    page = ('<p>"base": "x"</p><script id="__config" type="application/json">'
            f'{{"annotate": null, "base": "{base}", "search": "a/b.js"}}</script>')
    out = pages.point_search_at_locale(page, locale)
    assert out == page.replace(f'"base": "{base}"', f'"base": "{expected}"')
    with pytest.raises(PluginError):
        pages.point_search_at_locale("<p>no config</p>", "tr")
