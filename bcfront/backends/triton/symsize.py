"""Sizes as expressions: how one lowering of a symbolic graph serves every size.

A graph with symbolic sizes is lowered once, with each size a `SizeExpr`: its
value at the capture's example (`hint`) and Python source over the symbols
(``s0``, ``2*s1 + 3``), which the generated wrapper binds from its inputs'
sizes at each call.  Arithmetic builds bigger expressions; every *decision* the
lowering takes on a size (a comparison, ``bool``, ``int()``, ``range``) is made
with the hint and recorded as a guard (``s0 >= 2``, ``s0 == 7``), as torch's
ShapeEnv does.  The lowered program is then exact for every size satisfying its
guards, and the backend lowers again only for sizes that break one: a size that
decides the lowering itself (a persistent or looped reduction, 2-D tiling, an
index simplified by divisibility) keeps its lowering per range, and a size the
lowering needs as a plain int (``int(s0)``: a specialization) per size.

Printing a `SizeExpr` as text (``str``, ``repr``, f-strings) gives ``$s0$``,
which is no Python: pasted into a kernel or the wrapper by mistake it fails at
compile time, never silently.  The wrapper and codegen ask for `source`.

Imports no torch (the conversion from torch's ``SymInt`` imports it lazily).
"""

from __future__ import annotations

import operator

_ACTIVE: list[Guards] = []


class SpecializedSize(Exception):
    """A symbolic lowering had to take a size as a plain int (per-size from then on)."""


class Guards:
    """The decisions one symbolic lowering took, as Python conditions over the
    symbols (a context manager: sizes met while it is active record here)."""

    def __init__(self, names: dict):
        self.names = names  # sympy symbol -> its name in the wrapper (bound from the inputs)
        self.conditions: dict[str, None] = {}  # ordered set of Python conditions
        self.specialized: list[str] = []  # sizes taken as plain ints (`int()`, `range`)

    def __enter__(self) -> Guards:
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _ACTIVE.remove(self)

    def add(self, condition: str) -> None:
        self.conditions.setdefault(condition)


def _log() -> Guards:
    if not _ACTIVE:
        raise RuntimeError("a symbolic size was used outside its lowering")
    return _ACTIVE[-1]


def hint(v) -> int:
    return v.hint if isinstance(v, SizeExpr) else v


def source(v) -> str:
    """Python source of an int or size expression (over the wrapper's symbol names)."""
    if isinstance(v, SizeExpr):
        return v.src
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"not a size: {v!r}")
    return str(v) if v >= 0 else f"({v})"


def is_int(v) -> bool:
    return isinstance(v, (int, SizeExpr))


def _arith(sym: str, fn):
    def op(a, b):
        if isinstance(b, float):
            return fn(a.specialize(), b)
        if not is_int(b):
            return NotImplemented
        return _make(sym, fn, a, b)

    def rop(a, b):
        if isinstance(b, float):
            return fn(b, a.specialize())
        if not is_int(b):
            return NotImplemented
        return _make(sym, fn, b, a)

    return op, rop


# (operator, which side is the plain int, its value) -> the result, for any size
_IDENTITIES = {
    ("+", 0, 0): 1,
    ("+", 1, 0): 0,
    ("-", 1, 0): 0,
    ("*", 0, 1): 1,
    ("*", 1, 1): 0,
    ("//", 1, 1): 0,
}

# ... whose result is 0 (``0 // x`` and ``0 % x`` assume x != 0: sizes of a symbolic
# entry are never 0, torch specializes 0 and 1)
_ZERO = {("*", 0, 0), ("*", 1, 0), ("%", 1, 1), ("//", 0, 0), ("%", 0, 0)}


def _make(sym: str, fn, a, b):
    """``a sym b`` for sizes, folding the identities (``x*1``, ``0 + x``, ``x*0``)."""
    for side, v in ((0, a), (1, b)):
        if not isinstance(v, SizeExpr):
            keep = _IDENTITIES.get((sym, side, v))
            if keep is not None:
                return (a, b)[keep]
            if (sym, side, v) in _ZERO:
                return 0
    return SizeExpr(fn(hint(a), hint(b)), f"({source(a)} {sym} {source(b)})")


def _compare(sym: str, fn):
    def op(a, b):
        if isinstance(b, float):
            return fn(a.specialize(), b)
        if not is_int(b):
            return NotImplemented
        sa, sb = source(a), source(b)
        result = fn(hint(a), hint(b))
        if sa != sb:  # the same expression on both sides decides itself
            cond = f"{sa} {sym} {sb}"
            _log().add(cond if result else f"not ({cond})")
        return result

    return op


class SizeExpr:
    """A size of a symbolic lowering: its value at the example and its Python source."""

    __slots__ = ("hint", "src")

    def __init__(self, hint: int, src: str):
        self.hint, self.src = hint, src

    def specialize(self) -> int:
        """The value as a plain int, guarded to stay that value."""
        log = _log()
        log.add(f"{self.src} == {self.hint}")
        log.specialized.append(self.src)
        return self.hint

    # arithmetic: exact Python int semantics, since the source runs as Python
    __add__, __radd__ = _arith("+", operator.add)
    __sub__, __rsub__ = _arith("-", operator.sub)
    __mul__, __rmul__ = _arith("*", operator.mul)
    __floordiv__, __rfloordiv__ = _arith("//", operator.floordiv)
    __mod__, __rmod__ = _arith("%", operator.mod)
    __pow__, __rpow__ = _arith("**", operator.pow)

    def __divmod__(self, other):
        return self // other, self % other

    def __rdivmod__(self, other):
        return other // self, other % self

    def __truediv__(self, other):
        return self.specialize() / other

    def __rtruediv__(self, other):
        return other / self.specialize()

    def __neg__(self):
        return SizeExpr(-self.hint, f"(-{self.src})")

    def __pos__(self):
        return self

    def __abs__(self):
        return self if self >= 0 else -self

    # decisions: taken on the hint, recorded as guards
    __eq__ = _compare("==", operator.eq)  # type: ignore[assignment]
    __ne__ = _compare("!=", operator.ne)  # type: ignore[assignment]
    __lt__ = _compare("<", operator.lt)
    __le__ = _compare("<=", operator.le)
    __gt__ = _compare(">", operator.gt)
    __ge__ = _compare(">=", operator.ge)

    def __bool__(self) -> bool:
        return self != 0

    def __hash__(self) -> int:
        # by expression, not value: a dict lookup must not decide that two sizes are
        # equal (a miss only costs sharing, equal values would need a guard)
        return hash(("size", self.src))

    def __index__(self) -> int:
        return self.specialize()

    __int__ = __index__

    def __float__(self) -> float:
        return float(self.specialize())

    def __str__(self) -> str:
        return f"${self.src}$"

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return str(self)


def same_sizes(a: tuple, b: tuple) -> bool:
    """Whether two shapes are the same for every size (a structural test, no guard:
    different expressions may still be equal at some sizes)."""
    return len(a) == len(b) and all(
        x.src == y.src
        if isinstance(x, SizeExpr) and isinstance(y, SizeExpr)
        else (not isinstance(x, SizeExpr) and not isinstance(y, SizeExpr) and x == y)
        for x, y in zip(a, b)
    )


def floor_pow2(n: int) -> int:
    """Largest power of two <= n (n >= 1)."""
    return 1 << (n.bit_length() - 1)


def gcd(a, b):
    """A common divisor of two sizes (their gcd when both are ints): taken at the
    hints, guarded to divide both, which is all that scaling an index needs."""
    import math

    if not isinstance(a, SizeExpr) and not isinstance(b, SizeExpr):
        return math.gcd(a, b)
    if isinstance(a, SizeExpr) and isinstance(b, SizeExpr) and a.src == b.src:
        return a
    g = math.gcd(hint(a), hint(b))
    if g > 1 and (a % g != 0 or b % g != 0):  # records the divisibility guards
        raise AssertionError("unreachable: the hints are divisible")
    return g


# ---------------------------------------------------------------- from torch


def from_torch(d, names: dict | None = None):
    """A torch size (int or ``SymInt``) as an int or `SizeExpr` over the active
    lowering's symbols (a symbol it did not bind specializes)."""
    import torch

    if not isinstance(d, torch.SymInt):
        return d
    v = d.node.maybe_as_int()
    if v is not None:
        return v
    value = d.node.hint
    if value is None:
        raise SpecializedSize(f"no size hint for {d}")
    return SizeExpr(int(value), python_source(d.node.expr, names or _log().names))


def python_source(expr, names: dict) -> str:
    """A sympy size expression (or condition) as Python over the bound names."""
    from torch.utils._sympy.printers import PythonPrinter

    free = expr.free_symbols
    missing = [s for s in free if s not in names]
    if missing:
        raise SpecializedSize(f"symbol {missing[0]} is not an input size (in {expr}; inputs: {list(names)})")
    text = PythonPrinter().doprint(expr.xreplace({s: _Sym(names[s]) for s in free}))
    return f"({text})"


def _Sym(name: str):
    import sympy  # type: ignore[import-untyped]

    return sympy.Symbol(name, integer=True)


def bind_inputs(vals: list) -> tuple[dict, list]:
    """Symbols of the graph's inputs, each bound to where it is read from:
    ``({symbol: name}, [(name, input index, 'shape'|'stride'|'value', dim)])``."""
    import torch

    names: dict = {}
    reads: list = []

    def bind(d, k, kind, dim):
        if isinstance(d, torch.SymInt) and d.node.maybe_as_int() is None:
            expr = d.node.expr
            if expr.is_Symbol and expr not in names:
                names[expr] = f"sz_{expr.name}"
                reads.append((names[expr], k, kind, dim))

    for k, v in enumerate(vals):
        if isinstance(v, torch.Tensor):
            for dim, d in enumerate(v.shape):
                bind(d, k, "shape", dim)
            for dim, d in enumerate(v.stride()):
                bind(d, k, "stride", dim)
        else:
            bind(v, k, "value", 0)
    return names, reads


def read_source(arg: str, kind: str, dim: int) -> str:
    """Python reading one bound size from input `arg`."""
    return {"shape": f"{arg}.shape[{dim}]", "stride": f"{arg}.stride({dim})", "value": arg}[kind]


# ---------------------------------------------------------------- holes


def holes(obj) -> tuple[list, object]:
    """The sizes inside a nested list/tuple/dict `obj` and a function that rebuilds
    it with values for them (in the same order)."""
    found: list = []

    def scan(o):
        if isinstance(o, SizeExpr):
            found.append(o)
        elif isinstance(o, (list, tuple)):
            for x in o:
                scan(x)
        elif isinstance(o, dict):
            for x in o.values():
                scan(x)

    scan(obj)

    def fill(values):
        it = iter(values)

        def put(o):
            if isinstance(o, SizeExpr):
                return next(it)
            if isinstance(o, (list, tuple)):
                items = [put(x) for x in o]
                return type(o)(*items) if hasattr(o, "_fields") else type(o)(items)
            if isinstance(o, dict):
                return {k: put(x) for k, x in o.items()}
            return o

        return put(obj)

    return found, fill
