"""Inputs of generated programs: five calls whose arguments vary the way real callers do.

Each call is a `CallSpec` of argument expressions (evaluated in the program's
module, so `Box(...)` and `torch.tensor(...)` resolve there).  Pure-Python
calls vary ints (sometimes a bool for an int), list lengths, dict keys,
strings with quotes, newlines and unicode, optional and keyword arguments,
``*rest`` and ``**kw``.  Tensor calls keep integer-valued data (so float
results are exact and data-dependent branches agree) and vary shape (1
included), dtype, layout (a transposed view), requires_grad and grad mode.
Earlier inputs come back later: a cache hit must be as right as a capture.
"""

from __future__ import annotations

from dataclasses import replace

from .program import CallSpec

STRINGS = ("''", "'abc'", "'a'", '"it\'s"', "'q\"x'", "'é\\n'", "'ba'")


def _ints(rng, lo=-3, hi=9, n=None):
    return [rng.randint(lo, hi) for _ in range(rng.randint(0, 5) if n is None else n)]


def _py_spec(rng) -> CallSpec:
    def scalar():
        r = rng.random()
        return repr(bool(rng.getrandbits(1))) if r < 0.1 else str(rng.randint(-4, 9))

    keys = [k for k in ("'k'", "'p'", "'q'", '"it\'s"') if rng.random() < 0.5]
    d = "{" + ", ".join(f"{k}: {rng.randint(-3, 9)}" for k in keys) + "}"
    args = [
        scalar(),
        scalar(),
        repr(_ints(rng)),
        d,
        rng.choice(STRINGS),
        f"Box({rng.randint(-2, 5)}, {_ints(rng, n=rng.randint(0, 3))!r})",
    ]
    r = rng.random()
    if r < 0.3:
        args.append(scalar())
        args += [str(rng.randint(-2, 5)) for _ in range(rng.randint(0, 2))]  # into *rest
    elif r < 0.5:
        args.append(f"k={scalar()}")
    if rng.random() < 0.3:
        args.append(f"z={rng.randint(-2, 5)}")  # into **kw
    return CallSpec(tuple(args))


def py_calls(rng) -> tuple[CallSpec, ...]:
    """Five calls: A, B, A again (a cache hit must still be right), C, A again."""
    a, b, c = _py_spec(rng), _py_spec(rng), _py_spec(rng)
    return (a, b, a, c, a)


def tensor_literal(rng, shape, dtype: str, layout: str, grad: bool, device: str | None = None) -> str:
    rows, cols = shape
    if layout == "T":
        rows, cols = cols, rows
    data = [[float(rng.randint(-3, 3)) for _ in range(cols)] for _ in range(rows)]
    text = f"torch.tensor({data!r}, dtype=torch.{dtype}" + (f", device={device!r}" if device else "")
    text += ", requires_grad=True)" if grad and layout != "T" else ")"
    return text + (".t()" if layout == "T" else "")


def _tensor_spec(rng, shape, dtype, layout, grad_input, grad_mode=True, device=None) -> CallSpec:
    t = tensor_literal(rng, shape, dtype, layout, grad_input, device)
    udtype = dtype if rng.random() < 0.85 else rng.choice(("float32", "float64"))
    u = tensor_literal(rng, shape, udtype, "C", False, device)
    return CallSpec((t, u, str(rng.randint(-2, 6)), repr(_ints(rng))), grad=grad_mode)


MODULE_CHANGES = (
    "MOD.eval()",
    "MOD.train()",
    "MOD.calls = 0",
    "MOD.act = torch.nn.Tanh()",
    "MOD.act = torch.nn.ReLU()",
    "G = 2",
    "MOD.count.zero_()",
)


def tensor_calls(rng, device: str | None = None, module: bool = False) -> tuple[CallSpec, ...]:
    """Same shape twice (new values), a repeat, a new shape/dtype/layout, then the first again.

    `device` (e.g. "cuda") puts the argument tensors there; None keeps the default (CPU).
    For a module program, some calls are preceded by a change of the module
    (train/eval, a swapped submodule, an attribute or buffer reset).
    """
    shape = (rng.randint(1, 4), rng.randint(1, 4))
    dtype = rng.choice(("float32", "float64"))
    first = _tensor_spec(rng, shape, dtype, "C", False, device=device)
    second = _tensor_spec(rng, shape, dtype, "C", False, device=device)
    other_shape = (rng.randint(1, 4), rng.randint(1, 4))
    other = _tensor_spec(
        rng,
        other_shape,
        rng.choice(("float32", "float64")),
        rng.choice(("C", "C", "T")),
        rng.random() < 0.2,
        rng.random() < 0.8,
        device,
    )
    calls = (first, second, first, other, first)
    if module:
        calls = tuple(
            c if i == 0 or rng.random() < 0.5 else replace(c, before=rng.choice(MODULE_CHANGES))
            for i, c in enumerate(calls)
        )
    return calls
