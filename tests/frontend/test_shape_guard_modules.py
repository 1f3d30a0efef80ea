"""A ShapeEnv guard that names a module (``torch.sym_float(s0 - 2) ** 1.0 == 4.0``) runs.

torch's guard printer spells float arithmetic on a symbolic int with ``torch.sym_float``;
the guard function has no global ``torch``, so such a guard raised NameError -- a miss on
the very call it was made for: the fresh entry failed its own guards and the call ran
natively (``self-check``) on every call.  Transformers' beam search meets it in its length
penalty, ``(cur_len - prompt_len) ** length_penalty``.  Oracle: plain Python results, and
no native fallback.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def length_penalized(x, n):
    score = (n - 2) ** 1.0
    if score > 2.5:
        return x * 2
    return x - 1


def test_float_power_of_a_symbolic_int_guards_and_captures():
    cf = bcfront.capture(length_penalized)
    for n in (5, 6, 7, 3):
        x = torch.ones(3)
        assert torch.equal(cf(x, n), length_penalized(x, n)), n
    assert cf.native_fallbacks == [], [(f.kind, f.message) for f in cf.native_fallbacks]
    shapes = [str(g.expected) for e in cf.entries for g in e.guards if g.kind.name == "SHAPE"]
    assert any("sym_float" in s for s in shapes), shapes  # the case this pins down
