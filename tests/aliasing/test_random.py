"""Random programs of views and in-place ops: backends against eager, analysis against reality.

Two oracles.  Eager PyTorch on an identical world (results, arguments and the
sharing pattern, over three calls with fresh arguments).  And the storage the
real tensors actually share when the captured graph runs node by node: any
two values whose storages overlap (same ``untyped_storage().data_ptr()`` and
intersecting byte ranges) must be in one predicted may-alias class — and,
since the classes come from exact schema facts, values of one class must
really share a storage.
"""

from __future__ import annotations

import itertools
import types

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.ir.alias_facts import observe  # noqa: E402
from bcfront.ir.graph import evaluate  # noqa: E402

from .harness import Hazard, run_hazard  # noqa: E402
from .randprog import generate  # noqa: E402

SEEDS = range(30)
TRITON_SEEDS = range(6)


@pytest.mark.parametrize("backend", ["eager", "fx"])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_matches_eager(seed, backend):
    prog = generate(seed)
    run_hazard(Hazard(prog.function(), prog.inputs), backend)


@pytest.mark.parametrize("seed", TRITON_SEEDS)
def test_random_program_matches_eager_triton(seed):
    prog = generate(seed)
    run_hazard(Hazard(prog.function(), prog.inputs), "triton")


def _byte_range(t):
    n = t.element_size()
    if t.numel() == 0:
        return (0, 0)
    start = t.storage_offset() * n
    extent = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    return (start, start + extent * n)


def overlap(a, b) -> bool:
    if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
        return False
    (s1, e1), (s2, e2) = _byte_range(a), _byte_range(b)
    return s1 < e2 and s2 < e1


def _real_values(graph, inputs) -> dict:
    """value id (as `Observation.leaves` names them) -> the real tensor, running node by node."""
    every = types.SimpleNamespace(inputs=graph.inputs, body=graph.body, outputs=graph.body)
    out = {n.name: t for n, t in zip(graph.inputs, inputs)}
    for n, v in zip(graph.body, evaluate(every, inputs)):  # every node's value, kept alive
        if isinstance(v, torch.Tensor):
            out[n.name] = v
        elif isinstance(v, (tuple, list)):
            out.update((f"{n.name}[{i}]", t) for i, t in enumerate(v) if isinstance(t, torch.Tensor))
    return out


def _graph_inputs(graph, prog, k):
    args = dict(zip(prog.params, prog.inputs(k)))
    return [args[n.target.readable()[3:-2]] for n in graph.inputs]  # L['x'] -> x


@pytest.mark.parametrize("seed", SEEDS)
def test_observed_sharing_is_within_predicted_classes(seed):
    prog = generate(seed)
    cf = bcfront.capture(prog.function(), backend="eager")
    cf(*prog.inputs(0))
    (graph,) = cf.entries[0].graph_objects
    analysis = observe(graph, _graph_inputs(graph, prog, 0)).analysis
    real = _real_values(graph, _graph_inputs(graph, prog, 1))  # all kept alive: no reuse
    assert set(real) <= {v for c in analysis.classes for v in c.members}
    checked = 0
    for (u, a), (v, b) in itertools.combinations(real.items(), 2):
        if overlap(a, b):
            assert analysis.may_alias(u, v), f"{u} and {v} share storage\n{graph}\n{analysis.to_text()}"
            checked += 1
        if analysis.may_alias(u, v):
            assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr(), (u, v)
    assert checked or len(real) < 2 or all(len(c.members) == 1 for c in analysis.classes)


def test_random_programs_cover_the_hazards():
    """The generator really produces writes through views, shared inputs and view outputs."""
    progs = [generate(s) for s in SEEDS]
    text = "\n".join(p.source for p in progs)
    assert sum(p.view_input is not None for p in progs) >= 5
    for needle in ("_(", "] = ", ".t()", "split(", "out="):
        assert needle in text, needle
