"""Lowering rules: Python wrappers in torch.nn.functional -> the C call they make.

`torch.nn.functional.layer_norm` and friends are Python functions that check
for ``__torch_function__`` overrides, normalize arguments, then call one C
function.  With plain tensors (exact types, guarded) and no torch function
mode (guarded), the graph can record that C call directly: same kernels, same
results, less Python per call.  Each rule binds the call's arguments by name
and returns ``(op, target, args, kwargs)`` for the graph, or None to keep the
original call (an unusual argument, an override, a dtype request...).

``torch.full(size, t)`` with `t` a 0-d tensor reads its value (``t.item()``, a
data-dependent break) where ``torch.empty(size).fill_(t)`` copies it on the device:
`full_of_tensor` records those two calls where they give what ``full`` gives.
``torch.tensor(n)`` of a symbolic number (a step counter) is ``torch.scalar_tensor(n,
dtype=...)`` with the dtype ``tensor`` infers (`tensor_of_number`): the fake run of
``tensor`` takes no symbol, and reading the value would capture once per value.
"""

from __future__ import annotations

import inspect

import torch
import torch.nn.functional as F

from ..model.values import Const, ScalarV, TensorV


def _const(v, default=None):
    if v is None:
        return True, default
    if isinstance(v, Const):
        return True, v.value
    return False, None


def _plain(*tensors) -> bool:
    return all(
        t is None
        or (isinstance(t, TensorV) and t.ptype in (torch.Tensor, torch.nn.Parameter))
        or (isinstance(t, Const) and t.value is None)
        for t in tensors
    )


def _layer_norm(tx, a):
    ok, eps = _const(a.get("eps"), 1e-5)
    if not ok or not _plain(a["input"], a.get("weight"), a.get("bias")):
        return None
    tx.guard_cudnn()
    none = Const(None)
    return (
        "call",
        torch.layer_norm,
        [
            a["input"],
            a["normalized_shape"],
            a.get("weight", none),
            a.get("bias", none),
            Const(eps),
            Const(torch.backends.cudnn.enabled),
        ],
        {},
    )


def _softmax(tx, a):
    ok_dim, dim = _const(a.get("dim"))
    ok_dt, dtype = _const(a.get("dtype"))
    if not (ok_dim and ok_dt) or dim is None or not _plain(a["input"]):
        return None
    kwargs = {} if dtype is None else {"dtype": Const(dtype)}
    return ("method", "softmax", [a["input"], Const(dim)], kwargs)


def _relu(tx, a):
    ok, inplace = _const(a.get("inplace"), False)
    if not ok or not _plain(a["input"]):
        return None
    return ("call", torch.relu_ if inplace else torch.relu, [a["input"]], {})


def _dropout(tx, a):
    ok_p, p = _const(a.get("p"), 0.5)
    ok_t, training = _const(a.get("training"), True)
    ok_i, inplace = _const(a.get("inplace"), False)
    if (
        not (ok_p and ok_t and ok_i)
        or not isinstance(p, (int, float))
        or not 0.0 <= p <= 1.0
        or not _plain(a["input"])
    ):
        return None
    return (
        "call",
        torch.dropout_ if inplace else torch.dropout,
        [a["input"], Const(p), Const(bool(training))],
        {},
    )


def _embedding(tx, a):
    consts = [
        _const(a.get(k), d)
        for k, d in (
            ("padding_idx", None),
            ("max_norm", None),
            ("scale_grad_by_freq", False),
            ("sparse", False),
        )
    ]
    if not all(ok for ok, _ in consts) or not _plain(a["input"], a["weight"]):
        return None
    (_, pad), (_, max_norm), (_, scale), (_, sparse) = consts
    if max_norm is not None:
        return None
    n = a["weight"].fake.size(0)
    if pad is None:
        pad = -1
    elif not -n <= pad < n:
        return None  # F.embedding raises its own AssertionError: keep the call
    elif pad < 0:
        pad = n + pad
    return (
        "call",
        torch.embedding,
        [a["weight"], a["input"], Const(pad), Const(bool(scale)), Const(bool(sparse))],
        {},
    )


RULES = {
    F.layer_norm: _layer_norm,
    F.softmax: _softmax,
    F.relu: _relu,
    F.dropout: _dropout,
    F.embedding: _embedding,
}
_SIGNATURES = {fn: inspect.signature(fn) for fn in RULES}


def lower(tx, fn, args, kwargs):
    """(op, target, args, kwargs) of the C call `fn(*args, **kwargs)` makes, or None."""
    rule = RULES.get(fn)
    if rule is None:
        return None
    try:
        bound = _SIGNATURES[fn].bind(*args, **kwargs)
    except TypeError:
        return None
    return rule(tx, dict(bound.arguments))


_FULL_OPTIONS = frozenset({"dtype", "device", "layout", "pin_memory", "requires_grad"})


def full_of_tensor(tx, args, kwargs, record):
    """``torch.full(size, t, ...)``, `t` a 0-d tensor, as ``torch.empty(size, ...).fill_(t)``
    (`record` records a call), or None to keep the call.  Eager converts `t` to a Python
    number first, checked against the result's dtype (an overflow raises): only a dtype
    that holds every value of `t`'s does without the check; with no dtype, the number's
    type picks it (only an integer or bool one: a float one takes the default dtype)."""
    named = dict(kwargs)
    for name, a in zip(("size", "fill_value"), args):
        if name in named:
            return None
        named[name] = a
    size, fill = named.pop("size", None), named.pop("fill_value", None)
    if len(args) > 2 or size is None or not isinstance(fill, TensorV) or isinstance(fill, ScalarV):
        return None
    options = {}
    for name, v in named.items():
        ok, value = _const(v)
        if not ok or name not in _FULL_OPTIONS:
            return None
        options[name] = value
    if (
        options.get("requires_grad")
        or options.get("pin_memory")
        or options.get("layout") not in (None, torch.strided)
    ):
        return None
    t = fill.fake
    if t.dim() != 0 or t.requires_grad or t.dtype.is_complex:
        return None  # eager's own error, or a conversion of its own
    dtype = options.get("dtype")
    if dtype is None and t.dtype.is_floating_point:
        return None
    if dtype is None:
        dtype = torch.bool if t.dtype is torch.bool else torch.int64
    device = options.get("device")
    device = torch.get_default_device() if device is None else torch.device(device)
    if torch.promote_types(t.dtype, dtype) != dtype or device != t.device:
        return None  # fill_ of another device reads the value too
    made = {"dtype": Const(dtype), "device": Const(device)}
    empty = record(tx, "call", torch.empty, [size], made)
    return record(tx, "method", "fill_", [empty, fill], {}, mutates=True)


# the keywords each takes besides its data (a keyword it does not take: its own TypeError)
TENSOR_OPTIONS = {
    torch.tensor: frozenset({"dtype", "device", "requires_grad", "pin_memory"}),
    torch.as_tensor: frozenset({"dtype", "device"}),
}


def tensor_of_number(fn, data, kwargs, default_dtype):
    """``fn(data, **kwargs)`` (`fn` in `TENSOR_OPTIONS`) of one symbolic number `data` (a `SymIntV` or
    `SymFloatV`; a runtime float, which the call makes a graph input) as ``(torch.
    scalar_tensor, [data], kwargs)``: the same 0-d tensor, of the dtype ``tensor`` infers
    from the number's type (int64, or `default_dtype` for a float) unless given; None to
    keep the call (other data, ``requires_grad``, pinned memory)."""
    from ..model.values import RuntimeV, SymFloatV, SymIntV, is_unread

    if isinstance(data, SymIntV):
        inferred = torch.int64
    elif isinstance(data, SymFloatV) or (is_unread(data) and type(data.example) is float):
        inferred = default_dtype
    else:
        return None
    options = {}
    for name, v in kwargs.items():
        ok, value = _const(v)
        if not ok or name not in TENSOR_OPTIONS[fn] or isinstance(v, RuntimeV):
            return None
        options[name] = value
    if options.get("requires_grad") or options.get("pin_memory"):
        return None
    dtype = options.get("dtype") or inferred
    made = {"dtype": Const(dtype)}
    if options.get("device") is not None:
        made["device"] = Const(options["device"])
    return torch.scalar_tensor, [data], made
