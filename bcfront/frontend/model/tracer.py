"""Per-capture state: graph, guards, journal, side effects, torch state, frames.

One `Tracer` lives for one symbolic execution of one function.  It owns

* the `Graph` being recorded and the `GuardSet`;
* the `Journal`, an undo log of every change to mutable symbolic state, so an
  inlined call that ends in a graph break can be rolled back to the call site
  (the caller is not retraced);
* `mutated`: the outside objects (and globals dicts, cells) written during the
  trace, in first-write order, replayed after the region;
* the fake-tensor environment and the symbolic torch state (grad mode, autocast),
  both created only when the first tensor shows up (no torch otherwise).
"""

from __future__ import annotations

import types

from ...errors import UnsupportedError
from ...ir.graph import Graph, Loc
from ...options import capture_options
from ...reasons import BreakReason
from ...report import UserFrame
from .guard_kinds import GuardKind
from .guards import Guard, GuardSet
from .source_lines import source_line
from .sources import Ref

INLINE_DEPTH_LIMIT = 24  # recursion is inlined this deep, then breaks
STEP_LIMIT = 500_000  # instructions per capture before giving up


_FRAMES: dict = {}  # (function, file, line) -> report.UserFrame, shared by all captures


class SymbolicRaise(Exception):
    """A Python exception raised inside the traced code (carries an ExceptionV)."""

    def __init__(self, exc):
        super().__init__(exc)
        self.exc = exc


class Journal:
    """Undo log for attribute writes on symbolic state."""

    __slots__ = ("log",)

    def __init__(self):
        self.log: list = []

    def set(self, obj, attr: str, value) -> None:
        self.log.append((obj, attr, getattr(obj, attr)))
        setattr(obj, attr, value)

    def mark(self) -> int:
        return len(self.log)

    def rollback(self, mark: int) -> None:
        log = self.log
        while len(log) > mark:
            obj, attr, old = log.pop()
            setattr(obj, attr, old)


def _released() -> None:
    raise AssertionError("the items of an outside list or dict were read after its trace was released")


class Checkpoint:
    __slots__ = ("journal", "nodes", "steps")

    def __init__(self, journal, nodes, steps):
        self.journal, self.nodes, self.steps = journal, nodes, steps


class Tracer:
    def __init__(self, name: str, root_globals: dict, options=None):
        self.graph = Graph(name)
        self.guards = GuardSet()
        self.journal = Journal()
        self.options = capture_options(options or {})
        self.root_globals = root_globals
        self.globals_refs: dict[int, Ref] = {id(root_globals): Ref(root_globals, "G")}
        self.mutated: tuple = ()  # values whose outside object must be updated
        self.write_watchers: tuple = ()  # (tx, value) -> None, may break: called on each write
        self.by_id: dict[int, object] = {}  # id(real object) -> its value (identity)
        self.keepalive: list = []
        self.frames: list = []  # the symbolic call stack (root first)
        self.steps = 0
        self.notes: list[str] = []
        self.fakes = None  # fake.FakeEnv once a tensor is seen
        self.shape_policy = None  # shape_policy.ShapePolicy of the captured function
        self.dynamic = False  # the fake env is a dynamic one (symbolic sizes; `NeedDynamic`)
        self.shape_inputs: dict = {}  # placeholder name -> source, of inputs with symbols
        self.strict_marks: dict = {}  # placeholder name -> dims the user marked with mark_dynamic
        self.state = None  # fake.TorchState (symbolic) once torch is seen
        self.torch_state_guarded = False  # `torch_env` guarded the torch state (grad mode, ...)
        self.static_ints = False  # int arguments stay constants (`driver.IntsStaticAgain`)
        self.entry_state = None
        self.exc_info = None  # the exception being handled (sys.exc_info())
        # id(real exception object raised in the trace) -> the traceback entries its raising
        # added, outermost first (an `ExceptionV` keeps its own: `tb`); the region adds them
        self.object_tbs: dict[int, tuple] = {}
        self.input_tensors: list = []
        self.real_tensors: dict[int, object] = {}  # id(TensorV) -> real input tensor
        self.has_mutation = False  # some graph op mutates a tensor in place
        self.globals_values: dict[int, object] = {}  # id(globals dict) -> GlobalsV
        self.no_inline: set = set()  # code objects that must be called, not inlined
        self.root_cp = None  # checkpoint before the root frame's current instruction
        self.suspended_in_try: list = []  # generators that yielded inside try/with (O54)
        # ids of real objects only this trace can reach (a class statement's template class):
        # they change only through the trace, so a guard on what they hold checks nothing
        self.private: set[int] = set()
        # `instancecheck.AbcAnswers`: the ABCMeta answers the trace used (classes only)
        self.abc_answers = None

    # -- torch --------------------------------------------------------------------
    def symbol_env(self):
        """The fake environment for symbolic Python ints alone (an int argument that changed
        between calls, in a function that may touch no tensor): made without the torch state
        guards, which only tensor work needs -- `torch_env`, called by everything that makes
        or reads tensors or torch state, adds them when it is first called."""
        if self.fakes is None:
            from ...ir.fake import FakeEnv, TorchState

            self.fakes = FakeEnv(dynamic=self.dynamic)
            self.state = self.entry_state = TorchState.current()
            self.torch_state_guarded = False
        return self.fakes

    def torch_env(self):
        """The fake-tensor environment (imports torch on first use), its torch state guarded."""
        if not self.torch_state_guarded:
            self.symbol_env()
            self.torch_state_guarded = True
            self.add_guard(Guard(GuardKind.GLOBAL_STATE, None, self.state.grad, "grad"))
            import torch

            # factories and Python scalars promoted to tensors follow the default dtype
            self.add_guard(Guard(GuardKind.GLOBAL_STATE, None, torch.get_default_dtype(), "dtype"))
            any_autocast = torch._C._is_any_autocast_enabled()
            self.add_guard(Guard(GuardKind.GLOBAL_STATE, None, any_autocast, "autocast"))
            if any_autocast:
                raise UnsupportedError(BreakReason.AUTOCAST, "capture under an enclosing autocast region")
            self.add_guard(Guard(GuardKind.GLOBAL_STATE, None, self.state.inference, "inference"))
            tf_mode = torch._C._is_torch_function_mode_enabled()
            self.add_guard(Guard(GuardKind.GLOBAL_STATE, None, tf_mode, "torch_function_mode"))
            if tf_mode:
                raise UnsupportedError(BreakReason.TORCH_FUNCTION_MODE, "capture under a TorchFunctionMode")
            # a user's dispatch mode would see the trace's fake tensors (it runs before FakeTensorMode)
            depth = torch._C._len_torch_dispatch_stack()
            self.add_guard(Guard(GuardKind.GLOBAL_STATE, None, depth, "dispatch_mode"))
            if depth:
                raise UnsupportedError(BreakReason.TORCH_DISPATCH_MODE, "capture under a TorchDispatchMode")
        return self.fakes

    def guard_cudnn(self) -> None:
        """Graphs that baked in torch.backends.cudnn.enabled (layer_norm lowering) guard it."""
        import torch.backends.cudnn as cudnn

        from .sources import AttrSource, ConstSource

        enabled = AttrSource(ConstSource(Ref(cudnn, "torch.backends.cudnn")), "enabled")
        self.guard(GuardKind.CONSTANT_MATCH, enabled, cudnn.enabled)

    def node_state(self):
        """The state to record on a new node (None when it equals the entry state)."""
        return None if self.state == self.entry_state else self.state

    # -- guards -------------------------------------------------------------------
    def add_guard(self, guard: Guard) -> None:
        if guard.key in self.guards:
            return
        if guard.first_use is None and self.frames:
            guard = Guard(
                guard.kind, guard.source, guard.expected, guard.extra, self.report_frame(), guard.example
            )
        self.guards.add(guard)

    def guard(self, kind, source, expected=None, extra=None, example=None) -> None:
        if source is None and kind != GuardKind.GLOBAL_STATE:
            return
        if source is not None and not source.guardable:  # made by the region with an effect
            raise UnsupportedError(BreakReason.UNREAD_ITEMS, f"a check of {source.readable()}")
        if self.private and id(getattr(getattr(source.root, "value", None), "obj", None)) in self.private:
            return
        self.add_guard(Guard(kind, source, expected, extra, None, example))

    def release(self) -> None:
        """Drop the trace's hold on the call's real objects, once the entry is built (or the
        trace given up).  A finished tracer can stay in reference cycles (closures and bound
        methods of the objects that built the entry) until the cyclic collector runs; a real
        tensor kept so keeps, from C++ where that collection cannot see, what its autograd
        graph holds (an FSDP module's hooks and, through them, the module: O60)."""
        self.keepalive.clear()
        self.by_id.clear()
        for v in self.__dict__.pop("unread_lists", ()):  # (each reader holds its real list or dict)
            if v.unread is not None:
                v.unread = _released

        self.real_tensors.clear()
        self.guards.drop_examples()
        if self.fakes is not None:
            self.fakes.release()

    # -- locations ------------------------------------------------------------------
    def loc(self) -> Loc | None:
        if not self.frames:
            return None
        f = self.frames[-1]
        ins = f.cur
        lineno = ins.lineno if ins is not None else f.code.co_firstlineno
        line = source_line(f.code.co_filename, lineno)
        return Loc(f.code.co_filename, lineno, f.code.co_name, line)

    def report_frame(self, f=None) -> UserFrame:
        f = f or self.frames[-1]
        lineno = f.cur.lineno if f.cur is not None else f.code.co_firstlineno
        key = (f.name, f.code.co_filename, lineno)
        hit = _FRAMES.get(key)
        if hit is None:
            line = source_line(f.code.co_filename, lineno)
            hit = _FRAMES[key] = UserFrame(f.name, f.code.co_filename, lineno, line)
            if len(_FRAMES) > 50_000:
                _FRAMES.clear()
        return hit

    def user_stack(self) -> tuple[UserFrame, ...]:
        return tuple(self.report_frame(f) for f in self.frames)

    # -- journal / checkpoints ----------------------------------------------------------
    def checkpoint(self) -> Checkpoint:
        return Checkpoint(self.journal.mark(), len(self.graph.body), self.steps)

    def rollback(self, cp: Checkpoint) -> None:
        self.journal.rollback(cp.journal)
        self.graph.truncate(cp.nodes)

    def set(self, obj, attr, value) -> None:
        self.journal.set(obj, attr, value)

    def trace_value(self, attr: str, make, mutated: bool = True):
        """The one value of this trace kept as attribute `attr` (a log of calls or writes
        the region replays), made by `make()` on first use -- through the journal, so a
        rolled-back call drops it -- and, with `mutated`, marked so the region replays it."""
        value = getattr(self, attr, None)
        if value is None:
            value = make()
            if not hasattr(self, attr):
                setattr(self, attr, None)  # the journal restores what was there
            self.set(self, attr, value)
            if mutated:
                self.mark_mutated(value)
        return value

    def mark_mutated(self, value) -> None:
        """Record that the outside object behind `value` changes (replayed after the region)."""
        from .effects import note

        for watch in self.write_watchers:
            watch(self, value)
        note(self, value)  # the effect log explain shows (kind, target, line)
        if not any(v is value for v in self.mutated):
            self.set(self, "mutated", self.mutated + (value,))

    def globals_ref(self, g: dict) -> Ref:
        ref = self.globals_refs.get(id(g))
        if ref is None:
            ref = Ref(g, g.get("__name__", "?") if isinstance(g, dict) else "?")
            self.globals_refs[id(g)] = ref
        return ref

    def unsupported(self, reason: BreakReason, message: str):
        raise UnsupportedError(reason, message)


def is_function(obj) -> bool:
    return isinstance(obj, types.FunctionType)


def remember(tx, obj, value, source=None) -> None:
    """`value` is what outside object `obj` is in this trace: one value however it is
    reached again (``tx.by_id``), the object kept alive while the trace holds its id.
    (`source`, unused, fits the wrappers' ``remember`` callback: `builder.wrap`'s.)"""
    tx.by_id[id(obj)] = value
    tx.keepalive.append(obj)
