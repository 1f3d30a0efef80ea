"""Instances of Python subclasses of dict and OrderedDict made inside captured code (a
``@dataclass`` ModelOutput-like class whose ``__post_init__`` stores its fields with
``self[k] = v`` and ``super().__setitem__``, built in ``forward``) capture without a break;
what comes back is a real object of that class, equal to plain execution's, with the same
items and attributes.  Reading one passed in works the same.  Oracle: the plain function;
``fullgraph=True`` shows there is no break.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Optional

import pytest

import bcfront

torch = pytest.importorskip("torch")


class Output(collections.OrderedDict):
    """A ModelOutput-like base: items and attributes kept in step, tuple-like indexing."""

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = self.__dict__.get(f.name)
            if v is not None:
                self[f.name] = v

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)

    def __setattr__(self, name, value):
        if name in self.keys() and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def __getitem__(self, k):
        if isinstance(k, str):
            return dict(self.items())[k]
        return self.to_tuple()[k]

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


@dataclasses.dataclass
class LayerOutput(Output):
    hidden: Optional[object] = None
    logits: Optional[object] = None
    extra: Optional[object] = None


class Registry(dict):
    kind = "registry"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.count = len(self)

    def total(self):
        return sum(self.values())


class Plain(collections.OrderedDict):
    pass


def build_output(x):
    h = x * 2
    out = LayerOutput(hidden=h, logits=h + 1)
    return out, out.hidden + out[1], out["logits"], out.to_tuple(), list(out.keys()), out.extra


def read_output(out):
    return out.hidden * 3, out[0], list(out.items())[-1][0], "logits" in out, len(out)


def build_registry(x):
    r = Registry(a=1, b=2)
    r["c"] = 3
    r.note = "n"
    p = Plain([("u", x), ("v", x + 1)])
    p.flag = True
    return r, r.total() * x, r.count, r.kind, p, p["v"]


def build_with_dict_new(x):
    d = dict.__new__(Plain)
    d["k"] = x
    return d


def _same_dict_object(got, want):
    assert type(got) is type(want)
    assert list(got.keys()) == list(want.keys())
    for k in want:
        _same(got[k] if not isinstance(got, Output) else dict.__getitem__(got, k), dict.__getitem__(want, k))
    assert got.__dict__.keys() == want.__dict__.keys()
    for k in want.__dict__:
        _same(got.__dict__[k], want.__dict__[k])


def _same(got, want):
    if isinstance(want, dict) and type(want) is not dict:
        _same_dict_object(got, want)
    elif isinstance(want, torch.Tensor):
        torch.testing.assert_close(got, want)
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for a, b in zip(got, want):
            _same(a, b)
    else:
        assert got == want


@pytest.mark.parametrize("fn", [build_output, build_registry, build_with_dict_new])
def test_dict_subclass_built_in_capture(fn):
    x = torch.arange(3.0)
    cf = bcfront.capture(fn, fullgraph=True)
    for _ in range(2):
        _same(cf(x), fn(x))


def test_returned_output_is_a_working_object():
    x = torch.arange(3.0)
    got = bcfront.capture(build_output, fullgraph=True)(x)[0]
    want = build_output(x)[0]
    _same(got, want)
    got.extra = x  # its own __setattr__ still keeps items and attributes in step
    want.extra = x
    _same(got, want)
    _same(got.to_tuple(), want.to_tuple())


def test_dict_subclass_passed_in():
    x = torch.arange(3.0)
    out = LayerOutput(hidden=x, logits=x + 1)
    cf = bcfront.capture(read_output)  # its own __getitem__: read as an object, may break
    _same(cf(out), read_output(out))

    def read_plain(p):
        return p["u"] + p.tag, list(p), p.get("v"), p.__class__.__name__

    p = Plain(u=x, v=2)
    p.tag = 1.5
    cf = bcfront.capture(read_plain, fullgraph=True)
    _same(cf(p), read_plain(p))
    p.tag = 2.5  # an attribute it read: guarded
    _same(cf(p), read_plain(p))


def test_writes_to_a_dict_subclass_passed_in():
    class Counter(dict):
        def __setitem__(self, k, v):  # not used by the replay: it stores the recorded items
            raise AssertionError("replayed through the subclass")

    def bump(c, x):
        dict.__setitem__(c, "n", dict.__getitem__(c, "n") + 1)
        c.last = "bump"
        return x + 1

    x = torch.arange(3.0)
    a, b = Counter(), Counter()
    dict.__setitem__(a, "n", 0)
    dict.__setitem__(b, "n", 0)
    cf = bcfront.capture(bump, fullgraph=True)
    torch.testing.assert_close(cf(a, x), bump(b, x))
    assert dict(a) == dict(b) and a.__dict__ == b.__dict__


def test_real_model_output():
    pytest.importorskip("transformers")
    from transformers.modeling_outputs import BaseModelOutput

    def f(x):
        out = BaseModelOutput(last_hidden_state=x * 2, hidden_states=(x,))
        return (
            out,
            out.last_hidden_state + out[0],
            out["last_hidden_state"],
            out.to_tuple(),
            list(out.items()),
        )

    x = torch.arange(3.0)
    got = bcfront.capture(f, fullgraph=True)(x)
    want = f(x)
    assert type(got[0]) is BaseModelOutput
    torch.testing.assert_close(got[0].last_hidden_state, want[0].last_hidden_state)
    assert list(got[0].keys()) == list(want[0].keys())
    _same(got[1:4], want[1:4])
    assert [k for k, _ in got[4]] == [k for k, _ in want[4]]
