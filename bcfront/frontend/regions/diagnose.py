"""Why did an entry miss?  Evaluate its guards one at a time on the new arguments.

Only runs on the slow path (a cache miss): each guard is compiled into its
own small function with the root's signature, checked in discovery order,
and the first failure is reported with the expected value, the actual value
(the guarded source evaluated on the new arguments) and where the value was
first used.
"""

from __future__ import annotations

from ... import report
from ..model.guard_kinds import GuardKind
from ..model.guards import single_check_source
from ..model.namespace import Namespace, reserved_prefix, signature_params
from .codegen import compile_function, function_source


def _compile(root, expr, what: str):
    code = root.__code__
    sig = signature_params(code)
    if sig is None:
        return None
    parts, params = sig
    ns = Namespace(params, reserved_prefix(code))
    try:
        text = expr(ns)
    except KeyError:  # a local this signature cannot name (a comprehension's `.0`): no diagnosis
        return None
    name = f"{ns.prefix}{what}"
    src = function_source(name, parts, [f"    return {text}"])
    fn = compile_function(src, ns, name, f"bcfront:{what}")
    fn.__defaults__ = root.__defaults__
    fn.__kwdefaults__ = root.__kwdefaults__
    return fn


def _shape_actual(root, g, args, kwargs) -> str:
    """The values the symbols of a failed SHAPE guard have on this call: ``s0 = 3``."""
    parts = []
    for sym, src, dim in g.extra.symbols:
        text = src.readable() if dim is None else f"{src.readable()}.shape[{dim}]"
        fn = _compile(root, lambda ns, src=src, dim=dim: _size_expr(src.expr(ns), dim), "value")
        try:
            parts.append(f"{sym} = {fn(*args, **kwargs)!r}")
        except Exception as e:  # noqa: BLE001 - the value cannot be fetched; the report says why
            parts.append(f"{sym} = <{type(e).__name__}> ({text})")
    return ", ".join(parts) or "false"


def _size_expr(expr: str, dim) -> str:
    return expr if dim is None else f"({expr}).size({dim})"


def _actual(root, g, args, kwargs) -> str:
    if g.kind == GuardKind.SHAPE:
        return _shape_actual(root, g, args, kwargs)
    if g.source is None:
        from ..model.guards import STATE_READERS

        try:
            return repr(STATE_READERS[g.extra]()())
        except Exception as e:  # noqa: BLE001 - reading state failed; say so
            return f"<{type(e).__name__}>"
    fn = _compile(root, lambda ns: g.source.expr(ns), "value")
    if fn is None:
        return "<not readable here>"
    try:
        v = fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the value cannot be fetched; the report says why
        return f"<{type(e).__name__}: {e}>"
    if g.kind == GuardKind.TENSOR_MATCH:
        try:
            return (
                f"{type(v).__name__}({v.dtype}, device={str(v.device)!r}, shape={list(v.shape)}, "
                f"stride={list(v.stride())}, requires_grad={v.requires_grad})"
            )
        except Exception:  # noqa: BLE001 - not a tensor after all; show its type
            return repr(type(v))
    text = repr(v)
    return text if len(text) <= 120 else text[:117] + "..."


def first_failure(cf, entry, args, kwargs):
    root = getattr(entry.region, "__wrapped__", entry.region) if entry.native else entry.guard
    for g in entry.guards:
        fn = _compile(root, lambda ns, g=g: single_check_source(g, ns), "check")
        if fn is None:
            return None
        try:
            ok = bool(fn(*args, **kwargs))
        except Exception:  # noqa: BLE001 - a guard that raises is a guard that failed
            ok = False
        if ok:
            continue
        expected = _expected(g)
        actual = _actual(root, g, args, kwargs)
        src = g.source.readable() if g.source is not None else g.extra
        if g.kind == GuardKind.SHAPE:
            src = g.extra.legend
        where = f" (first used at {g.first_use.filename}:{g.first_use.lineno})" if g.first_use else ""
        return report.Recompile(
            function=cf.__qualname__,
            guard=g.readable(),
            source=str(src),
            expected=expected,
            actual=actual,
            reason=f"{g.readable()} failed: expected {expected}, got {actual}{where}",
            first_use=g.first_use,
            call=getattr(cf, "calls", None),
        )
    return None


def _expected(g) -> str:
    if g.kind == GuardKind.TENSOR_MATCH:
        t = g.expected
        return (
            f"{t.ptype.__name__}({t.dtype}, device={str(t.device)!r}, shape={list(t.shape)}, "
            f"stride={list(t.stride)}, requires_grad={t.requires_grad})"
        )
    if g.kind in (GuardKind.ID_MATCH, GuardKind.TYPE_MATCH):
        from ..model.guards import describe

        return describe(g.expected)
    if g.kind == GuardKind.NO_HOOKS:
        return "no hooks"
    if g.kind == GuardKind.SHAPE:
        return str(g.expected)
    if g.kind == GuardKind.NOT_PRESENT:
        return f"{g.extra!r} absent"
    # a StorageLayout shows as the plain pair it was before it had field names
    text = repr(tuple(g.expected) if g.kind == GuardKind.TENSOR_STORAGE else g.expected)
    return text if len(text) <= 120 else text[:117] + "..."
