"""Tensor state written by attribute stores and dunder calls, and errors of a failing graph.

O21 (``t.__setitem__(...)`` and in-place dunders called by name), O26 (``t.requires_grad =``),
O27 (a Python attribute stored on a tensor), O22 (the native rerun after a failing graph must
not chain the graph's error), O31 (an in-place op whose result type cannot be cast raises
where eager does, also inside try/finally whose finally breaks).  Oracle: eager PyTorch
(the plain function on fresh copies of the inputs).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def _both(fn, *make):
    """(eager outcome, captured outcome, eager inputs, captured inputs) on fresh inputs."""
    outs = []
    for run in (fn, bcfront.capture(fn)):
        args = [m() for m in make]
        try:
            res = ("ok", run(*args))
        except Exception as e:  # noqa: BLE001 - the exception is the observable result
            res = ("raise", type(e), str(e), e.__context__ is None)
        outs.append((res, args))
    return outs


def _same(a, b):
    if isinstance(a, torch.Tensor):
        return (
            isinstance(b, torch.Tensor)
            and a.dtype == b.dtype
            and a.requires_grad == b.requires_grad
            and torch.equal(a.detach(), b.detach())
        )
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _check(fn, *make):
    (eager, ein), (cap, cin) = _both(fn, *make)
    assert eager[0] == cap[0], (eager, cap)
    if eager[0] == "ok":
        assert _same(eager[1], cap[1]), (eager, cap)
    else:
        assert eager[1:] == cap[1:], (eager, cap)
    assert _same(ein, cin)


def setitem_dunder(t):
    t.__setitem__(0, 5.0)
    t.__setitem__((slice(None), 1), torch.tensor(-1.0))
    return t * 2


def inplace_dunders(t, u):
    a = t.__iadd__(u)
    b = t.__imul__(3)
    c = t.__isub__(1)
    return a is t, b is t, c is t, t + 0


def requires_grad_true(t):
    t.requires_grad = True
    return t.requires_grad, (t * 2).requires_grad, (t * 2).grad_fn is None


def requires_grad_setattr(t):
    setattr(t, "requires_grad", True)
    return t.requires_grad, (t * 2).requires_grad


def requires_grad_false(t):
    t.requires_grad = False
    y = t * 2
    return t.requires_grad, y.requires_grad, y.grad_fn is None


def tag_roundtrip(t):
    t.tag = 5
    return t.tag, t * t.tag


def tag_optional(t):
    return getattr(t, "tag", -1), hasattr(t, "tag"), t + 1


def floor_div_zero(t):
    return t.long() // 0


def long_mul_float(t, u):
    x = u.long()
    try:
        x.mul_(1.5)
        u.sub_(u)
    finally:
        if t.sum() > -2:
            u.add_(10)
    return u


def long_imul_float_caught(t):
    x = t.long()
    try:
        x *= 1.5
    except RuntimeError as e:
        return "caught", str(e), x
    return x


def float_add_complex(t):
    try:
        t.add_(1j)
    except RuntimeError:
        return t - 1
    return t


ONES = lambda: torch.ones(2, 2)  # noqa: E731
VEC = lambda: torch.tensor([1.0, 2.0])  # noqa: E731
LEAF_RG = lambda: torch.ones(3, requires_grad=True)  # noqa: E731


@pytest.mark.parametrize(
    "fn, make",
    [
        (setitem_dunder, (ONES,)),
        (inplace_dunders, (ONES, ONES)),
        (requires_grad_true, (VEC,)),
        (requires_grad_setattr, (VEC,)),
        (requires_grad_false, (LEAF_RG,)),
        (tag_roundtrip, (VEC,)),
        (tag_optional, (VEC,)),
        (floor_div_zero, (VEC,)),
        (long_mul_float, (lambda: torch.tensor([[0.0, 3.0]]), lambda: torch.tensor([[-2.0, 0.0]]))),
        (long_imul_float_caught, (VEC,)),
        (float_add_complex, (VEC,)),
    ],
    ids=lambda x: getattr(x, "__name__", ""),
)
def test_matches_eager(fn, make):
    _check(fn, *make)


def test_native_rerun_error_has_no_graph_error_context():
    cf = bcfront.capture(floor_div_zero)
    with pytest.raises(RuntimeError) as info:
        cf(torch.ones(2))
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_tensor_attribute_set_between_calls_is_seen():
    cf = bcfront.capture(tag_optional)
    t = torch.ones(2)
    for value in (None, 3, "x"):
        if value is not None:
            t.tag = value
        assert _same(cf(t), tag_optional(t))


def test_requires_grad_assigned_between_calls_gives_gradients():
    def f(t):
        return (t * 3).sum()

    cf = bcfront.capture(f)
    t = torch.ones(2)
    assert not cf(t).requires_grad
    t.requires_grad = True
    out = cf(t)
    out.backward()
    assert torch.equal(t.grad, torch.full((2,), 3.0))
