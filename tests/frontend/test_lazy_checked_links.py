"""An exact link's CheckedLink (its checks as a C program, `regions/check_program.py`) is made
when a call first reaches its entry, not at the capture (`links.PendingCheckedLink`,
`fast_call._checking_later`): a function called once never pays for the compile, and from
the next call on its checks run in C as before.  Oracles: the plain function (results, in
both phases), the Python links (``checked_links = False``, the reference), the compile's
own calls (counted by wrapping `links.compile_checks`) and the CheckedLink's ``hits``."""

from __future__ import annotations

import gc
import weakref

import pytest

import bcfront
from bcfront import fast_call
from bcfront.frontend.regions import links

from .check_programs import needs_c_call

needs_c_call(globals())


@pytest.fixture
def compiles(monkeypatch):
    """How many times `compile_checks` ran (a one-item list), counted from now."""
    count = [0]
    real = links.compile_checks

    def counted(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(links, "compile_checks", counted)
    return count


def scaled(x, n):
    return x * n + 1


def hits(cf) -> int:
    return sum(getattr(e.link_names.checked, "hits", 0) for e in cf._entries)


def test_a_function_called_once_compiles_no_check_program(compiles):
    cf = bcfront.capture(scaled)
    assert cf(3, 2) == 7
    (entry,) = cf._entries
    assert compiles[0] == 0
    assert entry.link_names.checked is None and entry.link_names.pending is not None


def test_the_second_call_makes_the_check_program_and_its_checks_run_in_c(compiles):
    cf = bcfront.capture(scaled)
    assert cf(3, 2) == 7
    assert cf(3, 2) == 7  # the first cached call: makes it, and runs it
    (entry,) = cf._entries
    assert compiles[0] == 1 and entry.link_names.pending is None
    assert entry.link_names.checked.hits == 1
    assert [cf(3, 2) for _ in range(3)] == [7] * 3
    assert compiles[0] == 1 and entry.link_names.checked.hits == 4  # made once, run in C since


def test_a_keyword_call_reaching_the_entry_first_makes_it_too(compiles):
    cf = bcfront.capture(scaled)
    assert cf(3, 2) == 7
    assert cf(3, n=2) == 7  # bound by the link as by the root
    assert compiles[0] == 1 and cf._entries[0].link_names.checked is not None
    with pytest.raises(TypeError) as native:
        scaled(3, m=2)
    with pytest.raises(TypeError) as got:
        cf(3, m=2)
    assert str(got.value) == str(native.value)


def pick(n, x):
    if n == 1:
        return x + 1
    if n == 2:
        return x * 2
    return x - n


def outcome(fn, args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - what the call raises is its outcome here
        return ("raise", type(e), str(e))


def raising(x):
    if x < 0:
        raise ValueError(f"negative: {x}")
    return [x, (x, 1)]


def with_defaults(x, y=10, *, k=3):
    return (x, y, k)


CALLS = [
    (scaled, [(3, 2), (3, 2), (2.5, 2), (3, 2), ("a", 3), (2.5, 2), ("a", 3)]),
    (pick, [(1, 5), (2, 5), (3, 5), (2, 5), (1, 5), (3, 5), (7, 5), (7, 5)]),
    (raising, [(1,), (-1,), (-1,), (2,), (-1,), (1,)]),
    (with_defaults, [(1,), (1, 2), (1,), (1, 2), ("z",), ("z",)]),
]


@pytest.mark.parametrize("fn, calls", CALLS, ids=[f.__name__ for f, _ in CALLS])
def test_results_equal_the_plain_function_before_and_after_the_check_programs_are_made(fn, calls, compiles):
    checked = bcfront.capture(fn)
    python = bcfront.capture(fn)
    python.checked_links = False
    made = []  # whether each call found its entry's CheckedLink made
    for args in calls:
        want = outcome(fn, args)
        assert outcome(checked, args) == want
        assert outcome(python, args) == want
        made.append([e.link_names.checked is not None for e in checked._entries])
    assert made[0] == [False]  # the capture's call: nothing compiled
    assert any(all(m) for m in made[1:])  # ... later calls made them
    assert hits(checked) > 0 and hits(python) == 0
    assert all(e.link_names.pending is not None for e in python._entries)  # never made there


def test_an_entry_no_call_reaches_again_is_never_compiled(compiles):
    cf = bcfront.capture(pick)
    cf(1, 5)
    cf(2, 5)  # a miss: the chain tried the first entry (made now), then captured
    assert [e.link_names.checked is not None for e in cf._entries] == [True, False]
    assert cf(1, 5) == 6 and cf(1, 5) == 6  # the first entry's: the second is not reached
    assert [e.link_names.checked is not None for e in cf._entries] == [True, False]
    assert compiles[0] == 1
    assert cf(2, 5) == 10
    assert [e.link_names.checked is not None for e in cf._entries] == [True, True]
    assert compiles[0] == 2


def test_checks_off_after_the_capture_make_nothing(compiles):
    cf = bcfront.capture(scaled)
    assert cf(3, 2) == 7
    cf.checked_links = False
    cf._install_call()  # armed again, with the Python links
    assert cf(3, 2) == 7 and cf(3, 2) == 7
    assert compiles[0] == 0 and cf._entries[0].link_names.checked is None


def test_a_failure_to_make_it_leaves_the_python_link_serving(monkeypatch, lenient):
    def broken(*args, **kwargs):
        raise RuntimeError("a bcfront bug")

    cf = bcfront.capture(scaled)
    assert cf(3, 2) == 7
    monkeypatch.setattr(links, "checked_link", broken)
    assert cf(3, 2) == 7 and cf(3, 2) == 7
    names = cf._entries[0].link_names
    assert names.checked is None and names.pending is None  # tried once


def test_a_failure_to_make_it_raises_in_strict_mode(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("a bcfront bug")

    monkeypatch.setenv("BCFRONT_STRICT", "1")
    cf = bcfront.capture(scaled)
    assert cf(3, 2) == 7
    monkeypatch.setattr(links, "checked_link", broken)
    with pytest.raises(RuntimeError, match="a bcfront bug"):
        cf(3, 2)


class Scale:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return x * self.k


def test_a_pending_check_program_keeps_nothing_alive():
    torch = pytest.importorskip("torch")

    scale, x = Scale(3), torch.ones(2)
    cf = bcfront.capture(scale.apply)
    assert torch.equal(cf(x), x * 3)
    assert cf._entries[0].link_names.pending is not None
    dead = weakref.ref(scale), weakref.ref(x), weakref.ref(cf)
    del scale, x, cf
    gc.collect()
    assert [r() for r in dead] == [None, None, None]


def test_make_checked_makes_a_pending_entry_at_once(compiles):
    cf = bcfront.capture(scaled)
    cf(3, 2)
    fast_call.make_checked(cf._entries[0])
    assert compiles[0] == 1 and cf._entries[0].link_names.checked is not None
    fast_call.make_checked(cf._entries[0])  # made already: nothing to do
    assert compiles[0] == 1


def test_a_check_program_that_fails_to_be_made_is_noted_and_the_link_serves(compiles, monkeypatch):
    # bcfront's bug, which must not change a result -- nor pass unseen: explain says it
    def broken(*args, **kwargs):
        raise RuntimeError("no program")

    monkeypatch.setattr(links, "checked_link", broken)
    monkeypatch.setattr(fast_call, "STRICT", [lambda: False])
    cf = bcfront.capture(scaled)
    assert cf(3, 2) == scaled(3, 2) and cf(3, 2) == scaled(3, 2)  # the second makes it: fails
    entry = cf._entries[0]
    assert entry.link_names.checked is None and entry.link_names.pending is None
    assert cf(3, 2) == scaled(3, 2)
    noted = [n for n in cf.report().notes if "making the program failed" in n]  # (explain shows them)
    assert noted and "RuntimeError: no program" in noted[0]


class _Finalized:
    """Cyclic garbage whose finalizer runs Python code: a collection inside another thread's
    parse switches threads there."""

    def __del__(self):
        total = 0
        for i in range(10):
            total += i


def _many_checks(config):
    # one guard check per key read: a program long enough that its parse is worth racing
    return config["a"] + config["b"] * config["c"] - config["d"] + config["e"] * config["f"]


def test_threads_making_their_entries_programs_at_once_stay_right():
    """Threads whose cached calls make their entries' CheckedLinks at the same time, with
    finalizers running in collections: CPython 3.11's parse keeps one recursion count per
    interpreter, which two threads parsing at once corrupt (a SystemError out of the call);
    the programs are made one at a time (`PendingCheckedLink.make`)."""
    import sys
    import threading

    problems: list = []

    def worker(seed):
        try:
            for r in range(12):
                config = {k: seed + r + i for i, k in enumerate("abcdef")}
                cf = bcfront.capture(lambda c: _many_checks(c))
                cf(config)  # the capture
                for _ in range(40):
                    junk = _Finalized()
                    junk.self = junk
                assert cf(config) == _many_checks(config)  # makes the program
                assert cf(config) == _many_checks(config)
        except Exception as e:  # noqa: BLE001 - any escape is the finding
            problems.append(f"{type(e).__name__}: {e}")

    threshold, interval = gc.get_threshold(), sys.getswitchinterval()
    gc.set_threshold(50)
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=worker, args=(s,)) for s in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
    finally:
        gc.set_threshold(*threshold)
        sys.setswitchinterval(interval)
    assert not problems, problems[:3]
