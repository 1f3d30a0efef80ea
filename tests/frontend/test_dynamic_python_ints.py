"""Int arguments of pure-Python functions become symbolic once they change (automatic dynamic).

A function that touches no tensor used to be specialized on every int argument value: called
with a new value each time, it captured again until the recompile limit, then ran natively.
With torch imported, an int argument that changed between calls is a symbol of the capture's
ShapeEnv from the next capture on, as in functions that touch tensors: one entry serves every
value its guards admit.  Such an entry guards no torch state (grad mode, default dtype...): it
does no tensor work.  Each result is compared with the plain Python call on the same values.
"""

from __future__ import annotations

import traceback
import warnings

import pytest

import bcfront

torch = pytest.importorskip("torch")


def _calls(cf, fn, values):
    """Calls `cf` and `fn` on each argument tuple; both give the same (result or exception)."""
    for args in values:
        try:
            want = ("ok", fn(*args))
        except Exception as e:  # noqa: BLE001 - the native exception, compared
            want = ("raise", type(e), str(e))
        try:
            got = ("ok", cf(*args))
        except Exception as e:  # noqa: BLE001
            got = ("raise", type(e), str(e))
        assert got == want, args
        assert type(got[1]) is type(want[1]), args


def test_a_changing_int_argument_does_not_capture_once_per_value():
    def f(n, m):
        k = n * m + 1
        return [k, n - m]

    cf = bcfront.capture(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no recompile-limit warning, no native fallback
        _calls(cf, f, [(n, 3) for n in range(2, 40)])
    assert len(cf.entries) <= 2  # the first value's entry, then one for every value
    assert cf.report().native_fallbacks == ()


def test_an_int_only_entry_guards_no_torch_state():
    def f(n):
        return n * 7 - 2

    cf = bcfront.capture(f)
    _calls(cf, f, [(n,) for n in (5, 6, 9)])
    kinds = {g.kind.name for e in cf.entries for g in e.guards}
    assert "GLOBAL_STATE" not in kinds
    before = len(cf.entries)
    with torch.no_grad():  # grad mode does not matter to int arithmetic: the same entry
        _calls(cf, f, [(n,) for n in (11, 12)])
    with torch.inference_mode():
        _calls(cf, f, [(13,)])
    assert len(cf.entries) == before


def test_tensor_work_after_int_arithmetic_still_guards_grad_mode():
    def f(n, x):
        return x * (n + 1)

    cf = bcfront.capture(f)
    x = torch.ones(3, requires_grad=True)
    for n in (2, 3, 4):
        assert torch.equal(cf(n, x), f(n, x))
    with torch.no_grad():
        out = cf(5, x)
    assert not out.requires_grad  # a grad-mode entry was not reused under no_grad
    assert torch.equal(out, (x * 6).detach())


def _order(n, m):
    return "lt" if n < m else ("eq" if n == m else "gt")


# name -> (function of two ints, argument pairs): each a behaviour of Python ints
SEMANTICS = {
    "floor division and modulo of negatives": (
        lambda n, m: (n // m, n % m, -n // m),
        [(7, 2), (-7, 2), (9, -4), (13, 5)],
    ),
    "true division gives a float": (lambda n, m: n / m, [(7, 2), (9, 4), (1, 3)]),
    "power with a negative exponent": (lambda n, m: n**m, [(2, 3), (3, 2), (2, -1), (5, 0)]),
    "shifts, and a negative shift raises": (
        lambda n, m: (n << m, n >> m),
        [(5, 2), (9, 1), (3, -1), (1, 70)],
    ),
    "bit operations": (lambda n, m: (n & m, n | m, n ^ m, ~n), [(12, 10), (-3, 6), (255, 1)]),
    "big ints": (lambda n, m: n * m + 1, [(2**70, 3), (2**80, 5), (-(2**65), 7)]),
    "comparisons picked by value": (_order, [(1, 5), (5, 5), (9, 5), (2, 7)]),
    "text of an int": (
        lambda n, m: (str(n), repr(m), f"{n:>5}|{m:x}", "%d-%d" % (n, m)),
        [(3, 4), (17, 255), (-2, 9)],
    ),
    "an int's own attributes and methods": (
        lambda n, m: (n.real, n.bit_length(), m.to_bytes(2, "big")),
        [(5, 3), (1023, 258), (7, 9)],
    ),
    "indexing and slicing a list": (
        lambda n, m: ([10, 20, 30, 40, 50][n], list(range(10))[n:m]),
        [(1, 4), (2, 6), (7, 8)],
    ),
    "a loop bound": (lambda n, m: sum(i * m for i in range(n)), [(3, 2), (5, 2), (8, 3)]),
    "a dict key and a set member": (lambda n, m: ({n: m}[n], n in {1, 2, 3}), [(2, 3), (3, 4), (9, 1)]),
    "divmod, abs, min, max, pow with a modulus": (
        lambda n, m: (divmod(n, m), abs(n - m), min(n, m), max(n, m), pow(n, 2, m)),
        [(17, 5), (4, 9), (-6, 4)],
    ),
    "zero division": (lambda n, m: n // m + n % m, [(7, 2), (8, 3), (9, 0), (10, 4)]),
    "a bool is no int to the guard": (
        lambda n, m: (n + m, type(n).__name__),
        [(2, 3), (3, 4), (True, 4), (False, 5), (6, 1)],
    ),
}


@pytest.mark.parametrize("name", list(SEMANTICS))
def test_symbolic_ints_behave_as_python_ints(name):
    fn, values = SEMANTICS[name]
    cf = bcfront.capture(fn)
    _calls(cf, fn, values * 2)  # twice: the cached entries as well


def test_zero_division_in_a_symbolic_int_graph_raises_from_the_users_line():
    def f(n, m):
        q = n // m
        return q + 1

    cf = bcfront.capture(f)
    _calls(cf, f, [(7, 2), (8, 3), (9, 4)])
    with pytest.raises(ZeroDivisionError) as got:
        cf(5, 0)
    last = traceback.extract_tb(got.value.__traceback__)[-1]
    assert (last.name, last.line) == ("f", "q = n // m")


def test_int_items_of_a_list_argument_become_symbolic_too():
    def f(xs):
        return xs[0] * 2 + xs[1]

    cf = bcfront.capture(f)
    _calls(cf, f, [([n, n + 1],) for n in range(3, 30)])
    assert len(cf.entries) <= 2


def test_without_torch_imported_ints_are_runtime_values_and_torch_is_not_imported():
    # a program that never imported torch: bcfront does not import it for symbolic ints
    # (the first capture would take seconds); a changing int is a runtime value instead
    # (`semantics/runtime_values.py`): the first two values' entries, then one for the rest
    import subprocess
    import sys

    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "import bcfront\n"
        "def f(n, m):\n"
        "    return n * m + 1\n"
        "cf = bcfront.capture(f)\n"
        "assert [cf(n, 3) for n in range(2, 6)] == [n * 3 + 1 for n in range(2, 6)]\n"
        "print(len(cf.entries), 'torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["3", "False"]


class _Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n  # len() of it: a use that (here) breaks on a symbolic int


def test_a_break_only_a_symbolic_int_would_make_traces_again_with_constants():
    def f(n, m):
        return len(_Sized(n)) + m, str(ValueError(n, m))

    cf = bcfront.capture(f, fullgraph=True)  # a break would raise
    _calls(cf, f, [(n, n + 1) for n in range(2, 7)] * 2)


def test_a_shape_guards_arithmetic_runs_in_the_c_check_program():
    from bcfront import fast_call

    if not fast_call.HAVE_C:
        pytest.skip("no C call (BCFRONT_PURE_PYTHON)")

    def leap(year):
        return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)

    cf = bcfront.capture(leap)
    years = [2000, 1900, 2024, 2023, 1600, 2100, 1996, 2001]
    _calls(cf, leap, [(y,) for y in years])
    _calls(cf, leap, [(y,) for y in years])  # cached: a call first reaching an entry makes its C program
    checked = [e.link_names.checked for e in cf.entries if e.link_names is not None]
    assert checked and all(c is not None for c in checked)  # every guard a C program
    before = sum(c.hits for c in checked)
    _calls(cf, leap, [(y + 400,) for y in years])  # same answers: cached entries, their C checks
    assert sum(c.hits for c in checked) == before + len(years)


# Python uses of an int, each on a symbolic one (its function called with changing values)
# inside a function touching no tensor and inside one touching a tensor: the same results,
# exceptions and messages as Python.  A symbolic int is a graph value (a `TensorV`): none
# of these may take a tensor's path (``len()`` and iteration of one did: a tensor's errors).
USES = {
    "iter": lambda n: iter(n),
    "list": lambda n: list(n),
    "subscript": lambda n: n[0],
    "len": lambda n: len(n),
    "call": lambda n: n(),
    "hash, bool, int, float": lambda n: (hash(n), bool(n), int(n), float(n)),
    "membership": lambda n: (n in [1, 2, 5], n in {3: 0}),
    "repetition": lambda n: ([1, 2] * n, "ab" * n),
    "type": lambda n: (isinstance(n, int), type(n), n.__class__, callable(n)),
    "attributes": lambda n: (n.numerator, n.__index__()),
    "a missing attribute": lambda n: n.foo,
    "setattr": lambda n: setattr(n, "x", 1),
    "builtins": lambda n: (round(n, -1), sum([n, 1]), max([n, 3]), sorted([n, 1, 9]), abs(-n), chr(65 + n)),
    "text": lambda n: (f"{n!r}|{n:03d}", "%s/%r" % (n, n), bin(n)),
    "set and dict": lambda n: ({n, 1}, {3: "a"}.get(n, "z")),
    "None": lambda n: (n is None, n == None),  # noqa: E711 - the comparison itself is the case
    "division": lambda n: (n / 2, n**-2, divmod(n, 3), (-n) % 3, pow(n, n, 7), n < 2.5),
    "zero division": lambda n: 1 // (n - n),
    "boolean operators": lambda n: (n and "x", n or "x", not n),
    "sequence index and slice": lambda n: ((1, 2, 3, 4, 5, 6, 7)[n], "abcdefgh"[n], "abcdefgh"[n:]),
    "range and enumerate": lambda n: (list(range(n, 10, 2)), list(enumerate("abc", n))),
    "bytes of a size": lambda n: bytes(n),
    "json": lambda n: __import__("json").dumps([n]),
}


def _outcome(fn, *args):
    try:
        r = fn(*args)
    except Exception as e:  # noqa: BLE001 - compared with Python's
        return ("raise", type(e), str(e))
    return ("ok", type(r).__name__ if hasattr(r, "__next__") else repr(r))


@pytest.mark.parametrize("with_tensor", [False, True])
@pytest.mark.parametrize("use", list(USES))
def test_python_uses_of_a_symbolic_int_are_pythons(use, with_tensor):
    op = USES[use]
    x = torch.ones(2)

    def pure(n):
        return op(n)

    def touching(n, x):
        return op(n), x + 1

    fn, extra = (touching, (x,)) if with_tensor else (pure, ())
    cf = bcfront.capture(fn)
    for n in (3, 4, 5, 6, 4):
        got, want = _outcome(cf, n, *extra), _outcome(fn, n, *extra)
        if with_tensor and got[0] == want[0] == "ok":
            got, want = got[1].split(", tensor")[0], want[1].split(", tensor")[0]
        assert got == want, n
