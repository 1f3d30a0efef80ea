"""An instance of a dict subclass that overrides ``__getitem__`` (transformers'
``ModelOutput``: ``out[0]`` through ``to_tuple()``, ``out["k"]`` through
``dict(self.items())``) passed into captured code is a dict whose items are read with
``dict.__getitem__`` plus its ``__dict__``: ``to_tuple()``, ``keys()``, ``items()``,
``values()``, ``len()``, ``in`` and iteration capture without a break, and a changed key
set or a changed value recompiles.  Oracle: the plain function on the same inputs.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Optional

import pytest

import bcfront

torch = pytest.importorskip("torch")


class Output(collections.OrderedDict):
    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v is not None:
                self[f.name] = v

    def __getitem__(self, k):
        if isinstance(k, str):
            return dict(self.items())[k]
        return self.to_tuple()[k]

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


@dataclasses.dataclass
class MyOutput(Output):
    hidden: Optional[object] = None
    logits: Optional[object] = None
    extra: Optional[object] = None


def use(out):
    t = out.to_tuple()
    return (
        t[0] * 2,
        out[0] + out["hidden"],
        list(out.keys()),
        [k for k, _ in out.items()],
        len(list(out.values())),
        len(out),
        "logits" in out,
        "extra" in out,
        [k for k in out],
        out.hidden.sum() + (out.logits.sum() if out.logits is not None else 0),
    )


def _check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, torch.Tensor):
            torch.testing.assert_close(g, w)
        else:
            assert g == w


def test_own_getitem_output_passed_in_captures():
    x = torch.arange(3.0)
    cf = bcfront.capture(use, fullgraph=True)
    for out in (MyOutput(hidden=x, logits=x + 1), MyOutput(hidden=x + 2, logits=x)):
        _check(cf(out), use(out))
    report = bcfront.explain(use, MyOutput(hidden=x, logits=x))
    assert report.graph_breaks == []


def test_changed_keys_or_values_recompile():
    x = torch.arange(3.0)
    cf = bcfront.capture(use)
    _check(cf(MyOutput(hidden=x, logits=x + 1)), use(MyOutput(hidden=x, logits=x + 1)))
    fewer = MyOutput(hidden=x)  # another key set
    _check(cf(fewer), use(fewer))
    other = MyOutput(hidden=x, logits=torch.ones(2, 2))  # another shape
    _check(cf(other), use(other))
    # the storage changed behind the subclass's back: read through dict's own []
    swapped = MyOutput(hidden=x, logits=x)
    dict.__setitem__(swapped, "logits", x * 10)
    _check(cf(swapped), use(swapped))


def test_writes_to_an_output_passed_in():
    def write(out, x):
        out["extra"] = x
        out.logits = x + 1
        return out.to_tuple()

    x = torch.arange(3.0)
    a, b = MyOutput(hidden=x), MyOutput(hidden=x)
    got, want = bcfront.capture(write)(a, x), write(b, x)
    _check(got, want)
    assert list(dict.items(a)).__len__() == len(dict.items(b))
    assert list(a.keys()) == list(b.keys()) and vars(a).keys() == vars(b).keys()
    for k in b:
        torch.testing.assert_close(dict.__getitem__(a, k), dict.__getitem__(b, k))


def test_transformers_model_output_passed_in():
    outputs = pytest.importorskip("transformers.modeling_outputs")
    x = torch.arange(6.0).reshape(2, 3)

    def run(out):
        t = out.to_tuple()
        return t[0] + 1, out[0] * 2, list(out.keys()), len(out), "attentions" in out, out.hidden_states

    out = outputs.BaseModelOutput(last_hidden_state=x)
    cf = bcfront.capture(run, fullgraph=True)
    _check(cf(out), run(out))
    out2 = outputs.BaseModelOutput(last_hidden_state=x, hidden_states=(x,))
    _check(cf(out2), run(out2))
