"""Differential runs: a program eagerly (the oracle) and captured, over several calls.

`run(program, capture)` compiles the program's source twice, into two
separate module namespaces, so each side has its own globals; for every
`CallSpec` it builds equal fresh arguments on each side, calls the plain
function and the captured one (same grad mode), and compares

* the result, and the arguments after the call (input mutation), and the
  module's globals after the call (`snapshot`: structure, values, tensor
  dtype/shape/stride/requires_grad/grad_fn presence, and aliasing: which
  objects are the same object, which tensors share storage);
* what the call printed;
* the exception raised, by type and message;
* gradients: when a result requires grad, a fixed weighted sum of the
  results is backpropagated on both sides and the inputs' ``.grad`` compared.

It stops at the first difference and returns a `Verdict` whose `Mismatch`
says which call, which part, both sides' values, and a `signature` the
shrinker keeps fixed.  torch is imported only for programs that need it.
"""

from __future__ import annotations

import contextlib
import io
import linecache
import os
import re
import traceback
import warnings
from dataclasses import dataclass, field

from .program import Program

BCFRONT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTING_DIR = os.path.dirname(os.path.abspath(__file__))
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
RTOL, ATOL = 1e-5, 1e-6


@dataclass(frozen=True, slots=True)
class Mismatch:
    call: int  # index of the call (-1: `capture(fn)` itself failed)
    part: str  # capture, exception, result, args, globals, stdout, grads
    path: str  # where inside that part, e.g. "result[0].shape"
    eager: str
    captured: str
    where: str = ""  # innermost frame of the captured side's exception, if any

    @property
    def signature(self) -> tuple:
        """What must stay the same while shrinking: the part, and exception types."""
        return (
            self.part,
            self.eager.split(":")[0] if self.part == "exception" else "",
            self.captured.split(":")[0] if self.part in ("exception", "capture") else "",
        )

    def describe(self) -> str:
        at = f" at {self.path}" if self.path else ""
        text = (
            f"call {self.call}: {self.part} differs{at}\n  eager:    {self.eager}\n"
            f"  captured: {self.captured}"
        )
        return text + (f"\n  raised in {self.where}" if self.where else "")


@dataclass(frozen=True)
class Verdict:
    name: str
    mismatch: Mismatch | None
    calls: int  # calls made before stopping
    warnings: tuple[str, ...] = ()  # warnings the captured side issued
    internal: bool = False  # the captured side raised from inside bcfront
    eager_errors: int = 0  # calls where the oracle raised

    @property
    def ok(self) -> bool:
        return self.mismatch is None


@dataclass
class RunOutcome:
    snap: list = field(default_factory=list)  # [(path, descriptor)] of args, result, globals
    exc: str | None = None
    where: str = ""
    internal: bool = False
    stdout: str = ""
    grads: list = field(default_factory=list)


def default_capture(fn):
    import bcfront

    return bcfront.capture(fn)


def load(program: Program, tag: str) -> dict:
    """Execute the program's module source in a fresh namespace (registered with linecache)."""
    filename = f"<fuzz:{program.name}:{tag}>"
    source = program.source
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    # Both sides get the same module name: reprs of the program's own classes must agree.
    ns = {"__name__": "fuzz", "__builtins__": __builtins__}
    exec(compile(source, filename, "exec"), ns)  # noqa: S102 - the generated program under test
    return ns


def run(program: Program, capture=None, *, max_calls: int | None = None) -> Verdict:
    """Run `program` eagerly and under `capture` (default: `bcfront.capture`); compare every call."""
    capture = capture or default_capture
    torch = _torch() if program.needs_torch else None
    eager_ns, cap_ns = load(program, "eager"), load(program, "captured")
    warned: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            compiled = capture(cap_ns[program.entry])
        except Exception as e:  # noqa: BLE001 - capturing a valid function must not fail
            return Verdict(
                program.name,
                Mismatch(-1, "capture", "", "a function", _exc_text(e), _innermost(e)),
                0,
                internal=True,
            )
    warned += [str(w.message) for w in caught]
    eager_errors = 0
    calls = program.calls[:max_calls] if max_calls else program.calls
    for i, spec in enumerate(calls):
        ref = _call(eager_ns[program.entry], eager_ns, spec, torch)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = _call(compiled, cap_ns, spec, torch)
        warned += [str(w.message) for w in caught]
        eager_errors += ref.exc is not None
        mismatch = compare(ref, got, i, torch)
        if mismatch is not None:
            return Verdict(program.name, mismatch, i + 1, tuple(warned), got.internal, eager_errors)
    return Verdict(program.name, None, len(calls), tuple(warned), False, eager_errors)


def _torch():
    import torch

    return torch


def _call(fn, ns: dict, spec, torch) -> RunOutcome:
    out = RunOutcome()
    if spec.before:
        exec(spec.before, ns)  # noqa: S102 - the fuzzer's own state change between calls
    args, kwargs = spec.build(ns)
    buf = io.StringIO()
    result = None
    grad_ctx = torch.set_grad_enabled(spec.grad) if torch is not None else contextlib.nullcontext()
    with grad_ctx, contextlib.redirect_stdout(buf):
        try:
            result = fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the exception is part of the observable behaviour
            out.exc = _exc_text(e)
            out.where = _innermost(e)
            out.internal = out.where.startswith(BCFRONT_DIR) and not out.where.startswith(TESTING_DIR)
    out.stdout = ADDRESS.sub("", buf.getvalue())
    globals_ = {k: v for k, v in ns.items() if _is_state(k, v)}
    out.snap = snapshot({"args": args, "kwargs": kwargs, "result": result, "globals": globals_}, torch)
    if torch is not None and out.exc is None:
        params = [p for v in globals_.values() if isinstance(v, torch.nn.Module) for p in v.parameters()]
        out.grads = _grads((args, kwargs, params), result, torch)
    return out


def _is_state(name: str, value) -> bool:
    import types

    return not (name.startswith("__") or isinstance(value, (types.ModuleType, types.FunctionType, type)))


def _exc_text(e: BaseException) -> str:
    """Type and message, then the chain a traceback would show (``raise ... from``, or an
    exception raised while handling another): a chain that differs is a visible difference."""
    text = f"{type(e).__qualname__}: {ADDRESS.sub('', str(e))}"
    seen = {id(e)}
    for _ in range(4):
        nxt = e.__cause__ if e.__cause__ is not None else (None if e.__suppress_context__ else e.__context__)
        if nxt is None or id(nxt) in seen:
            break
        how = "from" if e.__cause__ is not None else "while handling"
        text += f" ({how} {type(nxt).__qualname__})"
        seen.add(id(nxt))
        e = nxt
    return text


def _innermost(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    return f"{tb[-1].filename}:{tb[-1].lineno}" if tb else ""


# -- snapshots ---------------------------------------------------------------------------------


def snapshot(root, torch=None) -> list[tuple[str, tuple]]:
    """A comparable description of everything reachable from `root`, in a fixed walk order.

    Each entry is (path, descriptor).  An object met a second time is described
    as an alias of the path where it was first met; a tensor whose storage was
    already seen names that path too, so returning an input (or a view of it)
    and returning a copy describe differently.
    """
    out: list = []
    seen: dict[int, str] = {}
    storages: dict[int, str] = {}
    keep = []  # keep walked objects alive: ids stay unique
    work = [(root, "")]
    while work:
        value, path = work.pop()
        if _is_atom(value):
            out.append((path, (type(value).__name__, ADDRESS.sub("", repr(value)))))
            continue
        if id(value) in seen:
            out.append((path, ("alias", seen[id(value)])))
            continue
        seen[id(value)] = path
        keep.append(value)
        if torch is not None and isinstance(value, torch.Tensor):
            out.append((path, _tensor_desc(value, path, storages, torch)))
            grad = _leaf_grad(value)
            if grad is not None:  # accumulated by a backward()
                work.append((grad, f"{path}.grad"))
            continue
        children = _children(value, path)
        if children is None:
            out.append((path, ("object", type(value).__qualname__, ADDRESS.sub("", repr(value)))))
            continue
        desc, kids = children
        out.append((path, desc))
        work.extend(reversed(kids))
    return out


def _leaf_grad(t):
    try:
        return t.grad if t.is_leaf else None
    except RuntimeError:  # a no_grad view whose base changed in place: autograd refuses to look
        return None


def _is_atom(value) -> bool:
    return value is None or isinstance(value, (bool, int, float, complex, str, bytes))


def _children(value, path):
    """(descriptor, [(child, path)]) for containers and plain objects; None otherwise."""
    import types

    if isinstance(value, (list, tuple)):
        return (type(value).__name__, len(value)), [(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        keys = list(value)
        return (type(value).__name__, tuple(map(repr, keys))), [(value[k], f"{path}[{k!r}]") for k in keys]
    if isinstance(value, (set, frozenset)):
        items = sorted(value, key=repr)
        return (type(value).__name__, len(items)), [(v, f"{path}{{{i}}}") for i, v in enumerate(items)]
    if isinstance(
        value,
        (
            types.FunctionType,
            types.BuiltinFunctionType,
            types.MethodType,
            type,
            types.ModuleType,
            types.GeneratorType,
        ),
    ):
        return ("callable", getattr(value, "__qualname__", type(value).__name__)), []
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict):
        names = list(attrs)
        return (
            ("object", type(value).__qualname__, tuple(names)),
            [(attrs[n], f"{path}.{n}") for n in names],
        )
    return None


def _tensor_desc(t, path: str, storages: dict, torch) -> tuple:
    base = None
    storage = t.untyped_storage()
    if storage.nbytes():
        key = storage.data_ptr()
        base = storages.setdefault(key, path)
        base = None if base == path else base
    try:
        has_fn = t.grad_fn is not None
    except RuntimeError as e:  # e.g. a no_grad view whose base was modified in place with grad on
        has_fn = _exc_text(e)
    return (
        "tensor",
        str(t.dtype),
        str(t.device),
        tuple(t.shape),
        t.stride(),
        t.requires_grad,
        has_fn,
        base,
        t.detach().clone(),
    )


# -- comparison ---------------------------------------------------------------------------------


def diff(expected, actual) -> str | None:
    """None when `actual` is indistinguishable from `expected` (see `snapshot`); else the first difference."""
    import sys

    torch = sys.modules.get("torch")
    found = _compare_snaps(snapshot(expected, torch), snapshot(actual, torch), torch)
    if found is None:
        return None
    path, e, c = found
    return f"at {path or 'top level'}: expected {e}, got {c}"


def compare(ref: RunOutcome, got: RunOutcome, call: int, torch) -> Mismatch | None:
    if ref.exc != got.exc:
        return Mismatch(
            call, "exception", "", ref.exc or "no exception", got.exc or "no exception", got.where
        )
    if ref.stdout != got.stdout:
        return Mismatch(call, "stdout", "", repr(ref.stdout[-400:]), repr(got.stdout[-400:]))
    diff = _compare_snaps(ref.snap, got.snap, torch)
    if diff is not None:
        path, e, c = diff
        part = path.split("'")[1] if path.startswith("['") else "result"
        return Mismatch(call, part, path, e, c)
    diff = _compare_snaps(ref.grads, got.grads, torch)
    if diff is not None:
        path, e, c = diff
        return Mismatch(call, "grads", path, e, c)
    return None


def _compare_snaps(a: list, b: list, torch):
    for (pa, da), (pb, db) in zip(a, b):
        if pa != pb:
            return pa, f"{pa} present", f"{pb} instead"
        if not _same(da, db, torch):
            return pa, _show(da), _show(db)
    if len(a) != len(b):
        longer = a if len(a) > len(b) else b
        p, d = longer[min(len(a), len(b))]
        return p, (_show(d) if longer is a else "absent"), (_show(d) if longer is b else "absent")
    return None


def _same(da: tuple, db: tuple, torch) -> bool:
    if da[:1] != ("tensor",) or db[:1] != ("tensor",):
        return da == db
    if da[:-1] != db[:-1]:
        return False
    x, y = da[-1], db[-1]
    if x.dtype.is_floating_point or x.dtype.is_complex:
        return bool(torch.allclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True))
    return bool(torch.equal(x, y))


def _show(d: tuple) -> str:
    if d[:1] == ("tensor",):
        _, dtype, device, shape, stride, rg, has_fn, base, values = d
        extra = f", shares storage with {base}" if base else ""
        return (
            f"tensor({values.tolist()!r:.200}, dtype={dtype}, shape={list(shape)}, "
            f"stride={list(stride)}, requires_grad={rg}, grad_fn={'yes' if has_fn else 'no'}{extra})"
        )
    return repr(d)[:300]


# -- gradients ----------------------------------------------------------------------------------


def _grads(args, result, torch) -> list:
    """Backpropagate a fixed weighted sum of the differentiable results; snapshot input grads."""
    outs = [t for _, t in _walk_tensors(result, torch) if t.requires_grad and t.dtype.is_floating_point]
    leaves = [(p, t) for p, t in _walk_tensors(args, torch) if t.requires_grad and t.is_leaf]
    if not outs or not leaves:
        return []
    try:
        loss = sum(
            ((t.double() * _weights(t, torch)).sum() for t in outs), torch.zeros((), dtype=torch.float64)
        )
        loss.backward()
    except Exception as e:  # noqa: BLE001 - a backward error is behaviour to compare too
        return [("backward", ("exception", _exc_text(e)))]
    return snapshot({p: t.grad for p, t in leaves}, torch)


def _weights(t, torch):
    return (torch.arange(t.numel(), dtype=torch.float64) % 5 - 2).reshape(t.shape)


def _walk_tensors(value, torch):
    out, work, seen = [], [(value, "")], set()
    while work:
        v, path = work.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, torch.Tensor):
            out.append((path, v))
        elif isinstance(v, (list, tuple)):
            work.extend((x, f"{path}[{i}]") for i, x in reversed(list(enumerate(v))))
        elif isinstance(v, dict):
            work.extend((x, f"{path}[{k!r}]") for k, x in reversed(list(v.items())))
    return out
