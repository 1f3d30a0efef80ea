"""The functionalized graph is pure, and what it cannot express stays eager (never wrong).

Oracles: running the pure graph with the reference evaluator leaves its
inputs bit-for-bit unchanged (purity observed, not just read off the op
names), and eager PyTorch for the values.
"""

from __future__ import annotations

import operator

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.ir.alias_facts import node_mutates_by_name, observe  # noqa: E402
from bcfront.ir.functionalize import FunctionalizeError, functionalize  # noqa: E402
from bcfront.ir.graph import evaluate  # noqa: E402

from .harness import Hazard, run_hazard  # noqa: E402
from .hazards import HAZARDS, T  # noqa: E402
from .randprog import generate  # noqa: E402

TENSOR_HAZARDS = [
    "inplace_through_view",
    "slice_assignment",
    "transpose_inplace_then_reduce",
    "input_mutation_visible",
    "returned_view_mutated",
    "intermediate_view_before_softmax",
    "outputs_view_each_other",
    "tensor_and_its_view",
    "masked_and_indexed_writes",
]


def captured_graph(fn, args):
    cf = bcfront.capture(fn, backend="eager")
    cf(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
    (graph,) = cf.entries[0].graph_objects
    return graph


def graph_inputs(graph, fn, args):
    import inspect

    names = list(inspect.signature(fn).parameters)
    by_name = dict(zip(names, args))
    return [by_name[n.target.readable()[3:-2]] for n in graph.inputs]


def assert_pure(plan):
    for n in plan.graph.body:
        t = n.target
        assert not node_mutates_by_name(n), n
        assert t is not operator.setitem
        if isinstance(t, torch._ops.OpOverload):
            assert not t._schema.is_mutable, f"{n.name}: {t}"
    before = [t.clone() for t in plan.example_inputs]
    evaluate(plan.graph, plan.example_inputs)
    for b, a in zip(before, plan.example_inputs):
        assert torch.equal(a, b), "the pure graph wrote one of its inputs"


def plan_for(fn, args):
    fresh = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    if len({id(a) for a in args}) < len(args) or args[1:] and args[1]._base is not None:
        fresh = args  # keep the aliasing the case is about
    graph = captured_graph(fn, fresh)
    return functionalize(graph, graph_inputs(graph, fn, args))


@pytest.mark.parametrize("name", TENSOR_HAZARDS)
def test_hazard_graphs_become_pure(name):
    h = HAZARDS[name]
    assert_pure(plan_for(h.fn, h.args(0)))


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs_become_pure(seed):
    prog = generate(seed)
    fn = prog.function()
    assert_pure(plan_for(fn, prog.inputs(0)))


def test_mutated_inputs_and_writebacks_follow_program_order():
    def f(a, b, c):
        c.add_(1)
        a[0] = 2.0
        b.mul_(3)
        a.sub_(1)
        return b.sum()

    args = [T(0, 3, 3), T(1, 3, 3), T(2, 3, 3)]
    plan = plan_for(f, args)
    assert plan.mutated_inputs == ["L_c", "L_a", "L_b"]
    assert plan.analysis.mutated_inputs == ("L_c", "L_a", "L_b")


def test_views_of_inputs_are_rebuilt_outside_the_graph():
    def f(x):
        x.mul_(2)
        return x[1:].t(), x

    plan = plan_for(f, [T(0, 3, 4)])
    kinds = {
        name: (kind, base, [str(s.func) for s in chain]) for name, (kind, base, chain) in plan.outputs.items()
    }
    # (x itself is no graph output: the region returns the input it already holds)
    assert list(kinds.values()) == [("input", "L_x", ["aten.slice.Tensor", "aten.t.default"])]


def test_returned_view_is_a_view_of_the_input_on_fx():
    def f(x):
        x.add_(1)
        return x.view(-1), x[0]

    x = T(0, 3, 4)
    cf = bcfront.capture(f, backend="fx")
    flat, row = cf(x)
    assert flat._base is x and row._base is x
    flat[0] = 100.0
    assert x[0, 0] == 100.0 and row[0] == 100.0


# -- what stays eager ------------------------------------------------------------------------------


def transpose_in_place(x):
    """A metadata write (``t_``): the tensor's shape changes in place."""
    x.t_()
    return x + 1


def fill_through_expand(x):
    """A fill through an expanded view writes one memory cell many times."""
    e = x[0].expand(3, 4)
    e.fill_(2.0)
    return x * 2


def requires_grad_in_place(x):
    """A metadata write with no aten op at all."""
    y = x * 2
    y.requires_grad_()
    return y


@pytest.mark.parametrize("fn", [transpose_in_place, fill_through_expand, requires_grad_in_place])
def test_inexpressible_mutations_stay_eager_and_correct(fn):
    args = [T(0, 3, 4)]
    with pytest.raises(FunctionalizeError):
        plan_for(fn, args)
    cf = run_hazard_allowing_fallback(fn)
    notes = [n for e in cf.entries for n in e.notes]
    assert any("functionalization failed" in n for n in notes), notes
    assert {g.backend for e in cf.entries for g in e.graphs} == {"eager"}


def run_hazard_allowing_fallback(fn):
    from . import harness

    h = Hazard(fn, lambda k: [T(k, 3, 4)])
    saved = harness.check_no_fallback
    harness.check_no_fallback = lambda cf, backend: None
    try:
        return run_hazard(h, "fx")
    finally:
        harness.check_no_fallback = saved


# -- the facts the analysis gets ---------------------------------------------------------------------


def test_facts_come_from_schemas_not_names():
    """``.data``, ``.detach()``, ``reshape`` (viewing or copying) and ``x[idx]`` are told apart."""

    def f(x, idx):
        a = x.data
        b = x.detach()
        c = x.reshape(-1)
        d = x.t().reshape(-1)
        e = x[idx]
        f_ = x[1:]
        return a, b, c, d, e, f_

    args = [T(0, 3, 4), torch.tensor([0, 2])]
    graph = captured_graph(f, args)
    analysis = observe(graph, graph_inputs(graph, f, args)).analysis
    root = analysis.class_of("L_x")
    names = {n.name: n for n in graph.body}
    out = [n.name for n in graph.outputs]
    in_x = [analysis.may_alias("L_x", o) for o in out]
    assert in_x == [True, True, True, False, False, True], (out, root)
    assert names  # the graph exists


def test_storage_safety_net_reports_nothing_for_annotated_ops():
    h = HAZARDS["intermediate_view_before_softmax"]
    args = h.args(0)
    graph = captured_graph(h.fn, args)
    obs = observe(graph, graph_inputs(graph, h.fn, args))
    assert obs.inconsistent == []
