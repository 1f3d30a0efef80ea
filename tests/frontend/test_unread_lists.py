"""A list from outside whose items the trace never reads (`ListV.unread`, `builder`): the
training loop's ``history.append(loss.detach())``.  Its length was guarded where the
builder wrapped it, so a list that grows every call made an entry per call, natively from
the recompile limit on, and the region rewrote all of it (``history[:] = [...]``, every
item read back).  Now its length and items are guarded and wrapped on the first read, and
an append to an unread list is replayed as ``extend``.  Oracles: plain Python on copies of
the same inputs (results, the lists' contents and identities afterwards), the entry counts.
"""

from __future__ import annotations

import copy
import warnings

import pytest

import bcfront
from bcfront.frontend.model.guard_kinds import GuardKind

HISTORY: list = []


def log_step(x):
    y = x * 2 + 1
    HISTORY.append(y)
    return y


def append_to(xs, v):
    xs.append(v)
    xs.append(v + 1)
    return xs


def append_then_len(xs, v):
    xs.append(v)
    return len(xs), xs[-1]


def append_then_raise(xs, v):
    xs.append(v)
    if v > 2:
        raise ValueError(f"too big: {v}")
    return xs


def aliases(xs, v):
    xs.append(v)
    HISTORY.append(-v)
    return xs is HISTORY


def _length_guards(cf, name):
    return [
        g for e in cf.entries for g in e.guards if g.kind == GuardKind.LENGTH and name in g.source.readable()
    ]


def test_a_list_only_appended_to_is_one_entry_and_grows_as_natively():
    HISTORY.clear()
    cf = bcfront.capture(log_step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no recompile limit, no native fallback
        for i in range(12):
            assert cf(float(i)) == float(i) * 2 + 1
    assert HISTORY == [i * 2.0 + 1 for i in range(12)]
    assert len(cf.entries) <= 3  # two constant entries for the float, then one (`value_dynamic`)
    assert not _length_guards(cf, "HISTORY")
    region = cf.entries[-1].region_source  # appended (`write_replay._appended`), not replaced
    assert "___list_append(" in region and "[:] =" not in region


@pytest.mark.parametrize("lengths", [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [5000, 3, 5001]])
def test_an_argument_list_appended_to_of_any_length(lengths):
    # 5000 items: past the container limit, which a read would hit (a break), an append does not
    cf = bcfront.capture(append_to)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in lengths:
            xs, ys = list(range(n)), list(range(n))
            got, want = cf(xs, 7), append_to(ys, 7)
            assert got is xs and want is ys and xs == ys
    assert len(cf.entries) == 1


def test_a_read_after_the_append_guards_the_length_and_sees_the_appended_item():
    cf = bcfront.capture(append_then_len)
    for n in [0, 3, 3, 5]:
        xs, ys = list(range(n)), list(range(n))
        assert cf(xs, "v") == append_then_len(ys, "v") and xs == ys
    assert _length_guards(cf, "xs")  # read: the length is guarded, as before


def test_an_append_before_a_raise_stays_as_natively():
    cf = bcfront.capture(append_then_raise)
    for v in [1, 2, 3, 4, 1]:
        xs, ys = [0], [0]
        got = want = None
        try:
            got = cf(xs, v)
        except ValueError as e:
            got = ("raised", str(e))
        try:
            want = append_then_raise(ys, v)
        except ValueError as e:
            want = ("raised", str(e))
        assert got == want and xs == ys


@pytest.mark.parametrize("same", [True, False])
def test_two_paths_to_one_list_append_in_order(same):
    HISTORY[:] = [0]
    other = [0]
    cf = bcfront.capture(aliases)
    for v in [1, 2]:
        target = HISTORY if same else other
        before = copy.copy(HISTORY), copy.copy(other)
        assert cf(target, v) is same
        expect_history = before[0] + ([v, -v] if same else [-v])
        assert HISTORY == expect_history
        assert other == (before[1] if same else before[1] + [v])


def test_a_graph_step_appending_a_detached_loss():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 4)
    history: list = []

    def step(x):
        loss = lin(x).pow(2).mean()
        history.append(loss.detach())
        return loss

    cf = bcfront.capture(step)
    xs = [torch.randn(2, 4) for _ in range(12)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [cf(x) for x in xs]
    mine = list(history)
    history.clear()
    want = [step(x) for x in xs]
    assert all(torch.equal(a, b) for a, b in zip(got, want))
    assert len(mine) == 12 and all(torch.equal(a, b) for a, b in zip(mine, history))
    assert len(cf.entries) == 1 and cf.report().native_fallbacks == ()


def test_an_eval_loop_appending_its_accuracy_to_a_metrics_dict():
    # `.item()` breaks the graph; the continuation appends to a list held in a dict: it was
    # an entry per length of the list, natively from the recompile limit on
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 3)
    metrics: dict = {"acc": [], "n": 0}

    def evaluate(x, y):
        with torch.no_grad():
            acc = (lin(x).argmax(-1) == y).float().mean().item()
        metrics["acc"].append(acc)
        metrics["n"] += 1
        return acc

    data = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(12)]
    cf = bcfront.capture(evaluate)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [cf(x, y) for x, y in data]
    mine = dict(metrics, acc=list(metrics["acc"]))
    metrics.update(acc=[], n=0)
    want = [evaluate(x, y) for x, y in data]
    assert got == want and mine == metrics
    assert cf.report().native_fallbacks == ()


def extend_history(x):
    HISTORY.extend([x, -x])
    return x


def add_to_history(x):
    global HISTORY
    HISTORY += [x]
    return x


def extend_by_itself(xs, x):
    xs.extend(xs)  # reads xs first: its length guarded, as before
    xs.extend((x,))
    return xs


@pytest.mark.parametrize("fn,grows", [(extend_history, lambda x: [x, -x]), (add_to_history, lambda x: [x])])
def test_extend_and_in_place_add_keep_the_list_unread(fn, grows):
    HISTORY.clear()
    cf = bcfront.capture(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(12):
            assert cf(i * 1.5) == i * 1.5
    assert HISTORY == [y for i in range(12) for y in grows(i * 1.5)]
    assert len(cf.entries) <= 3 and not _length_guards(cf, "HISTORY")


def test_a_list_extended_by_itself_is_read_first():
    cf = bcfront.capture(extend_by_itself)
    for n in [0, 1, 3, 3]:
        xs, ys = list(range(n)), list(range(n))
        assert cf(xs, "z") is xs and extend_by_itself(ys, "z") == xs
    assert _length_guards(cf, "xs")
