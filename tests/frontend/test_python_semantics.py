"""Captured pure-Python functions behave exactly like the originals (no torch needed).

Oracle: CPython running the original function on an identical deep copy of
the arguments, from the same global state.  Each case is called several times
with changing arguments (exercising guards and recompiles); results, raised
exceptions, mutations of the arguments and of global state must match, and
cases marked `compiled` must be served by compiled entries without breaks.
"""

from __future__ import annotations

import copy

import pytest

import bcfront

from . import corpus_py
from .corpus_py import CASES


def _state():
    return (corpus_py.COUNTER, corpus_py.BUMP.__closure__[0].cell_contents, dict(corpus_py.CFG.__dict__))


def _restore(state):
    corpus_py.COUNTER = state[0]
    corpus_py.BUMP.__closure__[0].cell_contents = state[1]
    corpus_py.CFG.__dict__.clear()
    corpus_py.CFG.__dict__.update(state[2])


def _run(fn, args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - the oracle and the capture must raise alike
        return ("raise", type(e), str(e))


def check_case(case, backend="eager"):
    cf = bcfront.capture(case.fn, backend=backend)
    for args in case.calls + case.calls[:1]:
        start = _state()
        a_ref, a_cap = copy.deepcopy(args), copy.deepcopy(args)
        expected = _run(case.fn, a_ref)
        end_ref = _state()
        _restore(start)
        actual = _run(cf, a_cap)
        assert actual == expected, f"{case.fn.__name__}{args}"
        assert a_cap == a_ref, f"{case.fn.__name__}{args}: argument mutations differ"
        assert _state() == end_ref, f"{case.fn.__name__}{args}: global state differs"
    return cf


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_python(name):
    case = CASES[name]
    cf = check_case(case)
    if case.compiled:
        bad = [(b.reason, b.message, b.lineno) for e in cf.entries for b in e.breaks]
        assert not bad, f"{name}: unexpected graph breaks {bad}"
        assert cf.entries and all(not e.native for e in cf.entries)


def test_no_torch_import_for_pure_python():
    import subprocess
    import sys

    code = (
        "import sys, bcfront\n"
        "from tests.frontend.corpus_py import CASES\n"
        "for c in CASES.values():\n"
        "    cf = bcfront.capture(c.fn)\n"
        "    for a in c.calls:\n"
        "        try: cf(*a)\n"
        "        except Exception: pass\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=__file__.rsplit("/tests/", 1)[0]
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_compiled_entry_is_used_on_second_call():
    def f(a, b):
        return [a] * b

    cf = bcfront.capture(f)
    assert cf(1, 2) == [1, 1]
    region = cf.entries[0].region
    calls = []
    cf.entries[0].region = lambda *a, **k: calls.append(a) or region(*a, **k)
    assert cf(1, 2) == [1, 1]
    assert calls == [(1, 2)]
    assert len(cf.entries) == 1
