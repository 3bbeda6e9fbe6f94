"""Property tests: whatever arrives in any field, only CalcError escapes, and every figure is a
finite, non-negative integer; totals grow with sequence length, batch and rank."""

import math

from hypothesis import HealthCheck, given, settings, strategies as st

from calc import CalcError, estimate, gpu_fit, parse
from calc.fields import FIELDS
from calc.i18n import LOCALES
from calc.widgets.adapter import parse as parse_adapter
from calc.widgets.cost import parse as parse_cost
from calc.widgets.quick import parse as parse_quick

junk = st.one_of(
    st.text(max_size=80),
    st.integers(min_value=-10**30, max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.sampled_from(["full", "lora", "qlora", "qv", "all-linear", "adamw", "GB", "true", "0",
                     "1e400", "-0", "NaN", "۴۰۹۶", "8B", "custom", "llama-3.1-8b", "<script>"]),
)
queries = st.dictionaries(st.sampled_from(FIELDS + ("n", "bpp", "act", "hours", "price", "gpu",
                                                    "d_in", "d_out", "dtype", "zzz")), junk,
                          max_size=8)
locales = st.sampled_from(LOCALES)


def check(est):
    for name, value in est.components:
        assert isinstance(value, int) and value >= 0, name
    assert isinstance(est.total, int) and 0 <= est.total < 10**20
    for fit in gpu_fit(est):
        assert fit.cards is None or fit.cards >= 1


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(queries, locales)
def test_only_the_typed_error_escapes(query, locale):
    try:
        check(estimate(parse(query, locale)))
    except CalcError as err:
        assert err.problems and all(p.field for p in err.problems)
        assert err.message(locale)
    for reader in (parse_adapter, parse_quick, parse_cost):
        try:
            for value in reader(query, locale):
                if not isinstance(value, str) and value is not None:
                    assert math.isfinite(value) and value >= 0
        except CalcError:
            pass


base = {"model": "llama-3.1-8b"}


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 2**20), st.integers(1, 2**20), st.sampled_from(["full", "lora", "qlora"]),
       st.booleans())
def test_monotone_in_sequence_length(a, b, method, ckpt):
    lo, hi = sorted((a, b))
    q = {**base, "method": method, "ckpt": str(ckpt)}
    assert estimate(parse({**q, "seq": str(lo)})).total <= estimate(parse({**q, "seq": str(hi)})).total


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 4096), st.integers(1, 4096))
def test_monotone_in_batch(a, b):
    lo, hi = sorted((a, b))
    assert estimate(parse({"batch": str(lo)})).total <= estimate(parse({"batch": str(hi)})).total


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 1024), st.integers(1, 1024), st.sampled_from(["qv", "attention", "all-linear"]))
def test_monotone_in_rank(a, b, targets):
    lo, hi = sorted((a, b))
    q = {"targets": targets, "method": "qlora"}
    assert estimate(parse({**q, "rank": str(lo)})).total <= estimate(parse({**q, "rank": str(hi)})).total
