"""`fake.int_hint`: the value an int or SymInt has in the traced example, the one reading
that `symbolic_index` (a size, an index) and `alias_facts.number_input_value` (a symbolic
int graph input) share.  The reference is the int each symbol was made from."""

from __future__ import annotations

import torch

from bcfront.ir.fake import FakeEnv, int_hint


def test_an_int_is_itself_and_a_symbol_its_example_value():
    env = FakeEnv(dynamic=True)
    n = env.sym_int(7, "n")
    assert isinstance(n, torch.SymInt) and int_hint(n) == 7
    assert int_hint(n * 3 + 1) == 22  # arithmetic on symbols: the hint of the expression
    assert int_hint(5) == 5 and type(int_hint(5)) is int


def test_a_fake_size_and_stride_read_their_example_values():
    env = FakeEnv(dynamic=True)
    fake = env.from_real(torch.zeros(4, 6), frozenset({0}), "x", frozenset())
    assert isinstance(fake.shape[0], torch.SymInt)
    assert [int_hint(d) for d in fake.shape] == [4, 6]
    assert [int_hint(d) for d in fake.stride()] == [6, 1]


def test_a_symbol_without_a_value_and_what_is_no_int_have_none():
    env = FakeEnv(dynamic=True)
    assert env.shape_env is not None
    assert int_hint(env.shape_env.create_unbacked_symint()) is None
    assert int_hint(True) is None  # a bool is no size
    assert int_hint(2.0) is None
    assert int_hint(None) is None
