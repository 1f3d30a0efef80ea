"""Floats computed from symbolic sizes stay symbolic (`SymFloatV`, `semantics.symbolic`).

``n ** 0.5``, ``n / 2`` and ``float(n)`` of a symbolic int are SymFloat nodes, as under
torch.compile: arithmetic on them and their use as a value operand of a tensor op take
no guard on the value, so a changing int needs one symbolic capture, not one per value
(beam search's length penalty, ``scores / (cur_len ** length_penalty)``).  What needs
the value itself (a branch, ``int()``, a key, text, a C function) specializes it under a
ShapeEnv guard, as before.  Oracle: the same function run eagerly on the same inputs.
"""

from __future__ import annotations

import math
import struct

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

from .test_torch_semantics import assert_same as _same  # noqa: E402

NS = (3, 4, 5, 6, 7, 9)


def _run(fn, ns=NS, **options):
    """`fn(x, n)` captured against eager for each n; the report of all the calls."""
    cf = bcfront.capture(fn, **options)
    with bcfront.explain.collect() as calls:
        for n in ns:
            x = torch.linspace(-1, 1, 7)
            _same(cf(x, n), fn(x.clone(), n))
    return calls.report()


def length_penalty(x, n):
    return x / (n**1.0)


def root_scale(x, n):
    return torch.softmax(x / (n - 2) ** 0.5, dim=0) * float(n) + n / 3


def float_chain(x, n):
    f = n / 2
    f += 1
    f *= -2
    return x.clamp(min=abs(f) / 10) * (f // 1) + f % 3, f


def value_operands(x, n):
    f = n**0.5
    return torch.full((2,), f), x.masked_fill(x > 0, f), torch.where(x > 0, x, f), f / (x + 2)


@pytest.mark.parametrize("fn", [length_penalty, root_scale, float_chain, value_operands])
def test_a_float_of_a_symbolic_int_takes_no_guard_on_its_value(fn):
    report = _run(fn)
    assert len(report.recompiles) == 1, [r.guard for r in report.recompiles]  # n made symbolic
    assert not any(f.graph_breaks for f in report.functions)


def beam_like(x, steps):
    cur = start = x.shape[0]
    while cur < start + steps:
        x = x / ((cur + 1 - start) ** 1.0)  # the length penalty of a growing length
        cur = cur + 1
        if x.sum() > 1e9:  # a data-dependent break in every iteration
            break
    return x


def test_a_loop_with_a_length_penalty_does_not_run_natively():
    cf = bcfront.capture(beam_like)
    x = torch.rand(3) + 1
    with bcfront.explain.collect() as calls:
        _same(cf(x, 8), beam_like(x, 8))
    report = calls.report()
    assert not any(f.native_fallbacks for f in report.functions), report


def branch(x, n):
    return x + 1 if n / 2 > 2.2 else x - 1


def conversions(x, n):
    f = n / 2
    return x + int(f) + bool(f - 1.5) + round(f), str(f), repr(n / 3), f"{f:.2f}"


def as_key(x, n):
    f = n / 2
    return x + {f: 1}.get(n / 2, 0) + hash(f) % 7 + (f == 2.5) + (f is None)


def attributes(x, n):
    f = n / 2
    return x + f.is_integer() + f.real, type(f) is float, isinstance(f, float)


def c_functions(x, n):
    f = n / 2
    return x + math.sqrt(f) + math.floor(f) + len(struct.pack("d", f)) + min(f, 3.0)


def as_index(x, n):
    return x[: int(n / 2)] + [1, 2, 3, 4, 5, 6, 7][int(n / 2)]


@pytest.mark.parametrize("fn", [branch, conversions, as_key, attributes, c_functions, as_index])
def test_a_use_that_needs_the_value_specializes_it_without_a_break(fn):
    report = _run(fn)
    assert not any(f.graph_breaks for f in report.functions), [
        b.message for f in report.functions for b in f.graph_breaks
    ]


def stored(x, n):
    box.scale = n / 2
    seen.append(n**0.5)
    return x * box.scale, n / 3, [n / 4]


class _Box:
    pass


box = _Box()
seen: list = []


def test_a_symbolic_float_that_leaves_the_graph_is_the_real_float():
    cf = bcfront.capture(stored)
    for n in NS:
        x = torch.randn(3)
        seen.clear()
        got = cf(x, n)
        got_state = (box.scale, list(seen))
        seen.clear()
        _same(got, stored(x, n))
        _same(got_state, (box.scale, list(seen)))
        assert type(got_state[0]) is float and type(got_state[1][0]) is float


def number_read_times_size(x, n):
    return x * (x.sum().item() * n) + x * (x.max().item() * (n / 2))


def test_a_number_read_from_a_tensor_with_a_symbolic_int_stays_in_the_graph():
    # the stand-in arithmetic took the SymInt's example (KeyError: SymFloat, an internal error)
    report = _run(number_read_times_size, capture_scalar_outputs=True)
    assert not any(f.native_fallbacks or f.graph_breaks for f in report.functions), report
