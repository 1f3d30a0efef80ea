"""Loop-level IR: a hash-consed arena of scalar value expressions, plus buffers.

A lowered tensor is an expression for *one element* in terms of index variables
``i0 .. i{n-1}`` (one per dimension).  Expressions live in an `Arena`; each node
is interned, so identical sub-expressions share one id: that is both the CSE of
generated kernels and what makes register reuse across fused nodes free.

Scheduler nodes (`Compute`, `Extern`) define buffers; `Compute` is either
pointwise or a reduction over some positions of its iteration sizes.

Dtypes are torch dtype names ("float32", "bfloat16", "bool", ...); imports no torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import index as ix

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8")
HALF_DTYPES = ("float16", "bfloat16")


def compute_dtype(dtype: str) -> str:
    """The dtype a value is held in inside a kernel: halves compute in float32."""
    return "float32" if dtype in HALF_DTYPES else dtype


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES


# Every scalar op: name -> arity.  Codegen and the reference evaluator both key on it.
OPS = {
    # leaves
    "load": 0,
    "const": 0,
    "index": 0,
    "redval": 0,
    # indirect access: a load at a computed offset, and a range-checked index
    "gather": 1,
    "checkidx": 1,
    # casts
    "cast": 1,
    # unary
    "neg": 1,
    "abs": 1,
    "exp": 1,
    "exp2": 1,
    "expm1": 1,
    "log": 1,
    "log2": 1,
    "log10": 1,
    "log1p": 1,
    "sqrt": 1,
    "rsqrt": 1,
    "reciprocal": 1,
    "sin": 1,
    "cos": 1,
    "tan": 1,
    "tanh": 1,
    "sigmoid": 1,
    "erf": 1,
    "floor": 1,
    "ceil": 1,
    "round": 1,
    "trunc": 1,
    "sign": 1,
    "isnan": 1,
    "isinf": 1,
    "not": 1,
    "bitnot": 1,
    "relu": 1,
    "signbit": 1,
    # binary
    "add": 2,
    "sub": 2,
    "mul": 2,
    "truediv": 2,
    "floordiv": 2,
    "truncdiv": 2,
    "remainder": 2,
    "fmod": 2,
    "pow": 2,
    "maximum": 2,
    "minimum": 2,
    "eq": 2,
    "ne": 2,
    "lt": 2,
    "le": 2,
    "gt": 2,
    "ge": 2,
    "and": 2,
    "or": 2,
    "xor": 2,
    "bitand": 2,
    "bitor": 2,
    "bitxor": 2,
    "lshift": 2,
    "rshift": 2,
    # ternary
    "where": 3,
}

REDUCTIONS = ("sum", "prod", "max", "min", "argmax", "argmin", "any", "all")


def identity(kind: str, dtype: str):
    """The value a masked-off lane contributes to a `kind` reduction."""
    cd = compute_dtype(dtype)
    if kind in ("sum", "any"):
        return 0 if kind == "sum" else False
    if kind in ("prod", "all"):
        return 1 if kind == "prod" else True
    big = kind in ("min", "argmin")
    if is_float(cd):
        return float("inf") if big else float("-inf")
    if cd == "bool":
        return big
    bits = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8}[cd]
    if cd == "uint8":
        return 255 if big else 0
    return 2 ** (bits - 1) - 1 if big else -(2 ** (bits - 1))


@dataclass(frozen=True, slots=True)
class ScalarOp:
    """One scalar operation.  `attr` holds leaf data:

    load:   (buffer_name, ix.Affine offset); args = (mask,) or ()
    const:  a Python bool/int/float
    index:  ix.Affine (an index expression used as an int64 value)
    redval: name of a reduction buffer computed in the same kernel
    gather: (buffer_name, ix.Affine base); args = (dyn,) or (dyn, mask): the
            element at ``base + dyn``, `dyn` an int64 expression (index values
            times strides) computed in the kernel
    checkidx: (size, wrap); args = (idx,) or (idx, mask): `idx` as int64, with
            negative values wrapped by `size` when `wrap`; the kernel asserts
            ``0 <= idx < size`` on every valid lane (see `rules_gather`)
    """

    op: str
    args: tuple
    dtype: str
    attr: object = None


class Arena:
    """Interning store of `ScalarOp`s; an expression is an int id into `nodes`."""

    __slots__ = ("nodes", "_ids")

    def __init__(self):
        self.nodes: list[ScalarOp] = []
        self._ids: dict[ScalarOp, int] = {}

    def add(self, op: str, args=(), dtype: str = "float32", attr=None) -> int:
        if op not in OPS:
            raise KeyError(f"unknown scalar op {op!r}")
        args = tuple(args)
        if op == "index" and attr.is_const:
            return self.const(attr.const, dtype)
        folded = _fold(self, op, args, dtype)
        if folded is not None:
            return folded
        n = ScalarOp(op, args, dtype, attr)
        i = self._ids.get(n)
        if i is None:
            i = len(self.nodes)
            self.nodes.append(n)
            self._ids[n] = i
        return i

    def __getitem__(self, i: int) -> ScalarOp:
        return self.nodes[i]

    # ---- convenience builders
    def const(self, value, dtype: str) -> int:
        if dtype == "bool":
            value = bool(value)
        elif dtype in INT_DTYPES:
            value = int(value)
        else:
            value = float(value)
        return self.add("const", (), dtype, value)

    def cast(self, e: int, dtype: str) -> int:
        n = self.nodes[e]
        if n.dtype == dtype:
            return e
        if n.op == "const":
            return self.const(n.attr, dtype)
        return self.add("cast", (e,), dtype)

    def load(self, buf: str, offset: ix.Affine, dtype: str, mask: int | None = None) -> int:
        if mask is not None and self.nodes[mask].op == "const":
            if not self.nodes[mask].attr:
                return self.const(0, dtype)  # never read
            mask = None
        return self.add("load", () if mask is None else (mask,), dtype, (buf, offset))

    def gather(self, buf: str, base: ix.Affine, dyn: int, dtype: str, mask: int | None = None) -> int:
        if mask is not None and self.nodes[mask].op == "const":
            if not self.nodes[mask].attr:
                return self.const(0, dtype)  # never read
            mask = None
        return self.add("gather", (dyn,) if mask is None else (dyn, mask), dtype, (buf, base))

    def op(self, name: str, *args: int, dtype: str | None = None) -> int:
        return self.add(name, args, dtype or self.nodes[args[0]].dtype)

    # ---- traversal (iterative: expression DAGs can be thousands of nodes deep)
    def postorder(self, roots) -> list[int]:
        """Ids reachable from `roots`, each after all of its arguments."""
        out, seen = [], set()
        stack = [(r, False) for r in reversed(list(roots))]
        while stack:
            i, expanded = stack.pop()
            if expanded:
                out.append(i)
                continue
            if i in seen:
                continue
            seen.add(i)
            stack.append((i, True))
            for a in reversed(self.nodes[i].args):
                if a not in seen:
                    stack.append((a, False))
        return out

    def rewrite(self, roots, leaf_fn: Callable[[int, ScalarOp], int | None]) -> list[int]:
        """Rebuild the DAG under `roots`; `leaf_fn(id, node)` may replace any node
        (given its already-rewritten args via the returned mapping)."""
        new: dict[int, int] = {}
        for i in self.postorder(roots):
            n = self.nodes[i]
            args = tuple(new[a] for a in n.args)
            if args != n.args:
                n = ScalarOp(n.op, args, n.dtype, n.attr)
            r = leaf_fn(i, n)
            new[i] = r if r is not None else self.add(n.op, n.args, n.dtype, n.attr)
        return [new[r] for r in roots]

    def substitute(self, roots, mapping, ranges=None, mask: int | None = None) -> list[int]:
        """Replace index variables in every load/index leaf; AND `mask` into loads."""

        def with_mask(m):
            if mask is None:
                return m
            return mask if m is None else self.add("and", (m, mask), "bool")

        def leaf(_, n: ScalarOp):
            if n.op == "load":
                buf, off = n.attr
                off = ix.substitute(off, mapping, ranges)
                return self.load(buf, off, n.dtype, with_mask(n.args[0] if n.args else None))
            if n.op == "gather":
                buf, off = n.attr
                off = ix.substitute(off, mapping, ranges)
                m = with_mask(n.args[1] if len(n.args) > 1 else None)
                return self.gather(buf, off, n.args[0], n.dtype, m)
            if n.op == "checkidx" and mask is not None:
                # lanes a selection disables may hold any index: they must not assert
                m = with_mask(n.args[1] if len(n.args) > 1 else None)
                return self.add("checkidx", (n.args[0], m), n.dtype, n.attr)
            if n.op == "index":
                return self.add("index", (), n.dtype, ix.substitute(n.attr, mapping, ranges))
            return None

        return self.rewrite(roots, leaf)

    def loads(self, roots) -> list[ScalarOp]:
        """Every memory read under `roots`: direct loads and gathers (attr (buf, offset))."""
        return [self.nodes[i] for i in self.postorder(roots) if self.nodes[i].op in _MEMORY_OPS]

    def count_ops(self, roots) -> int:
        return sum(1 for i in self.postorder(roots) if self.nodes[i].op not in ("const", "index"))


_MEMORY_OPS = ("load", "gather")


# Constant folding and identities that are exact in every dtype.  Float
# arithmetic is not folded (Python computes in float64, kernels in float32).
_FOLD_CMP = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
_FOLD_INT = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}


def _fold(arena: Arena, op: str, args: tuple, dtype: str):
    if not args:
        return None
    ns = [arena.nodes[a] for a in args]
    consts = [n.attr if n.op == "const" else None for n in ns]
    all_const = all(n.op == "const" for n in ns)
    if op == "where" and ns[0].op == "const":
        return args[1] if consts[0] else args[2]
    if op in ("and", "or") and dtype == "bool":
        for k in (0, 1):
            if ns[k].op == "const":
                other = args[1 - k]
                if op == "and":
                    return other if consts[k] else arena.const(False, "bool")
                return arena.const(True, "bool") if consts[k] else other
    if op == "cast" and all_const and _exact_cast(ns[0], dtype):
        return arena.const(consts[0], dtype)  # e.g. an index that a broadcast made constant
    if op == "not" and all_const:
        return arena.const(not consts[0], "bool")
    if all_const and op in _FOLD_CMP and not any(isinstance(c, float) for c in consts):
        return arena.const(_FOLD_CMP[op](*consts), "bool")
    if dtype in ("int32", "int64") and op in _FOLD_INT:
        if all_const:
            v = _FOLD_INT[op](*consts)
            if -(2**31) <= v < 2**31:
                return arena.const(v, dtype)
        if op in ("add", "sub") and ns[1].op == "const" and consts[1] == 0:
            return args[0]
        if op == "mul" and ns[1].op == "const" and consts[1] == 1:
            return args[0]
    if (
        op == "mul"
        and dtype in FLOAT_DTYPES
        and ns[1].op == "const"
        and consts[1] == 1.0
        and ns[0].dtype == dtype
    ):
        return args[0]
    return None


def _exact_cast(n: ScalarOp, dtype: str) -> bool:
    """Whether casting the constant `n` to `dtype` keeps its value exactly."""
    if n.dtype not in INT_DTYPES + ("bool",) or dtype not in ("int32", "int64", "float32", "float64"):
        return False
    return isinstance(n.attr, int) and -(2**24) <= n.attr <= 2**24


def ivars(n: int, prefix: str = "i") -> list[ix.Affine]:
    return [ix.var(f"{prefix}{k}") for k in range(n)]


def ranges_of(sizes, prefix: str = "i") -> dict:
    return {f"{prefix}{k}": s for k, s in enumerate(sizes)}


@dataclass(frozen=True, slots=True)
class Layout:
    """A dense-or-strided buffer: shape, strides (elements) and dtype."""

    shape: tuple
    stride: tuple
    dtype: str

    @property
    def numel(self) -> int:
        return numel(self.shape)

    def offset(self, index_vars) -> ix.Affine:
        return ix.strided(index_vars, self.stride)


def numel(sizes) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n


def contiguous_strides(shape) -> tuple:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(out))


@dataclass(slots=True)
class Compute:
    """A buffer computed by a kernel: pointwise when `reduced` is empty.

    `body` is an expression over ``i0..i{len(sizes)-1}``; for a reduction the
    positions in `reduced` are summed (or maxed, ...) away and the buffer's
    layout indexes the kept positions in order.  A `scan` keeps every
    position: element ``i`` is the reduction of the elements up to ``i``
    along the (single) reduced position.
    """

    name: str
    layout: Layout
    sizes: tuple
    body: int
    reduced: tuple = ()
    reduction: str | None = None
    origins: tuple = ()
    store: ix.Affine | None = None  # output offset over i0..; default: layout order
    scan: bool = False  # an inclusive scan along `reduced` (cumsum): one output per element

    @property
    def kept(self) -> tuple:
        if self.scan:
            return tuple(range(len(self.sizes)))
        return tuple(p for p in range(len(self.sizes)) if p not in self.reduced)

    def store_offset(self) -> ix.Affine:
        """Offset of the element this node computes, in its own variables."""
        if self.store is not None:
            return self.store
        vs = ivars(len(self.sizes))
        return self.layout.offset([vs[p] for p in self.kept])

    def reads(self, arena: Arena) -> set:
        return {n.attr[0] for n in arena.loads([self.body])}


@dataclass(slots=True)
class Extern:
    """An op left to torch.  `call(*tensors)` returns a flat tuple of tensors,
    one per name in `outputs` (layouts known at compile time)."""

    outputs: tuple  # of (name, Layout)
    inputs: tuple  # of TensorRef
    call: Callable
    op_name: str
    describe: str = ""

    @property
    def name(self) -> str:
        return self.outputs[0][0] if self.outputs else f"extern_{id(self)}"

    def reads(self, arena: Arena) -> set:
        return {r.base for r in self.inputs}


@dataclass(frozen=True, slots=True)
class TensorRef:
    """A real tensor at run time: buffer `base` with view ops replayed on it."""

    base: str
    steps: tuple = ()  # of (callable, args tuple, label)


@dataclass(slots=True)
class LoweredProgram:
    """The whole lowered graph."""

    arena: Arena
    inputs: list  # of (name, Layout) in placeholder order
    constants: dict  # name -> tensor (get_attr / lifted constants)
    nodes: list  # Compute | Extern in a valid order
    outputs: list  # of TensorRef | ("scalar", value)
    copy_backs: list  # of (input name, TensorRef) in mutation order
    layouts: dict = field(default_factory=dict)  # every buffer name -> Layout
    device: object = None
