"""Guards and the cache: what recompiles, what does not, and what is reported (no torch).

Oracles: the original function's results, and the facts we change between
calls (a global, a closure cell, an attribute, an argument's type or value).
"""

from __future__ import annotations

import re
import warnings

import pytest

import bcfront

SCALE = 2


def uses_global(x):
    return x * SCALE


def make_closure(k):
    def f(x):
        return x + k

    return f


class Obj:
    def __init__(self):
        self.depth = 3


def reads_attr(o, x):
    return x * o.depth


def test_same_inputs_hit_the_cache():
    cf = bcfront.capture(uses_global)
    for _ in range(5):
        assert cf(3) == 6
    assert len(cf.entries) == 1 and not cf.recompiles


def test_changed_global_recompiles_with_reason():
    global SCALE
    cf = bcfront.capture(uses_global)
    assert cf(3) == 6
    SCALE = 5
    try:
        assert cf(3) == 15
    finally:
        SCALE = 2
    assert len(cf.entries) == 2
    (r,) = cf.recompiles
    assert r.source == "G['SCALE']"
    assert r.expected == "2" and r.actual == "5"
    assert r.first_use is not None and r.first_use.lineno is not None


def test_changed_closure_cell_recompiles():
    f = make_closure(1)
    cf = bcfront.capture(f)
    assert cf(1) == 2
    f.__closure__[0].cell_contents = 10
    assert cf(1) == 11
    assert cf.recompiles and cf.recompiles[0].source == "C['k']"


def test_changed_attribute_recompiles():
    o = Obj()
    cf = bcfront.capture(reads_attr)
    assert cf(o, 2) == 6
    o.depth = 4
    assert cf(o, 2) == 8
    assert cf.recompiles[-1].source == "L['o'].depth"


def test_type_change_recompiles():
    cf = bcfront.capture(lambda a: a * 2)
    assert cf(2) == 4
    assert cf("ab") == "abab"
    assert cf(2.5) == 5.0
    assert len(cf.entries) == 3


def test_recompile_limit_runs_natively_with_one_warning():
    # a complex is specialized on its value (an int argument would become symbolic, a
    # str or float one known only at run time)
    cf = bcfront.capture(lambda s: s + 0.5, recompile_limit=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [cf(complex(i, 1)) for i in range(10)]
    assert results == [complex(i, 1) + 0.5 for i in range(10)]
    assert len(cf.entries) == 3
    msgs = [str(w.message) for w in caught if "recompile limit" in str(w.message)]
    assert len(msgs) == 1 and "L['s']" in msgs[0]
    assert cf.report().warnings


def test_list_length_and_dict_keys_guards():
    def f(xs, d):
        return len(xs) + sum(d.values())

    cf = bcfront.capture(f)
    assert cf([1, 2], {"a": 1}) == 3
    assert cf([1, 2, 3], {"a": 1}) == 4
    assert cf([1, 2, 3], {"a": 1, "b": 2}) == 6
    assert len(cf.entries) == 3
    kinds = {g.kind for g in cf.entries[0].guards}
    assert {"LENGTH", "DICT_KEYS", "TYPE_MATCH", "CONSTANT_MATCH"} <= kinds


def test_guard_source_is_one_generated_function_without_user_text():
    weird = "x'); import os; ('"

    def f(d):
        return d[weird]

    cf = bcfront.capture(f)
    assert cf({weird: 1}) == 1
    src = cf.entries[0].guard_source
    assert src.startswith("def ") and src.count("def ") == 1
    assert "import os;" not in src.replace(repr(weird), "")


def test_defaults_and_kwonly_are_guarded():
    def f(a, b=2, *, c=3):
        return a + b + c

    cf = bcfront.capture(f)
    assert cf(1) == 6
    assert cf(1, c=10) == 13
    f.__defaults__ = (100,)
    assert cf(1) == f(1) == 104


def test_non_callable_is_a_type_error():
    with pytest.raises(TypeError):
        bcfront.capture(42)


def test_builtin_runs_natively_with_a_note():
    cf = bcfront.capture(len)
    assert cf([1, 2, 3]) == 3
    assert any("natively" in n for n in cf.report().notes)


def test_decorator_forms_and_bound_methods():
    @bcfront.capture
    def a(x):
        return x + 1

    @bcfront.capture(backend="eager")
    def b(x):
        return x * 2

    class K:
        def __init__(self):
            self.v = 5

        def m(self, x):
            return self.v + x

    k = K()
    cm = bcfront.capture(k.m)
    assert a(1) == 2 and b(2) == 4 and cm(1) == 6
    k.v = 7
    assert cm(1) == 8


def test_callable_object_and_partial():
    import functools

    class Adder:
        def __init__(self, k):
            self.k = k

        def __call__(self, x):
            return x + self.k

    assert bcfront.capture(Adder(3))(4) == 7
    p = functools.partial(lambda a, b: a - b, 10)
    assert bcfront.capture(p)(3) == 7


def test_registry_lists_functions_that_ran():
    cf = bcfront.capture(lambda z: z)
    cf(1)
    assert cf in bcfront.capture.registry()


def test_explain_report_contents():
    def f(xs):
        out = []
        for x in xs:
            out.append(x * SCALE)
        return out

    report = bcfront.explain(f, [1, 2])
    assert not report.graph_breaks
    srcs = {g.source for g in report.guards}
    assert "L['xs']" in srcs and "G['SCALE']" in srcs
    assert all(g.expr for g in report.guards)
    assert report.to_json()
    cf = bcfront.capture(f, backend="eager")
    rep2 = bcfront.explain(cf, [3])
    assert rep2.functions[0].calls == 1


def _deep(n):
    return 0 if n == 0 else 1 + _deep(n - 1)


def test_recursion_is_inlined_to_a_limit_then_breaks():
    from bcfront.frontend.model.tracer import INLINE_DEPTH_LIMIT

    cf = bcfront.capture(_deep)
    assert cf(5) == 5 and not cf.entries[0].breaks  # inlined whole
    deep = INLINE_DEPTH_LIMIT + 10
    assert cf(deep) == deep  # correct past the limit
    reasons = {b.reason for e in cf.entries for b in e.breaks}
    assert "recursion-limit" in reasons or any(
        b.reason == "recursion-limit" for c in cf.entries[-1].children for e in c.entries for b in e.breaks
    )


class WithClassAttr:
    scale = 2

    def times(self, x):
        return x * self.scale

    def run(self, x):
        return self.times(x) + 1


def test_instance_attribute_shadowing_class_attribute_recompiles():
    o = WithClassAttr()
    cf = bcfront.capture(lambda obj, x: obj.run(x))
    assert cf(o, 3) == 7
    o.scale = 10  # now an instance attribute shadows the class's
    assert cf(o, 3) == 31
    o.times = lambda x: -x  # an instance attribute shadows a method
    assert cf(o, 3) == -2
    assert len(cf.entries) == 3


# -- nn.Module trees (torch) ----------------------------------------------------------------------


def _module_tree(torch, child_name="lin", child_cls=None):
    child_cls = child_cls or torch.nn.Linear

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.add_module(child_name, child_cls(3, 3))
            self.act = torch.nn.ReLU()

        def forward(self, x):
            return self.act(getattr(self, child_name)(x))

    class Outer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            return self.block(x) * 2

    return Outer()


def test_module_tree_guard_reads_each_module_dict_once():
    torch = pytest.importorskip("torch")
    m = _module_tree(torch)
    cf = bcfront.capture(m)
    x = torch.ones(2, 3)
    assert torch.equal(cf(x), m(x))
    src = cf.entries[0].guard_source
    # the prologue ends where the memoized checks' dict version tags are read (`guard_memo`)
    prologue, conjuncts = re.split(r"if ___tags|if not ___dicts_unchanged\(", src, maxsplit=1)
    # one instance-dict read per module (Outer, Block, Linear, ReLU) and its stores from it
    assert prologue.count(".__dict__\n") == 4, src
    assert "._modules[" not in conjuncts and "._parameters[" not in conjuncts, src
    assert "getattr(" not in src, src  # no attribute reads through getattr calls
    types_guarded = {g.expected for g in cf.entries[0].guards if g.kind == "TYPE_MATCH"}
    assert {type(m), type(m.block), torch.nn.Linear, torch.nn.ReLU} <= types_guarded
    absent = {(g.source.readable(), g.extra) for g in cf.entries[0].guards if g.kind == "NOT_PRESENT"}
    assert ("L['self'].block.__dict__", "lin") in absent and ("L['self'].__dict__", "block") in absent


def test_module_locals_never_take_a_constant_name():
    """A class called `<other class>_dict` would collide with that module's dict local."""
    torch = pytest.importorskip("torch")

    class Linear_dict(torch.nn.Linear):
        pass

    m = _module_tree(torch, "lin", Linear_dict)
    m.block.act = torch.nn.Linear(3, 3)  # a plain Linear next to the Linear_dict
    cf = bcfront.capture(m)
    x = torch.ones(2, 3)
    for _ in range(2):
        assert torch.equal(cf(x), m(x))
    assert len(cf.entries) == 1
    src = cf.entries[0].guard_source
    assert "___Linear_dict_1 = " in src or "___Linear_dict = ___Linear.__dict__" in src, src


def test_hostile_child_name_stays_data_in_guard_source():
    import ast

    torch = pytest.importorskip("torch")
    name = "x'); raise SystemExit('boom'); ('"
    m = _module_tree(torch, name)
    cf = bcfront.capture(m)
    x = torch.ones(2, 3)
    assert torch.equal(cf(x), m(x))
    src = cf.entries[0].guard_source
    names = {n.id for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Name)}
    assert "SystemExit" not in names
    assert repr(name) in src
    setattr(m.block, name, torch.nn.Linear(3, 3))  # replaced: recompiles, agrees
    assert torch.equal(cf(x), m(x))
    assert len(cf.entries) == 2
