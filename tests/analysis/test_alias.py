"""The torch-free tensor alias analysis (`bcfront.analysis.alias`) against brute force.

Facts are written by hand (small named programs) or drawn at random; the
oracles are networkx connected components for the classes and a pairwise
conflict scan for the memory dependencies.
"""

from __future__ import annotations

import random

import networkx as nx
import pytest

from bcfront.analysis.alias import AliasAnalysis, OpFacts


def F(op, reads=(), writes=(), outputs=()):
    return OpFacts(op, tuple(reads), tuple(writes), tuple((v, tuple(a)) for v, a in outputs))


# -- named programs ----------------------------------------------------------------------------


def view_then_inplace():
    """v = x[1:]; v.add_(1); s = x.sum()"""
    return AliasAnalysis(
        ["x"],
        [
            F("view", ["x"], outputs=[("v", ["x"])]),
            F("add_", ["v"], ["v"], outputs=[("v2", ["v"])]),
            F("sum", ["x"], outputs=[("s", [])]),
        ],
    )


def two_inputs_sharing():
    """a and b are a tensor and its view; b.mul_(2); c = a + 1"""
    return AliasAnalysis(
        ["a", "b", "w"],
        [
            F("mul_", ["b"], ["b"], outputs=[("b2", ["b"])]),
            F("add", ["a"], outputs=[("c", [])]),
            F("mm", ["c", "w"], outputs=[("d", [])]),
        ],
        shared_inputs=[("a", "b")],
    )


def intermediate_view_write():
    """h = x @ w; h[:, 0] = 0 (select then fill_); p = h.softmax()"""
    return AliasAnalysis(
        ["x", "w"],
        [
            F("mm", ["x", "w"], outputs=[("h", [])]),
            F("select", ["h"], outputs=[("col", ["h"])]),
            F("fill_", ["col"], ["col"], outputs=[("col2", ["col"])]),
            F("softmax", ["h"], outputs=[("p", [])]),
        ],
    )


def test_view_then_inplace_classes():
    a = view_then_inplace()
    assert a.may_alias("x", "v") and a.may_alias("v2", "x")
    assert not a.may_alias("s", "x")
    assert a.class_of("v").root == "x"
    assert a.mutated_inputs == ("x",)
    assert [c.written_by for c in a.written] == [("add_",)]
    assert a.dependencies["sum"] == {"add_"}  # the read stays after the write


def test_shared_inputs_are_one_class():
    a = two_inputs_sharing()
    assert a.may_alias("a", "b")
    assert not a.may_alias("a", "w")
    assert a.mutated_inputs == ("a", "b")
    assert a.dependencies["add"] == {"mul_"}
    assert a.dependencies["mm"] == frozenset()
    assert a.conflicts("mul_", "add") and not a.conflicts("add", "mm")


def test_intermediate_write_is_not_an_input_mutation():
    a = intermediate_view_write()
    assert a.mutated_inputs == ()
    assert a.has_writes
    assert a.class_of("col").root == "h" and not a.class_of("h").is_input
    assert a.dependencies["softmax"] == {"fill_"}
    assert a.dependencies["fill_"] == {"select"}  # write after read of the class


def test_unknown_values_get_their_own_class():
    a = AliasAnalysis([], [F("f", ["ghost"], outputs=[("y", [])])])
    assert a.class_of("ghost").members == ("ghost",)
    assert not a.may_alias("ghost", "y")
    with pytest.raises(KeyError):
        a.class_of("never-mentioned")


def test_to_text_mentions_writes():
    text = view_then_inplace().to_text()
    assert "class 0 input: x, v, v2 written by add_" in text


# -- random programs against brute force --------------------------------------------------------


def random_program(rng: random.Random, n_inputs: int, n_ops: int):
    inputs = [f"in{i}" for i in range(n_inputs)]
    values = list(inputs)
    shared = []
    if n_inputs >= 2 and rng.random() < 0.5:
        shared.append(tuple(rng.sample(inputs, 2)))
    ops = []
    for k in range(n_ops):
        reads = rng.sample(values, min(len(values), rng.randint(0, 2)))
        writes = [v for v in reads if rng.random() < 0.3]
        outputs = []
        for j in range(rng.randint(0, 2)):
            aliases = [v for v in rng.sample(values, min(len(values), rng.randint(0, 1)))]
            outputs.append((f"v{k}_{j}", aliases))
        ops.append(F(f"op{k}", reads, writes, outputs))
        values.extend(v for v, _ in outputs)
    return inputs, ops, shared


def oracle_components(inputs, ops, shared):
    g = nx.Graph()
    g.add_nodes_from(inputs)
    for grp in shared:
        nx.add_path(g, grp)
    for f in ops:
        g.add_nodes_from(f.reads)
        g.add_nodes_from(f.writes)
        for v, aliases in f.outputs:
            g.add_node(v)
            for a in aliases:
                g.add_edge(v, a)
    return {v: frozenset(c) for c in nx.connected_components(g) for v in c}


@pytest.mark.parametrize("seed", range(40))
def test_random_classes_match_connected_components(seed, shallow_stack):
    rng = random.Random(seed)
    inputs, ops, shared = random_program(rng, rng.randint(1, 4), rng.randint(1, 30))
    comp = oracle_components(inputs, ops, shared)
    with shallow_stack():
        a = AliasAnalysis(inputs, ops, shared)
        classes = a.classes
    for v, members in comp.items():
        assert set(a.class_of(v).members) == members
    assert sum(len(c.members) for c in classes) == len(comp)
    for x in comp:
        for y in comp:
            assert a.may_alias(x, y) == (comp[x] is comp[y] or comp[x] == comp[y])


@pytest.mark.parametrize("seed", range(40))
def test_random_dependencies_cover_every_conflict(seed, shallow_stack):
    rng = random.Random(1000 + seed)
    inputs, ops, shared = random_program(rng, rng.randint(1, 4), rng.randint(1, 30))
    comp = oracle_components(inputs, ops, shared)
    with shallow_stack():
        a = AliasAnalysis(inputs, ops, shared)
        deps = a.dependencies
    touched = [({comp[v] for v in f.reads}, {comp[v] for v in f.writes}) for f in ops]

    def conflict(i, j):
        ri, wi = touched[i]
        rj, wj = touched[j]
        return bool(wi & (rj | wj) or wj & ri)

    g = nx.DiGraph()
    g.add_nodes_from(f.op for f in ops)
    for op, before in deps.items():
        for b in before:
            g.add_edge(b, op)
    order = {f.op: i for i, f in enumerate(ops)}
    for b, op in g.edges:  # every edge is a real conflict, pointing forward
        assert order[b] < order[op] and conflict(order[b], order[op])
    for i in range(len(ops)):  # every conflict is ordered by a path
        for j in range(i + 1, len(ops)):
            if conflict(i, j):
                assert nx.has_path(g, ops[i].op, ops[j].op), (i, j)
    written_inputs = [v for v in inputs if any(comp[v] in w for _, w in touched)]
    assert set(a.mutated_inputs) == set(written_inputs)
