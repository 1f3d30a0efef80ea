"""Copies of dicts and dict subclasses give what CPython gives: ``dict.copy`` and
``dict(d)``/``{**d}``/``d | {}`` make plain dicts (read through the storage, or through
the subclass's own ``keys()``/``[]`` when its class iterates otherwise, as an OrderedDict
does), ``OrderedDict.copy`` and ``od | x`` make ``type(od)(od)``; ``copy.copy`` and
``copy.deepcopy`` follow the copy protocol (``__reduce_ex__``: the class kept, the
instance ``__dict__`` and the items copied).  Oracle: the plain function on the same
inputs, compared by type, items, ``__dict__`` and identity.
"""

from __future__ import annotations

import collections
import copy

import pytest

import bcfront

torch = pytest.importorskip("torch")


class Sub(dict):
    pass


class OwnItems(dict):
    """Its own [] (doubled values) and __iter__: dict_merge reads through them."""

    def __getitem__(self, k):
        return dict.__getitem__(self, k) * 2

    def __iter__(self):
        return iter(list(dict.keys(self))[::-1])

    def keys(self):
        return list(dict.keys(self))[::-1]


class OnlyGetitem(dict):
    """Its own [] only: dict_merge reads the storage (its __iter__ is dict's)."""

    def __getitem__(self, k):
        return dict.__getitem__(self, k) * 2


class ODSub(collections.OrderedDict):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.made = getattr(self, "made", 0) + 1


class ODGetitem(collections.OrderedDict):
    def __getitem__(self, k):
        return collections.OrderedDict.__getitem__(self, k) + 100


def _make(cls):
    d = cls()
    store = collections.OrderedDict if issubclass(cls, collections.OrderedDict) else dict
    store.__setitem__(d, "a", 1)
    store.__setitem__(d, "b", 2)
    if hasattr(d, "__dict__"):
        d.note = "n"
    return d


def _same(got, want):
    assert type(got) is type(want)
    if isinstance(want, dict):
        assert list(dict.items(got)) == list(dict.items(want))
        assert getattr(got, "__dict__", None) == getattr(want, "__dict__", None)
    else:
        assert got == want


COPIES = {
    "method": lambda d: d.copy(),
    "dict.copy": lambda d: dict.copy(d),
    "dict()": lambda d: dict(d),
    "splat": lambda d: {**d},
    "or": lambda d: d | {"c": 3},
    "ror": lambda d: {"c": 3} | d,
    "update": lambda d: [e := {"z": 0}, e.update(d), e][-1],
    "copy.copy": lambda d: copy.copy(d),
    "kwargs": lambda d: (lambda **kw: kw)(**d),
}
CLASSES = [dict, collections.OrderedDict, Sub, OwnItems, OnlyGetitem, ODSub, ODGetitem]


@pytest.mark.parametrize("how", list(COPIES))
@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("where", ["made", "passed"])
def test_dict_copies_match_python(how, cls, where):
    fn = COPIES[how]
    if where == "made":

        def run(x):
            d = _make(cls)
            out = fn(d)
            return out, out is d

        arg = 0
    else:

        def run(d):
            out = fn(d)
            return out, out is d

        arg = _make(cls)
    want = run(_make(cls) if where == "passed" else 0)
    cf = bcfront.capture(run)
    for _ in range(2):
        got = cf(_make(cls) if where == "passed" else arg)
        _same(got[0], want[0])
        assert got[1] == want[1]


class Config:
    def __init__(self):
        self.size = 4
        self.labels = {0: "a", 1: "b"}
        self.layers = [1, 2]


class WithCopy:
    def __init__(self, v):
        self.v = v

    def __copy__(self):
        return WithCopy(self.v + 1)


def copies(obj):
    c, d = copy.copy(obj), copy.deepcopy(obj)
    return c, d, c is obj, d is obj


def _same_object(got, want, orig):
    assert type(got) is type(want)
    assert vars(got) == vars(want)


@pytest.mark.parametrize("make", [Config, lambda: WithCopy(1)], ids=["config", "own_copy"])
def test_copy_of_objects(make):
    want = copies(make())
    obj = make()
    report = bcfront.explain(copies, obj)
    got = bcfront.capture(copies)(obj)
    for g, w in zip(got[:2], want[:2]):
        _same_object(g, w, obj)
    assert got[2:] == want[2:]
    if isinstance(obj, Config):
        assert report.graph_breaks == []
        assert got[0].labels is obj.labels and got[1].labels is not obj.labels
        assert got[1].labels == obj.labels and got[1].layers is not obj.layers


def test_copy_of_containers_and_made_objects():
    def run(x):
        cfg = Config()
        d = {"t": x, "l": [1, [2, 3]], "n": (1, 2)}
        shallow, deep = copy.copy(d), copy.deepcopy({"l": d["l"], "again": d["l"], "n": d["n"]})
        c2 = copy.deepcopy(cfg)
        return (
            shallow["t"] + 1,
            shallow["l"] is d["l"],
            deep["l"] == d["l"],
            deep["l"] is d["l"],
            deep["again"] is deep["l"],
            deep["n"] is d["n"],
            c2.labels == cfg.labels,
            c2.labels is cfg.labels,
            type(c2).__name__,
        )

    x = torch.arange(3.0)
    cf = bcfront.capture(run, fullgraph=True)
    got, want = cf(x), run(x)
    torch.testing.assert_close(got[0], want[0])
    assert got[1:] == want[1:]


class Items(list):
    pass


def test_len_of_list_subclass_and_id_of_function():
    def helper():
        return 1

    def run(items, x):
        return x * len(items), id(helper) == id(helper), id(run_outside) == expected_id

    items = Items([1, 2, 3])
    x = torch.arange(3.0)
    cf = bcfront.capture(run, fullgraph=True)
    got, want = cf(items, x), run(items, x)
    torch.testing.assert_close(got[0], want[0])
    assert got[1:] == want[1:]
    items.append(4)  # the length is guarded
    torch.testing.assert_close(cf(items, x)[0], run(items, x)[0])


def run_outside():
    return None


expected_id = id(run_outside)


class Token:
    pass


class Bag(list):
    pass


def test_copies_the_model_leaves_to_python():
    def run(bag):
        t = Token()
        s = copy.deepcopy({t, 1})
        b = copy.copy(bag)
        return len(s), t in s, type(b).__name__, list(b), b is bag

    bag = Bag([1, 2])
    assert bcfront.capture(run)(bag) == run(bag)
