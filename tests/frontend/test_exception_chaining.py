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


class SectionMissing(Exception):
    def __init__(self, name):
        Exception.__init__(self, f"no {name}")
        self.args = (name,)  # a C descriptor stored: the trace breaks in here, the call runs natively


def made_natively_raised_from_none(d):
    try:
        return d["p"]
    except KeyError:
        raise SectionMissing("p") from None


def made_natively_raised_in_except(d):
    try:
        return d["p"]
    except KeyError:
        raise SectionMissing("p")  # noqa: B904 - the implicit chain is the subject


def _chain(fn):
    try:
        fn({})
    except Exception as e:  # noqa: BLE001 - both must raise alike, with the same chain
        return type(e), e.args, repr(e.__cause__), e.__suppress_context__, repr(e.__context__)
    return None


@pytest.mark.parametrize("fn", [made_natively_raised_from_none, made_natively_raised_in_except])
def test_an_exception_made_by_a_break_in_an_except_block_is_chained_as_natively(fn):
    # the exception is made by the break's native step (its __init__ breaks): raising it
    # ``from None`` set attributes of a real object the trace modelled as its own (an internal
    # error), and the native step ran outside the except block (no __context__)
    cf = bcfront.capture(fn)
    for _ in range(3):
        assert _chain(cf) == _chain(fn)
    assert cf.report().graph_breaks
