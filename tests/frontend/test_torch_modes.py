"""Global torch modes around and inside captured code: inference mode, TorchFunctionMode,
TorchDispatchMode, tensor subclasses.

inference_mode blocks are captured like no_grad (the state rides on each node; the
entry's inference mode is guarded); an enclosing TorchFunctionMode or TorchDispatchMode
and tensor subclasses are graph breaks with a reason, the code then running natively.
Oracle: eager PyTorch on identical inputs: values, ``is_inference``, ``requires_grad``,
the modes' own logs of what they saw, and the result's type.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import bcfront  # noqa: E402


def _facts(out):
    """What a result shows: values, inference-ness, requires_grad, type (recursively)."""
    if isinstance(out, torch.Tensor):
        return (type(out).__name__, out.detach().tolist(), out.is_inference(), out.requires_grad)
    if isinstance(out, (tuple, list)):
        return tuple(_facts(o) for o in out)
    return out


# -- inference mode ---------------------------------------------------------------------------------


def block(x):
    """An inference_mode block inside a function that also records autograd outside it."""
    with torch.inference_mode():
        y = x * 2
        flag = torch.is_inference_mode_enabled(), torch.is_grad_enabled()
    return y + 1, x * 3, flag, torch.is_inference_mode_enabled()


def reads_mode(x):
    """A Python branch on the ambient inference mode."""
    return x + (1 if torch.is_inference_mode_enabled() else 2)


@torch.inference_mode()
def decorated(x):
    return x.sin() * 2


def nested_off(x):
    """inference_mode(False) inside inference_mode: its ops record autograd again."""
    with torch.inference_mode():
        a = x + 1
        with torch.inference_mode(False):
            b = x * 2
        c = a * 2
    return a, b, c


def break_inside(x):
    """A graph break (print) inside the block: the continuation runs in inference mode."""
    with torch.inference_mode():
        y = x * 2
        print("inside", torch.is_inference_mode_enabled())
        z = y + 1
    return z, torch.is_inference_mode_enabled()


INFERENCE = {f.__name__: f for f in (block, reads_mode, decorated, nested_off, break_inside)}


def _x(inference=False):
    if inference:
        with torch.inference_mode():
            return torch.arange(3.0)
    return torch.arange(3.0, requires_grad=True)


@pytest.mark.parametrize("name", sorted(INFERENCE))
def test_inference_mode_matches_eager(name, capsys):
    fn = INFERENCE[name]
    cf = bcfront.capture(fn)
    # outside, outside again (cached), under an enclosing inference mode, outside again
    for enclosing in (False, False, True, False):
        ctx = torch.inference_mode() if enclosing else torch.inference_mode(False)
        with ctx:
            x = _x(enclosing)
            expected = _facts(fn(x))
            printed = capsys.readouterr().out
            got = _facts(cf(x))
        assert got == expected, f"enclosing={enclosing}"
        assert capsys.readouterr().out == printed
        assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()


@pytest.mark.parametrize("name", ["block", "decorated", "nested_off"])
def test_inference_mode_block_is_captured_without_breaks(name):
    report = bcfront.explain(INFERENCE[name], _x())
    assert not report.graph_breaks, [b.message for b in report.graph_breaks]
    assert report.graphs
    assert any(g.kind == "GLOBAL_STATE" and "inference" in g.expr for g in report.guards)


def test_entering_inference_mode_recompiles():
    """Under no_grad, then inference_mode (grad off in both): the inference guard fails."""
    cf = bcfront.capture(reads_mode)
    x = torch.zeros(2)
    with torch.no_grad():
        assert cf(x).tolist() == [2.0, 2.0]
    with torch.inference_mode():
        assert cf(x).tolist() == [1.0, 1.0]
    with torch.no_grad():
        assert cf(x).tolist() == [2.0, 2.0]
    assert len(cf.entries) == 2
    (r,) = cf.recompiles
    assert "is_inference_mode_enabled" in r.guard and r.expected == "False" and r.actual == "True"


# -- TorchFunctionMode, TorchDispatchMode ---------------------------------------------------------


class Scale(TorchFunctionMode):
    """Logs the torch functions it sees and multiplies what `add` returns by 10."""

    def __init__(self):
        super().__init__()
        self.log = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append(getattr(func, "__name__", str(func)))
        out = func(*args, **(kwargs or {}))
        return out * 10 if getattr(func, "__name__", "") == "add" else out


class Count(TorchDispatchMode):
    """Counts the aten ops that reach it."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def plain(x):
    return (x + 1).sin()


def enters_mode(x):
    with Scale() as m:
        y = x + 1
    return y.cos(), m.log


@pytest.mark.parametrize("mode", [Scale, Count])
def test_enclosing_mode_is_never_stale(mode):
    """Captured outside the mode, then called inside it (and the reverse)."""
    x = torch.ones(2)
    for order in ((False, True, False), (True, False, True)):
        cf = bcfront.capture(plain)
        for inside in order:
            if inside:
                with mode() as m_ref:
                    expected = plain(x)
                with mode() as m_cap:
                    got = cf(x)
                seen = (m_cap.log, m_ref.log) if mode is Scale else (m_cap.ops, m_ref.ops)
                assert seen[0] == seen[1], f"the mode saw {seen[0]}, in eager {seen[1]}"
            else:
                expected, got = plain(x), cf(x)
            torch.testing.assert_close(got, expected)


def test_mode_entered_inside_the_function():
    x = torch.ones(2)
    cf = bcfront.capture(enters_mode)
    for _ in range(2):
        got, expected = cf(x), enters_mode(x)
        torch.testing.assert_close(got[0], expected[0])
        assert got[1] == expected[1]


def test_enclosing_modes_are_breaks_with_reasons():
    x = torch.ones(2)
    with Scale():
        r = bcfront.explain(plain, x)
    assert any(b.reason == "torch-function-mode" for b in r.graph_breaks)
    with Count():
        r = bcfront.explain(plain, x)
    assert any(b.reason == "torch-dispatch-mode" for b in r.graph_breaks)


# -- tensor subclasses -----------------------------------------------------------------------------


class Plain(torch.Tensor):
    pass


class Adds10(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        return out * 10 if getattr(func, "__name__", "") == "add" else out


def makes_subclass(x):
    return (x.as_subclass(Adds10) + 1).sin()


class WithSubclassBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(3))
        self.b = torch.ones(3).as_subclass(Adds10)

    def forward(self, x):
        return x * self.w + self.b


@pytest.mark.parametrize("cls", [Plain, Adds10])
def test_subclass_inputs_match_eager(cls):
    cf = bcfront.capture(plain)
    for x in (torch.ones(3), torch.ones(3).as_subclass(cls), torch.ones(3), torch.ones(3).as_subclass(cls)):
        assert _facts(cf(x)) == _facts(plain(x))
    r = bcfront.explain(plain, torch.ones(3).as_subclass(cls))
    assert any(b.reason == "tensor-subclass" for b in r.graph_breaks)


@pytest.mark.parametrize("fn", [makes_subclass, WithSubclassBuffer()], ids=["as_subclass", "module"])
def test_subclass_made_or_held_inside_matches_eager(fn):
    cf = bcfront.capture(fn)
    for _ in range(2):
        x = torch.arange(3.0)
        assert _facts(cf(x)) == _facts(fn(x))
