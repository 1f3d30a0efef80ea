"""``__bool__`` must return a bool: anything else is CPython's TypeError.

``class B: def __bool__(self): return 0`` -- ``bool(B())``, ``not B()`` and ``if B():``
raise "__bool__ should return bool, returned int"; the trace took the int's truth
instead.  Oracle: CPython on the same function, with ``fullgraph=True``.
"""

from __future__ import annotations

import pytest

import bcfront


class Truthy:
    def __init__(self, result):
        self.result = result

    def __bool__(self):
        return self.result


def truth_of(result):
    out = []
    for test in (
        lambda t: bool(t),
        lambda t: not t,
        lambda t: [1 for _ in [0] if t],
        lambda t: 1 if t else 0,
    ):
        try:
            out.append(test(Truthy(result)))
        except TypeError as e:
            out.append(str(e))
    return out


@pytest.mark.parametrize("result", [True, False, 0, 1, "", None, 1.5])
def test_bool_result_same_as_plain_python(result):
    cf = bcfront.capture(truth_of, fullgraph=True)
    assert cf(result) == truth_of(result)
    assert cf(result) == truth_of(result)
