"""Dicts keyed by classes and typing forms (huggingface_hub's validator table) are symbolic."""

from __future__ import annotations

import collections.abc
import typing

import pytest

import bcfront

VALIDATORS = {
    typing.Union: "union",
    typing.Literal: "literal",
    list: "list",
    dict: "dict",
    collections.abc.Sequence: "sequence",
}


def pick(hint):
    origin = typing.get_origin(hint)
    if (kind := VALIDATORS.get(origin)) is not None:
        return kind
    return "simple" if isinstance(hint, type) else "other"


@pytest.mark.parametrize(
    "hint", [int | None, typing.Optional[int], typing.Literal["a"], list[int], dict[str, int], int]
)
def test_lookup_by_class_or_typing_form_captures_whole(hint):
    cf = bcfront.capture(lambda: pick(hint), fullgraph=True)
    assert cf() == pick(hint)


def test_a_new_key_recompiles():
    table = {list: 1, tuple: 2}

    def f(k):
        return table.get(k, 0)

    cf = bcfront.capture(f, fullgraph=True)
    assert cf(list) == 1
    table[set] = 3
    assert cf(set) == 3
    del table[list]
    assert cf(list) == 0
