"""calc.bidi: Latin runs of right-to-left text isolated, in the widgets and the guide's prose."""

from calc.bidi import LRI, PDI, isolate_latin, isolate_text

SPAN = '<span dir="ltr" lang="en">'


def test_latin_runs_are_isolated_in_prose():
    out = isolate_latin('<p>با Llama 3.1 8B و ZeRO-3/FSDP &amp; <code>a b</code> '
                        '<span class="calc-fig">۱۶ GB</span></p>')
    assert f"{SPAN}Llama 3.1 8B</span>" in out
    assert f"{SPAN}ZeRO-3/FSDP</span>" in out
    assert "&amp;" in out and "<code>a b</code>" in out
    assert '<span class="calc-fig">۱۶ GB</span>' in out
    assert out.count(SPAN) == 2  # nothing else touched


def test_widget_markup_options_and_own_direction():
    out = isolate_latin('<label>رتبهٔ LoRA (r)</label><option value="a">AdamW با BF16</option>'
                        '<span class="calc-fig">۱۶ GB</span><span dir="ltr">V = N</span>'
                        '<p>Q&amp;A</p><svg><text>GiB</text></svg>')
    assert f'<label>رتبهٔ {SPAN}LoRA</span> ({SPAN}r</span>)</label>' in out
    assert f'<option value="a">{LRI}AdamW{PDI} با {LRI}BF16{PDI}</option>' in out
    assert '<span class="calc-fig">۱۶ GB</span>' in out  # figures: isolated by calc.css
    assert '<span dir="ltr">V = N</span>' in out  # already marked
    assert "&amp;" in out and "<svg><text>GiB</text></svg>" in out


def test_skip_markers_comments_and_nesting():
    html = ('<!-- keep <b>LoRA</b> --><div data-calc-widget="x"><p>QLoRA</p></div>'
            '<p dir="rtl">NF4</p><a class="headerlink" href="#a">LoRA</a><p>a<br>b</p>')
    page = isolate_latin(html, (" dir=", "data-calc-widget", "headerlink"))
    assert page.startswith("<!-- keep <b>LoRA</b> -->")
    assert "<p>QLoRA</p>" in page and '<p dir="rtl">NF4</p>' in page
    assert '<a class="headerlink" href="#a">LoRA</a>' in page
    assert f"<p>{SPAN}a</span><br>{SPAN}b</span></p>" in page  # a void element closes nothing
    widget = isolate_latin(html)  # without markers: only dir="ltr"/"auto" is the element's own
    assert f"<p>{SPAN}QLoRA</span></p>" in widget
    assert f'<p dir="rtl">{SPAN}NF4</span></p>' in widget


def test_plain_text_uses_isolate_marks_and_keeps_isolated_runs():
    assert isolate_text("حافظهٔ GPU کافی نیست") == f"حافظهٔ {LRI}GPU{PDI} کافی نیست"
    quoted = f"مقدار «{LRI}abc def{PDI}» نامعتبر است، LoRA"
    assert isolate_text(quoted) == f"مقدار «{LRI}abc def{PDI}» نامعتبر است، {LRI}LoRA{PDI}"
    assert isolate_text("بدون لاتین") == "بدون لاتین"


def test_runs_already_isolated_are_not_wrapped_again():
    unit = f"۸۰ {LRI}GB{PDI}"
    assert isolate_latin(f"<td>{unit}</td>") == f"<td>{unit}</td>"
    assert (isolate_latin(f'<option value="a">NVIDIA A100 {unit}</option>')
            == f'<option value="a">{LRI}NVIDIA A100{PDI} {unit}</option>')


def test_a_list_of_latin_identifiers_is_one_left_to_right_run():
    """"(q, k, v, o)" inside Persian text reads q, k, v, o left to right, not reversed."""
    assert (isolate_text("همهٔ لایه‌های خطی (q, k, v, o)")
            == f"همهٔ لایه‌های خطی ({LRI}q, k, v, o{PDI})")
    assert isolate_latin("<p>LoRA، QLoRA</p>") == f"<p>{SPAN}LoRA</span>، {SPAN}QLoRA</span></p>"
