"""Graph breaks: compile the region before the break, run the instruction, continue captured.

At a break the root frame is rolled back to the start of the breaking
instruction (an inlined callee that broke is rolled back as a whole: the
journal undoes its effects, the graph drops its nodes -- no retrace).  The
entry's region function then

1. runs the graph so far and rebuilds the stack and the live locals (liveness
   from the analyzer) from graph outputs, sources and constants;
2. replays the outside writes made so far and sets the torch state (grad mode)
   to the one at the break;
3. runs the instruction natively (`native`): a call (through the callee's own
   capture when the break happened inside it), a branch on a tensor, an
   iteration step, an operator, ...; an exception it raises inside a
   try block goes to a continuation starting at the handler;
4. goes on in a *continuation*: the original bytecode resumed after the
   instruction (`resume.make_resume`), itself wrapped by `capture` and so
   captured on its first call, with its own guards, graphs and breaks.

Continuations are cached per (function, offset, stack layout, live locals) in
the captured function that made them (shared with its continuations).  They
run as tail calls (`tailcalls`): a continuation's region returns the next
continuation and its arguments, and the outermost captured call runs the
chain in a loop, so the stack does not grow with the number of breaks.  A
continuation re-entering one already on its chain (a break inside a loop)
goes through that one's `LoopEntry`: cached entries on every iteration (a
``while`` on a tensor condition stays compiled), a few new captures, then the
rest of the loop natively when the guards change every iteration (an int
counter, an iterator position).

The function's cell variables cross a break as the cell objects themselves:
the region rebuilds each cell once (closures rebuilt with it hold the same
one) and passes it, and the continuation's cell slots hold exactly those
cells (no MAKE_CELL; `cells` guards what is read through them, not their
identity, and wraps closures passed in by code), so closures made before or
after the break and ``nonlocal`` writes on either side stay in sync.  A
generator the trace created is rebuilt by calling its function again
(`rebuild_gen`: an unstarted one; a started generator expression over its
advanced iterator; a started generator whose steps are pure, advanced again
natively); an autocast state entered by with-blocks is re-entered by
rebuilding their managers.  Whatever cannot be rebuilt or run
on its own makes the whole function run natively under the guards so far,
with the reason in explain.
"""

from __future__ import annotations

import functools
import sys
import types
import weakref

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.values import NULL, CellV, Const, MethodV, StateCMV
from .caller_frames import calling_through
from .entry import Entry, RegionCode, break_record, native_entry
from .hidden_frames import hide, step_lines
from .native import Ctx, native_outcomes
from .rebuild_gen import UnrebuildableGenerator
from .resume import make_resume, super_first, super_self
from .tailcalls import LOOP_RECAPTURES, LoopEntry, TailCall, run_chain
from .tracebacks import set_context

_LIVENESS: dict = {}


def compile_break(cf, root, tx, err, frame) -> Entry:
    rec = break_record(err)
    if err.reason == BreakReason.FRAME_INTROSPECTION:
        # locals(), sys._getframe(), eval(): only the function's own frame gives the right
        # answer, so no region and no continuation -- the whole function runs natively.
        return native_entry(cf, root, tx, notes=[err.message], breaks_=[rec])
    try:
        return _compile(cf, root, tx, err, frame, rec)
    except UnrebuildableGenerator as why:
        offset = _enclosing_with(tx, frame)
        if offset is not None and tx.__dict__.get("enter_natively") is None:
            raise EnterNatively(offset) from None
        note = f"no continuation after the break at line {rec.lineno}: {why.message}"
        return native_entry(cf, root, tx, notes=[note], breaks_=[rec])
    except UnsupportedError as why:
        note = f"no continuation after the break at line {rec.lineno}: {why.message}"
        return native_entry(cf, root, tx, notes=[note], breaks_=[rec])


class EnterNatively(Exception):
    """Raised while building a break's continuation that needs a generator the trace cannot
    rebuild -- a ``@contextmanager``'s, suspended in the root frame's ``with`` block around
    the break: trace again with a graph break at that ``with`` (`offset`), so the context
    manager is entered natively and the continuation holds the real one."""

    def __init__(self, offset: int):
        super().__init__(offset)
        self.offset = offset


def _enclosing_with(tx, frame) -> int | None:
    """The offset of the innermost ``with`` of the root frame (entered in this trace) whose
    block holds the break instruction, or None."""
    ins = frame.cur
    if ins is None:
        return None
    covering = set()
    h = frame.bc.handler_for(ins.offset)
    for _ in range(128):  # the handler chain out of the break, innermost first
        if h is None:
            break
        covering.add(h.target)
        h = frame.bc.handler_for(h.target)
    for offset in reversed(tx.__dict__.get("root_withs", ())):
        try:
            after = frame.instrs[frame.bc.index_of(offset) + 1]
        except (KeyError, IndexError):
            continue
        guard = frame.bc.handler_for(after.offset)  # the with block's cleanup
        if guard is not None and guard.target in covering and offset < ins.offset:
            return offset
    return None


def origin(fn):
    """(original function, offset map) of a continuation; (fn, None) for anything else."""
    info = getattr(fn, "__bcfront_resume__", None)
    return info if info is not None else (fn, None)


def _live(code, offset) -> set | None:
    key = (code, offset)
    hit = _LIVENESS.get(key)
    if hit is None:
        try:
            from ...analysis import analyze

            hit = set(analyze(code).liveness.live_before(offset))
        except Exception:  # noqa: BLE001 - analyzer unavailable or failed: pass every bound local
            hit = None
        if len(_LIVENESS) > 10000:
            _LIVENESS.clear()
        _LIVENESS[key] = hit
    return hit


def _compile(cf, root, tx, err, frame, rec) -> Entry:
    if tx.root_cp is None or frame.cur is None:
        raise UnsupportedError(BreakReason.NO_CONTINUATION, "the break happened before the first instruction")
    tx.rollback(tx.root_cp)
    stack = list(frame.snap)
    ins = frame.cur
    orig, offmap = origin(root)
    to_orig = (lambda off: offmap[off]) if offmap is not None else (lambda off: off)
    code = orig.__code__
    region = RegionCode(root, tx)
    ns, tail, rb, prefix = region.ns, region.tail, region.rb, region.prefix
    rb.has_mutation = tx.has_mutation  # a started generator's replay reads its tensors
    slot_exprs = []
    for v in stack:
        if v is NULL:
            slot_exprs.append(None)
        else:
            e = rb.expr(v)
            name = ns.fresh("s")
            tail.append(f"    {name} = {e}")
            slot_exprs.append(name)
    local_exprs: dict[str, str] = {}

    def local_expr(name):
        if name not in local_exprs:
            v = frame.locals[name]
            if isinstance(v, CellV):
                v = v.contents
            e = rb.expr(v)
            temp = ns.fresh(f"l_{name}")
            tail.append(f"    {temp} = {e}")
            local_exprs[name] = temp
        return local_exprs[name]

    def live_names(offset):
        cells = set(code.co_cellvars)  # passed as cells (below), bound or not
        bound = [
            n
            for n in code.co_varnames
            if n in frame.locals and n not in cells and not n.startswith("___stack")
        ]
        live = _live(code, to_orig(offset))
        # zero-argument super() reads the first local, which liveness does not see
        keep = super_self(code)
        return [n for n in bound if live is None or n in live or n == keep]

    cell_exprs = [
        rb.expr(frame.locals[n])
        if isinstance(frame.locals.get(n), CellV)
        else f"{ns.const(types.CellType, 'CellType')}()"
        for n in code.co_cellvars
    ]

    kw = frame.snap_kw
    if ins.op == "CALL_KW":
        names_v = stack[-1]
        kw = names_v.value if isinstance(names_v, Const) else None
    handler = frame.bc.handler_for(ins.offset)
    native_lines: list[str] = []
    children: list = []
    callee = caller = None
    if _from_callee(err) and err.reason != BreakReason.RECURSION_LIMIT:
        # a callee that broke is captured on its own; past the inlining depth limit the
        # recursion runs plain (a capture per level would cost frames per level)
        site_name = ns.const(CallSite(cf, children), "call_captured")
        callee = lambda fn: f"{site_name}({fn})"  # noqa: E731
        caller = lambda fn, args, kw: f"{callee(fn)}(*{args}" + (f", **{kw})" if kw else ")")  # noqa: E731
    if isinstance(frame.globals, dict):  # the callee's caller is the user's frame, as natively
        positions = tuple(ins.positions) if ins.positions else (None, None, None, None)
        caller = calling_through(ns, code, positions, frame.globals, callee)
    ctx = Ctx(ins, slot_exprs, ns, native_lines, frame.bc, kw, caller=caller, values=stack)
    outcomes = native_outcomes(ctx)
    resolved = []
    for oc in outcomes:
        live = live_names(oc.offset)
        for n in live:
            local_expr(n)
        resolved.append((oc, live))
    if handler is not None:
        h_live = live_names(handler.target)
        for n in h_live:
            local_expr(n)
    pending = rb.replay(tx.mutated)
    tail.extend("    " + p for p in pending)
    if tx.torch_state_guarded:  # (a capture of symbolic ints alone changed no torch state)
        import torch

        tail.append(f"    {ns.const(torch._C._set_grad_enabled, 'set_grad_enabled')}({tx.state.grad!r})")
        if tx.state.autocast != tx.entry_state.autocast and not _autocast_reentered(stack, tx):
            raise UnsupportedError(
                BreakReason.NO_CONTINUATION,
                "a break inside an autocast region entered other than by a with-block",
            )

    exc_slots = tuple(i for i in frame.exc_slots if i < len(stack) and stack[i] is not NULL)
    exc_info_expr = None
    if exc_slots:
        if tx.exc_info is None:
            raise UnsupportedError(
                BreakReason.NO_CONTINUATION, "inside an except block with no handled exception"
            )
        exc_info_expr = ns.fresh("exc_info")
        tail.append(f"    {exc_info_expr} = {rb.expr(tx.exc_info)}")

    tail_call = ns.const(TailCall, "TailCall")

    def cont_call(offset, stack_exprs, live) -> list[str]:
        """Statements going on in the continuation: a continuation returns it as a tail call,
        the outermost captured call runs the chain (`tailcalls`)."""
        nulls = [e is None for e in stack_exprs]
        slots = tuple(i for i in exc_slots if i < len(stack_exprs) and stack_exprs[i] is not None)
        target = continuation(cf, orig, to_orig(offset), nulls, live, children, slots)
        params = (
            [("", e) for e in stack_exprs if e is not None]
            + ([("", exc_info_expr)] if slots else [])
            + [(n, local_exprs[n]) for n in live]
            + list(zip(code.co_cellvars, cell_exprs))
        )
        args = [e for _, e in super_first(code, params)]
        if getattr(cf, "tail_calls", False):
            return [f"return {tail_call}(({', '.join([ns.const(target, 'resume')] + args)},))"]
        r = ns.fresh("r")
        return [
            f"{r} = {ns.const(target, 'resume')}({', '.join(args)})",
            (
                f"return {r} if {ns.helper('type')}({r}) is not {tail_call} "
                f"else {ns.const(run_chain, 'run_chain')}({r})"
            ),
        ]

    where = tuple(ins.positions) if ins.positions else (None,) * 4
    if where[0] is not None and (caller is None or ins.op not in ("CALL", "CALL_KW", "CALL_FUNCTION_EX")):
        # run in the region's frame, not from the stand-in of the user's: what it raises
        # gets the user's frame at the break (`hidden_frames`)
        native_lines = step_lines(ns, prefix, native_lines, (code.co_filename, code.co_name, where))
    if exc_info_expr is not None:  # natively in an except block: what it raises has that context
        native_lines = [
            "try:",
            *("    " + line for line in native_lines),
            f"except {ns.helper('BaseException')} as {prefix}native_exc:",
            f"    {ns.const(set_context, 'set_context')}({prefix}native_exc, {exc_info_expr})",
            "    raise",
        ]
    if handler is not None:
        tail.append("    try:")
        tail.extend("        " + line for line in native_lines)
        tail.append(f"    except {ns.helper('BaseException')} as {prefix}exc:")
        # the user's handler sees the frames it sees natively, not the region's (`hidden_frames`)
        tail.append(f"        {ns.const(hide, 'hide_frames')}({prefix}exc)")
        h_stack = (
            slot_exprs[: handler.depth] + ([repr(ins.offset)] if handler.lasti else []) + [f"{prefix}exc"]
        )
        tail.extend("        " + line for line in cont_call(handler.target, h_stack, h_live))
    else:
        tail.extend("    " + line for line in native_lines)
    for oc, live in resolved:
        call = cont_call(oc.offset, oc.stack, live)
        if oc.condition is not None:
            tail.append(f"    if {oc.condition}:")
            tail.extend(f"        {line}" for line in call)
        else:
            tail.extend(f"    {line}" for line in call)
    if not resolved:
        tail.append(f"    raise {ns.helper('RuntimeError')}('unreachable: the native instruction raises')")
    return region.finish(cf, "(break)", breaks=[rec], children=children)


def _autocast_reentered(stack, tx) -> bool:
    """Whether rebuilding the stack re-enters exactly the autocast state of the break: the
    region runs in the entry state, and each with-block's manager on the stack (its
    ``__exit__``) is rebuilt entered, outermost first (`torch_state.rebuild_state_cm`)."""
    entered = []
    for v in stack:
        cm = v.obj if isinstance(v, MethodV) else v
        if isinstance(cm, StateCMV) and cm.kind == "autocast" and cm.saved:
            entered.append(cm.args)
    base = tx.entry_state.autocast
    return tx.state.autocast[: len(base)] == base and tuple(entered) == tx.state.autocast[len(base) :]


def _from_callee(err) -> bool:
    """A break inside an inlined callee, or at a call that runs through the callee's own
    capture (an FSDP module's, `semantics.fsdp_calls`)."""
    return len(getattr(err, "user_stack", None) or ()) > 1 or getattr(err, "own_capture", False)


class CallSite:
    """At a break inside an inlined callee: call the callee through its own capture.

    A capture belongs to one function object.  A function made anew on every call (a
    closure) would get a capture per call, each kept as a child: past `FRESH_LIMIT`
    objects with one code the call runs natively instead."""

    FRESH_LIMIT = 2

    def __init__(self, cf, children):
        self.cf = cf
        self.children = children
        self._cache = weakref.WeakKeyDictionary()
        self._per_code: dict = {}
        self._by_code: dict = {}  # code -> (capture, globals) of a function with no state

    def _same_code(self, target, code):
        """The capture made for another function object with this code, when neither holds
        anything else (no closure, defaults or attributes: a comprehension's function, made
        anew on every call), and the same globals: it runs exactly the same."""
        hit = self._by_code.get(code) if code is not None else None
        if hit is not None and hit[1] is target.__globals__ and _stateless(target):
            return hit[0]
        return None

    def __call__(self, fn):
        import types

        target = fn.__func__ if isinstance(fn, types.MethodType) else fn
        if not isinstance(target, types.FunctionType) and not _is_module(fn):
            return fn
        if fn is getattr(self.cf, "target", None):
            return fn  # the capture of this very module broke at its own call: once natively
        try:
            cap = self._cache.get(target)
        except TypeError:
            return fn
        if cap is None:
            code = getattr(target, "__code__", None)  # None: a module
            cap = self._same_code(target, code)
        if cap is None:
            seen = self._per_code.get(code, 0)
            if code is not None and seen >= self.FRESH_LIMIT:
                # a function made anew on every call (a closure): capturing each would
                # never hit a cache, so it runs natively, and the report says so
                self.cf.fall_back(
                    "recompile-limit",
                    f"{target.__qualname__} is a new function on every call (a closure made "
                    f"by the captured code); after {self.FRESH_LIMIT} captures it runs natively",
                    code.co_filename,
                    code.co_firstlineno,
                )
                return fn
            self._per_code[code] = seen + 1
            cap = type(self.cf)(
                target,
                backend=self.cf.backend,  # capture's class, see continuation
                recompile_limit=self.cf.recompile_limit,
                **self.cf.options,
            )
            self._cache[target] = cap
            self.children.append(cap)
            if _stateless(target):
                self._by_code[code] = (cap, target.__globals__)
        if isinstance(fn, types.MethodType):
            return lambda *a, **k: cap(fn.__self__, *a, **k)
        return cap


def _stateless(fn) -> bool:
    """A function whose behaviour is its code and globals only."""
    if not isinstance(fn, types.FunctionType):
        return False
    return (
        fn.__closure__ is None and fn.__defaults__ is None and fn.__kwdefaults__ is None and not fn.__dict__
    )


def _is_module(obj) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def continuation(cf, orig, offset, nulls, live, children, exc_slots=()):
    """The captured continuation of `orig` at `offset` (cached), or its `LoopEntry` when it is
    already on this chain (a loop around a break: its cached entries, few new captures)."""
    family = cf.continuations  # shared by a captured function and its continuations
    per = family.get(orig)
    if per is None:
        per = family[orig] = {}
    key = (offset, tuple(nulls), tuple(live), exc_slots)
    hit = per.get(key)
    if hit is None:
        fn = make_resume(orig, offset, nulls, live, f"{orig.__name__}_resume_at_{offset}", exc_slots)
        # `cf`'s own class (capture's CapturedFunction): regions do not import the API above
        cap = type(cf)(fn, backend=cf.backend, recompile_limit=cf.recompile_limit, **cf.options)
        cap.continuations = family
        cap.tail_calls = True  # its region returns TailCall markers
        cap.chain = getattr(cf, "chain", frozenset()) | {(orig.__code__, key)}
        hit = per[key] = (cap, LoopEntry(cap, fn, functools.partial(native_loop, cap, orig, key, fn)))
    cap, loop = hit
    chain = getattr(cf, "chain", frozenset())
    if (orig.__code__, key) in chain:
        return loop
    if cap not in children:
        children.append(cap)
    return cap


# -- the rest of a loop, natively, then captured again after it ---------------------------------


def _line(code, offset) -> int:
    from ..model.frame import decoded

    bc, index = decoded(code)
    return bc.instructions[index[offset]].positions[0] or code.co_firstlineno


def _note(cap, text: str) -> None:
    if text not in cap.notes:
        cap.notes.append(text)


def native_loop(cap, orig, key, fn):
    """What `LoopEntry` runs once the continuation `cap` (of `orig` at ``key[0]``, plain
    resume function `fn`) stopped capturing from inside its loop: a `NativeLoop` whose code
    after the loop is captured again, else `fn` (the rest of the function natively).  The
    function's notes say which, and why."""
    offset = key[0]
    code = orig.__code__
    where = f"{orig.__qualname__} ({code.co_filename}:{_line(code, offset)})"
    last = cap.recompiles[-1].guard if cap.recompiles else None
    why = f"its guards changed on every iteration{f' ({last})' if last else ''}"
    line = _line(code, offset)

    def report(rest: str) -> None:  # in the notes, and a native fallback (warned once)
        text = f"{where}: after {LOOP_RECAPTURES} captures from inside its loop ({why}) {rest}"
        _note(cap, text)
        cap.fall_back("loop-limit", text, code.co_filename, line)

    try:
        loop = NativeLoop(cap, orig, key)
    except UnsupportedError as e:
        report(f"the rest of the function runs natively: {e.message}")
        return fn
    after = ", ".join(f"line {n}" for n in sorted({_line(code, x) for x in loop.exits}))
    report(f"the rest of the loop runs natively; captured again after the loop ({after})")
    return loop


def _past_end_for(bc, offset: int) -> int:
    """Where an exhausted FOR_ITER really goes on: 3.12+ jump to END_FOR, but the
    interpreter skips it (3.13: it and the POP_TOP after it); code inserted just before
    the instruction after them is what runs first."""
    k = bc.index_of(offset)
    if bc.instructions[k].opname != "END_FOR":
        return offset
    k += 1
    if sys.version_info >= (3, 13) and bc.instructions[k].opname == "POP_TOP":
        k += 1
    return bc.instructions[k].offset


class NativeLoop:
    """The rest of a loop run natively, the code after it captured again.

    Its function is the loop continuation's code with a hand-off before each instruction
    the innermost loop around the continuation's start exits to (`resume.make_resume`'s
    `exits`).  The hand-off reads the locals bound there (those live after it) from the
    runner's frame and returns a tail call to the captured continuation at that spot, with
    the runner's stack and cells; where that continuation cannot be made, the instruction
    runs natively and so does the rest of the function (noted)."""

    def __init__(self, cap, orig, key):
        from ...analysis import analyze

        offset, nulls, live, exc_slots = key
        self.cap, self.orig = cap, orig
        code = orig.__code__
        fa = analyze(code)
        loop = fa.loops.loop_of(fa.cfg.block_of(offset).start)
        if loop is None:
            raise UnsupportedError(BreakReason.NO_CONTINUATION, "the cycle is not a natural loop")
        bc = fa.bytecode
        handlers = {e.target for e in bc.exception_table}
        kinds = {(e.src, e.dst): e.kind for e in fa.cfg.edges}
        exits: dict[int, tuple[int, int]] = {}
        for src, dst in loop.exits:
            if kinds.get((src, dst)) == "exception" or dst in handlers:
                continue
            dst = _past_end_for(bc, dst)
            depth = fa.stack.depth_before(dst)
            entry = bc.handler_for(dst)
            keep = entry.depth if entry is not None else 0
            if depth < 0 or depth > len(nulls) or any(nulls[:depth]) or any(i < depth for i in exc_slots):
                continue  # the stack there is not a plain prefix of the one we have
            if keep > depth:
                continue
            exits[dst] = (depth, keep)
        if not exits:
            raise UnsupportedError(BreakReason.NO_CONTINUATION, "no exit of the loop can be resumed")
        self.exits = exits
        self.fn = make_resume(
            orig, offset, list(nulls), list(live), f"{orig.__name__}_loop_at_{offset}", exc_slots, exits
        )
        cells = set(code.co_cellvars)
        self.live = {}
        keep_self = super_self(code)
        for x in exits:
            at = _live(code, x)
            self.live[x] = [
                n for n in code.co_varnames if n not in cells and (at is None or n in at or n == keep_self)
            ]
        params = self.fn.__code__.co_varnames[: self.fn.__code__.co_argcount]
        self.cell_pos = [params.index(c) for c in code.co_cellvars]
        self.failed: set = set()
        entries = cap.entries
        self.children = entries[-1].children if entries else []

    def __call__(self, *args):
        cells = tuple(args[i] for i in self.cell_pos)
        return self.fn(*args, functools.partial(self.exit, cells))

    def exit(self, cells, high, low, x):
        """At `x`, just after the loop: (True, tail call to its continuation) or (False, the
        stack's `high` slots reversed, to run on natively).  Raises nothing."""
        try:
            f_locals = sys._getframe(1).f_locals
            live = [n for n in self.live[x] if n in f_locals]
            depth = len(low) + len(high)
            lk = (x, tuple(live))
            if lk in self.failed:
                return False, high[::-1]
            code = self.orig.__code__
            try:
                target = continuation(self.cap, self.orig, x, [False] * depth, live, self.children)
            except UnsupportedError as e:
                self.failed.add(lk)
                _note(
                    self.cap,
                    f"{self.orig.__qualname__} ({code.co_filename}:{_line(code, x)}): no continuation "
                    f"after the loop ({e.message}); the rest of the function runs natively",
                )
                return False, high[::-1]
            params = (
                [("", v) for v in low + high]
                + [(n, f_locals[n]) for n in live]
                + list(zip(code.co_cellvars, cells))
            )
            return True, TailCall((target, *[v for _, v in super_first(code, params)]))
        except Exception:  # noqa: BLE001 - the hand-off must not raise: go on natively instead
            return False, high[::-1]
