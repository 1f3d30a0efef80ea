"""`bcfront.capture`: the cache of compiled entries around a function, bound method or module.

A `CapturedFunction` keeps a list of entries (each a generated guard function
and a generated region function).  A call tries the entries in order; the
first whose guard holds runs its region.  On a miss it records why (the
first failing guard of the newest entry, expected and actual value, where the
value was first used), traces the function again and appends the new entry.
After `recompile_limit` entries it stops capturing: the function then runs
natively and one warning names the guard that kept failing.

Never silently native: every way a function (or one of its continuations)
falls back to running natively goes through `CapturedFunction.fall_back`,
which records a `report.NativeFallback` (in explain's report) and warns once
per function, kind and place (`report.NativeFallbackWarning`).  Under
``BCFRONT_STRICT=1`` (the test suite) the fallbacks that are bcfront bugs --
an internal error while capturing, a fresh entry failing its own guards --
raise `StrictFallbackError` instead.

What gets traced (the "root"):

* a Python function: itself;
* a bound method: its function, with ``self`` passed as the first argument;
* an nn.Module: ``type(m).forward`` with the module as ``self`` (guarded to
  have no hooks), or, when hooks are registered, a small wrapper whose call
  ``m(*args)`` the interpreter models with full ``__call__`` semantics;
* any other Python callable object: the same kind of wrapper;
* C functions and classes: not traced; they run natively (noted in explain).
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import traceback
import types
import warnings
import weakref
from collections import Counter
from time import perf_counter

from . import fast_call, report
from .frontend.regions import hidden_frames
from .options import capture_options
from .reasons import BreakReason
from .report import FallbackKind
from .timing import CLOCK, COLLECTIONS, ON, OpCount, graphs_open, graphs_unwind

hidden_frames.install()  # an exception out of a captured call: the user's frames only
if not fast_call.HAVE_C:  # the Python calls hide bcfront's frames themselves
    fast_call.HIDE[0] = hidden_frames.hide
_REGISTRY: weakref.WeakSet[CapturedFunction] = weakref.WeakSet()
DEFAULT_RECOMPILE_LIMIT = 8
_NO_SELF = object()


class StrictFallbackError(RuntimeError):
    """Under ``BCFRONT_STRICT=1``: bcfront would have fallen back to native because of its own bug."""


def strict() -> bool:
    """Whether bcfront's own bugs raise instead of falling back (``BCFRONT_STRICT=1``)."""
    return os.environ.get("BCFRONT_STRICT", "") not in ("", "0")


fast_call.STRICT[0] = strict  # (for a lazy CheckedLink's failure: fast_call cannot import this)


class _Family(dict):
    """`CapturedFunction.continuations`: the continuations a captured function and its
    continuations share (see frontend.regions.breaks), and the native fallbacks recorded
    anywhere among them, so that the function's report shows its continuations' too."""

    def __init__(self):
        super().__init__()
        self.fallbacks: dict[tuple, report.NativeFallback] = {}


# Fallbacks that are problems to act on: their message also goes to `warnings`.
_WARNING_KINDS = frozenset(
    (
        FallbackKind.INTERNAL_ERROR,
        FallbackKind.SELF_CHECK,
        FallbackKind.RECOMPILE_LIMIT,
        FallbackKind.LOOP_LIMIT,
    )
)
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _outside_bcfront_level() -> int:
    """`warnings.warn`'s stacklevel, from its caller, of the first frame outside bcfront
    (its modules and its generated code): where the user called the captured function."""
    f: types.FrameType | None = sys._getframe(2)
    level = 2
    while f is not None:
        name = f.f_code.co_filename
        if not name.startswith((_PACKAGE_DIR, "<bcfront", "bcfront:")):
            return level
        f, level = f.f_back, level + 1
    return 1


def _call_object(obj, /, *args, **kwargs):
    """The root traced for a callable object (and a module with hooks): ``obj(*args)``."""
    return obj(*args, **kwargs)


def _hit(entry, args, kwargs) -> bool:
    try:
        return entry.guard(*args, **kwargs)
    except TypeError:  # the arguments do not bind to the entry's signature (the root's
        return False  # __code__ was replaced since): not this entry


class CapturedFunction(fast_call.DispatchBase):
    """The callable `bcfront.capture` returns."""

    # Entries get exact link functions, for the C call (`fast_call`), where it is built; a
    # test sets it False on an instance (before its first call) for the pure-Python chain.
    exact_links = fast_call.HAVE_C
    # The C call picks the first link to try by the arguments' values where the entries are
    # specialized on them (`keyed_dispatch.keyed_table`); a test sets it False for the plain chain.
    keyed_dispatch = True
    # An exact link's checks run as a C program (`regions/check_program.py`, `_cchecks.c`)
    # where one can be made; a test sets it False for the Python links, its reference.
    checked_links = True

    # The regions layer reads the root wrapper here, from the `cf` it is handed,
    # instead of importing this module (it sits above regions).
    call_object = staticmethod(_call_object)
    # Called inside captured code, it stands for its target: the trace inlines the original
    # code, not this wrapper and its cache (`frontend.model.builder.call_through`).
    __bcfront_calls__ = "target"

    def __init__(self, target, *, backend="auto", fullgraph=False, recompile_limit=None, **options):
        from .backends import check

        check(backend)
        if "torch.optim" in sys.modules:  # (an optimizer exists only then; keeps torch out)
            from .frontend.semantics.optim_models import step_root

            target = step_root(target)  # ``capture(opt.step)``: the step as one node
        self.target = target
        self.backend = backend
        self.fullgraph = bool(fullgraph)
        self.recompile_limit = DEFAULT_RECOMPILE_LIMIT if recompile_limit is None else int(recompile_limit)
        capture_options(options)  # unknown names and wrong types fail here, at the call
        self.options = dict(options)
        from .frontend.model.shape_policy import ShapePolicy

        self.shape_policy = ShapePolicy(self.options.get("dynamic"))
        self.__class__ = fast_call.own_class(type(self))  # its __call__: `fast_call`
        self._entries: list = []
        self._lock = threading.RLock()
        self._self = _NO_SELF
        self._no_bytecode = False  # a C function or class: every call runs natively
        self.module_root = None
        self.native_reason = None
        self._call_count = [0]  # `calls`: a cell the generated __call__ counts in (`fast_call`)
        # Run time of the calls made while measured (see bcfront.timing), seconds.
        self.timed_calls = 0
        self.total_seconds = 0.0  # wall time of those calls
        self.capture_seconds = 0.0  # ... spent capturing (tracing, compiling)
        self.compiled_seconds = 0.0  # ... inside compiled graphs (its continuations' too)
        self._timing = False  # a measured call of this function is running
        self.continuations: dict = _Family()  # see frontend.regions.breaks.continuation
        # Tensor ops of the timed calls, counted while explain collects (see bcfront.timing).
        self.ops_in_graphs = 0
        self.ops_native = 0
        self.recompiles: list[report.Recompile] = []
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self._root = self._choose_root(target)
        self._install_call()  # the C call, where built, from the first call on (`fast_call`)
        functools.update_wrapper(self, target if not _is_module(target) else type(target).forward, updated=())
        for attr in ("__qualname__", "__name__"):  # a callable object has none of its own
            if attr not in self.__dict__:
                setattr(self, attr, getattr(type(target), attr))

    # -- root selection ---------------------------------------------------------------------
    def _choose_root(self, target):
        if isinstance(target, types.FunctionType):
            return target
        if isinstance(target, types.MethodType) and isinstance(target.__func__, types.FunctionType):
            self._self = target.__self__
            return target.__func__
        if _is_module(target):
            self._self = target
            self.module_root = target
            return None  # chosen per capture (hooks may come and go)
        if isinstance(target, type) or not _has_python_call(target):
            what = "class" if isinstance(target, type) else "C function"
            self.native_reason = (
                f"{getattr(target, '__qualname__', type(target).__name__)} is a "
                f"{what} with no Python bytecode: it runs natively"
            )
            self.notes.append(self.native_reason)
            self._no_bytecode = True  # recorded (and warned) at its call, see _capture_and_run
            return None
        self._self = target
        return _call_object

    def _root_for_call(self):
        if self.module_root is None:
            return self._root
        m = self.module_root
        import torch

        if (
            type(m).__call__ is torch.nn.Module.__call__
            and not _module_has_hooks(m)
            and isinstance(getattr(type(m), "forward", None), types.FunctionType)
            and "forward" not in m.__dict__
            and not _forward_modelled(m)
        ):
            return type(m).forward
        return _call_object

    # -- calling --------------------------------------------------------------------------------
    @property
    def calls(self) -> int:
        """Every call so far, cache hits included (those the C call counted, too)."""
        return self._call_count[0] + self._dispatch_calls

    @calls.setter
    def calls(self, n: int) -> None:
        self._call_count[0] = n - self._dispatch_calls

    def __call__(self, /, *args, **kwargs):  # (`self=` is the call's own keyword)
        try:
            if ON[0] and not self._timing:
                return self._measured(args, kwargs)  # comes back here, timed
            self._call_count[0] += 1  # (`calls`, without its property's get and set)
            if self._self is not _NO_SELF:
                args = (self._self, *args)
            for e in self._entries:
                try:  # inline, not a helper: this loop is the cached fast path
                    hit = e.guard(*args, **kwargs)
                except TypeError:  # the arguments no longer bind (the root's __code__ was
                    hit = False  # replaced since): not this entry
                if hit:
                    return e.region(*args, **kwargs)
            return self._miss(args, kwargs)
        except BaseException as e:
            if fast_call.HIDE[0] is not None:  # no C call (whose exit does it): the user's
                fast_call.HIDE[0](e)  # frames only, as natively (`regions/hidden_frames`)
            raise

    def _measured(self, args, kwargs):
        """A call while some collection is active: tell it, and time the call.

        A recursive call of the same function is inside the outer measurement
        already, so only the outermost one is timed (like a profiler's cumulative time).
        """
        for c in COLLECTIONS:
            c.saw(self)
        clock = CLOCK
        graph0, capture0 = clock.graph, clock.capture
        self._timing = True
        ops, began = OpCount.call_started(self)
        depth = graphs_open()
        t0 = perf_counter()
        try:
            return self(*args, **kwargs)
        finally:
            wall = perf_counter() - t0
            graphs_unwind(depth)  # a graph an exception left closes here, at the latest
            if ops is not None:
                OpCount.call_ended(ops, began)
            self._timing = False
            capture = min(max(clock.capture - capture0, 0.0), wall)
            self.timed_calls += 1
            self.total_seconds += wall
            self.capture_seconds += capture
            self.compiled_seconds += min(max(clock.graph - graph0, 0.0), wall - capture)

    @property
    def python_seconds(self) -> float:
        """Measured run time outside compiled graphs (capture excluded)."""
        return max(self.total_seconds - self.capture_seconds - self.compiled_seconds, 0.0)

    def _run_native(self, args):
        fn = self.target
        if self._self is not _NO_SELF:
            args = args[1:]
        return args, fn

    def _miss(self, args, kwargs):
        # One capture at a time per function: a thread that waited finds the entry the
        # other thread added instead of adding a duplicate.
        with self._lock:
            for e in self._entries:
                if _hit(e, args, kwargs):
                    break
            else:
                return self._capture_and_run(args, kwargs)
        return e.region(*args, **kwargs)

    def _capture_and_run(self, args, kwargs):
        _REGISTRY.add(self)
        t0 = perf_counter()
        ops = OpCount.open("bcfront.capture") if OpCount.active else None
        try:
            entry = self._new_entry(args, kwargs)
        finally:
            if ops is not None:
                OpCount.close(ops)
            CLOCK.capture += perf_counter() - t0
        if entry is None:
            if self._no_bytecode:
                self.fall_back(FallbackKind.NO_BYTECODE, self.native_reason)
            from .frontend.regions.caller_frames import from_user_frame

            a, fn = self._run_native(args)
            return from_user_frame(fn)(*a, **kwargs)
        return entry.region(*args, **kwargs)

    # -- native fallbacks -----------------------------------------------------------------------
    def fall_back(self, kind, message: str, filename: str | None = None, lineno: int | None = None) -> None:
        """Record that (part of) this function runs natively instead of captured, and why.

        The one place for it: the fallback shows in explain's report (this function's,
        and the function's it continues) with `kind` (a `report.FallbackKind` or its
        value) and `message`; the first time for this function, kind and place (default:
        where the function is defined) one `report.NativeFallbackWarning` names it.  The
        message of a problem to act on is also kept in `warnings`, where older readers look
        (the others are in `notes` already).  Safe to call on every native run: a repeat
        only counts.
        """
        kind = FallbackKind.of(kind)
        if filename is None:
            filename, lineno = self._where()
        name = self.__qualname__
        key = (name, kind, filename, lineno)
        known = _fallbacks_of(self)
        old = known.get(key)
        if old is not None:
            known[key] = report.NativeFallback(kind, old.message, filename, lineno, name, old.count + 1)
            return
        known[key] = report.NativeFallback(kind, message, filename, lineno, name)
        if kind in _WARNING_KINDS and message not in self.warnings:
            self.warnings.append(message)
        text = message if message.startswith("bcfront:") else f"bcfront: {name} ran natively: {message}"
        if filename and f"{filename}:{lineno}" not in text:
            text += f" [{kind}; {os.path.basename(filename)}:{lineno}]"
        else:
            text += f" [{kind}]"
        warnings.warn(text, report.NativeFallbackWarning, stacklevel=_outside_bcfront_level())

    @property
    def native_fallbacks(self) -> list:
        """This function's own fallbacks (a continuation's show on its function's report too)."""
        return [f for f in _fallbacks_of(self).values() if f.function == self.__qualname__]

    def _where(self) -> tuple[str | None, int | None]:
        code = _code_of(self)
        return (code.co_filename, code.co_firstlineno) if code is not None else (None, None)

    def _new_entry(self, args, kwargs):
        """Capture this call: the new entry (appended), or None when the call must run natively."""
        if self.native_reason is not None:
            return None
        if self._entries:
            self._record_recompile(args, kwargs)
            if len(self._entries) >= self.recompile_limit:
                self._give_up()
                return None
        root = self._root_for_call()
        from .errors import BackendCompilerFailed, DynamicDimSpecializedError, GraphBreakError
        from .frontend.regions.driver import BindError, trace_entry

        try:
            entry = trace_entry(self, root, args, kwargs)
        except BindError:
            return None  # the arguments do not bind: the native call raises the same TypeError
        except (GraphBreakError, BackendCompilerFailed, DynamicDimSpecializedError):
            raise
        except RecursionError as e:
            # bcfront's own recursion over a value nested too deep (past the breaks that
            # catch it in the trace: in a break's code): this call runs natively, a later
            # one with shallower values is captured
            msg = f"bcfront's own recursion ran out of stack ({e})"
            if self.fullgraph:
                raise GraphBreakError(BreakReason.NESTING_DEPTH, msg) from None
            self.fall_back(FallbackKind.NESTING_DEPTH, msg)
            return None
        except Exception as e:  # a bcfront bug must never change the result: run natively
            msg = (
                f"bcfront: internal error while capturing {self.__qualname__} "
                f"({type(e).__name__}: {e}); it runs natively from now on. This is a "
                "bcfront bug: please report it as an issue with the traceback "
                "(set BCFRONT_DEBUG=1 to print it)"
            )
            if strict():
                raise StrictFallbackError(msg) from e
            if os.environ.get("BCFRONT_DEBUG"):
                traceback.print_exc()
            self.native_reason = msg
            self.fall_back(FallbackKind.INTERNAL_ERROR, msg)
            return None
        if not entry.guard(*args, **kwargs):
            # A bcfront bug; stay correct: run natively this time, keep no entry.
            msg = f"a fresh entry of {self.__qualname__} failed its own guards"
            if strict():
                raise StrictFallbackError(
                    f"bcfront: {msg} (a bcfront bug)\n{self._failing_guard(entry, args, kwargs)}"
                )
            self.fall_back(FallbackKind.SELF_CHECK, msg)
            return None
        if getattr(entry, "native", False):
            # no continuation after a break: the function runs natively under these guards
            b = entry.breaks[0] if entry.breaks else None
            why = "; ".join(entry.notes) or (b.message if b is not None else "no continuation")
            self.fall_back(
                FallbackKind.NO_CONTINUATION,
                why,
                *((b.filename, b.lineno) if b is not None and b.filename else (None, None)),
            )
        self._entries.append(entry)
        self._install_call()
        return entry

    def _install_call(self) -> None:
        fast_call.install(self, CapturedFunction.__call__, ON, self._self is not _NO_SELF)

    def _failing_guard(self, entry, args, kwargs) -> str:
        """Which guard of a fresh entry fails, for the strict-mode error (what to look at)."""
        from .frontend.regions.diagnose import first_failure

        try:
            fail = first_failure(self, entry, args, kwargs)
        except Exception as e:  # noqa: BLE001 - only a diagnostic
            return f"(diagnosing the failed guard failed too: {type(e).__name__}: {e})"
        return f"failing guard: {fail.guard} ({fail.reason})" if fail is not None else entry.guard_source

    def _record_recompile(self, args, kwargs) -> None:
        from .frontend.regions.diagnose import first_failure

        last = self._entries[-1]
        fail = first_failure(self, last, args, kwargs)
        if fail is not None:
            self.recompiles.append(fail)

    def _give_up(self) -> None:
        last = self.recompiles[-1] if self.recompiles else None
        why = f"guard {last.guard!r} kept failing" if last else "guards kept failing"
        msg = (
            f"bcfront: {self.__qualname__} hit the recompile limit "
            f"({self.recompile_limit}); {why}. It now runs natively."
        )
        self.native_reason = msg
        fl = (last.first_use.filename, last.first_use.lineno) if last and last.first_use else (None, None)
        self.fall_back(FallbackKind.RECOMPILE_LIMIT, msg, *fl)
        self._install_call()  # a call no entry takes now goes straight to the function

    # -- module-like behaviour ----------------------------------------------------------------------
    def __getattr__(self, name):
        target = self.__dict__.get("target")
        if target is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(target, name)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def __repr__(self):
        return f"<bcfront.capture of {getattr(self.target, '__qualname__', self.target)!r}>"

    # -- reporting ----------------------------------------------------------------------------------
    @property
    def entries(self) -> list:
        return list(self._entries)

    def reset(self) -> None:
        """Forget every entry and the sizes seen (the next call captures again, static)."""
        from .frontend.model.shape_policy import ShapePolicy

        self._entries.clear()
        self._install_call()
        self.recompiles.clear()
        self.shape_policy = ShapePolicy(self.options.get("dynamic"))
        self.native_reason = (
            None if self._root is not None or self.module_root is not None else self.native_reason
        )

    def report(self) -> report.FunctionReport:
        return function_report(self)


def _code_of(cf):
    target = cf.target
    code = getattr(getattr(target, "__func__", target), "__code__", None)
    if code is None and cf.module_root is not None:
        code = getattr(type(cf.module_root).forward, "__code__", None)
    return code


def _fallbacks_of(cf) -> dict:
    """The fallbacks recorded in `cf`'s family (itself and the continuations it shares them with)."""
    family = cf.continuations
    if isinstance(family, _Family):
        return family.fallbacks
    return cf.__dict__.setdefault("_fallbacks", {})  # continuations replaced by a plain dict


def _fallbacks_shown(cf) -> tuple:
    """`cf`'s own fallbacks; for a function (not a continuation), its continuations' too."""
    if hasattr(cf.target, "__bcfront_resume__"):
        return tuple(cf.native_fallbacks)
    return tuple(_fallbacks_of(cf).values())


def function_report(cf) -> report.FunctionReport:
    """`cf`'s graphs, breaks (identical ones merged), newest guards, recompiles and timing."""
    code = _code_of(cf)
    graphs: list[report.GraphInfo] = []
    notes = list(cf.notes)
    effects: list[report.SideEffect] = []
    breaks: Counter[tuple] = Counter()
    for e in cf.entries:
        graphs.extend(e.graphs)
        notes.extend(n for n in e.notes if n not in notes)
        effects.extend(s for s in e.side_effects if s not in effects)
        for b in e.breaks:
            key = (b.reason, b.message, b.filename, b.lineno, b.instruction)
            breaks[key] += b.count
    merged = []
    for e in cf.entries:
        for b in e.breaks:
            key = (b.reason, b.message, b.filename, b.lineno, b.instruction)
            if key in breaks:
                merged.append(
                    report.GraphBreak(
                        b.reason,
                        b.message,
                        b.filename,
                        b.lineno,
                        b.source_line,
                        b.instruction,
                        b.user_stack,
                        breaks.pop(key),
                    )
                )
    guards = []
    if cf.entries:
        for g in cf.entries[-1].guards:
            guards.append(
                report.GuardInfo(
                    g.source.readable() if g.source is not None else str(g.extra),
                    g.kind,
                    g.readable(),
                    g.first_use,
                )
            )
    return report.FunctionReport(
        function=cf.__qualname__,
        filename=code.co_filename if code else None,
        lineno=code.co_firstlineno if code else None,
        graphs=tuple(graphs),
        graph_breaks=tuple(merged),
        guards=tuple(guards),
        recompiles=tuple(cf.recompiles),
        side_effects=tuple(effects),
        calls=cf.calls,
        notes=tuple(notes),
        warnings=tuple(cf.warnings),
        timed_calls=cf.timed_calls,
        compiled_seconds=cf.compiled_seconds,
        python_seconds=cf.python_seconds,
        total_seconds=cf.total_seconds,
        capture_seconds=cf.capture_seconds,
        native_fallbacks=_fallbacks_shown(cf),
        ops_in_graphs=cf.ops_in_graphs,
        ops_native=cf.ops_native,
    )


def _forward_modelled(m) -> bool:
    """The module's forward is modelled as a call (DDP's, `semantics.collectives`): the root
    is then ``m(*args)``, which reaches the model."""
    if "torch.distributed" not in sys.modules:
        return False
    from .frontend.semantics.collectives import model_for

    return model_for(type(m).forward) is not None


def _is_module(obj) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def _has_python_call(obj) -> bool:
    call = getattr(type(obj), "__call__", None)  # noqa: B004 - the function itself, not callability
    if isinstance(obj, functools.partial):
        return True
    return isinstance(call, types.FunctionType)


def _module_has_hooks(m) -> bool:
    from .frontend.semantics.objects import HOOK_DICTS

    if any(getattr(m, n, None) for n in HOOK_DICTS):
        return True
    import torch.nn.modules.module as mm

    return any(
        getattr(mm, n, None)
        for n in (
            "_global_forward_hooks",
            "_global_forward_pre_hooks",
            "_global_backward_hooks",
            "_global_backward_pre_hooks",
            "_global_forward_hooks_always_called",
        )
    )


def capture(fn=None, *, backend="auto", fullgraph=False, **options):
    """Capture `fn` (function, bound method, nn.Module or callable); usable as a decorator."""
    if fn is None:
        return lambda f: capture(f, backend=backend, fullgraph=fullgraph, **options)
    if not callable(fn):
        raise TypeError(f"bcfront.capture needs a callable, got {type(fn).__name__} ({fn!r:.60})")
    if isinstance(fn, CapturedFunction):
        return fn
    return CapturedFunction(fn, backend=backend, fullgraph=fullgraph, **options)


def registry() -> list:
    """Every captured function that has been captured in this process and is still alive
    (in no particular order; `bcfront.explain.collect()` gives the order of first calls)."""
    return sorted(_REGISTRY, key=id)
