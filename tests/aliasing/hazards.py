"""A catalogue of aliasing hazards: small functions whose answer depends on who shares what.

Each entry is a `Hazard` (see `harness`): the function (its docstring says
what the hazard is), a maker of fresh arguments per call, and whether the
arguments persist across calls (so state accumulates) or what the caller does
with the result afterwards.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from .harness import Hazard  # noqa: E402


def T(seed, *shape):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g)


# -- tensors -------------------------------------------------------------------------------------


def inplace_through_view(x, y):
    """Writes through two views of one input, then reads the input and a view."""
    v = x[1:]
    v.add_(1)
    w = v[:, 1:3]
    w.mul_(y[:3, :2])
    return x.sum(0), v.mean(), w * 2


def slice_assignment(x, v):
    """``x[:, 0] = v`` and ``x[1] *= 2`` on an input, then a read of all of it."""
    x[:, 0] = v
    x[1] *= 2
    x[2:, 1:] += x[:2, :1]
    return x * 3


def transpose_inplace_then_reduce(x):
    """In-place on a transpose, then reductions over both layouts."""
    t = x.t()
    t.mul_(2)
    t[0] += 1
    return t.sum(0), x.sum(1), t.softmax(-1)


def input_mutation_visible(x, y, z):
    """Input mutations (add_, clamp_, copy_, fill_ on a view, out=) the caller must see."""
    x.add_(1)
    y.clamp_(-0.5, 0.5)
    z[0].copy_(x[0])
    z[1:, :2].fill_(3.0)
    torch.mul(x[2:], y[2:], out=z[2:])
    return (x * y).sum()


def returned_view_mutated(x):
    """Returns views of the input; the caller then writes through them."""
    a = x[1:].t()
    b = x.view(-1)
    x.mul_(2)
    return a, b, x[0]


def _mutate_returned(out):
    a, b, row = out
    a.add_(100)  # changes x in eager, so b and row must change too
    b[0] = -1


def intermediate_view_before_softmax(x, w):
    """Writes through views of an intermediate, then a softmax reads it."""
    h = x @ w
    h[:, 0] = 0
    h.diagonal().add_(1)
    h[1:3].mul_(0.5)
    return h.softmax(-1), h


def outputs_view_each_other(x):
    """Outputs that are views of one intermediate (and of each other)."""
    h = x + 1
    h[0].zero_()
    return h, h[1], h.t()


def _mutate_first_output(out):
    out[1].fill_(7)  # h[1] is a view of h: both outputs change


def same_tensor_twice(a, b):
    """The same tensor passed as both arguments (distinct tensors on the third call)."""
    a.add_(1)
    b.mul_(2)
    return a + b


def _same_twice_args(k):
    x = T(k, 4, 3)
    return [x, x] if k != 2 else [x, T(k + 10, 4, 3)]


def tensor_and_its_view(a, b):
    """A tensor and a view of it as two arguments: a write to one shows in the other."""
    b.add_(1)
    a[0] = 5.0
    return a.sum(), b * 2


def _tensor_and_view_args(k):
    x = T(k, 4, 3)
    return [x, x[1:]]


def masked_and_indexed_writes(x, idx):
    """masked_fill_, index_put_ with a tensor index and a masked assignment."""
    x.masked_fill_(x > 1, 1.0)
    x[idx] = 0.5
    x[x < -1] = -1.0
    return x.clone()


# -- Python state ----------------------------------------------------------------------------------


def list_aliasing(xs, ys, t):
    """Two names for one list (xs is ys), a list passed in and mutated, one created and returned."""
    xs.append(t * 2)
    ys.append(t + 1)
    made = [t]
    made.append(xs[-1])
    return len(ys), made


def _list_args(k):
    shared = [T(k, 2)]
    return [shared, shared, T(k + 1, 2)]


def dict_and_set_mutation(d, s, t):
    """A dict and a set passed in and mutated, one key deleted."""
    d["out"] = t * 2
    d.pop("gone", None)
    s.add("seen")
    return d["out"] + 1


class Accumulator:
    def __init__(self):
        self.total = torch.zeros(3)
        self.history = []

    def step(self, x):
        """Attributes accumulated across calls (a tensor sum and a list of tensors)."""
        self.total = self.total + x
        self.history.append(x.sum())
        return self.total * 2


class RunningStats(torch.nn.Module):
    """A running-statistics buffer updated in place under no_grad, plus a counter buffer."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.register_buffer("running_mean", torch.zeros(4))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        self.momentum = 0.1

    def forward(self, x):
        y = self.lin(x)
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * y.mean(0))
            self.steps += 1
        return y - self.running_mean


class BatchNormBlock(torch.nn.Module):
    """BatchNorm in training mode: native_batch_norm writes the running stats in place."""

    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(x).relu()


def as_strided_of_a_view_written(x):
    """``as_strided`` offsets and strides are absolute in the storage: through a diagonal
    view they still address the base's first elements, not the diagonal's."""
    v = x * 2 + 1
    d = v.diagonal()
    d.as_strided((2,), (1,)).add_(1)
    x.diagonal().as_strided((2,), (1,), 1).mul_(-1)
    return v, d, x


def as_strided_past_its_view(x, z):
    """`z` views rows 1-2 of `x`; ``z.diagonal().as_strided(.., 1)`` addresses the storage
    from its start (``x[0, 1:3]``, outside `z`), read and written after `z` was rewritten
    (a functional value of `z` is not a view of that storage)."""
    z.clamp_(-0.5, 0.5)
    z.diagonal().as_strided((2,), (1,), 1).mul_(-1)
    return x.sum(0), z * 2


def _row_view_args(k):
    x = T(k, 4, 6)
    return [x, x[1:3]]


def _unsqueeze_then_break(x):
    x.unsqueeze_(0)
    print("a graph break inside the callee")  # the inlined call is rolled back
    return x


def metadata_write_in_rolled_back_callee(x):
    """An inlined callee changes an input's metadata in place, then breaks: the call is
    rolled back and runs through its own capture, which must see the input unchanged."""
    y = _unsqueeze_then_break(x)
    return y * 2, torch.ones(y.shape), x.sum(-1)


COUNTER = {"n": 0}
LOG = []


def global_writes(x):
    """A global rebound, a global dict and list mutated."""
    global LAST
    LAST = x.sum()
    COUNTER["n"] = COUNTER["n"] + 1
    LOG.append(x.mean())
    return x * COUNTER["n"]


LAST = None


def make_closure():
    state = {"calls": 0}
    last = None

    def closure(x):
        """A nonlocal rebound and a dict in a cell mutated."""
        nonlocal last
        last = x.sum()
        state["calls"] += 1
        return x * 2 + (last if last is not None else 0)

    return closure


HAZARDS = {
    "inplace_through_view": Hazard(inplace_through_view, lambda k: [T(k, 4, 4), T(k + 1, 4, 4)]),
    "slice_assignment": Hazard(slice_assignment, lambda k: [T(k, 4, 3), T(k + 1, 4)]),
    "transpose_inplace_then_reduce": Hazard(transpose_inplace_then_reduce, lambda k: [T(k, 3, 5)]),
    "input_mutation_visible": Hazard(
        input_mutation_visible, lambda k: [T(k, 4, 3), T(k + 1, 4, 3), T(k + 2, 4, 3)]
    ),
    "returned_view_mutated": Hazard(returned_view_mutated, lambda k: [T(k, 3, 4)], after=_mutate_returned),
    "intermediate_view_before_softmax": Hazard(
        intermediate_view_before_softmax, lambda k: [T(k, 4, 5), T(k + 1, 5, 4)]
    ),
    "outputs_view_each_other": Hazard(
        outputs_view_each_other, lambda k: [T(k, 3, 3)], after=_mutate_first_output
    ),
    "same_tensor_twice": Hazard(same_tensor_twice, _same_twice_args, calls=4),
    "tensor_and_its_view": Hazard(tensor_and_its_view, _tensor_and_view_args),
    "masked_and_indexed_writes": Hazard(
        masked_and_indexed_writes, lambda k: [T(k, 5, 3) * 2, torch.tensor([0, 3])]
    ),
    "list_aliasing": Hazard(list_aliasing, _list_args),
    "dict_and_set_mutation": Hazard(
        dict_and_set_mutation, lambda k: [{"gone": 1, "keep": T(k, 2)}, {"a"}, T(k + 1, 2)]
    ),
    "attributes_across_calls": Hazard(lambda: Accumulator().step, lambda k: [T(k, 3)], factory=True, calls=4),
    "running_stats_buffer": Hazard(RunningStats, lambda k: [T(k, 6, 4)], factory=True, calls=4),
    "batchnorm_running_stats": Hazard(BatchNormBlock, lambda k: [T(k, 6, 4)], factory=True),
    "global_writes": Hazard(
        global_writes, lambda k: [T(k, 3)], globals_=(globals(), ("COUNTER", "LOG", "LAST"))
    ),
    "closure_writes": Hazard(make_closure, lambda k: [T(k, 3)], factory=True),
    "as_strided_of_a_view_written": Hazard(as_strided_of_a_view_written, lambda k: [T(k, 4, 6)]),
    "as_strided_past_its_view": Hazard(as_strided_past_its_view, _row_view_args),
    "metadata_write_in_rolled_back_callee": Hazard(
        metadata_write_in_rolled_back_callee, lambda k: [T(k, 2, 3)]
    ),
    "persistent_input_mutation": Hazard(
        input_mutation_visible, lambda k: [T(k, 4, 3), T(k + 1, 4, 3), T(k + 2, 4, 3)], persistent=True
    ),
}
