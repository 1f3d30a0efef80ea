"""Reference may-alias analysis of the objects locals hold: a plain fixpoint over the CFG.

What it computes is what `bcfront.analysis.objalias` computes (read that module's
docstring for the abstract objects and the assumptions); here it is computed the
textbook way, on plain sets of object labels (``"external"``, ``"param x"``,
``"alloc@N"``):

* the state: what each SSA value (and each cell) may point to, what each field of
  each abstract object may hold (``(object, field)``; the field ``"[]"`` stands for
  all items of a container), and the objects handed to code we cannot see;
* each definition (an SSA value at a block head, an instruction) has a transfer
  rule that only ever adds to the state, written below from what the instruction
  does in Python;
* the blocks are visited in reverse post-order, each one's definitions in order,
  again and again until one whole sweep adds nothing (chaotic iteration: the rules
  are monotone, so the order changes only the number of sweeps, not the result).

An object has *escaped* if code we cannot see may hold it: the external world,
whatever was handed to such code, and everything reachable from those through
fields (`RefState.escaped`, recomputed from the state when asked).

It reads the SSA form's object view (`SSA.values`, `SSA.ops`, ...), which
`tests/analysis/test_reference.py` checks against its own reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..ssa import SSA, SSAOp, SSAValue

EXTERNAL = "external"
ITEMS = "[]"  # the field of a container that stands for all of its items
Key = int | tuple[str, str]  # an SSA value's id, or ("cell", name)


@dataclass
class RefAliases:
    """The result: label sets of every SSA value and every variable, and the escaped objects."""

    objects: set[str]
    values: dict[int, set[str]]  # SSA value id -> objects it may refer to
    names: dict[str, set[str]]  # local, cell or free variable -> the same
    escaped: set[str]


@dataclass
class RefState:
    pts: dict[Key, set[str]] = field(default_factory=dict)
    heap: dict[tuple[str, object], set[str]] = field(default_factory=dict)
    handed_out: set[str] = field(default_factory=lambda: {EXTERNAL})  # to code we cannot see
    params: set[str] = field(default_factory=set)
    slices: set[str] = field(default_factory=set)  # BUILD_SLICE's objects
    objects: set[str] = field(default_factory=lambda: {EXTERNAL})
    changed: bool = False
    # `escaped()` as last computed, and whether the heap or `handed_out` grew since
    # (what it depends on): a cache, so that a big function does not rescan the heap
    # at every load
    _escaped: set[str] = field(default_factory=set)
    _stale: bool = True

    def of(self, key: Key) -> set[str]:
        return self.pts.get(key, set())

    def add(self, key: Key, objs: Iterable[str]) -> None:
        have = self.pts.setdefault(key, set())
        for o in objs:
            if o not in have:
                have.add(o)
                self.changed = True

    def put(self, obj: str, fld: object, objs: Iterable[str]) -> None:
        have = self.heap.setdefault((obj, fld), set())
        for o in objs:
            if o not in have:
                have.add(o)
                self.changed = self._stale = True

    def hand_out(self, objs: Iterable[str]) -> None:
        for o in objs:
            if o not in self.handed_out:
                self.handed_out.add(o)
                self.changed = self._stale = True

    def new_object(self, label: str) -> str:
        self.objects.add(label)
        return label

    def escaped(self) -> set[str]:
        """What was handed out, and everything reachable from it through any field."""
        if not self._stale:
            return self._escaped
        seen = set(self.handed_out)
        work = list(seen)
        while work:
            o = work.pop()
            for (holder, _), held in self.heap.items():
                if holder == o:
                    for h in held - seen:
                        seen.add(h)
                        work.append(h)
        self._escaped, self._stale = seen, False
        return seen

    def field_of(self, base: Key, fld: object) -> set[str]:
        """What reading field `fld` of the objects `base` may point to gives: what was
        stored there; any escaped object if the object escaped (unseen code may have
        stored anything it holds); the external world if it is a parameter's object
        (the caller filled it)."""
        out: set[str] = set()
        escaped = self.escaped()
        for o in self.of(base):
            out |= self.heap.get((o, fld), set())
            if o in escaped:
                out |= escaped
            elif o in self.params:
                out.add(EXTERNAL)
        return out

    def store(self, base: Key, fld: object, objs: set[str]) -> None:
        for o in list(self.of(base)):
            self.put(o, fld, objs)

    def may_be_slice(self, key: Key) -> bool:
        """Whether `key` may be a slice object: one BUILD_SLICE made, or one from the
        caller or the external world (operators, displays and iterators make none)."""
        return any(o == EXTERNAL or o in self.params or o in self.slices for o in self.of(key))


# -- the SSA values at block heads -------------------------------------------------------


def value_rule(st: RefState, v: SSAValue, cellvars: tuple[str, ...]) -> None:
    if v.kind == "param":  # the object the caller passed
        p = st.new_object(f"param {v.var}")
        st.params.add(p)
        st.add(v.id, [p])
        if v.var in cellvars:  # a parameter kept in a cell: the cell starts with it
            st.add(("cell", str(v.var)), [p])
    elif v.kind in ("store", "phi", "catch"):  # one of its arguments' objects
        for a in v.args:
            st.add(v.id, st.of(a.id))
    elif v.kind == "exc":  # an exception raised by code we cannot see
        st.add(v.id, st.escaped())
    # undef, lasti (an int) and op values (their instruction's rule): nothing here


# -- the instructions ---------------------------------------------------------------------


def site(st: RefState, op: SSAOp) -> str:
    return st.new_object(f"alloc@{op.offset}")


def unknown_code(st: RefState, op: SSAOp) -> None:
    """Runs code we cannot see: it gets every operand and may return anything escaped."""
    for u in op.uses:
        st.hand_out(st.of(u.id))
    escaped = st.escaped()
    for d in op.defs:
        st.add(d.id, escaped)


def no_objects(st: RefState, op: SSAOp) -> None:
    """Moves values, makes untracked ones (ints, bools, strings) or none."""


def builds(st: RefState, op: SSAOp) -> None:
    """A new container (or function, or slice) holding its operands."""
    new = site(st, op)
    if op.instr.opname == "BUILD_SLICE":
        st.slices.add(new)
    for u in op.uses:
        st.put(new, ITEMS, st.of(u.id))
    for d in op.defs:
        st.add(d.id, [new])


def copies_items(st: RefState, op: SSAOp) -> None:
    """A new container holding the items of its first operand (a tuple of a list, a slice)."""
    new = site(st, op)
    st.put(new, ITEMS, st.field_of(op.uses[0].id, ITEMS))
    for d in op.defs:
        st.add(d.id, [new])


def fresh(st: RefState, op: SSAOp) -> None:
    """An operator's result: a new object."""
    new = site(st, op)
    for d in op.defs:
        st.add(d.id, [new])


NB_INPLACE_ADD = 13  # BINARY_OP's args from here on are the in-place operators (3.11-3.13)


def binary_op(st: RefState, op: SSAOp) -> None:
    """A new object; an in-place operator (``+=``) may also return its left operand."""
    fresh(st, op)
    if op.instr.arg is not None and op.instr.arg >= NB_INPLACE_ADD:
        for d in op.defs:
            st.add(d.id, st.of(op.uses[0].id))


def from_globals(st: RefState, op: SSAOp) -> None:
    """A global, builtin or module: what code we cannot see may hold."""
    escaped = st.escaped()
    for d in op.defs:
        st.add(d.id, escaped)


def load_deref(st: RefState, op: SSAOp) -> None:
    for d in op.defs:
        st.add(d.id, st.of(("cell", str(op.instr.argval))))


def store_deref(st: RefState, op: SSAOp) -> None:
    """A cell is shared with closures: what goes in may be seen by code we cannot see."""
    value = st.of(op.uses[0].id)
    st.add(("cell", str(op.instr.argval)), value)
    st.hand_out(value)


def load_attr(st: RefState, op: SSAOp) -> None:
    """``obj.name``: what was stored there; a method load also pushes `obj` itself."""
    base = op.uses[0].id
    got = st.field_of(base, op.instr.argval)
    method = op.instr.op == "LOAD_METHOD"
    for d in op.defs:
        st.add(d.id, got)
        if method:
            st.add(d.id, st.of(base))


def store_attr(st: RefState, op: SSAOp) -> None:
    value, obj = op.uses[0].id, op.uses[1].id  # ``obj.name = value``
    st.store(obj, op.instr.argval, st.of(value))


def subscr(st: RefState, op: SSAOp) -> None:
    """``container[key]``: an item; if the key is a slice, a new container of items."""
    container, key = op.uses[0].id, op.uses[1].id
    items = st.field_of(container, ITEMS)
    new = site(st, op)
    for d in op.defs:
        st.add(d.id, items)
    if st.may_be_slice(key):
        st.put(new, ITEMS, items)
        for d in op.defs:
            st.add(d.id, [new])


def store_subscr(st: RefState, op: SSAOp) -> None:
    """``container[key] = value``: the container holds both; if the key is a slice,
    the value's items instead."""
    value, container, key = (u.id for u in op.uses)
    st.store(container, ITEMS, st.of(value))
    st.store(container, ITEMS, st.of(key))
    if st.may_be_slice(key):
        st.store(container, ITEMS, st.field_of(value, ITEMS))


def store_slice(st: RefState, op: SSAOp) -> None:
    """``container[a:b] = value`` (3.12+): the container holds the value's items."""
    value, container = op.uses[0].id, op.uses[1].id
    st.store(container, ITEMS, st.field_of(value, ITEMS))


def add_item(st: RefState, op: SSAOp) -> None:
    """LIST_APPEND, SET_ADD, MAP_ADD: the container (first operand) holds the others."""
    container = op.uses[0].id
    for u in op.uses[1:]:
        st.store(container, ITEMS, st.of(u.id))


def add_items(st: RefState, op: SSAOp) -> None:
    """LIST_EXTEND, SET_UPDATE, DICT_UPDATE, DICT_MERGE: the items of the last operand."""
    st.store(op.uses[0].id, ITEMS, st.field_of(op.uses[-1].id, ITEMS))


def unpack(st: RefState, op: SSAOp) -> None:
    """Each target gets an item; UNPACK_EX's starred target is a new list of items."""
    items = st.field_of(op.uses[0].id, ITEMS)
    star = -1
    if op.instr.opname == "UNPACK_EX":
        # pushed bottom first: the targets after the star (arg >> 8 of them), the list,
        # the targets before it
        assert op.instr.arg is not None
        star = op.instr.arg >> 8
        new = site(st, op)
        st.put(new, ITEMS, items)
    for k, d in enumerate(op.defs):
        st.add(d.id, [f"alloc@{op.offset}"] if k == star else items)


def get_iter(st: RefState, op: SSAOp) -> None:
    """An iterator over the operand's items, or the operand itself (``iter(it) is it``)."""
    copies_items(st, op)
    for d in op.defs:
        st.add(d.id, st.of(op.uses[0].id))


def for_iter(st: RefState, op: SSAOp) -> None:
    """The next item of the iterator."""
    got = st.field_of(op.uses[0].id, ITEMS)
    for d in op.defs:
        st.add(d.id, got)


def set_function_attribute(st: RefState, op: SSAOp) -> None:
    """3.13: the function (second operand) keeps the value (defaults, closure, ...)."""
    st.store(op.uses[1].id, ITEMS, st.of(op.uses[0].id))


def load_super_attr(st: RefState, op: SSAOp) -> None:
    """``super().name``: unseen code's answer; the method form also pushes `self`."""
    escaped = st.escaped()
    for d in op.defs:
        st.add(d.id, escaped)
        st.add(d.id, st.of(op.uses[-1].id))


Rule = Callable[[RefState, SSAOp], None]

RULES: dict[str, Rule] = {}
for _names, _rule in [
    (
        "BUILD_LIST BUILD_SET BUILD_TUPLE BUILD_MAP BUILD_CONST_KEY_MAP BUILD_SLICE MAKE_FUNCTION",
        builds,
    ),
    ("LIST_TO_TUPLE BINARY_SLICE", copies_items),
    ("COMPARE_OP UNARY_NEGATIVE UNARY_POSITIVE UNARY_INVERT", fresh),
    ("BINARY_OP", binary_op),
    (
        # no object: moves, stores and loads of locals (the SSA values say those), jumps,
        # results that are ints, bools or strings, deletions, markers
        (
            "NOP RESUME CACHE EXTENDED_ARG LOAD_CONST RETURN_CONST RETURN_VALUE POP_TOP "
            "POP_EXCEPT COPY SWAP PUSH_NULL KW_NAMES PRECALL LOAD_FAST LOAD_FAST_CHECK "
            "LOAD_FAST_LOAD_FAST LOAD_FAST_AND_CLEAR STORE_FAST STORE_FAST_LOAD_FAST "
            "STORE_FAST_STORE_FAST DELETE_FAST MAKE_CELL COPY_FREE_VARS LOAD_CLOSURE "
            "DELETE_DEREF DELETE_ATTR DELETE_SUBSCR DELETE_GLOBAL DELETE_NAME BUILD_STRING "
            "FORMAT_VALUE FORMAT_SIMPLE FORMAT_WITH_SPEC CONVERT_VALUE UNARY_NOT TO_BOOL IS_OP "
            "CONTAINS_OP GET_LEN MATCH_MAPPING MATCH_SEQUENCE JUMP_FORWARD JUMP_BACKWARD "
            "JUMP_BACKWARD_NO_INTERRUPT POP_JUMP_IF_FALSE POP_JUMP_IF_TRUE POP_JUMP_IF_NONE "
            "POP_JUMP_IF_NOT_NONE POP_JUMP_FORWARD_IF_FALSE POP_JUMP_FORWARD_IF_TRUE "
            "POP_JUMP_FORWARD_IF_NONE POP_JUMP_FORWARD_IF_NOT_NONE POP_JUMP_BACKWARD_IF_FALSE "
            "POP_JUMP_BACKWARD_IF_TRUE POP_JUMP_BACKWARD_IF_NONE POP_JUMP_BACKWARD_IF_NOT_NONE "
            "JUMP_IF_TRUE_OR_POP JUMP_IF_FALSE_OR_POP END_FOR RERAISE RETURN_GENERATOR "
            "SETUP_ANNOTATIONS EXIT_INIT_CHECK END_SEND"
        ),
        no_objects,
    ),
    (
        (
            "LOAD_GLOBAL LOAD_NAME LOAD_BUILD_CLASS LOAD_ASSERTION_ERROR IMPORT_NAME LOAD_LOCALS "
            "LOAD_FROM_DICT_OR_GLOBALS"
        ),
        from_globals,
    ),
    ("LOAD_DEREF LOAD_CLASSDEREF LOAD_FROM_DICT_OR_DEREF", load_deref),
    ("STORE_DEREF", store_deref),
    ("LOAD_ATTR LOAD_METHOD", load_attr),
    ("LOAD_SUPER_ATTR", load_super_attr),
    ("STORE_ATTR", store_attr),
    ("BINARY_SUBSCR", subscr),
    ("STORE_SUBSCR", store_subscr),
    ("STORE_SLICE", store_slice),
    ("LIST_APPEND SET_ADD MAP_ADD", add_item),
    ("LIST_EXTEND SET_UPDATE DICT_UPDATE DICT_MERGE", add_items),
    ("UNPACK_SEQUENCE UNPACK_EX", unpack),
    ("GET_ITER GET_YIELD_FROM_ITER GET_AITER", get_iter),
    ("FOR_ITER", for_iter),
    ("SET_FUNCTION_ATTRIBUTE", set_function_attribute),
]:
    for _name in _names.split():
        RULES[_name] = _rule
# everything else (calls, STORE_GLOBAL, YIELD_VALUE, RAISE_VARARGS, with, await, ...) is
# `unknown_code`


def aliases(ssa: SSA) -> RefAliases:
    """Iterate every rule to a fixpoint (see the module docstring)."""
    st = RefState()
    code = ssa.cfg.bytecode.code
    cells = code.co_cellvars + code.co_freevars
    # what each block defines, in order: its phis, handler values, instructions, catches
    by_block: dict[int, list[SSAValue | SSAOp]] = {b: [] for b in ssa.cfg.rpo}
    for v in ssa.values:
        if v.kind != "op":
            by_block[v.block].append(v)
    for op in ssa.ops.values():
        by_block[op.block].append(op)
    st.changed = True
    while st.changed:
        st.changed = False
        for name in cells:  # a closure may put any escaped object in a cell
            st.add(("cell", name), st.escaped())
        for b in ssa.cfg.rpo:
            for item in by_block[b]:
                if isinstance(item, SSAValue):
                    value_rule(st, item, code.co_cellvars)
                else:
                    RULES.get(item.instr.opname, unknown_code)(st, item)
    names: dict[str, set[str]] = {n: set() for n in code.co_varnames + cells}
    for v in ssa.values:
        if isinstance(v.var, str) and v.var in names:
            names[v.var] |= st.of(v.id)
    for n in cells:
        names[n] |= st.of(("cell", n))
    values = {v.id: set(st.of(v.id)) for v in ssa.values}
    return RefAliases(st.objects, values, names, st.escaped())
