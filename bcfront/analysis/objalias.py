"""May-alias analysis of the Python objects that locals hold (static, flow-insensitive).

Definition.  Two variables *may alias* if some execution could make them
refer to the same object, at any two moments.  We compute an Andersen-style
(subset-based) points-to relation over abstract objects and answer
``may_alias(a, b)`` as "their points-to sets intersect".  Abstract objects:

* ``param x`` — the object passed for parameter `x`;
* ``alloc@N`` — whatever the container/function/operator at offset N builds;
* ``external`` — everything the function did not create: globals, builtins,
  module attributes, and what callers and callees can reach.

Fields are per attribute name, plus one field ``[]`` for all items of a
container.  The points-to sets of SSA values (`bcfront.analysis.ssa`) are the
constraint variables, so a local's set is the union over its SSA values:
flow-insensitive per name, as asked, yet no less precise for it.

Assumptions, the usual ones for a static analyzer that is not told more:

* the arguments are distinct objects, none reachable from another or from a
  global (so ``may_alias('a', 'b')`` is False for two parameters);
* operators (``+``, ``<``, unary ``-``) return a new object (never a slice), in-place
  operators (``+=``) the left operand or a new one; attribute loads on local
  containers find what was stored there;
* a subscript's key may be a slice (``a[i:j]``, 3.11's and ``a[::k]``'s BUILD_SLICE
  then BINARY_SUBSCR or STORE_SUBSCR, or a slice object) when it may be a
  BUILD_SLICE's object, a parameter's or the external world's: then loading it
  builds a new container (``alloc@N`` of the subscript) holding the items, and
  storing into it stores the value's items;
* everything else that runs code we cannot see (calls, ``with``, ``await``,
  iteration protocols of escaped objects, ``match`` class patterns) may return
  any *escaped* object: the external world, any object that was passed to such
  code or stored where it can see (a global, a cell, an escaped object), and
  everything reachable from those.

Constants (ints, strings, tuples of constants) are immutable and not tracked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Protocol, TypeAlias

    from .bytecode import Instr
    from .ssa import SSA

    class _Value(Protocol):
        """What the rules read of an `SSAValue`."""

        @property
        def id(self) -> int: ...

    class _Op(Protocol):
        """What the rules read of an `SSAOp`."""

        @property
        def instr(self) -> Instr: ...
        @property
        def offset(self) -> int: ...
        @property
        def uses(self) -> Sequence[_Value]: ...
        @property
        def defs(self) -> Sequence[_Value]: ...

    # a constraint variable: an SSA value id, ("cell", name) or a temp ("tmp", n)
    _Key: TypeAlias = int | tuple[str, object]


E = 0  # bit index of the external object


class AbstractObject(NamedTuple):
    kind: str  # external | param | alloc
    label: str  # "external", "param x", "alloc@12"
    offset: int | None


def _bits(m: int) -> Iterator[int]:
    while m:
        low = m & -m
        yield low.bit_length() - 1
        m ^= low


class _Gen:
    """Constraint generator: turns SSA into (kind, ...) tuples over variable keys."""

    def __init__(self, ssa: SSA) -> None:
        self.ssa = ssa
        self.objects = [AbstractObject("external", "external", None)]
        self.obj_index: dict[str, int] = {"external": 0}
        self.params = 0  # bits of parameter objects
        self.born_escaped = 1  # the external object has always escaped
        self.slices = 0  # bits of BUILD_SLICE's objects
        # (kind, ...) tuples whose items depend on the kind: see the shorthands below
        self.cons: list[tuple[Any, ...]] = []
        self.temp = 0

    def obj(self, kind: str, label: str, offset: int | None = None) -> int:
        i = self.obj_index.get(label)
        if i is None:
            i = self.obj_index[label] = len(self.objects)
            self.objects.append(AbstractObject(kind, label, offset))
        return 1 << i

    def tmp(self) -> tuple[str, int]:
        self.temp += 1
        return ("tmp", self.temp)

    # constraint shorthands: keys are SSA value ids, ("cell", name) or temps
    def addr(self, dst: _Key, bits: int) -> None:
        self.cons.append(("addr", dst, bits))

    def copy(self, dst: _Key, src: _Key) -> None:
        self.cons.append(("copy", dst, src))

    def load(self, dst: _Key, base: _Key, field: object) -> None:  # field: "[]" or a name
        self.cons.append(("load", dst, base, field))

    def store(self, base: _Key, field: object, src: _Key) -> None:
        self.cons.append(("store", base, field, src))

    def escape(self, src: _Key) -> None:
        self.cons.append(("escape", src))

    def external(self, dst: _Key) -> None:
        self.cons.append(("ext", dst))

    def if_slice(self, key: _Key, then: list[tuple[Any, ...]]) -> None:
        """The constraints `then`, once `key` may be a slice (a BUILD_SLICE's object, a
        parameter's or the external world's)."""
        self.cons.append(("slice?", key, then))

    def run(self) -> _Gen:
        ssa = self.ssa
        for v in ssa.values:
            kind = v.kind
            if kind == "param":
                p = self.obj("param", f"param {v.var}")
                self.params |= p
                self.addr(v.id, p)
                if v.var in ssa.cfg.bytecode.code.co_cellvars:
                    self.copy(("cell", v.var), v.id)
            elif kind in ("store", "phi", "catch"):
                for a in v.args:
                    self.copy(v.id, a.id)
            elif kind == "exc":
                self.external(v.id)
        code = ssa.cfg.bytecode.code
        for name in code.co_cellvars + code.co_freevars:
            # cells are shared with closures that may put any escaped object in them
            self.external(("cell", name))
        for op in ssa.ops.values():
            _RULES.get(op.instr.opname, _call)(self, op)
        return self


# -- per-opcode rules: (gen, op) ------------------------------------------------------


def _nothing(g: _Gen, op: _Op) -> None:
    pass


def _call(g: _Gen, op: _Op) -> None:
    """Code we cannot see: its operands escape; what it defines is any escaped object."""
    for u in op.uses:
        g.escape(u.id)
    for d in op.defs:
        g.external(d.id)


def _alloc(g: _Gen, op: _Op) -> None:
    site = g.obj("alloc", f"alloc@{op.offset}", op.offset)
    if op.instr.opname == "BUILD_SLICE":
        g.slices |= site
    for d in op.defs:
        g.addr(d.id, site)
        for u in op.uses:
            g.store(d.id, "[]", u.id)


def _alloc_items_of(g: _Gen, op: _Op) -> None:
    """A new container holding the items of its (last) operand."""
    site = g.obj("alloc", f"alloc@{op.offset}", op.offset)
    t, new = g.tmp(), g.tmp()
    g.load(t, op.uses[0].id, "[]")
    # (stored through a key that holds the new container alone: GET_ITER's result may
    # also be its operand, whose items iterating does not change)
    g.addr(new, site)
    g.store(new, "[]", t)
    for d in op.defs:
        g.addr(d.id, site)


def _fresh(g: _Gen, op: _Op) -> None:
    site = g.obj("alloc", f"alloc@{op.offset}", op.offset)
    for d in op.defs:
        g.addr(d.id, site)


def _binary_op(g: _Gen, op: _Op) -> None:
    _fresh(g, op)
    if op.instr.argrepr.endswith("="):  # in-place: may return the left operand
        for d in op.defs:
            g.copy(d.id, op.uses[0].id)


def _global(g: _Gen, op: _Op) -> None:
    for d in op.defs:
        g.external(d.id)


def _load_deref(g: _Gen, op: _Op) -> None:
    for d in op.defs:
        g.copy(d.id, ("cell", op.instr.argval))


def _store_deref(g: _Gen, op: _Op) -> None:
    g.copy(("cell", op.instr.argval), op.uses[0].id)
    g.escape(op.uses[0].id)


def _load_attr(g: _Gen, op: _Op) -> None:
    base = op.uses[0].id
    for d in op.defs:
        g.load(d.id, base, op.instr.argval)
        if op.instr.op == "LOAD_METHOD":  # the bound self is pushed too
            g.copy(d.id, base)


def _store_attr(g: _Gen, op: _Op) -> None:
    value, obj = op.uses[0].id, op.uses[1].id
    g.store(obj, op.instr.argval, value)


def _subscr(g: _Gen, op: _Op) -> None:
    container, key = op.uses[0].id, op.uses[1].id
    for d in op.defs:
        g.load(d.id, container, "[]")
    # a slice of it: a new container holding its items
    site, items, new = g.obj("alloc", f"alloc@{op.offset}", op.offset), g.tmp(), g.tmp()
    then = [("load", items, container, "[]"), ("addr", new, site), ("store", new, "[]", items)]
    then += [("addr", d.id, site) for d in op.defs]
    g.if_slice(key, then)


def _store_subscr(g: _Gen, op: _Op) -> None:
    value, container, key = (u.id for u in op.uses)
    g.store(container, "[]", value)
    g.store(container, "[]", key)
    # a slice of it takes the value's items
    items = g.tmp()
    g.if_slice(key, [("load", items, value, "[]"), ("store", container, "[]", items)])


def _store_slice(g: _Gen, op: _Op) -> None:
    t = g.tmp()
    g.load(t, op.uses[0].id, "[]")
    g.store(op.uses[1].id, "[]", t)


def _add_item(g: _Gen, op: _Op) -> None:
    container = op.uses[0].id
    for u in op.uses[1:]:
        g.store(container, "[]", u.id)


def _add_items(g: _Gen, op: _Op) -> None:
    t = g.tmp()
    g.load(t, op.uses[-1].id, "[]")
    g.store(op.uses[0].id, "[]", t)


def _unpack(g: _Gen, op: _Op) -> None:
    t = g.tmp()
    g.load(t, op.uses[0].id, "[]")
    star = None
    if op.instr.opname == "UNPACK_EX":
        # outputs, bottom first: the targets after the star, the starred list (a new
        # list of items), then the targets before it
        star = op.instr.arg >> 8  # type: ignore[operator]  # (UNPACK_EX always has an arg)
        site = g.tmp()
        g.addr(site, g.obj("alloc", f"alloc@{op.offset}", op.offset))
        g.store(site, "[]", t)
    for k, d in enumerate(op.defs):
        g.copy(d.id, site if k == star else t)


def _get_iter(g: _Gen, op: _Op) -> None:
    _alloc_items_of(g, op)
    for d in op.defs:
        g.copy(d.id, op.uses[0].id)


def _for_iter(g: _Gen, op: _Op) -> None:
    for d in op.defs:
        g.load(d.id, op.uses[0].id, "[]")


def _set_function_attribute(g: _Gen, op: _Op) -> None:
    g.store(op.uses[1].id, "[]", op.uses[0].id)


def _super_attr(g: _Gen, op: _Op) -> None:
    for d in op.defs:
        g.external(d.id)
        g.copy(d.id, op.uses[-1].id)


_RULES = {
    **dict.fromkeys(
        [
            "BUILD_LIST",
            "BUILD_SET",
            "BUILD_TUPLE",
            "BUILD_MAP",
            "BUILD_CONST_KEY_MAP",
            "BUILD_SLICE",
            "MAKE_FUNCTION",
        ],
        _alloc,
    ),
    **dict.fromkeys(["LIST_TO_TUPLE", "BINARY_SLICE"], _alloc_items_of),
    **dict.fromkeys(["COMPARE_OP", "UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT"], _fresh),
    "BINARY_OP": _binary_op,
    **dict.fromkeys(
        [
            "NOP",
            "RESUME",
            "CACHE",
            "EXTENDED_ARG",
            "LOAD_CONST",
            "RETURN_CONST",
            "RETURN_VALUE",
            "POP_TOP",
            "POP_EXCEPT",
            "COPY",
            "SWAP",
            "PUSH_NULL",
            "KW_NAMES",
            "PRECALL",
            "LOAD_FAST",
            "LOAD_FAST_CHECK",
            "LOAD_FAST_LOAD_FAST",
            "LOAD_FAST_AND_CLEAR",
            "STORE_FAST",
            "STORE_FAST_LOAD_FAST",
            "STORE_FAST_STORE_FAST",
            "DELETE_FAST",
            "MAKE_CELL",
            "COPY_FREE_VARS",
            "LOAD_CLOSURE",
            "DELETE_DEREF",
            "DELETE_ATTR",
            "DELETE_SUBSCR",
            "DELETE_GLOBAL",
            "DELETE_NAME",
            "BUILD_STRING",
            "FORMAT_VALUE",
            "FORMAT_SIMPLE",
            "FORMAT_WITH_SPEC",
            "CONVERT_VALUE",
            "UNARY_NOT",
            "TO_BOOL",
            "IS_OP",
            "CONTAINS_OP",
            "GET_LEN",
            "MATCH_MAPPING",
            "MATCH_SEQUENCE",
            "JUMP_FORWARD",
            "JUMP_BACKWARD",
            "JUMP_BACKWARD_NO_INTERRUPT",
            "POP_JUMP_IF_FALSE",
            "POP_JUMP_IF_TRUE",
            "POP_JUMP_IF_NONE",
            "POP_JUMP_IF_NOT_NONE",
            "POP_JUMP_FORWARD_IF_FALSE",
            "POP_JUMP_FORWARD_IF_TRUE",
            "POP_JUMP_FORWARD_IF_NONE",
            "POP_JUMP_FORWARD_IF_NOT_NONE",
            "POP_JUMP_BACKWARD_IF_FALSE",
            "POP_JUMP_BACKWARD_IF_TRUE",
            "POP_JUMP_BACKWARD_IF_NONE",
            "POP_JUMP_BACKWARD_IF_NOT_NONE",
            "JUMP_IF_TRUE_OR_POP",
            "JUMP_IF_FALSE_OR_POP",
            "END_FOR",
            "RERAISE",
            "RETURN_GENERATOR",
            "SETUP_ANNOTATIONS",
            "EXIT_INIT_CHECK",
            "END_SEND",
        ],
        _nothing,
    ),
    **dict.fromkeys(
        [
            "LOAD_GLOBAL",
            "LOAD_NAME",
            "LOAD_BUILD_CLASS",
            "LOAD_ASSERTION_ERROR",
            "IMPORT_NAME",
            "LOAD_LOCALS",
            "LOAD_FROM_DICT_OR_GLOBALS",
        ],
        _global,
    ),
    **dict.fromkeys(["LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF"], _load_deref),
    "STORE_DEREF": _store_deref,
    **dict.fromkeys(
        ["STORE_GLOBAL", "STORE_NAME", "IMPORT_STAR", "PRINT_EXPR", "RAISE_VARARGS", "YIELD_VALUE"], _call
    ),
    **dict.fromkeys(["LOAD_ATTR", "LOAD_METHOD"], _load_attr),
    "LOAD_SUPER_ATTR": _super_attr,
    "STORE_ATTR": _store_attr,
    "BINARY_SUBSCR": _subscr,
    "STORE_SUBSCR": _store_subscr,
    "STORE_SLICE": _store_slice,
    **dict.fromkeys(["LIST_APPEND", "SET_ADD", "MAP_ADD"], _add_item),
    **dict.fromkeys(["LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE"], _add_items),
    **dict.fromkeys(["UNPACK_SEQUENCE", "UNPACK_EX"], _unpack),
    **dict.fromkeys(["GET_ITER", "GET_YIELD_FROM_ITER", "GET_AITER"], _get_iter),
    "FOR_ITER": _for_iter,
    "SET_FUNCTION_ATTRIBUTE": _set_function_attribute,
    # everything else (CALL*, SEND, BEFORE_WITH, GET_AWAITABLE, MATCH_CLASS, ...) is `_call`
}


def _solve(g: _Gen) -> tuple[dict[_Key, int], int]:
    """Iterate the constraints to a fixpoint; sets are int bitsets over `g.objects`."""
    pts: dict[_Key, int] = {}
    fields: dict[int, dict[str, int]] = {}
    escaped = g.born_escaped
    params = g.params
    external = 1 << E
    sliceish = external | params | g.slices  # what may be a slice
    cons = list(g.cons)  # (with the "slice?" constraints' own, once they hold)
    held: set[int] = set()  # (the positions in `cons` of those that hold)
    changed = True
    while changed:
        changed = False
        for at, c in enumerate(cons):  # (it goes on over what is appended meanwhile)
            kind = c[0]
            if kind == "addr" or kind == "copy" or kind == "ext" or kind == "load":
                dst = c[1]
                old = pts.get(dst, 0)
                if kind == "addr":
                    new = old | c[2]
                elif kind == "copy":
                    new = old | pts.get(c[2], 0)
                elif kind == "ext":
                    new = old | escaped
                else:
                    new = old
                    f = c[3]
                    for o in _bits(pts.get(c[2], 0)):
                        new |= fields.get(o, {}).get(f, 0)
                        if escaped >> o & 1:
                            new |= escaped
                        elif params >> o & 1:
                            new |= external
                if new != old:
                    pts[dst] = new
                    changed = True
            elif kind == "store":
                src = pts.get(c[3], 0)
                if not src:
                    continue
                for o in _bits(pts.get(c[1], 0)):
                    fo = fields.setdefault(o, {})
                    old = fo.get(c[2], 0)
                    if old | src != old:
                        fo[c[2]] = old | src
                        changed = True
                    if escaped >> o & 1 and escaped | src != escaped:
                        escaped |= src
                        changed = True
            elif kind == "slice?":
                if at not in held and pts.get(c[1], 0) & sliceish:
                    held.add(at)
                    cons += c[2]
                    changed = True
            else:  # escape
                src = pts.get(c[1], 0)
                if escaped | src != escaped:
                    escaped |= src
                    changed = True
        # whatever an escaped object reaches has escaped too
        grown = True
        while grown:
            grown = False
            for o in _bits(escaped):
                for bits in fields.get(o, {}).values():
                    if escaped | bits != escaped:
                        escaped |= bits
                        grown = changed = True
    return pts, escaped


class Aliases:
    """May-alias sets of a code object's locals, cells and free variables."""

    def __init__(self, ssa: SSA) -> None:
        g = _Gen(ssa).run()
        pts, escaped = _solve(g)
        self.objects: tuple[AbstractObject, ...] = tuple(g.objects)
        self._value_bits = {k: v for k, v in pts.items() if isinstance(k, int)}
        self._escaped = escaped
        code = ssa.cfg.bytecode.code
        names: dict[str, int] = {}
        for n in code.co_varnames + code.co_cellvars + code.co_freevars:
            names[n] = 0
        for v in ssa.values:
            if isinstance(v.var, str) and v.var in names:
                names[v.var] |= pts.get(v.id, 0)
        for n in code.co_cellvars + code.co_freevars:
            names[n] |= pts.get(("cell", n), 0)
        self._name_bits = names

    def _objs(self, bits: int) -> frozenset[AbstractObject]:
        return frozenset(self.objects[i] for i in _bits(bits))

    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(self._name_bits)

    def points_to(self, name: str) -> frozenset[AbstractObject]:
        """Abstract objects local `name` may refer to (empty: untracked, e.g. an int)."""
        return self._objs(self._name_bits[name])

    def value_points_to(self, value: _Value) -> frozenset[AbstractObject]:
        """Abstract objects one SSA value may refer to."""
        return self._objs(self._value_bits.get(value.id, 0))

    def may_alias(self, a: str, b: str) -> bool:
        """Whether locals `a` and `b` may ever refer to the same object."""
        return bool(self._name_bits[a] & self._name_bits[b])

    @property
    def escaped(self) -> frozenset[AbstractObject]:
        """Objects that code we cannot see may hold."""
        return self._objs(self._escaped)

    @property
    def sets(self) -> list[frozenset[str]]:
        """For each abstract object, the variables that may refer to it (two or more),
        deduplicated and sorted: every may-alias pair shares at least one set."""
        by_obj: dict[int, set[str]] = {}
        for n, bits in self._name_bits.items():
            for o in _bits(bits):
                by_obj.setdefault(o, set()).add(n)
        out = {frozenset(s) for s in by_obj.values() if len(s) > 1}
        return sorted(out, key=lambda s: (sorted(s), len(s)))

    def __repr__(self) -> str:
        return f"<Aliases {len(self._name_bits)} variables, {len(self.objects)} objects>"
