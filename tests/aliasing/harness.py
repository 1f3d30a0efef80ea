"""Running a hazard on a backend and on eager side by side, and comparing the two worlds.

A *world* is everything a call can touch: the arguments (tensors, lists, dicts,
objects), the module or object the captured callable belongs to, and module
globals the case names.  Each comparison checks values, dtypes, shapes and
(except on triton, whose fresh outputs need not keep eager's strides) strides,
plus the *sharing pattern*: which outputs are, or share storage with, which
inputs and which other outputs — so a returned view must still be a view.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

BACKENDS = ("eager", "fx", "triton")


@dataclass(frozen=True)
class Hazard:
    fn: object  # the function; with `factory`, a zero-argument maker of the callable
    args: object  # call index -> list of arguments (a fresh, independent world)
    factory: bool = False
    persistent: bool = False  # reuse call 0's arguments on every call (state accumulates)
    after: object = None  # (result) -> None: what the caller then does with the result
    globals_: tuple = ()  # names of module globals the case writes: (module dict, names)
    calls: int = 3

    @property
    def doc(self) -> str:
        target = self.fn() if self.factory else self.fn
        return (getattr(target, "__doc__", None) or "").strip()


# -- comparing ----------------------------------------------------------------------------------


def assert_same(a, e, path="out", strides=True):
    if isinstance(e, torch.Tensor):
        assert isinstance(a, torch.Tensor), f"{path}: {type(a)}"
        assert a.dtype == e.dtype and a.shape == e.shape, f"{path}: {a.dtype}{a.shape} vs {e.dtype}{e.shape}"
        torch.testing.assert_close(a.detach(), e.detach(), msg=lambda m: f"{path}: {m}")
        if strides and e.numel() > 1:  # a size-1 dimension's stride means nothing
            assert _strides(a) == _strides(e), f"{path}: strides {a.stride()} vs {e.stride()}"
        assert a.requires_grad == e.requires_grad, f"{path}: requires_grad"
    elif isinstance(e, torch.nn.Module):
        assert type(a) is type(e), path
        assert_same(
            dict(a.state_dict(keep_vars=True)),
            dict(e.state_dict(keep_vars=True)),
            f"{path}.state_dict",
            strides,
        )
        assert_same(_plain_attrs(a), _plain_attrs(e), f"{path}.__dict__", strides)
    elif isinstance(e, (list, tuple)):
        assert type(a) is type(e) and len(a) == len(e), f"{path}: {a!r:.80} vs {e!r:.80}"
        for i, (x, y) in enumerate(zip(a, e)):
            assert_same(x, y, f"{path}[{i}]", strides)
    elif isinstance(e, dict):
        assert type(a) is type(e) and list(a) == list(e), f"{path}: keys {list(a)} vs {list(e)}"
        for k in e:
            assert_same(a[k], e[k], f"{path}[{k!r}]", strides)
    elif hasattr(e, "__dict__") and not callable(e) and type(e).__module__ != "builtins":
        assert type(a) is type(e), path
        assert_same(dict(vars(a)), dict(vars(e)), f"{path}.__dict__", strides)
    elif callable(e):
        # a closure's cells and a bound method's object are part of the world
        cells_e = getattr(e, "__closure__", None) or ()
        cells_a = getattr(a, "__closure__", None) or ()
        assert_same([_cell(c) for c in cells_a], [_cell(c) for c in cells_e], f"{path}.cells", strides)
        owner = getattr(e, "__self__", None)
        if owner is not None and hasattr(owner, "__dict__") and not isinstance(owner, type):
            assert_same(a.__self__, owner, f"{path}.__self__", strides)
    else:
        assert type(a) is type(e) and a == e, f"{path}: {a!r} vs {e!r}"


def _strides(t) -> tuple:
    return tuple(st for sz, st in zip(t.shape, t.stride()) if sz != 1)


def _cell(c):
    try:
        return c.cell_contents
    except ValueError:  # an empty cell
        return None


def _plain_attrs(m) -> dict:
    return {k: v for k, v in vars(m).items() if not k.startswith("_") and not isinstance(v, torch.nn.Module)}


def tensors_of(x, out=None) -> list:
    """Tensor leaves of a world, in a deterministic order."""
    out = [] if out is None else out
    if isinstance(x, torch.Tensor):
        out.append(x)
    elif isinstance(x, torch.nn.Module):
        for _, t in sorted(x.state_dict(keep_vars=True).items()):
            out.append(t)
        tensors_of(_plain_attrs(x), out)
    elif isinstance(x, (list, tuple)):
        for i in x:
            tensors_of(i, out)
    elif isinstance(x, dict):
        for k in x:
            tensors_of(x[k], out)
    elif hasattr(x, "__dict__") and not callable(x) and type(x).__module__ != "builtins":
        tensors_of(dict(vars(x)), out)
    elif hasattr(x, "__self__"):  # a bound method: its object is part of the world
        tensors_of(x.__self__, out)
    return out


def sharing(outs, world) -> list:
    """For each output tensor and each tensor of (world + outputs): (same object, same storage)."""
    o = tensors_of(outs)
    w = tensors_of(world) + o
    return [
        [
            (
                a is b,
                a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
                and a.untyped_storage().nbytes() > 0,
            )
            for b in w
        ]
        for a in o
    ]


# -- running ------------------------------------------------------------------------------------


def _target(h: Hazard):
    torch.manual_seed(0)
    return h.fn() if h.factory else h.fn


def _skip_if_triton_declined(cf, backend):
    if backend != "triton":
        return
    for e in cf.entries:
        for n in e.notes:
            if "triton backend" in n:
                pytest.skip(f"the Triton backend does not take this graph yet: {n}")


def check_no_fallback(cf, backend):
    if backend == "eager":
        return
    for e in cf.entries:
        bad = [n for n in e.notes if "functionalization failed" in n]
        assert not bad, bad
        assert all(g.backend == backend for g in e.graphs), [g.backend for g in e.graphs]


def run_hazard(h: Hazard, backend: str):
    """Call the captured and the eager world `h.calls` times; compare everything after each."""
    if backend == "triton":
        # The Triton backend compiles inference graphs; both worlds run without autograd.
        with torch.no_grad():
            return _run(h, backend)
    return _run(h, backend)


def _run(h: Hazard, backend: str):
    target_e, target_c = _target(h), _target(h)
    cf = bcfront.capture(target_c, backend=backend)
    strides = backend != "triton"
    args_e, args_c = h.args(0), h.args(0)
    saved = _save_globals(h)
    try:
        for k in range(h.calls):
            if k and not h.persistent:
                args_e, args_c = h.args(k), h.args(k)
            _set_globals(h, saved[0])
            out_e = target_e(*args_e)
            g_e = _get_globals(h)
            _set_globals(h, saved[1])
            out_c = cf(*args_c)
            g_c = _get_globals(h)
            saved = (g_e, g_c)
            _skip_if_triton_declined(cf, backend)
            assert_same(out_c, out_e, f"call {k}: result", strides)
            assert_same(args_c, args_e, f"call {k}: arguments", strides)
            assert_same(target_c, target_e, f"call {k}: callable", strides)
            assert_same(g_c, g_e, f"call {k}: globals", strides)
            world_e, world_c = [args_e, target_e], [args_c, target_c]
            assert sharing(out_c, world_c) == sharing(out_e, world_e), f"call {k}: sharing pattern"
            if h.after is not None:
                h.after(out_e)
                h.after(out_c)
                assert_same(args_c, args_e, f"call {k}: arguments after the caller's writes", strides)
                assert_same(out_c, out_e, f"call {k}: result after the caller's writes", strides)
    finally:
        _set_globals(h, saved[0])
    check_no_fallback(cf, backend)
    return cf


def _get_globals(h):
    if not h.globals_:
        return {}
    g, names = h.globals_
    return {n: copy.deepcopy(g[n]) for n in names}


def _set_globals(h, values) -> None:
    if h.globals_:
        h.globals_[0].update(copy.deepcopy(values))


def _save_globals(h):
    v = _get_globals(h)
    return (v, copy.deepcopy(v))
