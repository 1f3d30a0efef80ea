"""A builtin method bound to an immutable constant (`model.sources.SameBoundMethodSource`):
``keyword.iskeyword`` is ``frozenset(kwlist).__contains__``, held in a module.  Its guard is
one check -- the very object the trace read, or else the same descriptor bound to the same
constant -- where a method bound to anything else keeps three (its type, its descriptor,
its ``__self__`` on its own source: tests/frontend/test_bound_method_guards.py).  Oracles:
plain Python on the same inputs, the entry counts, the guards' kinds."""

from __future__ import annotations

import keyword

import bcfront
from bcfront.frontend.model import sources
from bcfront.frontend.model.sources import BoundDescriptorSource, SameBoundMethodSource

SEP = ", "
WORDS = frozenset({"a", "b"})
IS_WORD = WORDS.__contains__


def is_word(s):
    return IS_WORD(s)


def is_keyword(s):
    return keyword.iskeyword(s)


def kinds(cf):
    return {type(g.source) for e in cf.entries for g in e.guards}


def test_a_method_held_in_a_module_is_one_check_and_right():
    cf = bcfront.capture(is_keyword)
    for s in ["for", "x", "for", "x"]:
        assert cf(s) is keyword.iskeyword(s)
    assert SameBoundMethodSource in kinds(cf) and BoundDescriptorSource not in kinds(cf)
    assert len(cf.entries) == 2


def test_replaced_by_a_method_of_another_set_the_call_sees_it():
    global IS_WORD
    cf = bcfront.capture(is_word)
    try:
        assert cf("a") is True and cf("c") is False
        IS_WORD = frozenset({"c"}).__contains__
        assert cf("a") is False and cf("c") is True
        IS_WORD = frozenset.__contains__.__get__(WORDS, frozenset)  # a new object, same pieces
        n = len(cf.entries)
        assert cf("a") is True and cf("c") is False
        assert len(cf.entries) == n  # not the same object: its pieces are, no recompile
    finally:
        IS_WORD = WORDS.__contains__


def test_a_method_on_the_stack_at_a_break_is_a_new_object_each_call_and_does_not_recompile():
    class Cfg:  # attribute reads on it break the graph (it defines __getattribute__)
        names = ["x", "y"]

        def __getattribute__(self, name):
            return object.__getattribute__(self, name)

    def joined(cfg):
        return SEP.join(getattr(cfg, "names"))  # ", ".join is on the stack at the break

    cf = bcfront.capture(joined)
    cfg = Cfg()
    for i in range(12):
        cfg.names = [str(i), "z"]
        assert cf(cfg) == joined(cfg)
    assert len(cf.entries) <= 3


def test_a_method_of_a_mutable_object_keeps_its_pieces_and_is_not_held():
    class Bag(set):
        pass

    bag = Bag({1, 2})
    has = bag.__contains__

    def f(x):
        return has(x)

    cf = bcfront.capture(f)
    assert cf(1) is True and cf(3) is False
    bag.add(3)
    assert cf(3) is True  # the set's members are guarded, not the method's identity
    assert SameBoundMethodSource not in kinds(cf)  # no guard holds the bag or its method
    held = [
        g.source.method.obj for e in cf.entries for g in e.guards if type(g.source) is SameBoundMethodSource
    ]
    assert not held


def test_the_plain_spelling_without_c_is_right(monkeypatch):
    monkeypatch.setattr(sources, "C", None)
    cf = bcfront.capture(is_keyword)
    cf.checked_links = False
    for s in ["for", "x", "while", "y", "for"]:
        assert cf(s) is keyword.iskeyword(s)
    assert "bound_to" not in cf.entries[0].guard_source and "__get__" in cf.entries[0].guard_source
