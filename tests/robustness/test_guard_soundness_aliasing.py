"""Guard soundness for aliasing seen only through a mutation (issue 25, item 5).

``d1["k"] = 1; return "k" in d2`` gives another answer when d1 and d2 are one dict, with no
``is`` test in the code.  Each case is a module source whose `f` mutates one object from
outside and reads another, and `setup(ns, same)` that rebuilds the module's state and
returns f's arguments, aliased (`same`) or not.  The captured function runs in one
namespace, the plain function in a fresh one per call, both rebuilt identically; results
and the state left behind (`ns["STATE"]` when the case has one) must agree on every call
of the sequence, which switches between aliased and distinct arguments.
"""

from __future__ import annotations

import pytest

import bcfront
from bcfront.testing.differential import diff

from .helpers import make_namespace, outcome


def _pair(ns, same, make):
    if same:
        x = make(ns)
        return (x, x)
    return (make(ns), make(ns))


CASES = {
    "dict_write_then_contains": (
        """
        def f(d1, d2):
            d1["k"] = 1
            return "k" in d2
        """,
        lambda ns, same: _pair(ns, same, lambda ns: {}),
    ),
    "dict_write_then_len": (
        """
        def f(d1, d2):
            d1["k"] = 1
            return len(d2), list(d2)
        """,
        lambda ns, same: _pair(ns, same, lambda ns: {"a": 0}),
    ),
    "dict_pop_then_get": (
        """
        def f(d1, d2):
            d1.pop("a")
            return d2.get("a", "gone")
        """,
        lambda ns, same: _pair(ns, same, lambda ns: {"a": 0}),
    ),
    "object_attribute_write_then_read": (
        """
        class O:
            k = 0
        def f(o1, o2):
            o1.k = 5
            return o2.k
        """,
        lambda ns, same: _pair(ns, same, lambda ns: ns["O"]()),
    ),
    "object_attribute_delete_then_read": (
        """
        class O:
            k = 0
        def f(o1, o2):
            del o1.k
            return o2.k
        """,
        lambda ns, same: _pair(ns, same, lambda ns: _with_k(ns["O"]())),
    ),
    "list_append_then_len": (
        """
        def f(a, b):
            a.append(1)
            return len(b)
        """,
        lambda ns, same: _pair(ns, same, lambda ns: []),
    ),
    "list_setitem_then_read": (
        """
        def f(a, b):
            a[0] = 9
            return b[0]
        """,
        lambda ns, same: _pair(ns, same, lambda ns: [0, 1]),
    ),
    "set_add_then_contains": (
        """
        def f(a, b):
            a.add(3)
            return 3 in b
        """,
        lambda ns, same: _pair(ns, same, lambda ns: {1}),
    ),
    "global_dict_passed_as_argument": (
        """
        STATE = {}
        def f(d):
            d["k"] = 1
            return "k" in STATE
        """,
        lambda ns, same: (ns["STATE"] if same else {},),
    ),
    "global_list_passed_as_argument": (
        """
        STATE = []
        def f(a):
            a.append(1)
            return len(STATE)
        """,
        lambda ns, same: (ns["STATE"] if same else [],),
    ),
    "nested_in_containers": (
        """
        def f(pair):
            pair[0]["k"] = 1
            return "k" in pair[1]
        """,
        lambda ns, same: (list(_pair(ns, same, lambda ns: {})),),
    ),
    "object_and_its_dict_item": (
        """
        class O:
            pass
        def f(o, holder):
            o.k = 1
            return hasattr(holder["o"], "k")
        """,
        lambda ns, same: _obj_and_holder(ns, same),
    ),
}


def _with_k(o):
    o.k = 1
    return o


def _obj_and_holder(ns, same):
    o = ns["O"]()
    return (o, {"o": o if same else ns["O"]()})


SEQUENCES = {
    "distinct_then_same": (False, False, True, True, False),
    "same_then_distinct": (True, True, False, False, True),
}


@pytest.mark.parametrize("seq", sorted(SEQUENCES))
@pytest.mark.parametrize("name", sorted(CASES))
def test_aliasing_through_mutation_is_never_stale(name, seq):
    run_aliasing(name, seq)


def run_aliasing(name, seq, compile_fn=bcfront.capture):
    """Case `name` along sequence `seq`: plain and `compile_fn(f)` agree on every call."""
    source, setup = CASES[name]
    ns_c = make_namespace(source)
    cf = compile_fn(ns_c["f"])
    for i, same in enumerate(SEQUENCES[seq]):
        ns_p = make_namespace(source)
        expected = outcome(ns_p["f"], *setup(ns_p, same))
        if "STATE" in ns_c:  # identically rebuilt: the global starts empty on each side
            ns_c["STATE"].clear()
        actual = outcome(cf, *setup(ns_c, same))
        problem = diff((expected, ns_p.get("STATE")), (actual, ns_c.get("STATE")))
        assert problem is None, f"{name}, call {i} ({'same' if same else 'distinct'}): {problem}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_aliasing_case_depends_on_it(name):
    source, setup = CASES[name]
    runs = []
    for same in (False, True):
        ns = make_namespace(source)
        runs.append(outcome(ns["f"], *setup(ns, same)))
    assert diff(runs[0], runs[1]) is not None, f"{name}: aliasing does not change the result"
