"""``loss.backward()`` inside a graph: one effectful node, its writes to ``.grad`` modelled.

The eager backend runs a graph as straight-line torch calls on the region's real
tensors, so ``torch.autograd.backward`` can run inside it, at its place in program
order, exactly as eager runs it.  What the trace must know is everything it does
besides returning None: it writes ``.grad`` of every leaf tensor that requires grad
and is reachable from the roots (accumulated in place into an existing grad, or
set to a fresh tensor), frees the saved tensors unless ``retain_graph``, and runs
hooks.  Model (`backward`):

* the leaves are the ``AccumulateGrad`` nodes of the *fake* autograd graph (the
  fakes recorded their history as the graph was traced).  Each must be a tensor
  the trace knows: a graph input that is a real leaf (a parameter, an input that
  requires grad) or a tensor made in the graph.  Any other leaf (the history of a
  non-leaf input, made before the region) is a break: the real backward would
  write grads the trace cannot see;
* a leaf from outside has no hooks (``_backward_hooks`` and
  ``_post_accumulate_grad_hooks`` empty, guarded: a hook runs Python the trace
  would not see, so a leaf with one breaks), and its ``.grad`` before the
  backward is read under a guard (None, or a tensor of guarded layout);
* the backward then runs once on the fakes, each leaf's fake ``.grad`` set to
  what the trace says it is: torch's own engine decides accumulate-in-place or
  new tensor and the new grad's layout, and raises what eager raises (a second
  backward through freed buffers, a root that does not require grad); an error
  there is a break, so the real call raises natively;
* afterwards the trace keeps each reached leaf's ``.grad`` (journaled, per
  trace): the grad tensor it already had (written in place: the same object), or
  a new tensor read by a ``getattr(leaf, "grad")`` node the first time the code
  reads ``leaf.grad`` (`grad_value`; `tensor_attrs` asks it first).

``t.grad = None`` / ``t.grad = tensor`` on a tensor that requires grad (``zero_grad``)
is a ``setattr`` node at its place (`set_grad`; `attrs` calls it), checked on the fakes
first, and sets the trace's view of ``t.grad`` the same way.

``create_graph=True`` (a gradient penalty, higher-order grads) runs on the fakes too: the
new grads carry the fakes' autograd history, so a later backward through them (through a
user Function's differentiable ``backward``, or raising where eager raises for a
``once_differentiable`` one) is modelled like any other; the node passes the flag to the
real call.  `backends/joint.py` keeps such a graph off AOT autograd, whose compiled
backward graphs are not differentiable.

Not modelled, so a break: ``inputs=``, non-leaf inputs in the history.  Non-eager
backends get the graph back on the eager backend (`ir.functionalize` refuses a backward
node).  Hooks registered on a leaf's
``AccumulateGrad`` node itself (DDP's way) are not seen.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import NoReturn

import torch

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.guard_kinds import GuardKind
from ..model.node_checks import check_split, note_grad_write, note_node
from ..model.values import Const, ListV, TensorV, TupleV, Value

_STATE = "autograd_grads"  # tracer attribute: {id(leaf fake): _Grad}
_LEAF_HOOKS = ("_backward_hooks", "_post_accumulate_grad_hooks")
_TENSOR_BACKWARD = inspect.signature(torch.Tensor.backward)
_AUTOGRAD_BACKWARD = inspect.signature(torch.autograd.backward)


@dataclass(frozen=True, slots=True)
class _Grad:
    """A leaf's ``.grad`` as the trace knows it after a backward or an assignment: `value`
    (the grad's TensorV) or, until first read, only its fake (`fake`); None and None: no grad."""

    fake: torch.Tensor | None
    value: TensorV | None = None


def tensor_backward(tx, t: TensorV, args: list, kwargs: dict) -> Value:
    """``t.backward(gradient=None, retain_graph=None, create_graph=False, inputs=None)``."""
    a = _bind(_TENSOR_BACKWARD, [t, *args], kwargs)
    return backward(tx, [t], a["gradient"], a["retain_graph"], a["create_graph"], a["inputs"])


def autograd_backward(tx, args: list, kwargs: dict) -> Value:
    """``torch.autograd.backward(tensors, grad_tensors=None, retain_graph=None, ...)``."""
    a = _bind(_AUTOGRAD_BACKWARD, args, kwargs)
    if not _is_none(a["grad_variables"]):
        _not_modelled("torch.autograd.backward(grad_variables=...)")
    roots = _tensors(a["tensors"])
    return backward(tx, roots, a["grad_tensors"], a["retain_graph"], a["create_graph"], a["inputs"])


def backward(
    tx, roots: list, gradient: Value, retain_graph: Value, create_graph: Value, inputs: Value
) -> Value:
    """Record the backward of `roots` as one node and model its writes to ``.grad``."""
    if not _is_none(inputs):
        _not_modelled("backward(inputs=...): only the given tensors get grads")
    if not (isinstance(create_graph, Const) and create_graph.value in (False, None, True)):
        _not_modelled("backward(create_graph=...) not a constant")
    flags = {"create_graph": True} if create_graph.value is True else {}
    if not (isinstance(retain_graph, Const) and retain_graph.value in (None, True, False)):
        _not_modelled("backward(retain_graph=...) not a constant")
    retain = retain_graph.value
    grads = [None] * len(roots) if _is_none(gradient) else _tensors(gradient, allow_none=True)
    if len(grads) != len(roots):
        _not_modelled(f"backward with {len(roots)} tensors and {len(grads)} gradients")
    env = tx.torch_env()
    check_split(tx)
    leaves = [_leaf(tx, f) for f in _reachable_leaves([r.fake for r in roots])]
    saved = [f.grad for f, *_ in leaves]
    try:
        for f, _, pre_fake, _ in leaves:
            f.grad = pre_fake
        grad_tensors = [None if g is None else g.fake for g in grads]
        try:
            env.run(
                torch.autograd.backward,
                [[r.fake for r in roots]],
                {
                    "grad_tensors": grad_tensors,
                    "retain_graph": retain,
                    **flags,
                },
                tx.state,
            )
        except Exception as e:  # noqa: BLE001 - eager raises it (or fails otherwise): run it natively
            raise UnsupportedError(
                BreakReason.TORCH_ERROR, f"backward() failed on fake tensors: {type(e).__name__}: {e}"
            ) from None
        after = [f.grad for f, *_ in leaves]
    finally:
        for (f, *_), old in zip(leaves, saved):
            f.grad = old
    grad_nodes = None if _is_none(gradient) else tuple(None if g is None else g.node for g in grads)
    node = tx.graph.add(
        "call",
        torch.autograd.backward,
        [tuple(r.node for r in roots)],
        {"grad_tensors": grad_nodes, "retain_graph": retain, **flags},
        meta=None,
        loc=tx.loc(),
        state=tx.node_state(),
    )
    tx.has_mutation = True  # an existing grad is accumulated in place
    note_node(tx)
    # a leaf without a grad gets a new tensor: putting the old references back undoes the
    # backward's writes, unless some leaf's existing grad was accumulated in place
    in_place = any(pre is not None and new is pre for (_, _, pre, _), new in zip(leaves, after))
    note_grad_write(tx, node, None if in_place else tuple(_input_names(n for _, n, _, _ in leaves)))
    state = dict(tx.__dict__.get(_STATE) or {})
    for (f, _, pre_fake, pre_value), new in zip(leaves, after):
        # accumulated in place: the same tensor (read or not yet); else a new one, unread
        state[id(f)] = _Grad(new, pre_value) if pre_fake is not None and new is pre_fake else _Grad(new)
    _set_state(tx, state)
    return Const(None)


def grad_value(tx, t: TensorV) -> Value | None:
    """``t.grad`` when a backward in this trace wrote it (else None: ask the real tensor)."""
    state = tx.__dict__.get(_STATE)
    g = state.get(id(t.fake)) if state else None
    if g is None:
        return None
    if g.fake is None:
        return Const(None)
    if g.value is None:
        node = tx.graph.add("getattr", "grad", [t.node], meta=g.fake, loc=tx.loc(), state=tx.node_state())
        value = TensorV(node, g.fake, torch.Tensor)
        state = dict(state)
        state[id(t.fake)] = _Grad(g.fake, value)
        _set_state(tx, state)
        return value
    return g.value


def set_grad(tx, t: TensorV, value: Value) -> None:
    """``t.grad = None`` or ``t.grad = tensor`` on a tensor that requires grad (``zero_grad``):
    a ``setattr`` node at its place in the graph, so a later backward or read sees it."""
    grad = value if isinstance(value, TensorV) else None
    if not t.fake.requires_grad or (grad is None and not _is_none(value)):
        raise UnsupportedError(BreakReason.TENSOR_ATTRIBUTE_WRITE, "setting tensor attribute .grad")
    env = tx.torch_env()
    new = None if grad is None else grad.fake
    old = t.fake.grad
    try:
        env.run(setattr, [t.fake, "grad", new], {}, tx.state)  # its checks: shape, dtype, device
    except Exception as e:  # noqa: BLE001 - eager raises it: run it natively
        raise UnsupportedError(
            BreakReason.TORCH_ERROR, f"setting .grad failed on fake tensors: {type(e).__name__}: {e}"
        ) from None
    finally:
        t.fake.grad = old
    check_split(tx)
    arg = None if grad is None else grad.node
    ambient = tx.node_state()
    node = tx.graph.add("call", setattr, [t.node, "grad", arg], meta=None, loc=tx.loc(), state=ambient)
    tx.has_mutation = True
    note_node(tx)
    note_grad_write(tx, node, tuple(_input_names([t.node])))
    state = dict(tx.__dict__.get(_STATE) or {})
    state[id(t.fake)] = _Grad(new, grad)
    _set_state(tx, state)


# -- helpers -------------------------------------------------------------------------------------


def _input_names(nodes):
    """The names of the graph inputs among `nodes` (a tensor made in the graph needs no
    putting back: a failed run's tensors are dropped)."""
    return [n.name for n in nodes if n.op == "input"]


def _set_state(tx, state: dict) -> None:
    tx.__dict__.setdefault(_STATE, None)
    tx.set(tx, _STATE, state)


def _not_modelled(what: str) -> NoReturn:
    raise UnsupportedError(BreakReason.AUTOGRAD, what)


def _is_none(v: Value) -> bool:
    return isinstance(v, Const) and v.value is None


def _bind(sig: inspect.Signature, args: list, kwargs: dict) -> dict:
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, f"backward arguments: {e}") from None
    bound.apply_defaults()
    return {k: v if isinstance(v, Value) else Const(v) for k, v in bound.arguments.items()}


def _tensors(v: Value, allow_none: bool = False) -> list:
    """A tensor or a tuple/list of them (gradients: None allowed) as a list."""
    items = v.items if isinstance(v, (TupleV, ListV)) else [v]
    out: list[TensorV | None] = []
    for x in items:
        if isinstance(x, TensorV):
            out.append(x)
        elif allow_none and _is_none(x):
            out.append(None)
        else:
            raise UnsupportedError(BreakReason.UNSUPPORTED_ARGUMENT, f"backward() received {x.describe()}")
    return out


def _reachable_leaves(roots: list) -> list:
    """The leaf fakes whose grads a backward from `roots` accumulates, in discovery order."""
    out, seen = [], set()
    stack = []
    for r in roots:
        if r.grad_fn is None:
            if r.requires_grad:
                out.append(r)  # a leaf root accumulates into itself
        else:
            stack.append(r.grad_fn)
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        var = getattr(fn, "variable", None)  # AccumulateGrad
        if isinstance(var, torch.Tensor) and all(var is not o for o in out):
            out.append(var)
        stack.extend(f for f, _ in fn.next_functions)
    return out


def _leaf(tx, fake) -> tuple:
    """(fake, the leaf's graph node, its grad's fake before the backward (None: no grad),
    that grad's TensorV if the trace has one)."""
    state = tx.__dict__.get(_STATE) or {}
    known = state.get(id(fake))
    for v in tx.input_tensors:
        if v.fake is fake:
            return (fake, v.node, *_input_grad(tx, v, known))
    for n in tx.graph.body:
        if n.meta is fake:  # made in the graph: no grad until a backward of this trace
            return (fake, n, None, None) if known is None else (fake, n, known.fake, known.value)
    raise UnsupportedError(BreakReason.AUTOGRAD, "backward() reaches autograd history made outside the graph")


def _input_grad(tx, v: TensorV, known: _Grad | None) -> tuple:
    """(fake, TensorV) of an input leaf's grad before the backward (guarded)."""
    from ..model.builder import wrap
    from ..model.sources import AttrSource

    real = tx.real_tensors.get(id(v))
    if v.source is None or real is None or not real.is_leaf:
        _not_modelled("backward() reaches autograd history made outside the graph")
    if any(getattr(real, h, None) for h in _LEAF_HOOKS):  # (a break needs no guard)
        _not_modelled("a hook on a leaf tensor runs Python during backward()")
    tx.guard(GuardKind.NO_HOOKS, v.source, None, _LEAF_HOOKS)
    if known is not None:
        return known.fake, known.value
    pre = wrap(tx, real.grad, AttrSource(v.source, "grad"))
    return (pre.fake, pre) if isinstance(pre, TensorV) else (None, None)
