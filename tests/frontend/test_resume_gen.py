"""`regions.resume_gen`: a generator rebuilt suspended at a yield behaves, natively, as the
original suspended there -- next/send go on after the yield, throw and close raise at it
(its try/finally and except blocks run), and `finish` closes it without running its code.
The oracle is the original generator itself, advanced to the same yield."""

from __future__ import annotations

import sys

import pytest

from bcfront.frontend.model.frame import decoded
from bcfront.frontend.model.resumed_gens import RESUMED, finish
from bcfront.frontend.regions.resume_gen import make_resumed_generator, suspend

pytestmark = pytest.mark.skipif(sys.version_info[:2] > (3, 13), reason="3.11 to 3.13 only")

LOG: list = []


def guarded(a):
    x = a + 1
    try:
        got = yield x
        LOG.append(("got", got, x))
        x += 10
        yield x
        LOG.append("after second")
    except KeyError as e:
        LOG.append(("caught", e.args))
        yield "recovered"
    finally:
        LOG.append(("finally", x))


def plain(a):
    yield a
    LOG.append(("plain", a))


def looping(n):
    for i in range(n):  # the range iterator is on the stack at the yield
        yield i * 10
    LOG.append("loop done")


def first_yield(fn):
    return next(i.offset for i in decoded(fn.__code__)[0].instructions if i.opname == "YIELD_VALUE")


def original_at_yield(fn, arg):
    gen = fn(arg)
    first = next(gen)
    return gen, first


def rebuilt_at_yield(fn, arg, stack=()):
    """The rebuilt generator, made from the original's state at its first yield."""
    orig, _ = original_at_yield(fn, arg)
    state = dict(orig.gi_frame.f_locals)
    names = tuple(n for n in fn.__code__.co_varnames if n in state)
    make, info = make_resumed_generator(fn, first_yield(fn), len(stack), names)
    orig.close()
    return suspend(make, info.lasti, *stack, *(state[n] for n in names), [False]), info


def drive(gen, steps) -> list:
    """Run `steps` on `gen` (("send", v) / ("throw", exc) / ("close",)), recording what it
    yields or raises, and LOG."""
    out = []
    LOG.clear()
    for step in steps:
        try:
            if step[0] == "send":
                out.append(("yield", gen.send(step[1])))
            elif step[0] == "throw":
                out.append(("yield", gen.throw(step[1])))
            else:
                out.append(("closed", gen.close()))
        except StopIteration as e:
            out.append(("stop", e.value))
        except Exception as e:  # noqa: BLE001 - what the generator raised is the result
            out.append(("raise", type(e).__name__, e.args))
    return out + [list(LOG)]


SCENARIOS = [
    [("send", None), ("send", None)],
    [("send", 7), ("send", None), ("send", None)],
    [("throw", KeyError("k")), ("send", None)],
    [("throw", ValueError("v"))],
    [("close",)],
    [("send", None), ("close",)],
    [("send", None), ("throw", KeyError("late"))],
]


@pytest.mark.parametrize("steps", SCENARIOS)
def test_a_rebuilt_generator_goes_on_as_the_original(steps):
    orig, _ = original_at_yield(guarded, 1)
    expected = drive(orig, steps)
    rebuilt, _ = rebuilt_at_yield(guarded, 1)
    assert drive(rebuilt, steps) == expected


@pytest.mark.parametrize(
    "steps", [[("send", None), ("send", None)], [("throw", KeyError("k"))], [("close",)]]
)
def test_a_yield_outside_any_try_block(steps):
    orig, _ = original_at_yield(plain, 5)
    expected = drive(orig, steps)
    rebuilt, _ = rebuilt_at_yield(plain, 5)
    assert drive(rebuilt, steps) == expected


def test_stack_slots_below_the_yield_are_restored():
    orig, _ = original_at_yield(looping, 3)
    expected = drive(orig, [("send", None)] * 3)
    fresh = looping(3)
    next(fresh)
    # the range iterator at the same position: the stack slot below the yielded value
    it = iter(range(1, 3))
    make, info = make_resumed_generator(looping, first_yield(looping), 1, ("n", "i"))
    rebuilt = suspend(make, info.lasti, it, 3, 0, [False])
    assert drive(rebuilt, [("send", None)] * 3) == expected


def test_finish_closes_without_running_the_code_after_the_yield():
    rebuilt, info = rebuilt_at_yield(guarded, 1)
    assert RESUMED[rebuilt.gi_code] is info and info.code is guarded.__code__
    LOG.clear()
    finish(rebuilt)
    assert LOG == []
    assert rebuilt.gi_frame is None
    with pytest.raises(StopIteration):
        next(rebuilt)
