"""Differential test: the fast may-alias pass (`analysis.objalias`) against its plain
reference (`analysis.reference.objalias`), over the corpus and the standard-library
sample `test_reference.py` uses (every 4th code object of every 40th file); ``-m slow``:
every code object of the standard library.  The objects, every SSA value's and every
variable's points-to set and the escaped objects must be equal."""

from __future__ import annotations

import pytest
from corpus import stdlib_code_objects
from differential import check_each, differential_sample, named

from bcfront.analysis import FunctionAnalysis
from bcfront.analysis.reference import objalias as ref_alias
from bcfront.analysis.stack import StackDepthError


def labels(objs) -> set[str]:
    return {o.label for o in objs}


def check(code) -> None:
    fa = FunctionAnalysis(code)
    try:
        ssa = fa.ssa
    except StackDepthError:
        return  # no SSA, no aliases (`test_reference` checks that both raise)
    got = fa.aliases
    want = ref_alias.aliases(ssa)
    assert labels(got.objects) == want.objects
    assert len(got.objects) == len(want.objects)
    assert labels(got.escaped) == want.escaped
    assert set(got.variables) == set(want.names)
    for name in got.variables:
        assert labels(got.points_to(name)) == want.names[name], name
    for v in ssa.values:
        assert labels(got.value_points_to(v)) == want.values[v.id], v


def test_fast_aliases_equal_the_reference():
    sample = differential_sample()
    assert len(sample) > 400
    check_each(sample, check)


@pytest.mark.slow
@pytest.mark.timeout(7200)
def test_fast_aliases_equal_the_reference_on_all_of_stdlib():
    check_each(((named(c), c) for c in stdlib_code_objects()), check)
