"""The effect log explain shows, and the guards on inputs that share storage.

Oracles: the source lines of the test functions themselves (each effect
names the line that made it, found by a marker comment), eager PyTorch for
values, and which calls recompiled.
"""

from __future__ import annotations

import inspect

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

from .hazards import T  # noqa: E402


def line_of(fn, marker: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    for i, text in enumerate(lines):
        if f"# {marker}" in text:
            return start + i
    raise AssertionError(marker)


SEEN = []
COUNT = 0


class Box:
    def __init__(self):
        self.n = 0
        self.items = []


class Stats(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.zeros(3))
        self.register_buffer("last", torch.zeros(3))
        self.calls = 0

    def forward(self, x):
        self.mean.mul_(0.5).add_(x.mean(0))  # E-buffer-write
        self.last = x.sum(0)  # E-buffer-assign
        self.calls = self.calls + 1  # E-module-attr
        return x - self.mean


def effects_fn(xs, d, box, x):
    global COUNT
    xs.append(x)  # E1
    d["k"] = x * 2  # E2
    box.n = box.n + 1  # E3
    x.add_(1)  # E4
    box.items.extend([1, 2])  # E5
    COUNT = COUNT + 1  # E6
    SEEN.append(1)  # E7
    del d["gone"]  # E8
    return x


def test_effects_are_listed_in_program_order_with_lines():
    global COUNT
    saved = COUNT
    try:
        r = bcfront.explain(effects_fn, [], {"gone": 0}, Box(), T(0, 3))
    finally:
        COUNT = saved
        SEEN.clear()
    got = [(s.kind, s.target, s.lineno) for s in r.side_effects]
    L = lambda m: line_of(effects_fn, m)  # noqa: E731
    assert got == [
        ("list.append", "L['xs']", L("E1")),
        ("dict.setitem", "L['d']", L("E2")),
        ("setattr", "L['box'].n", L("E3")),
        ("input-mutation", "L['x']", L("E4")),
        ("list.extend", "L['box'].items", L("E5")),
        ("global", "G['COUNT']", L("E6")),
        ("list.append", "G['SEEN']", L("E7")),
        ("dict.delitem", "L['d']", L("E8")),
    ]
    assert all(s.filename == __file__ for s in r.side_effects)


@pytest.mark.parametrize("backend", ["eager", "fx"])
def test_module_buffers_and_attributes_in_the_log(backend):
    m = Stats()
    r = bcfront.explain(bcfront.capture(m, backend=backend), T(0, 4, 3))
    got = [(s.kind, s.target, s.lineno) for s in r.side_effects]
    L = lambda k: line_of(Stats.forward, k)  # noqa: E731
    assert got == [
        ("input-mutation", "L['self'].mean", L("E-buffer-write")),
        ("buffer", "L['self'].last", L("E-buffer-assign")),
        ("setattr", "L['self'].calls", L("E-module-attr")),
    ]


def test_nonlocal_write_in_the_log():
    def outer():
        total = 0

        def inner(x):
            nonlocal total
            total = total + 1  # E-nonlocal
            return x * total

        return inner

    inner = outer()
    r = bcfront.explain(inner, T(0, 3))
    assert [(s.kind, s.target, s.lineno) for s in r.side_effects] == [
        ("nonlocal", "C['total']", line_of(inner, "E-nonlocal"))
    ]


def test_effects_appear_in_json():
    r = bcfront.explain(effects_fn, [], {"gone": 0}, Box(), T(0, 3))
    SEEN.clear()
    text = r.to_json()
    assert '"kind": "input-mutation"' in text and '"kind": "list.append"' in text


# -- guards on inputs sharing storage --------------------------------------------------------------


def write_second(a, b):
    b.mul_(2)
    return a.sum() + b.sum()


def _calls(cf, argsets):
    for args in argsets:
        ref = [a.clone() for a in args[0]]  # the eager world
        ref_args = [ref[i] if j is None else ref[i][j] for i, j in args[1]]
        got = cf(*[args[0][i] if j is None else args[0][i][j] for i, j in args[1]])
        want = write_second(*ref_args)
        torch.testing.assert_close(got, want)
        for a, b in zip(args[0], ref):
            torch.testing.assert_close(a, b)


@pytest.mark.parametrize("backend", ["eager", "fx"])
def test_tensor_and_view_then_distinct_tensors(backend):
    """Captured with a tensor and its view; then distinct tensors; then the view again."""
    cf = bcfront.capture(write_second, backend=backend)
    sl = slice(1, None)
    view = ([T(0, 4, 3)], [(0, None), (0, sl)])
    distinct = ([T(1, 4, 3), T(2, 3, 3)], [(0, None), (1, None)])
    _calls(cf, [view, view, distinct, view, distinct])
    if backend == "fx":
        kinds = [g.kind for g in cf.report().guards]
        assert len(cf.entries) == 2, "one entry per sharing pattern"
        assert "TENSOR_STORAGE" in kinds
        assert any("storage shared" in r.guard or "TENSOR_STORAGE" in str(r) for r in cf.recompiles)


@pytest.mark.parametrize("backend", ["eager", "fx"])
def test_distinct_tensors_then_a_tensor_and_its_view(backend):
    cf = bcfront.capture(write_second, backend=backend)
    distinct = ([T(1, 4, 3), T(2, 3, 3)], [(0, None), (1, None)])
    view = ([T(0, 4, 3)], [(0, None), (0, slice(1, None))])
    _calls(cf, [distinct, view, distinct, view])


@pytest.mark.parametrize("backend", ["eager", "fx"])
def test_same_tensor_twice_then_distinct(backend):
    cf = bcfront.capture(write_second, backend=backend)
    same = ([T(0, 3, 3)], [(0, None), (0, None)])
    distinct = ([T(1, 3, 3), T(2, 3, 3)], [(0, None), (1, None)])
    _calls(cf, [same, distinct, same, distinct])
    assert len(cf.entries) == 2


def test_storage_guard_only_when_inputs_are_written():
    def pure(a, b):
        return a + b

    cf = bcfront.capture(pure, backend="fx")
    x = T(0, 4, 3)
    cf(x, x[1:2].expand(4, 3))
    assert "TENSOR_STORAGE" not in [g.kind for g in cf.report().guards]


@pytest.mark.parametrize("backend", ["eager", "fx"])
def test_batchnorm_running_stats_are_input_mutations(backend):
    """native_batch_norm's schema hides its writes; the effect log still lists them."""
    bn = torch.nn.BatchNorm1d(3)
    r = bcfront.explain(bcfront.capture(bn, backend=backend), T(0, 4, 3))
    targets = {s.target for s in r.side_effects if s.kind == "input-mutation"}
    assert {"L['self'].running_mean", "L['self'].running_var", "L['self'].num_batches_tracked"} <= targets, (
        targets
    )
