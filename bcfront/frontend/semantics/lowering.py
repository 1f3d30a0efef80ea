"""Lowering rules: Python wrappers in torch.nn.functional -> the C call they make.

`torch.nn.functional.layer_norm` and friends are Python functions that check
for ``__torch_function__`` overrides, normalize arguments, then call one C
function.  With plain tensors (exact types, guarded) and no torch function
mode (guarded), the graph can record that C call directly: same kernels, same
results, less Python per call.  Each rule binds the call's arguments by name
and returns ``(op, target, args, kwargs)`` for the graph, or None to keep the
original call (an unusual argument, an override, a dtype request...).

Two rules rewrite torch builtins, whose signature `inspect` cannot read (`_SPELLED` spells
it: a call it does not bind keeps its own call, and eager's error).
``torch.full(size, t)`` with `t` a 0-d tensor reads its value (``t.item()``, a
data-dependent break) where ``torch.empty(size).fill_(t)`` copies it on the device:
`full_of_tensor` gives those two calls (the first an argument of the second, a `Call`)
where they give what ``full`` gives.
``torch.tensor(n)`` of a symbolic number (a step counter) is ``torch.scalar_tensor(n,
dtype=...)`` with the dtype ``tensor`` infers (`tensor_of_number`): the fake run of
``tensor`` takes no symbol, and reading the value would capture once per value.
"""

from __future__ import annotations

import inspect
from typing import NamedTuple

import torch
import torch.nn.functional as F

from ..model.values import Const, ScalarV, TensorV


class Call(NamedTuple):
    """A call a rule gives, to record as a graph node; one among another's `args` is
    recorded first, and its value passed."""

    op: str  # "call" or "method"
    target: object
    args: list
    kwargs: dict


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
    return Call(
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
    return Call("method", "softmax", [a["input"], Const(dim)], kwargs)


def _relu(tx, a):
    ok, inplace = _const(a.get("inplace"), False)
    if not ok or not _plain(a["input"]):
        return None
    return Call("call", torch.relu_ if inplace else torch.relu, [a["input"]], {})


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
    return Call(
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
    return Call(
        "call",
        torch.embedding,
        [a["weight"], a["input"], Const(pad), Const(bool(scale)), Const(bool(sparse))],
        {},
    )


_FULL_OPTIONS = ("dtype", "device", "layout", "pin_memory", "requires_grad")


def full_of_tensor(tx, a):
    """``torch.full(size, t, ...)``, `t` a 0-d tensor, as ``torch.empty(size, ...).fill_(t)``,
    or None to keep the call.  Eager converts `t` to a Python number first, checked against
    the result's dtype (an overflow raises): only a dtype that holds every value of `t`'s
    does without the check; with no dtype, the number's type picks it (only an integer or
    bool one: a float one takes the default dtype)."""
    fill = a["fill_value"]
    if not isinstance(fill, TensorV) or isinstance(fill, ScalarV):
        return None
    options = {}
    for name in _FULL_OPTIONS:
        if name in a:
            ok, options[name] = _const(a[name])
            if not ok:
                return None
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
    return Call("method", "fill_", [Call("call", torch.empty, [a["size"]], made), fill], {})


# the keywords each takes besides its data (a keyword it does not take: its own TypeError)
_TENSOR_OPTIONS = {
    torch.tensor: ("dtype", "device", "requires_grad", "pin_memory"),
    torch.as_tensor: ("dtype", "device"),
}


def tensor_of_number(tx, a):
    """``torch.tensor(data, ...)`` or ``torch.as_tensor(data, ...)`` of one symbolic number
    `data` (a `SymIntV` or `SymFloatV`; a runtime float, which the call makes a graph input)
    as ``torch.scalar_tensor(data, ...)``: the same 0-d tensor, of the dtype ``tensor``
    infers from the number's type (int64, or the default dtype for a float) unless given;
    None to keep the call (other data, ``requires_grad``, pinned memory)."""
    from ..model.values import RuntimeV, SymFloatV, SymIntV, is_unread

    data = a["data"]
    if isinstance(data, SymIntV):
        inferred = torch.int64
    elif isinstance(data, SymFloatV) or (is_unread(data) and type(data.example) is float):
        inferred = torch.get_default_dtype()
    else:
        return None
    options = {}
    for name, v in a.items():
        if name == "data":
            continue
        ok, value = _const(v)
        if not ok or isinstance(v, RuntimeV):
            return None
        options[name] = value
    if options.get("requires_grad") or options.get("pin_memory"):
        return None
    dtype = options.get("dtype") or inferred
    made = {"dtype": Const(dtype)}
    if options.get("device") is not None:
        made["device"] = Const(options["device"])
    return Call("call", torch.scalar_tensor, [data], made)


RULES = {
    F.layer_norm: _layer_norm,
    F.softmax: _softmax,
    F.relu: _relu,
    F.dropout: _dropout,
    F.embedding: _embedding,
    torch.full: full_of_tensor,
    torch.tensor: tensor_of_number,
    torch.as_tensor: tensor_of_number,
}


def _spelled(positional: tuple, keywords: tuple, positional_only: bool = False) -> inspect.Signature:
    """The signature of a builtin of `RULES` (`inspect` reads none): `positional` (keywords
    too, unless `positional_only`), then the keyword-only `keywords`."""
    kind = inspect.Parameter.POSITIONAL_ONLY if positional_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [inspect.Parameter(n, kind) for n in positional]
    params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None) for n in keywords]
    return inspect.Signature(params)


_SPELLED: dict[object, inspect.Signature] = {
    torch.full: _spelled(("size", "fill_value"), _FULL_OPTIONS),
    **{fn: _spelled(("data",), kw, positional_only=True) for fn, kw in _TENSOR_OPTIONS.items()},
}
_SIGNATURES = {fn: _SPELLED.get(fn) or inspect.signature(fn) for fn in RULES}


def lower(tx, fn, args, kwargs, record):
    """The value of `fn(*args, **kwargs)` recorded (by `record`: `torch_calls.record`) as the
    C call(s) its rule gives, or None (no rule, or the rule keeps the call)."""
    rule = RULES.get(fn)
    if rule is None:
        return None
    try:
        bound = _SIGNATURES[fn].bind(*args, **kwargs)
    except TypeError:
        return None
    call = rule(tx, dict(bound.arguments))
    return None if call is None else _record(tx, call, record)


def _record(tx, call: Call, record):
    args = [_record(tx, a, record) if isinstance(a, Call) else a for a in call.args]
    t = call.target
    name = t if isinstance(t, str) else getattr(t, "__name__", "")
    return record(tx, call.op, t, args, call.kwargs, mutates=name.endswith("_"))
