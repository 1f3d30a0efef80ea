"""`ir.int_arith`: which nodes are total int arithmetic, and which unused ones are dropped.

Graphs built by hand over int example values (plain ints stand for SymInt metas: the same
test).  The oracle for "total" is Python: a node counted total must raise on no pair of
ints from a sample; dropping keeps every node some output or later node uses, and every
node before the last one kept (positions the trace recorded must stay the same nodes')."""

from __future__ import annotations

import itertools
import operator

from bcfront.ir.graph import Graph
from bcfront.ir.int_arith import drop_unused_int_arith, is_total, only_total_int_arith

SAMPLE = (-(2**70), -7, -1, 0, 1, 2, 63, 64, 2**65)


def _graph(*ops):
    """inputs n, m (ints); then one node per (target, args) with args naming earlier nodes."""
    g = Graph("t")
    names = {"n": g.add_input(_Src("n"), 3), "m": g.add_input(_Src("m"), 4)}
    for i, (target, args) in enumerate(ops):
        real = [names.get(a, a) if isinstance(a, str) else a for a in args]
        names[f"x{i}"] = g.add("call", target, real, meta=0)
    return g, names


class _Src:
    def __init__(self, name):
        self.name = name

    def readable(self):
        return self.name


def test_nodes_counted_total_raise_on_no_ints():
    candidates = [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
                  operator.lshift, operator.rshift, operator.and_, operator.or_, operator.xor,
                  operator.truediv, operator.pow]  # fmt: skip
    for fn in candidates:
        for k in (-3, 0, 1, 5, 64, 65):
            g, names = _graph((fn, ["n", k]))
            if not is_total(names["x0"]):
                continue
            for n in SAMPLE:  # every value the symbol may take: never raises
                fn(n, k)
        g, names = _graph((fn, ["n", "m"]))
        if is_total(names["x0"]):
            for n, m in itertools.product(SAMPLE, repeat=2):
                fn(n, m)


def test_division_by_a_symbol_or_zero_is_not_total():
    for fn in (operator.floordiv, operator.mod):
        assert not is_total(_graph((fn, ["n", "m"]))[1]["x0"])
        assert not is_total(_graph((fn, ["n", 0]))[1]["x0"])
        assert is_total(_graph((fn, ["n", 4]))[1]["x0"])


def test_unused_trailing_arithmetic_is_dropped_and_nothing_before_a_kept_node():
    g, names = _graph(
        (operator.mod, ["n", 4]),  # unused, but before a kept node: stays
        (operator.floordiv, ["n", "m"]),  # may raise: stays
        (operator.add, ["n", 1]),  # used by the output
        (operator.mul, ["x2", 2]),  # unused: dropped
        (operator.mod, ["x3", 100]),  # unused: dropped
    )
    g.outputs = [names["x2"]]
    assert drop_unused_int_arith(g) == 2
    assert g.body == [names["x0"], names["x1"], names["x2"]]
    assert not only_total_int_arith(g)  # the floordiv by a symbol


def test_a_graph_of_total_arithmetic_alone_is_recognized():
    g, names = _graph((operator.add, ["n", "m"]), (operator.mul, ["x0", 3]))
    g.outputs = [names["x1"]]
    assert drop_unused_int_arith(g) == 0
    assert only_total_int_arith(g)
