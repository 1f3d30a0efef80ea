"""Object aliasing: hand-reasoned small cases, and a dynamic oracle (objects that are
identical at run time, held by two variables at any moments of a run, must be
predicted may-alias)."""

from __future__ import annotations

import sys

import pytest
from corpus import CORPUS, all_code_objects
from dataflow_cases import RUNNABLE
from dataflow_oracles import trace

from bcfront.analysis import analyze

G = []


def g(x):
    return x


def assign():
    a = []
    b = a
    c = []
    return a, b, c


def containers(p):
    a = [p]
    d = {}
    d["k"] = a
    got = d["k"]
    first = got[0]
    t = (a, d)
    u, v = t
    return first, u, v


def attributes():
    def holder():
        pass

    a = []
    holder.item = a
    back = holder.item
    other = holder.other
    return back, other


def params(p, q):
    r = p
    return r, q


def calls(a):
    b = []
    y = g(a)
    z = g(b)
    w = len(a)
    return y, z, w


def globals_():
    y = G
    z = G
    fresh = []
    return y, z, fresh


def branches(c, a, b):
    x = a if c else b
    return x


def operators(xs):
    ys = xs
    ys += [4]
    zs = xs + [5]
    n = len(xs) + 2
    return ys, zs, n


def unpack(a, b):
    first, *rest = [a, b]
    return first, rest


def loop(rows):
    last = None
    for r in rows:
        last = r
    return last


def closure():
    acc = []

    def push(v):
        acc.append(v)
        return acc

    got = push(1)
    return got


def slices():
    b = []
    a = [b]
    whole = a[0:1]  # 3.11: BUILD_SLICE then BINARY_SUBSCR; 3.12+: BINARY_SLICE
    first = whole[0]
    step = a[::2]  # BUILD_SLICE then BINARY_SUBSCR on every version
    second = step[0]
    into = []
    into[0:0] = [b]  # 3.11: STORE_SUBSCR with a slice key
    third = into[0]
    return first, second, third


def iterating(c, p):
    a = []
    b = [a]
    x = b if c else p  # GET_ITER's operand: b or p
    last = None
    for item in x:
        last = item
    first = p[0]  # iterating x puts none of b's items into p
    return first, last


CASES = [
    # (function, [(a, b, expected may_alias)])
    (assign, [("a", "b", True), ("a", "c", False), ("b", "c", False)]),
    (
        containers,
        [
            ("first", "p", True),
            ("got", "a", True),
            ("u", "a", True),
            ("v", "d", True),
            ("u", "d", True),
            ("a", "d", False),
            ("a", "p", False),
            ("t", "a", False),
        ],
    ),
    (attributes, [("back", "a", True), ("back", "holder", False), ("other", "a", False)]),
    (params, [("p", "q", False), ("r", "p", True), ("r", "q", False)]),
    (calls, [("y", "a", True), ("z", "b", True), ("a", "b", False), ("w", "a", True)]),
    (globals_, [("y", "z", True), ("fresh", "y", False)]),
    (branches, [("x", "a", True), ("x", "b", True), ("a", "b", False), ("c", "x", False)]),
    (operators, [("ys", "xs", True), ("zs", "xs", False), ("n", "xs", False)]),
    (unpack, [("first", "a", True), ("first", "b", True), ("rest", "a", False)]),
    (loop, [("last", "r", True), ("r", "rows", False)]),
    (closure, [("got", "acc", True)]),
    # (a slice is a new container of the items: its items are the items)
    (iterating, [("last", "a", True), ("first", "a", False), ("first", "p", False)]),
    (slices, [("first", "b", True), ("second", "b", True), ("third", "b", True), ("whole", "a", False)]),
]


@pytest.mark.parametrize("fn,expect", CASES, ids=[c[0].__name__ for c in CASES])
def test_hand_reasoned(fn, expect):
    al = analyze(fn).aliases
    for a, b, want in expect:
        assert al.may_alias(a, b) is want, (a, b, al.points_to(a), al.points_to(b))
        assert al.may_alias(b, a) is want


def test_sets_cover_exactly_the_may_alias_pairs():
    for fn, _ in CASES:
        al = analyze(fn).aliases
        names = al.variables
        pairs = {frozenset((a, b)) for a in names for b in names if a != b and al.may_alias(a, b)}
        covered = {frozenset((a, b)) for s in al.sets for a in s for b in s if a != b}
        assert pairs == covered, fn.__name__
        assert all(len(s) >= 2 for s in al.sets)


def test_untracked_values_alias_nothing():
    al = analyze(operators).aliases
    assert al.points_to("n") and not al.may_alias("n", "xs")
    al = analyze(params).aliases
    assert {o.label for o in al.points_to("p")} == {"param p"}


def test_unknown_name_is_an_error():
    with pytest.raises(KeyError):
        analyze(assign).aliases.may_alias("a", "nope")


@pytest.mark.parametrize("name", sorted(k for k, v in CORPUS.items()))
def test_corpus_runs(name):
    for code in all_code_objects(CORPUS[name]):
        al = analyze(code).aliases
        for a in al.variables:
            assert al.may_alias(a, a) == bool(al.points_to(a))


# -- dynamic oracle -------------------------------------------------------------------

_IMMUTABLE = (
    int,
    float,
    complex,
    bool,
    str,
    bytes,
    type(None),
    tuple,
    frozenset,
    range,
    type(Ellipsis),
    type,
)


def _held_objects(code, run):
    """{variable: {id: object}} of the mutable objects each variable held at some line."""
    held: dict[str, dict[int, object]] = {}
    keep = []

    def local(frame, event, arg):
        if event in ("line", "return") and frame.f_code is code:
            for name, val in frame.f_locals.items():
                if not isinstance(val, _IMMUTABLE):
                    held.setdefault(name, {})[id(val)] = val
                    keep.append(val)  # keep it alive: ids must not be reused
        return local

    def glob(frame, event, arg):
        return local if frame.f_code is code else None

    old = sys.gettrace()
    sys.settrace(glob)
    try:
        run()
    except Exception:  # noqa: BLE001  (a case may end by raising; what it held counts)
        pass
    finally:
        sys.settrace(old)
    return held


@pytest.mark.parametrize("name", sorted(RUNNABLE))
def test_runtime_identity_is_predicted(name):
    fn, run = RUNNABLE[name]
    code = fn.__code__
    al = analyze(fn).aliases
    trace(code, run)  # warm up opcode/line tracing (see trace)
    held = _held_objects(code, run)
    names = sorted(held)
    pairs = 0
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if held[a].keys() & held[b].keys():
                pairs += 1
                assert al.may_alias(a, b), (a, b, al.points_to(a), al.points_to(b))
    if name in (
        "containers",
        "conditional_alias",
        "iterate_alias",
        "through_calls",
        "closure_alias",
        "inplace",
    ):
        assert pairs, "the case was chosen to alias something"
