"""`ir.raise_free`: a node it declares raise-free raises nothing at run time that the fake
run did not raise first.

Each table entry runs on adversarial inputs (empty, 0-d, non-contiguous, nan and inf,
int and bool dtypes, float16): on fake tensors first, as the capture does; where the fake
run succeeds and `cannot_raise` says the node cannot raise, the real run must not raise.
Every entry must be judged raise-free on some input (so each is exercised), and the nodes
it must not claim (integer division, indexing, ``view``, a ``.grad`` set to a tensor, an
unbacked size) may raise.
"""

from __future__ import annotations

import builtins
import operator

import pytest

torch = pytest.importorskip("torch")

from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.fx.experimental.symbolic_shapes import ShapeEnv  # noqa: E402

from bcfront.ir.graph import Node  # noqa: E402
from bcfront.ir.raise_free import Kind, cannot_raise, raise_free_table  # noqa: E402


def _inputs():
    """Adversarial tensors, each made anew (an entry may not write them, but setattr does)."""
    nan = torch.tensor([float("nan"), float("inf"), -0.0, 0.0, -1.0, 3.5])
    return {
        "float": torch.randn(2, 3),
        "empty": torch.zeros(0, 3),
        "scalar": torch.tensor(0.0),
        "nan": nan,
        "strided": torch.randn(3, 4).t(),
        "half": torch.tensor([0.0, -1.0, 65504.0], dtype=torch.float16),
        "int": torch.tensor([[0, -3, 7], [2, 0, -1]]),
        "int_zero": torch.zeros(2, 3, dtype=torch.int64),
        "bool": torch.tensor([True, False]),
        "leaf": torch.zeros(3, requires_grad=True),
    }


def _unary(t):
    return [(t,)]


def _binary(t):
    return [(t, t), (t, 0), (t, 0.0), (t, -1), (t, float("nan")), (t, torch.zeros((), dtype=t.dtype))]


def _dims(t):
    return [(t,), (t, 0), (t, -1), (t, (0,)), (t, 0, True)]


def _to(t):
    return [(t, torch.int32), (t, torch.float16), (t, torch.bool)]


def _shape(t):
    return [(t, -1), (t, t.shape), (t, (-1, *t.shape[1:])), (t, 0, -1)]


def _swap(t):
    return [(t, 0, -1), (t, 0, 0)]


def _permute(t):
    return [(t, tuple(reversed(range(t.dim())))), (t, *reversed(range(t.dim())))]


def _expand(t):
    return [(t, *t.shape), (t, 2, *t.shape), (t, -1, *t.shape)]


def _pair(t):
    return [(t, t)]


def _setattr(t):
    return [(t, "grad", None)]


# how to call each table entry: its target (key minus the op) -> argument lists for a tensor
SAMPLES = {
    "detach": _unary,
    "clone": _unary,
    "contiguous": _unary,
    "float": _unary,
    "double": _unary,
    "half": _unary,
    "bfloat16": _unary,
    "t": _unary,
    "reshape": _shape,
    "reshape_as": _pair,
    "expand_as": _pair,
    "transpose": _swap,
    "permute": _permute,
    "unsqueeze": lambda t: [(t, 0), (t, -1)],
    "squeeze": _dims,
    "flatten": lambda t: [(t,), (t, 0), (t, 0, -1)],
    "expand": _expand,
    "to": _to,
    "grad": _unary,
    "sum": _dims,
    "mean": _dims,
    "softmax": lambda t: [(t, -1), (t, 0)],
    "log_softmax": lambda t: [(t, -1), (t, 0)],
    "pow": lambda t: [(t, 2), (t, -1), (t, 0.5), (t, t)],
    "setattr": _setattr,
}
for _name in ("add", "sub", "mul", "div", "truediv"):
    SAMPLES[_name] = _binary
for _name in ("neg", "pos", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu"):
    SAMPLES[_name] = _unary
for _name in ("gelu", "silu"):
    SAMPLES[_name] = _unary


def _name(key) -> str:
    op, target = key
    return target if isinstance(target, str) else target.__name__


def _call(op, target, args):
    if op == "method":
        return getattr(args[0], target)(*args[1:])
    if op == "getattr":
        return getattr(args[0], target)
    return target(*args)


def _judge(key, args):
    """(fake raised, cannot_raise of the node) for ``key`` called on `args` (real tensors)."""
    op, target = key
    mode = FakeTensorMode()
    fakes = {id(a): mode.from_tensor(a) for a in args if isinstance(a, torch.Tensor)}
    fake_args = tuple(fakes[id(a)] if isinstance(a, torch.Tensor) else a for a in args)
    try:
        with mode:
            meta = _call(op, target, fake_args)
    except Exception:  # noqa: BLE001 - the capture would have raised it first
        return True, False
    inputs = {i: Node(i, "input", f"in{i}", meta=fakes[i]) for i in fakes}  # one per tensor
    node_args = tuple(inputs[id(a)] if isinstance(a, torch.Tensor) else a for a in args)
    return False, cannot_raise(Node(len(args), op, target, node_args, meta=meta))


@pytest.mark.parametrize(
    "key", sorted(raise_free_table(), key=lambda k: (k[0], _name(k))), ids=lambda k: f"{k[0]}-{_name(k)}"
)
def test_entry_raises_nothing_the_fake_run_did_not(key):
    op, target = key
    assert _name(key) in SAMPLES, f"no sample arguments for table entry {key}"
    claimed = 0
    for label, t in _inputs().items():
        for args in SAMPLES[_name(key)](t):
            fake_raised, free = _judge(key, args)
            if fake_raised or not free:
                continue
            claimed += 1
            try:
                _call(op, target, args)
            except Exception as e:  # noqa: BLE001 - the point of the test
                pytest.fail(f"{_name(key)} on {label} {args[1:]!r}: declared raise-free, raised {e!r}")
    assert claimed, f"{_name(key)} was judged raise-free on no input"


def _may_raise(op, target, *args) -> bool:
    fake_raised, free = _judge((op, target), args)
    assert not fake_raised
    return not free


def test_nodes_that_may_raise():
    ints = torch.tensor([4, 0, 2])
    floats = torch.randn(3)
    assert _may_raise("call", operator.floordiv, ints, ints)  # ZeroDivisionError on ints
    assert _may_raise("call", operator.mod, ints, ints)
    assert _may_raise("call", operator.truediv, ints, ints)  # (not declared for ints)
    assert _may_raise("call", torch.div, ints, 2)
    assert _may_raise("call", operator.getitem, floats, ints)  # an index out of range
    assert _may_raise("method", "view", floats, -1)  # reads strides a real kernel lays out
    assert _may_raise("method", "max", floats)  # raises on an empty tensor
    assert _may_raise("call", torch.embedding, torch.randn(3, 2), ints)
    assert _may_raise("call", builtins.setattr, torch.zeros(3, requires_grad=True), "grad", floats)
    assert _may_raise("method", "to", floats, "cpu")  # a device transfer
    assert not _may_raise("method", "to", floats, torch.float64)


def test_a_write_may_raise():
    """An ``out=`` write (a leaf that requires grad, a resize): not declared, even when the
    node's ``mutates`` flag is not set."""
    x = Node(0, "input", "in0", meta=torch.randn(3))
    out = Node(1, "input", "in1", meta=torch.randn(3))
    assert not cannot_raise(Node(2, "call", torch.add, (x, x), {"out": out}, meta=out.meta))
    assert not cannot_raise(Node(2, "call", torch.add, (x, x), meta=out.meta, mutates=True))
    assert cannot_raise(Node(2, "call", torch.add, (x, x), meta=out.meta))


def test_an_unbacked_size_may_raise():
    """A size known only at run time (``nonzero``'s) is no guarded fact: a reshape of it
    may fail then, though the fake run passed."""
    mode = FakeTensorMode(shape_env=ShapeEnv())
    with mode:
        n = mode.shape_env.create_unbacked_symint()
        torch._check(n >= 2)
        fake = torch.empty(n, 3)
        out = fake.reshape(-1)
    x = Node(0, "input", "in0", meta=fake)
    assert not cannot_raise(Node(1, "method", "reshape", (x, -1), meta=out))
    backed = FakeTensorMode(shape_env=ShapeEnv())
    from torch.fx.experimental.symbolic_shapes import DimDynamic, StatelessSymbolicContext

    ctx = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC, DimDynamic.STATIC])
    fx = backed.from_tensor(torch.empty(4, 3), symbolic_context=ctx)
    assert isinstance(fx.shape[0], torch.SymInt)
    with backed:
        out = fx.reshape(-1)
    x = Node(0, "input", "in0", meta=fx)
    assert cannot_raise(Node(1, "method", "reshape", (x, -1), meta=out))


def test_every_kind_is_used():
    assert set(raise_free_table().values()) == set(Kind)


class _Logged(torch.Tensor):
    """A tensor subclass: its ``__torch_function__`` runs Python that may raise."""


def test_a_tensor_subclass_may_raise():
    x = torch.randn(3).as_subclass(_Logged)
    node = Node(1, "method", "detach", (Node(0, "input", "in0", meta=x),), meta=x)
    assert not cannot_raise(node)
