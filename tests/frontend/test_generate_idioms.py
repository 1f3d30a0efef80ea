"""Idioms of Hugging Face ``generate()`` (and the libraries it calls) captured without a
break or a wrong answer.  Oracle: the plain function on the same inputs; ``fullgraph=True``
shows there is no break.

* ``name in sys.modules`` / ``sys.modules.get(name)`` / ``sys.modules[name]``
  (``importlib.util.find_spec``, availability checks): guarded key by key, so a later
  import (of anything else) neither fails the entry's own guards nor recompiles.
"""

from __future__ import annotations

import enum
import functools
import inspect
import os
import sys
import types

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def sys_modules_reads(x):
    y = x * 2
    if "bcf_gen_absent_mod" in sys.modules:
        y = y + 100
    if "json" not in sys.modules:
        y = y - 1
    m = sys.modules.get("torch")
    n = sys.modules.get("bcf_gen_absent_mod", None)
    if m is torch and n is None and sys.modules["torch"] is torch:
        y = y + 1
    try:
        sys.modules["bcf_gen_absent_mod2"]
    except KeyError:
        y = y + 3
    return y


@pytest.mark.parametrize("fullgraph", [False, True])
def test_sys_modules_reads_key_by_key(fullgraph):
    import json  # noqa: F401 - present in sys.modules

    x = torch.arange(4.0)
    cf = bcfront.capture(sys_modules_reads, fullgraph=fullgraph)
    assert torch.equal(cf(x), sys_modules_reads(x))
    # an import of something else adds a key: the entry still holds, no recompile
    name = f"bcf_gen_other_{fullgraph}"
    sys.modules[name] = types.ModuleType(name)
    try:
        assert torch.equal(cf(x), sys_modules_reads(x))
        assert len(cf._entries) == 1
        # the key the trace read appears: a recompile, and the new answer
        sys.modules["bcf_gen_absent_mod"] = types.ModuleType("bcf_gen_absent_mod")
        assert torch.equal(cf(x), sys_modules_reads(x))
        assert len(cf._entries) == 2
    finally:
        sys.modules.pop(name, None)
        sys.modules.pop("bcf_gen_absent_mod", None)


# -- vars(o) is o.__dict__ (importlib.metadata's Context: ``vars(self).update(kwargs)``) -------


class Context:
    name = None

    def __init__(self, **kwargs):
        vars(self).update(kwargs)


class Point:
    def __init__(self, a, b):
        self.a = a
        self.b = b


def vars_reads(x, p):
    c = Context(name="n", k=3)
    d = vars(p)
    d["b"] = d["a"] + 1  # a write through vars() reaches the object
    try:
        vars(1)
        bad = False
    except TypeError:
        bad = True
    return x + c.k + len(d) + d["b"], c.name, sorted(vars(c)), bad, "a" in vars(Point(1, 2))


@pytest.mark.parametrize("fullgraph", [False, True])
def test_vars_of_an_object(fullgraph):
    x = torch.arange(3.0)
    cf = bcfront.capture(vars_reads, fullgraph=fullgraph)
    p, q = Point(1, 2), Point(1, 2)
    got, want = cf(x, p), vars_reads(x, q)
    assert torch.equal(got[0], want[0]) and got[1:] == want[1:]
    assert vars(p) == vars(q) == {"a": 1, "b": 2}


# -- functions marked constant (torch._dynamo.assume_constant_result; transformers' probes) --

PROBE_CALLS = []


@functools.lru_cache  # bounded (maxsize=128), under which transformers puts the marker
@torch._dynamo.assume_constant_result
def package_available(name):
    PROBE_CALLS.append(name)
    with open(os.devnull) as f:  # I/O: a break if it were traced
        f.read()
    return name == "torch"


@torch._dynamo.assume_constant_result
def probe_version():
    return ("2", 13)


def uses_probes(x):
    if package_available("torch") and not package_available("bcf_gen_nothing"):
        x = x + probe_version()[1]
    return x * 2


@pytest.mark.parametrize("fullgraph", [False, True])
def test_assume_constant_result_is_called_at_capture(fullgraph):
    package_available.cache_clear()
    PROBE_CALLS.clear()
    x = torch.arange(3.0)
    cf = bcfront.capture(uses_probes, fullgraph=fullgraph)
    assert torch.equal(cf(x), uses_probes(x))
    assert torch.equal(cf(x + 1), uses_probes(x + 1))
    assert len(cf._entries) == 1
    assert PROBE_CALLS == ["torch", "bcf_gen_nothing"]  # once each: the cache answered after


# -- dicts keyed by Enum members (transformers' GENERATION_MODES_MAPPING) ----------------------


class Mode(str, enum.Enum):
    GREEDY = "greedy"
    SAMPLE = "sample"


class Kind(enum.Enum):
    A = 1
    B = 2


MODES = {Mode.GREEDY: "_greedy", Mode.SAMPLE: "_sample"}


def enum_keyed(x, table):
    name = MODES[Mode.SAMPLE]
    y = x * 2 if name == "_sample" else x
    y = y + table[Kind.B] + len(MODES)
    return y, Kind.A in table, "greedy" in MODES, table.get(Kind.A, -1)


@pytest.mark.parametrize("fullgraph", [False, True])
def test_dict_keyed_by_enum_members(fullgraph):
    x = torch.arange(3.0)
    cf = bcfront.capture(enum_keyed, fullgraph=fullgraph)
    for table in ({Kind.B: 5}, {Kind.A: 1, Kind.B: 2}, {Kind.B: 7}):
        got, want = cf(x, table), enum_keyed(x, table)
        assert torch.equal(got[0], want[0]) and got[1:] == want[1:]
    MODES[Mode.GREEDY] = "changed"  # a value changed: recompiled or re-read, never stale
    try:
        assert cf(x, {Kind.B: 1})[1:] == enum_keyed(x, {Kind.B: 1})[1:]
    finally:
        MODES[Mode.GREEDY] = "_greedy"


# -- inspect.signature of an outside function that crossed a break (``decoding_method``) -----


def decode(input_ids, logits_processor, *, streamer=None, **model_kwargs):
    return input_ids


def signature_after_break(x, method):
    if x.sum() > 0:  # a break: `method` reaches the continuation as a function by its code
        x = x + 1
    names = list(inspect.signature(method).parameters.keys())
    return x * len(names), names, "inputs_tensor" in inspect.signature(method).parameters


@pytest.mark.parametrize("fullgraph", [False, True])
def test_signature_of_function_across_break(fullgraph):
    cf = bcfront.capture(signature_after_break, fullgraph=fullgraph)
    for x in (torch.arange(3.0), -torch.arange(3.0), torch.ones(3)):
        if fullgraph:
            with pytest.raises(bcfront.GraphBreakError):
                cf(x, decode)
            return
        got, want = cf(x, decode), signature_after_break(x, decode)
        assert torch.equal(got[0], want[0]) and got[1:] == want[1:]
    # the one break is the tensor branch: the signature is folded, not traced into inspect
    report = bcfront.explain(signature_after_break, torch.ones(3), decode)
    assert [b.reason.value for b in report.graph_breaks] == ["data-dependent-branch"]


# -- iterating a list subclass from outside (LogitsProcessorList, StoppingCriteriaList) -------


class Criteria(list):
    def __call__(self, x):
        return any(c(x) for c in self)


class Stop:
    def __init__(self, limit):
        self.limit = limit

    def __call__(self, x):
        return x.shape[0] >= self.limit


class OwnIter(list):
    def __iter__(self):
        return iter([42])


def iterate_list_subclass(x, crits, own):
    has = any(hasattr(c, "limit") for c in crits)
    for c in crits:
        x = x + c.limit
    return x, has, crits(x), [v for v in own], isinstance(crits, Criteria)


@pytest.mark.parametrize("fullgraph", [False, True])
def test_iterate_list_subclass_from_outside(fullgraph):
    x = torch.arange(3.0)
    cf = bcfront.capture(iterate_list_subclass, fullgraph=fullgraph)
    for crits in (Criteria([Stop(2), Stop(5)]), Criteria([Stop(4)]), Criteria([Stop(1), Stop(9)])):
        own = OwnIter([1, 2])
        got, want = cf(x, crits, own), iterate_list_subclass(x, crits, own)
        assert torch.equal(got[0], want[0]) and got[1:] == want[1:]
