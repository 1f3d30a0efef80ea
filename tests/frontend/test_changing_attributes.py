"""Numbers and texts held by objects and containers that change between calls.

A step counter on an object (``sched._step_count += 1``), a learning rate in an
optimizer's ``param_groups`` dict: values read from an attribute or a container item,
not passed as arguments, that change every call.  They were guarded equal -- one entry
per value, then native at the recompile limit, a training step with an LR scheduler
inside it after eight steps.  Now they follow the arguments' rules: an int that changed
is a symbol of the capture's ShapeEnv (`model.tensor_inputs.input_path`), a float or
text that took a third value a runtime value (`model.builder.runtime_input`), read by
the region before any write it replays (`regions.entry.early_reads`).  Every result, and
every object's state after the call, is compared with the plain function's.
"""

from __future__ import annotations

import copy
import warnings

import pytest

import bcfront


def _run_both(fn_of, state_of, calls):
    """`fn_of(state)` gives the function over a state object; one copy runs captured, one
    plainly, on the same calls; results and states must agree after each call."""
    mine, theirs = state_of(), state_of()
    f, g = fn_of(mine), fn_of(theirs)
    cf = bcfront.capture(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no recompile-limit warning, no native fallback
        for args in calls:
            got, want = cf(*copy.deepcopy(args)), g(*copy.deepcopy(args))
            assert repr(got) == repr(want) and type(got) is type(want), args
            assert repr(vars(mine)) == repr(vars(theirs)), args
    return cf


class _State:
    def __init__(self):
        self.count = 0
        self.scale = 0.5
        self.groups = [{"lr": 0.1, "name": "a"}]
        self.names = ["x", "y"]


def test_a_counter_attribute_is_not_one_entry_per_value():
    def fn_of(s):
        def step(k):
            s.count += 1
            return s.count * k + 1

        return step

    pytest.importorskip("torch")  # a symbol where torch is imported; a runtime value otherwise
    cf = _run_both(fn_of, _State, [(k,) for k in [3] * 20])
    assert len(cf.entries) <= 3


def test_a_float_in_a_dict_in_a_list_attribute_is_read_at_run_time():
    def fn_of(s):
        def step(k):
            group = s.groups[0]
            lr = group["lr"]
            group["lr"] = lr * 0.9 + k  # written after the read: the region reads it first
            group["last"] = lr
            return lr + 1.0

        return step

    cf = _run_both(fn_of, _State, [(0.01 * i,) for i in range(20)])
    assert len(cf.entries) <= 4


def test_an_attribute_read_before_the_trace_replaces_it_keeps_the_old_value():
    def fn_of(s):
        def step(x):
            old = s.scale
            s.scale = old * 2.0 + x
            return [old, old - x]

        return step

    cf = _run_both(fn_of, _State, [(0.25,)] * 14)
    assert len(cf.entries) <= 4


def test_a_write_after_replacing_an_attribute_stores_the_value_read_before():
    def fn_of(s):
        def step(x):
            old = s.scale
            s.scale = old + x  # replayed first: the next write must not read it again
            s.previous = old
            return old

        return step

    cf = _run_both(fn_of, _State, [(0.25,)] * 12)
    assert len(cf.entries) <= 4


def test_a_list_item_text_read_before_a_write_to_that_item():
    def fn_of(s):
        def step(suffix):
            first = s.names[0]
            s.names[0] = first + suffix
            return first.upper() + "/" + s.names[0]

        return step

    cf = _run_both(fn_of, _State, [("a",)] * 12)
    assert len(cf.entries) <= 4


def test_an_lr_scheduler_stepped_inside_the_capture_is_one_entry():
    torch = pytest.importorskip("torch")

    def state():
        m = torch.nn.Linear(4, 3)
        opt = torch.optim.SGD(m.parameters(), lr=0.5)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0 / (1 + step))
        return opt, sched

    def step_of(opt, sched):
        def step(x):
            sched.step()  # ints _step_count, last_epoch; floats in opt.param_groups
            return x * opt.param_groups[0]["lr"]

        return step

    mine, theirs = state(), state()
    cf, plain = bcfront.capture(step_of(*mine)), step_of(*theirs)
    x = torch.linspace(-1.0, 1.0, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's: no optimizer.step() first
        warnings.simplefilter("error", bcfront.report.NativeFallbackWarning)
        for _ in range(14):
            assert torch.equal(cf(x), plain(x))
            assert mine[0].param_groups[0]["lr"] == theirs[0].param_groups[0]["lr"]
            assert (mine[1].last_epoch, mine[1]._step_count) == (theirs[1].last_epoch, theirs[1]._step_count)
    # the counters are first read one call apart, the rate is a float (two constant entries)
    assert len(cf.entries) <= 4
    assert cf.report().native_fallbacks == ()


def test_a_training_step_with_an_lr_scheduler_keeps_its_tensor_work_in_graphs():
    """The scheduler's writes (symbolic counters, a computed rate) come after the backward
    and the optimizer's step, which cannot be undone: the graph ends at the first such
    write, not before the backward (`region_errors._after_lasting_work`)."""
    torch = pytest.importorskip("torch")

    def state():
        torch.manual_seed(0)
        m = torch.nn.Linear(4, 3)
        opt = torch.optim.SGD(m.parameters(), lr=0.5, momentum=0.9)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0 / (1 + step))
        return m, opt, sched

    def step_of(m, opt, sched):
        def step(x):
            loss = m(x).square().mean()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5)  # in place on the grads
            opt.step()
            sched.step()  # its rate's arithmetic runs in a with block: under a handler
            opt.zero_grad()
            return loss.detach()

        return step

    mine, theirs = state(), state()
    cf, plain = bcfront.capture(step_of(*mine)), step_of(*theirs)
    gen = torch.Generator().manual_seed(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", bcfront.report.NativeFallbackWarning)
        for _ in range(14):
            x = torch.randn(5, 4, generator=gen)
            assert torch.equal(cf(x), plain(x))
            assert all(torch.equal(p, q) for p, q in zip(mine[0].parameters(), theirs[0].parameters()))
            assert mine[1].param_groups[0]["lr"] == theirs[1].param_groups[0]["lr"]
            assert mine[2].last_epoch == theirs[2].last_epoch
    assert len(cf.entries) <= 4
    report = cf.report()
    assert report.ops_native == 0 and report.native_fallbacks == ()
    # the entry every later step takes: its graph holds the forward, the backward, the
    # clipping and the optimizer's step
    code = cf.entries[-1].graphs[0].code
    assert "backward" in code and "step" in code and "clip" in code, code
