"""How a region's code ends and where its root's ``__code__`` is checked, in the functions an
entry is built into (`regions/entry.py`, `regions/links.py`): a region that ends raising
raises in its region and fused functions and in a chain link, while an exact link returns
``raised(exc, chain)`` for the C call to raise (no frame of the link in the traceback); the
check of the root's own ``__code__`` is in the guard exactly once, and an exact link leaves it
to the C call.  Oracle for the calls: the plain function."""

from __future__ import annotations

import pathlib
import re
import sys
import traceback

import pytest

import bcfront
from bcfront import fast_call


def raising(x):
    if x < 0:
        raise ValueError(f"negative: {x}")
    return x


def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - compared with the native call's
        return ("raise", type(e), str(e), type(e.__context__), frames_of(e))


BCFRONT = str(pathlib.Path(bcfront.__file__).parent)


def frames_of(e) -> list[str]:
    """The traceback's frames that are not bcfront's (its own or generated) nor this test's."""
    names = [f.filename for f in traceback.extract_tb(e.__traceback__)]
    return [n for n in names if not n.startswith(("bcfront:", BCFRONT)) and n != __file__]


def _under_handler(fn, *args):
    """The call made while a KeyError is being handled: implicit chaining sets the context."""
    try:
        raise KeyError("handled")
    except KeyError:
        return _outcome(fn, *args)


def _link_source(entry) -> str:
    return entry.link.__bcfront_source__


def _statements(src: str, pattern: str) -> int:
    return len(re.findall(pattern, src, re.M))


def _captured(fn, exact: bool):
    """A capture of `fn` whose entries get exact links (the C call's) or chain links."""
    if exact and not fast_call.HAVE_C:
        pytest.skip("exact links need the C call")
    cf = bcfront.capture(fn)
    cf.exact_links = exact
    return cf


LINK_KINDS = pytest.mark.parametrize("exact", [True, False], ids=["exact link", "chain link"])


@LINK_KINDS
def test_a_region_ending_in_a_raise_raises_as_the_function_does(exact):
    cf = _captured(raising, exact)
    for _ in range(3):  # the trace, then the cached call (twice: the C checks count after one)
        assert _outcome(cf, -1) == _outcome(raising, -1)
        assert _under_handler(cf, -2) == _under_handler(raising, -2)
    assert len(cf._entries) == 2  # one per value: both end raising
    for entry in cf._entries:
        assert _statements(entry.region_source, r"^\s+raise ") == 1  # the region raises itself
        link = _link_source(entry)
        assert entry.link_names.exact is exact
        if exact:  # the raise made a return of ``raised(exc, chain)``, once
            assert _statements(link, r"^\s+raise ") == 0
            assert _statements(link, r"^\s+return \w+\(\w+, True\)$") == 1
        else:  # the region's own raise
            assert _statements(link, r"^\s+raise ") == 1 and "raised" not in link


def test_a_raise_from_the_exact_link_has_no_frame_of_the_link():
    if not fast_call.HAVE_C:
        pytest.skip("exact links need the C call")
    cf = bcfront.capture(raising)
    with pytest.raises(ValueError):
        cf(-1)  # the trace
    with pytest.raises(ValueError) as got:
        cf(-1)
    names = [f.filename for f in traceback.extract_tb(got.value.__traceback__)]
    assert not any(n.startswith("bcfront:exact link") for n in names), names
    del got
    assert sys.exc_info() == (None, None, None)


def adds(a, b):
    return a + b


def _root_code_names(entry, root) -> set[str]:
    return {k for k, v in entry.guard.__globals__.items() if v is root.__code__}


@LINK_KINDS
def test_the_root_code_check_is_in_the_guard_once_and_left_to_c_by_an_exact_link(exact):
    cf = _captured(adds, exact)
    assert cf(1, 2) == cf(1, 2) == 3
    (entry,) = cf._entries
    (name,) = _root_code_names(entry, adds)  # the one constant the check compares with
    uses = re.compile(rf"\.__code__ is (not )?{name}\b")
    assert len(uses.findall(entry.guard_source)) == 1, entry.guard_source
    assert len(uses.findall(_link_source(entry))) == (0 if exact else 1)
    assert entry.link_names.exact is exact


def test_a_replaced_root_code_misses_in_the_guard_and_the_links():
    def f(a, b):
        return a + b

    cf = bcfront.capture(f)
    assert cf(1, 2) == cf(1, 2) == 3
    (entry,) = cf._entries
    assert entry.guard(1, 2) is True
    f.__code__ = (lambda a, b: a - b).__code__
    assert entry.guard(1, 2) is False  # the guard's own check
    assert cf(1, 2) == f(1, 2) == -1
