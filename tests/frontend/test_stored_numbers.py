"""What the trace reads of values from outside that it took whole before #30 broke on
them: a dict keyed by tuples of constants (its DICT_KEYS guard checks the types inside
the tuples: ``(1, 2) == (True, 2.0)``), and the number an int or float subclass instance
stores, read by the C methods that see only it (``int.__repr__``, ``float.__float__``:
`number_values`, guarded by that read).  Each is compared with plain Python under
``fullgraph=True``, then called again with a value the guards must tell apart.
"""

from __future__ import annotations

import enum

import bcfront


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Num(int):
    def __repr__(self):
        return "Num!"


class Flt(float):
    def __repr__(self):
        return "Flt!"


def key_texts(d):
    return [repr(k) for k in d], d.get((1, 2), "none")


def stored_texts(x):
    if isinstance(x, int):
        return int.__repr__(x), int.__index__(x), int.__float__(x)
    y = float.__float__(x)
    try:
        whole = float.__int__(x)
    except OverflowError as e:
        whole = str(e)
    return float.__repr__(x), y, type(y), whole


def _same_as_native(fn, values):
    cf = bcfront.capture(fn, fullgraph=True)
    for v in values:
        for _ in range(2):  # the trace, then the cached entry
            assert cf(v) == fn(v), v


def test_a_dict_keyed_by_tuples_is_read_and_guarded_by_its_keys_types():
    _same_as_native(
        key_texts,
        [{(1, 2): "a", ("x", (None, 1.5)): "b"}, {(True, 2.0): "a", ("x", (None, 1.5)): "b"}, {(1, 2): 0}],
    )


def test_the_number_inside_a_subclass_instance_is_read_and_guarded():
    _same_as_native(
        stored_texts, [Num(7), Num(8), Level.LOW, Level.HIGH, Flt(2.5), Flt(-0.0), Flt(0.0), Flt("inf")]
    )
