"""Forward dataflow over one code object's bytecode: which values are tensor-derived.

The predictor runs each function's decoded instructions abstractly over the
analyzer's CFG (`bcfront.analysis.cfg`), with `static_values.V` on the value
stack and in the locals, joining states where paths meet until nothing
changes, then makes one last pass that records predicted breaks.  Opcode
handlers sit in `HANDLERS`, keyed by the decode layer's normalized op; any
other instruction is modelled from its stack effect (`POPS` says how many
inputs it reads), its outputs derived from its inputs.

File-level knowledge (globals, class attributes, which functions are called
with what) lives in a `Facts` object the driver (`static.py`) shares between
functions and refines over a few rounds.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field

from bcfront.analysis.bytecode import Instr
from bcfront.analysis.cfg import CFG
from bcfront.analysis.decode import PY, decode
from bcfront.reasons import BreakReason

from . import static_values as sv
from .static_values import NULL, TENSOR, UNKNOWN, V, derived, join

MAX_ROUNDS = 50  # per function; the lattice is tiny, this is only a safety net


@dataclass
class Facts:
    """What the driver knows about the whole file; refined monotonically."""

    globals: dict[str, V] = field(default_factory=dict)
    defs: dict[str, V] = field(default_factory=dict)  # module-level def/class names
    classes: set[str] = field(default_factory=set)  # class qualnames
    class_attrs: dict[str, dict[str, V]] = field(default_factory=dict)
    methods: dict[str, set[str]] = field(default_factory=dict)  # class -> method names
    functions: set[str] = field(default_factory=set)  # function qualnames
    returns: dict[str, V] = field(default_factory=dict)  # last round's
    new_returns: dict[str, V] = field(default_factory=dict)
    # callee -> parameter (index or name) -> value passed.  Read from the last
    # round, written afresh in this one, so a guess made before a caller was
    # seen does not linger once the caller says better.
    seeds: dict[str, dict[int | str, V]] = field(default_factory=dict)
    new_seeds: dict[str, dict[int | str, V]] = field(default_factory=dict)
    entries: set[str] = field(default_factory=set)  # captured functions
    calls: dict[str, set[str]] = field(default_factory=dict)  # caller -> callees

    def seed(self, callee: str, key: int | str, v: V) -> None:
        d = self.new_seeds.setdefault(callee, {})
        d[key] = join(d[key], v) if key in d else v

    def next_round(self) -> bool:
        """Make this round's seeds and returns current; whether anything changed."""
        changed = (self.new_seeds, self.new_returns) != (self.seeds, self.returns)
        self.seeds, self.new_seeds = self.new_seeds, {}
        self.returns, self.new_returns = self.new_returns, {}
        return changed


@dataclass(frozen=True)
class RawPrediction:
    offset: int
    lineno: int | None
    reason: BreakReason
    detail: str  # what was called or tested, e.g. ".item()" or "print"
    certain: bool
    instruction: str


class Flow:
    """The abstract interpretation of one code object."""

    def __init__(self, code: types.CodeType, facts: Facts, qualname: str, klass: str | None):
        self.code = code
        self.facts = facts
        self.qualname = qualname
        self.klass = klass  # the class whose method this is, if any
        self.cfg = CFG(decode(code))
        self.stack: list[V] = []
        self.locals: dict[str, V] = {}
        self.kwnames: tuple = ()
        self.recording = False
        self.predictions: dict[tuple[int, str], RawPrediction] = {}
        self.steering: set[int] = set()  # origins of scalars that steer control flow
        self.returned = V("none")

    # -- stack ----------------------------------------------------------------
    def push(self, *vs: V) -> None:
        self.stack.extend(vs)

    def pop(self, n: int = 1) -> list[V]:
        if n <= 0:
            return []
        got = self.stack[-n:] if len(self.stack) >= n else [UNKNOWN] * (n - len(self.stack)) + self.stack
        del self.stack[-n:]
        return got

    def peek(self, i: int = 1) -> V:
        return self.stack[-i] if len(self.stack) >= i else UNKNOWN

    # -- predictions ------------------------------------------------------------
    def predict(self, ins: Instr, reason: BreakReason, detail: str, certain: bool) -> None:
        if not self.recording:
            return
        key = (ins.offset, reason)
        old = self.predictions.get(key)
        if old is None or (certain and not old.certain):
            self.predictions[key] = RawPrediction(
                ins.offset, ins.lineno, reason, detail, certain, f"{ins.opname} at offset {ins.offset}"
            )

    def steer(self, v: V) -> None:
        if v.kind == "scalar" and v.origin >= 0:
            self.steering.add(v.origin)

    # -- driver -----------------------------------------------------------------
    def run(self, params: dict[str, V]) -> None:
        cfg = self.cfg
        if not cfg.blocks:
            return
        states: dict[int, tuple[tuple[V, ...], dict[str, V]]] = {cfg.entry: ((), dict(params))}
        order = list(cfg.blocks)  # offset order approximates RPO for bytecode
        for _ in range(MAX_ROUNDS):
            changed = False
            for start in order:
                if start not in states:
                    continue
                for dst, st in self._transfer(start, states[start]):
                    old = states.get(dst)
                    new = st if old is None else _join_states(old, st)
                    if old is None or new != old:
                        states[dst] = new
                        changed = True
            if not changed:
                break
        self.recording = True
        for start in order:
            if start in states:
                self._transfer(start, states[start])

    def _transfer(self, start: int, state):
        block = self.cfg.blocks[start]
        self.stack, self.locals = list(state[0]), dict(state[1])
        self.kwnames = ()
        before = list(self.stack)
        for ins in block.instructions:
            before = list(self.stack)
            HANDLERS.get(ins.op, _generic)(self, ins)
        out = []
        last = block.last
        after = (tuple(self.stack), dict(self.locals))
        for e in self.cfg.edges:
            if e.src != start:
                continue
            if e.kind == "exception":
                h = block.handler
                depth = h.depth
                stack = tuple((list(state[0]) + [UNKNOWN] * depth)[:depth])
                stack += (UNKNOWN,) * (1 + int(h.lasti))
                out.append((e.dst, (stack, _join_locals(state[1], self.locals))))
            elif (
                e.kind in ("jump", "branch")
                and last.jump_stack_effect is not None
                and last.jump_stack_effect != last.stack_effect
            ):
                depth = max(0, len(before) + last.jump_stack_effect)
                stack = tuple((before + [UNKNOWN] * depth)[:depth])
                out.append((e.dst, (stack, dict(self.locals))))
            else:
                out.append((e.dst, after))
        return out


def _join_locals(a: dict[str, V], b: dict[str, V]) -> dict[str, V]:
    out = dict(a)
    for k, v in b.items():
        out[k] = join(out[k], v) if k in out else v
    return out


def _join_states(a, b):
    sa, sb = a[0], b[0]
    n = max(len(sa), len(sb))
    sa = sa + (UNKNOWN,) * (n - len(sa))
    sb = sb + (UNKNOWN,) * (n - len(sb))
    return tuple(join(x, y) for x, y in zip(sa, sb)), _join_locals(a[1], b[1])


# -- generic instructions ------------------------------------------------------------


def _n(ins: Instr) -> int:
    return ins.arg or 0


# How many stack inputs an instruction reads; outputs = inputs + stack effect.
POPS = {
    "POP_TOP": lambda i: 1,
    "BINARY_OP": lambda i: 2,
    "BINARY_SUBSCR": lambda i: 2,
    "BINARY_SLICE": lambda i: 3,
    "COMPARE_OP": lambda i: 2,
    "CONTAINS_OP": lambda i: 2,
    "UNARY_NEGATIVE": lambda i: 1,
    "UNARY_INVERT": lambda i: 1,
    "UNARY_POSITIVE": lambda i: 1,
    "UNARY_NOT": lambda i: 1,
    "TO_BOOL": lambda i: 1,
    "GET_ITER": lambda i: 1,
    "GET_LEN": lambda i: 1,
    "FORMAT_VALUE": lambda i: 1 + bool(_n(i) & 4),
    "FORMAT_SIMPLE": lambda i: 1,
    "FORMAT_WITH_SPEC": lambda i: 2,
    "CONVERT_VALUE": lambda i: 1,
    "BUILD_STRING": _n,
    "BUILD_TUPLE": _n,
    "BUILD_LIST": _n,
    "BUILD_SET": _n,
    "BUILD_MAP": lambda i: 2 * _n(i),
    "BUILD_CONST_KEY_MAP": lambda i: _n(i) + 1,
    "BUILD_SLICE": _n,
    "LIST_TO_TUPLE": lambda i: 1,
    "CALL_INTRINSIC_1": lambda i: 1,
    "CALL_INTRINSIC_2": lambda i: 2,
    "BEFORE_WITH": lambda i: 1,
    "DELETE_SUBSCR": lambda i: 2,
    "STORE_SUBSCR": lambda i: 3,
    "STORE_SLICE": lambda i: 4,
    "PUSH_EXC_INFO": lambda i: 1,
    "CHECK_EXC_MATCH": lambda i: 2,
    "GET_AWAITABLE": lambda i: 1,
}


def _generic(fl: Flow, ins: Instr) -> None:
    pops = POPS.get(ins.opname)
    n_in = pops(ins) if pops else max(0, -ins.stack_effect)
    inputs = fl.pop(n_in)
    out = derived(inputs)
    fl.push(*([out] * max(0, n_in + ins.stack_effect)))


# -- loads and stores ---------------------------------------------------------------


def _const(value) -> V:
    if isinstance(value, types.CodeType):
        return V("code", name=value.co_qualname)
    if value is None or isinstance(value, (bool, int, float, str, tuple)):
        return V("const", value=value if not isinstance(value, tuple) or len(value) < 64 else None)
    return UNKNOWN


def op_load_fast(fl, ins):
    fl.push(fl.locals.get(ins.argval, UNKNOWN))


def op_load_fast_pair(fl, ins):
    for name in ins.argval:
        fl.push(fl.locals.get(name, UNKNOWN))


def op_store_fast(fl, ins):
    (v,) = fl.pop()
    fl.locals[ins.argval] = v


def op_store_fast_load_fast(fl, ins):
    store, load = ins.argval
    (v,) = fl.pop()
    fl.locals[store] = v
    fl.push(fl.locals.get(load, UNKNOWN))


def op_store_fast_store_fast(fl, ins):
    first, second = ins.argval  # STORE_FAST first; STORE_FAST second
    below, top = fl.pop(2)
    fl.locals[first] = top
    fl.locals[second] = below


def op_delete_fast(fl, ins):
    fl.locals[ins.argval] = UNKNOWN


def op_load_const(fl, ins):
    fl.push(_const(ins.argval))


def op_return_const(fl, ins):
    fl.returned = join(fl.returned, UNKNOWN) if fl.returned.kind != "none" else UNKNOWN


def op_return_value(fl, ins):
    (v,) = fl.pop()
    fl.returned = v if fl.returned.kind == "none" else join(fl.returned, v)


def _global(fl, name: str) -> V:
    if name in fl.facts.defs:
        return fl.facts.defs[name]
    if name in fl.facts.globals:
        return fl.facts.globals[name]
    if name in sv.BUILTINS:
        return V("builtin", name=name)
    return UNKNOWN


def op_load_global(fl, ins):
    v = _global(fl, ins.argval)
    fl.push(NULL, v) if ins.push_null else fl.push(v)


def op_load_name(fl, ins):
    fl.push(fl.locals.get(ins.argval) or _global(fl, ins.argval))


def op_store_name(fl, ins):
    (v,) = fl.pop()
    fl.locals[ins.argval] = v
    if fl.code.co_name == "<module>" and ins.argval not in fl.facts.defs:
        old = fl.facts.globals.get(ins.argval)
        fl.facts.globals[ins.argval] = v if old is None else join(old, v)


def op_store_global(fl, ins):
    (v,) = fl.pop()
    old = fl.facts.globals.get(ins.argval)
    fl.facts.globals[ins.argval] = v if old is None else join(old, v)


def op_load_deref(fl, ins):
    fl.push(fl.locals.get(ins.argval, UNKNOWN))


# -- attributes ------------------------------------------------------------------------


def attribute(fl: Flow, obj: V, name: str) -> V:
    """The value of ``obj.name``."""
    if obj.kind == "tensor":
        if name in sv.TENSOR_META_ATTRS:
            return UNKNOWN
        if name in ("T", "mT", "H", "mH", "data", "grad", "real", "imag"):
            return obj
        return V("tmethod", obj.certain, name)
    if obj.kind == "mod":
        return V("mod", name=f"{obj.name}.{name}")
    if obj.kind == "ndarray":
        return UNKNOWN if name in ("shape", "dtype", "ndim", "size") else V("ndmethod", name=name)
    if obj.kind in ("self", "inst"):
        cls = obj.name
        if name in sv.REGISTER_METHODS:
            return V("register", value=cls)
        if name in fl.facts.methods.get(cls, ()):
            return V("bfunc", name=f"{cls}.{name}")  # bound: self is passed implicitly
        return fl.facts.class_attrs.get(cls, {}).get(name, UNKNOWN)
    if obj.kind == "tinst":  # attributes of torch modules: weights are tensors
        return TENSOR if name in ("weight", "bias") else UNKNOWN
    return UNKNOWN


def op_load_attr(fl, ins):
    (obj,) = fl.pop()
    fl.push(attribute(fl, obj, ins.argval))


def op_load_method(fl, ins):
    (obj,) = fl.pop()
    fl.push(attribute(fl, obj, ins.argval), NULL)


def op_store_attr(fl, ins):
    value, obj = fl.pop(2)  # TOS is the object, TOS1 the value stored
    if obj.kind in ("self", "inst"):
        attrs = fl.facts.class_attrs.setdefault(obj.name, {})
        attrs[ins.argval] = join(attrs[ins.argval], value) if ins.argval in attrs else value


def op_import_name(fl, ins):
    _level, fromlist = fl.pop(2)
    name = ins.argval
    fl.push(V("mod", name=name if fromlist.value else name.split(".")[0]))


def op_import_from(fl, ins):
    mod = fl.peek()
    fl.push(V("mod", name=f"{mod.name}.{ins.argval}") if mod.kind == "mod" else UNKNOWN)


# -- stack shuffles, containers, functions -----------------------------------------


def op_copy(fl, ins):
    fl.push(fl.peek(ins.arg))


def op_swap(fl, ins):
    n = ins.arg
    if len(fl.stack) >= n:
        fl.stack[-1], fl.stack[-n] = fl.stack[-n], fl.stack[-1]


def op_push_null(fl, ins):
    fl.push(NULL)


def op_unpack_sequence(fl, ins):
    (seq,) = fl.pop()
    if seq.kind == "tuple" and len(seq.value) == ins.arg:
        fl.push(*reversed(seq.value))  # the first item ends on top
    else:
        fl.push(*([derived([seq])] * ins.arg))


def op_unpack_ex(fl, ins):
    (seq,) = fl.pop()
    fl.push(*([derived([seq])] * ((ins.arg & 0xFF) + (ins.arg >> 8) + 1)))


def _append_into(n_items: int):
    def handler(fl, ins):
        items = fl.pop(n_items)
        i = ins.arg
        if len(fl.stack) >= i:
            fl.stack[-i] = derived([fl.stack[-i], *items]) if any(v.tainted for v in items) else fl.stack[-i]

    return handler


def op_for_iter(fl, ins):
    from .static_calls import element

    fl.push(element(fl.peek()))


def op_get_iter(fl, ins):
    (v,) = fl.pop()
    fl.push(v if v.kind in sv.STRUCTURED else derived([v]))


def op_build_tuple(fl, ins):
    items = fl.pop(ins.arg or 0)
    fl.push(V("tuple", value=tuple(items)) if len(items) <= 8 else derived(items))


def op_binary_subscr(fl, ins):
    container, key = fl.pop(2)
    if (
        container.kind == "tuple"
        and key.kind == "const"
        and isinstance(key.value, int)
        and -len(container.value) <= key.value < len(container.value)
    ):
        fl.push(container.value[key.value])
    else:
        fl.push(derived([container, key]))


def op_make_function(fl, ins):
    flags = ins.arg or 0
    n = 1 if PY >= (3, 13) else 1 + bin(flags & 0xF).count("1")
    got = fl.pop(n)
    code = got[-1]
    fl.push(V("func", name=code.name) if code.kind == "code" else UNKNOWN)


def op_set_function_attribute(fl, ins):
    _attr, func = fl.pop(2)
    fl.push(func)


def op_kw_names(fl, ins):
    # 3.11 and 3.12: the names tuple is a constant (3.11's dis does not resolve it).
    fl.kwnames = tuple(fl.code.co_consts[ins.arg])


def op_load_build_class(fl, ins):
    fl.push(V("buildclass"))


# -- branches -------------------------------------------------------------------------


def _test(fl: Flow, ins: Instr, v: V) -> None:
    if v.kind == "tensor":
        fl.predict(ins, BreakReason.DATA_DEPENDENT_BRANCH, "", v.certain)
    fl.steer(v)


def op_pop_jump_bool(fl, ins):
    (v,) = fl.pop()
    _test(fl, ins, v)


def op_jump_or_pop(fl, ins):
    (v,) = fl.pop()
    _test(fl, ins, v)


def op_pop_jump_none(fl, ins):
    fl.pop()


def op_format(fl, ins):
    """f-string formatting: of a tensor, it reads the tensor's data."""
    n = POPS[ins.opname](ins)
    items = fl.pop(n)
    if items and items[0].kind == "tensor":
        fl.predict(ins, BreakReason.DATA_DEPENDENT, "formatting a tensor in an f-string", items[0].certain)
    fl.push(UNKNOWN)


def op_unary_not(fl, ins):
    (v,) = fl.pop()
    fl.push(v if v.tainted else UNKNOWN)


def op_is_op(fl, ins):
    fl.pop(2)
    fl.push(UNKNOWN)


HANDLERS = {
    "LOAD_FAST": op_load_fast,
    "LOAD_FAST_CHECK": op_load_fast,
    "LOAD_FAST_AND_CLEAR": op_load_fast,
    "LOAD_FAST_LOAD_FAST": op_load_fast_pair,
    "STORE_FAST": op_store_fast,
    "STORE_FAST_LOAD_FAST": op_store_fast_load_fast,
    "STORE_FAST_STORE_FAST": op_store_fast_store_fast,
    "DELETE_FAST": op_delete_fast,
    "LOAD_CONST": op_load_const,
    "RETURN_CONST": op_return_const,
    "RETURN_VALUE": op_return_value,
    "LOAD_GLOBAL": op_load_global,
    "LOAD_NAME": op_load_name,
    "STORE_NAME": op_store_name,
    "STORE_GLOBAL": op_store_global,
    "LOAD_DEREF": op_load_deref,
    "LOAD_CLASSDEREF": op_load_deref,
    "STORE_DEREF": op_store_fast,
    "LOAD_ATTR": op_load_attr,
    "LOAD_METHOD": op_load_method,
    "STORE_ATTR": op_store_attr,
    "IMPORT_NAME": op_import_name,
    "IMPORT_FROM": op_import_from,
    "COPY": op_copy,
    "SWAP": op_swap,
    "PUSH_NULL": op_push_null,
    "UNPACK_SEQUENCE": op_unpack_sequence,
    "UNPACK_EX": op_unpack_ex,
    "LIST_APPEND": _append_into(1),
    "SET_ADD": _append_into(1),
    "LIST_EXTEND": _append_into(1),
    "SET_UPDATE": _append_into(1),
    "DICT_UPDATE": _append_into(1),
    "DICT_MERGE": _append_into(1),
    "MAP_ADD": _append_into(2),
    "FOR_ITER": op_for_iter,
    "GET_ITER": op_get_iter,
    "BUILD_TUPLE": op_build_tuple,
    "BINARY_SUBSCR": op_binary_subscr,
    "MAKE_FUNCTION": op_make_function,
    "SET_FUNCTION_ATTRIBUTE": op_set_function_attribute,
    "KW_NAMES": op_kw_names,
    "LOAD_BUILD_CLASS": op_load_build_class,
    "POP_JUMP_IF_TRUE": op_pop_jump_bool,
    "POP_JUMP_IF_FALSE": op_pop_jump_bool,
    "JUMP_IF_TRUE_OR_POP": op_jump_or_pop,
    "JUMP_IF_FALSE_OR_POP": op_jump_or_pop,
    "POP_JUMP_IF_NONE": op_pop_jump_none,
    "POP_JUMP_IF_NOT_NONE": op_pop_jump_none,
    "UNARY_NOT": op_unary_not,
    "IS_OP": op_is_op,
    "FORMAT_VALUE": op_format,
    "FORMAT_SIMPLE": op_format,
    "FORMAT_WITH_SPEC": op_format,
    "PRECALL": lambda fl, ins: None,
}


def _register_calls():
    from .static_calls import op_call, op_call_function_ex, op_call_kw

    HANDLERS.update(CALL=op_call, CALL_KW=op_call_kw, CALL_FUNCTION_EX=op_call_function_ex)


_register_calls()
