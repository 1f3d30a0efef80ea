"""Capture's guard bookkeeping does linear work on deep module trees, with the same guards.

Every guard on a source like ``L['self'].a.b.c.weight`` relies on each ``m.<name>`` lookup
along the way (`GuardSet._add_lookup_guards`); those lookup guards are the same each
time, so `GuardSet` records which lookups it has guarded and does not rebuild them for
every guard below them.  Sources cache their hash (it hashes the whole chain of bases).
Both must leave the guards exactly as the plain computation makes them: the reference
here is a `GuardSet` that forgets what it looked up, and each source class's own
dataclass hash (`plain_hash`).
"""

from __future__ import annotations

import pytest

import bcfront
from bcfront.frontend.model import tracer as tracer_mod
from bcfront.frontend.model.dict_sources import StoredItemSource, StoredKeysSource
from bcfront.frontend.model.guards import GuardSet
from bcfront.frontend.model.sources import (
    AttrSource,
    ItemSource,
    LocalSource,
    ModuleAttrSource,
    Ref,
    TypeSource,
)

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

DEPTH = 8


class Leaf(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.scale = 0.5

    def forward(self, x):
        return torch.relu(self.lin(x)) * self.scale + x


def deep_model() -> nn.Module:
    torch.manual_seed(0)
    m: nn.Module = nn.Sequential(Leaf(), Leaf())
    for _ in range(DEPTH):
        m = nn.Sequential(m, Leaf())
    return m.eval()


class PlainGuardSet(GuardSet):
    """The reference: rebuilds every lookup guard each time a guard lies below it."""

    def _add_lookup_guards(self, src, first_use) -> None:
        self._looked_up.clear()
        super()._add_lookup_guards(src, first_use)


class CountingGuardSet(GuardSet):
    calls = 0

    def add(self, guard) -> None:
        type(self).calls += 1
        super().add(guard)


def _capture(monkeypatch, guard_set):
    monkeypatch.setattr(tracer_mod, "GuardSet", guard_set)
    model = deep_model()
    x = torch.randn(3, 4)
    cf = bcfront.capture(model, backend="eager")
    with torch.no_grad():
        out = cf(x)
        expected = deep_model()(x)
    assert torch.equal(out, expected)
    return cf.entries[-1]


def _described(entry):
    return [(g.kind, g.source.readable() if g.source else None, g.extra, g.first_use) for g in entry.guards]


def test_same_guards_as_the_plain_lookup(monkeypatch):
    fast = _capture(monkeypatch, GuardSet)
    plain = _capture(monkeypatch, PlainGuardSet)
    assert _described(fast) == _described(plain)
    # the generated guard function names each module by its own constant: compare shapes
    assert len(fast.guard_source) == len(plain.guard_source)
    assert fast.guard_source.count(" and ") == plain.guard_source.count(" and ")


def test_lookup_guards_are_built_once(monkeypatch):
    CountingGuardSet.calls = 0
    entry = _capture(monkeypatch, CountingGuardSet)
    # each guard is offered about once (from the tracer) plus once per lookup it implies
    # (1.2x here); rebuilding the lookups of every ancestor for each guard costs 2.5x
    assert CountingGuardSet.calls <= 1.5 * len(entry.guards)


def _deep_source():
    src = LocalSource("self")
    for i in range(DEPTH):
        src = ModuleAttrSource(src, "_modules", str(i))
    src = AttrSource(src, "weight")
    src = ItemSource(src, 0)
    src = ItemSource(src, Ref(len, "len"))
    src = StoredItemSource(src, "k")
    src = StoredKeysSource(src, Ref(dict, "dict"))
    return TypeSource(src)


def _chain(src):
    out = [src]
    while hasattr(src, "base"):
        src = src.base
        out.append(src)
    return out


def test_source_hash_is_the_dataclass_hash_cached():
    a, b = _deep_source(), _deep_source()
    assert a == b and a is not b
    derived = _chain(a)[:-1]  # all but the LocalSource root
    for s in derived:
        assert hash(s) == type(s).plain_hash(s)
    assert hash(a) == hash(b)
    # hashing the top computed (and kept) the hash of every derived source below it
    for s in _chain(b)[:-1]:
        assert object.__getattribute__(s, "_hash") == type(s).plain_hash(s)
    assert {a: 1}[b] == 1
    assert AttrSource(a.base, "other") != a
