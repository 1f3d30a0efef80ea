"""Implicit exception chaining (``__context__``) matches CPython, whoever raises (pure Python).

CPython sets ``__context__`` of every exception raised while another is handled -- by a
``raise`` statement or by a failing operation (a dict lookup) -- and overwrites it when the
same object is raised again in another handler.  Oracle: the plain function.
"""

from __future__ import annotations

import pytest

import bcfront


def lookup_fails_in_finally(d):
    try:
        raise ValueError
    finally:
        d["p"]


def lookup_fails_in_except(d):
    try:
        raise ValueError(1)
    except ValueError as e:
        try:
            d["p"]
        except KeyError as k:
            return type(k.__context__).__name__, k.__context__ is e, e.__context__


def reraised_object_gets_a_new_context(d):
    e = KeyError(2)
    try:
        raise e
    except KeyError:
        pass
    try:
        raise ValueError(3)
    except ValueError as v:
        try:
            raise e
        except KeyError as k:
            return k.__context__ is v


def delete_fails_in_except(d):
    try:
        [][0]  # noqa: PLE0643 - subject: raises IndexError on purpose
    except IndexError:
        del d["q"]


def _outcome(fn):
    try:
        return "ok", fn({})
    except Exception as e:  # noqa: BLE001 - both must raise alike, with the same chain
        return "raise", type(e), str(e), type(e.__context__), str(e.__context__)


@pytest.mark.parametrize(
    "fn",
    [
        lookup_fails_in_finally,
        lookup_fails_in_except,
        reraised_object_gets_a_new_context,
        delete_fails_in_except,
    ],
    ids=lambda f: f.__name__,
)
def test_context_matches_cpython(fn):
    cf = bcfront.capture(fn)
    for _ in range(3):
        assert _outcome(cf) == _outcome(fn)
