"""The cached call of a `CapturedFunction`, without the plain loop's overhead.

`CapturedFunction.__call__` is the plain version: it loops over the entries, calls each
guard with the call's arguments and runs the first hit's region.  A call of a captured
function that does little (a pure-Python helper, a small tensor function) pays that loop,
two frames with ``*args, **kwargs`` and the attribute reads around them on every call, as
much as the work itself.  So each captured function gets a class of its own (`own_class`,
a subclass changing nothing else) whose ``__call__`` is made from its entries whenever
they change (`install`), one of three ways:

- `_arm`, where the C extension is built (`bcfront/_cfast.c`, the base class
  `DispatchBase` of `CapturedFunction`) and the root's keyword-only parameters, if any,
  all have defaults: the entries' *exact* link functions (guard and region in one
  function with the root's parameters and defaults, `regions/links.py`), each calling the
  next where its guard fails; the C ``__call__`` checks that the call may take them (as
  many positional arguments as the root takes and no keywords -- or keywords too, where
  the links bind them as the root does, `links.keywords_bind`, and the root's
  ``__qualname__`` is the links' -- nobody measuring, the root's ``__code__``,
  ``__defaults__`` and ``__kwdefaults__`` the same objects), counts it and calls the first
  with the call's arguments -- or, for a call without keywords where the entries are
  specialized on the values of some positional arguments, the one a table keyed by those
  arguments picks (keyed dispatch, below).  An entry's link there is its CheckedLink (its
  checks in C) where it has one, made by the first call reaching the entry
  (`_checking_later`), which arms the C call again with it;
- `_chain`, for a root without defaults: the entries' *chain* link functions, each calling
  the next where its guard fails, the first one the ``__call__``: a hit on the first
  entry costs one frame and one binding, done by Python;
- otherwise a generated ``__call__`` trying the entries' fused functions in order.

Keyed dispatch (`bcfront.keyed_dispatch`): where the entries are specialized on the values of
some positional arguments, the C call looks up which link to call first.

Everything else -- keyword arguments (for the generated and chained calls, and for the C
call where the links' parameters are not the root's own), a measured call
(`bcfront.timing`), a miss -- goes to the plain ``__call__``, which does what it always
did.  Same entries, same order, same result: `tests/test_fast_call.py` compares them.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import sys
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .cfast import C
from .chain_order import chain_order
from .keyed_dispatch import keyed_table


class _PureDispatchBase:
    """Stands for the C base class where it is not built (`bcfront.cfast`): never armed."""

    __slots__ = ()
    _dispatch_calls = 0

    def _dispatch_set(self, first, *rest) -> None:
        if first is not None:
            raise RuntimeError("bcfront._cfast is not built")

    def _dispatch_key(self, positions, *rest) -> None:
        if positions is not None:
            raise RuntimeError("bcfront._cfast is not built")


HAVE_C = C is not None
if TYPE_CHECKING:
    from ._cfast import DispatchBase
else:
    DispatchBase = C.DispatchBase if C is not None else _PureDispatchBase
_C_CALL: Any = DispatchBase.__call__ if HAVE_C else None

_counter = itertools.count()


def own_class(cls):
    """A subclass of `cls` for one instance, so that its ``__call__`` can be its own; it
    starts with `cls`'s.  From an instance's own class (``type(cf)(...)``, a continuation
    made like its function) it derives from the same shared class, not from the other's."""
    while cls.__dict__.get("_own_class"):
        cls = cls.__base__
    body = {"__slots__": (), "_own_class": True, "__call__": cls.__call__, "__module__": cls.__module__}
    return type(cls.__name__, (cls,), {**body, "__qualname__": cls.__qualname__})


def positional_arity(fn) -> tuple[int, int] | None:
    """(least, most) positional arguments a call of `fn` without keywords binds, or None
    when no such call binds (a keyword-only parameter without a default)."""
    code = fn.__code__
    kwonly = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
    if any(k not in (fn.__kwdefaults__ or {}) for k in kwonly):
        return None
    most = code.co_argcount if not code.co_flags & inspect.CO_VARARGS else sys.maxsize
    return code.co_argcount - len(fn.__defaults__ or ()), most


def _pair_lines(i: int, args: str, indent: str = "    ") -> list[str]:
    """Entry `i` tried as the plain loop does: its guard, then its region."""
    return [
        f"{indent}try:",
        f"{indent}    ___hit = ___e{i}.guard(*{args})",
        f"{indent}except TypeError:",  # the arguments do not bind: not this entry (as the loop)
        f"{indent}    ___hit = False",
        f"{indent}if ___hit:",
        f"{indent}    return ___e{i}.region(*{args})",
    ]


def _fused_lines(i: int, args: str, indent: str) -> list[str]:
    """Entry `i` tried through its fused function, for a call that surely binds to it (so a
    TypeError is the region's own)."""
    return [
        f"{indent}___r = ___e{i}.fused(*{args})",
        f"{indent}if ___r is not ___MISS:",
        f"{indent}    return ___r",
    ]


def _body(entries, args: str) -> list[str]:
    """The entries tried in order: through their fused functions where the call's number of
    arguments binds (one test for a run of entries of one signature), else as the loop."""
    lines: list[str] = []
    run_arity: tuple[int, int] | None = None
    run: list[int] = []

    def flush():
        if run:
            least, most = run_arity
            test = f"___n == {least}" if least == most else f"{least} <= ___n <= {most}"
            lines.append(f"    if {test}:")
            for j in run:
                lines.extend(_fused_lines(j, args, "        "))
            run.clear()

    for i, entry in enumerate(entries):
        fused = getattr(entry, "fused", None)
        arity = positional_arity(fused) if fused is not None else None
        if arity is None or arity != run_arity:
            flush()
        if arity is None:
            lines.extend(_pair_lines(i, args))
            run_arity = None
        else:
            run_arity = arity
            run.append(i)
    flush()
    return lines


def _chain(cf, entries, plain_call, bound: bool):
    """The entries' link functions chained (each calls the next where its guard fails, the
    last one `cf._miss`), the first as ``__call__``: a call binds its arguments once, to the
    root's own signature, and a hit on the first entry runs in that one frame.  Held
    through a weak reference to `cf`: its class holds the chain."""
    ref = weakref.ref(cf)
    count = cf._call_count

    def missed(*args, **kwargs):
        count[0] += 1
        return ref()._miss(args, kwargs)

    def slow(positional, rest, keywords, extra):  # a measured call, or one to look at
        absent = entries[0].ABSENT
        args = (*(p for p in positional if p is not absent), *rest)
        kwargs = {k: v for k, v in keywords.items() if v is not absent}
        kwargs.update(extra)
        return plain_call(ref(), *args[1:] if bound else args, **kwargs)

    links = [e.link for e in entries]
    for e, link, after in zip(entries, links, [*links[1:], missed]):
        names = e.link_names
        link.__globals__.update({names.next: after, names.count: count, names.slow: slow})
        object.__setattr__(e, "owner", ref)
    first = links[0]
    return staticmethod(functools.partial(first, cf._self) if bound else first)


def _same_root(names, root, code, defaults, kwdefaults) -> bool:
    """An exact link made for `root` as it is now: the same objects (a mutable default's
    identity matters; equal code would do, the same code is what is checked in C)."""
    return (
        names is not None
        and names.exact
        and names.root is root
        and names.code is code
        and names.defaults is defaults
        and names.kwdefaults is kwdefaults
    )


def _arm(cf, entries, plain_call, timing_on, bound: bool) -> bool:
    """Chain the entries' exact links and arm `cf`'s C call with the first; False (nothing
    changed) where some entry has none, or one was traced with another root or another
    ``__code__`` of it than the root has now (their links leave that check to the C call,
    which knows one code: the entries made before a reloader's change keep theirs)."""
    names = [e.link_names for e in entries]
    root = names[0].root if names[0] is not None else None
    code, defaults = getattr(root, "__code__", None), getattr(root, "__defaults__", None)
    kwdefaults = getattr(root, "__kwdefaults__", None)
    if not HAVE_C or not all(_same_root(n, root, code, defaults, kwdefaults) for n in names):
        return False
    ref = weakref.ref(cf)

    def missed(*args, **kwargs):  # counted in C already; kwargs: keyword-only ones, **kwargs'
        return ref()._miss(args, kwargs)

    if cf.native_reason is not None and not bound and cf.target is root:
        # it runs natively from now on: a call no entry takes is the function's own, made by
        # the C call from the caller's frame (no capture to try, no stand-in of that frame)
        missed = root

    # each entry's CheckedLink (its checks in C) where it has one and they are on, else its link
    # -- or, where its CheckedLink is not made yet, a stand-in that makes it when a call
    # first reaches the entry and arms the chain again (`_checking_later`)
    checked = cf.checked_links
    rearm = functools.partial(install, plain_call=plain_call, timing_on=timing_on, bound=bound)
    links = [
        (n.checked if n.checked is not None else _checking_later(ref, e, rearm) if n.pending else e.link)
        if checked
        else e.link
        for e, n in zip(entries, names)
    ]
    for e, n, link, after in zip(entries, names, links, [*links[1:], missed]):
        e.link.__globals__[n.next] = after
        if link is n.checked:  # (not a stand-in, `_checking_later`: that calls the entry's own)
            link.next = after
        object.__setattr__(e, "owner", ref)
    n = names[0]
    most = sys.maxsize if n.varargs else n.nargs - bound
    least = max(n.nargs - bound - len(defaults or ()), 0)  # (the bound self may have one too)
    self_args = (cf._self,) if bound else ()
    keywords = all(n.keywords_bind for n in names)  # a call with keywords binds to the links
    cf._dispatch_set(
        links[0], root, code, defaults, plain_call, timing_on, self_args, least, most, kwdefaults, keywords
    )
    keyed = keyed_table(entries, links, code, bound) if cf.keyed_dispatch else None
    if keyed is not None:
        positions, table, unkeyed = keyed  # a key not in the table: the first entry it leaves out
        miss = links[unkeyed] if unkeyed is not None else missed
        if miss is missed and missed is not root:
            miss = _missed_as_the_last_link(missed, code, kwdefaults)
        cf._dispatch_key(positions, table, miss, links[0], unkeyed is not None)
    type(cf).__call__ = _C_CALL
    if C is not None:  # (HAVE_C) a call makes no argument tuple; the C call checks __call__
        C._vectorcall_class(type(cf))
    return True


def _checking_later(ref, entry, rearm):
    """What the armed chain calls for `entry` while its CheckedLink is not made
    (`links.PendingCheckedLink`): compiling the checks costs about what tracing them did, so
    a function called once -- the capture's call -- never pays for it.  The first call
    reaching the entry makes it (or learns there is none), has `rearm` arm the C call again
    (`install`: from then on the chain has the CheckedLink, as if made at the capture) and
    goes on as the new chain does from the entry, with the same arguments; a keyword call
    too (its ``__qualname__`` is the link's, which the C call checks before passing keywords
    on; the link binds them, and raises the root's binding errors).  Holds the captured
    function weakly, as the chain does."""

    def checking_later(*args, **kwargs):
        cf = ref()
        if cf is not None and cf.checked_links:
            with cf._lock:  # (as a capture arms it: one build per entry, no stale arming)
                make_checked(entry)
                rearm(cf)
        names = entry.link_names
        live = cf is not None and cf.checked_links and names.checked is not None
        return (names.checked if live else entry.link)(*args, **kwargs)

    checking_later.__qualname__ = entry.link.__qualname__
    return checking_later


def make_checked(entry) -> None:
    """Make `entry`'s CheckedLink where it is pending (`links.LinkNames.with_checked`).  A
    failure to make it is bcfront's bug, which must not change a call's result: the Python
    link serves on, and the entry's notes say so (explain shows them; under
    ``BCFRONT_STRICT=1`` it raises)."""
    names = entry.link_names
    if names is None or names.pending is None:
        return
    try:
        entry.link_names = names.with_checked()
    except Exception as e:
        entry.link_names = replace(names, pending=None)
        entry.notes.append(
            f"its checks run as Python, not as a C check program: making the program failed "
            f"({type(e).__name__}: {e}) -- a bcfront bug, please report it"
        )
        if STRICT[0]():
            raise


# Whether bcfront's own bugs raise (`capture.strict`, which `capture` puts here).
STRICT: list = [lambda: False]


def _missed_as_the_last_link(missed, code, kwdefaults):
    """`missed` called as the last exact link calls it, for the C call's keyed miss, which
    passes the positional arguments only: the link passes its keyword-only parameters on
    too, which a call without keywords binds to their defaults (`kwdefaults`, the very dict
    the C call checks the root still has)."""
    if not code.co_kwonlyargcount:
        return missed
    return lambda *args: missed(*args, **kwdefaults)


def install(cf, plain_call, timing_on, bound: bool) -> None:
    """Give `cf`'s own class the ``__call__`` generated from `cf`'s entries now.

    `plain_call` is the loop this stands for (``CapturedFunction.__call__``): a call with
    keyword arguments or one while `timing_on[0]` is set goes there; a call no entry takes
    goes to ``cf._miss``, as from the loop.  `bound`: ``cf._self`` is the root's first
    argument (a bound method, a module).  With no entries ``__call__`` is the plain one."""
    cls = type(cf)
    cf._dispatch_set(None)  # disarmed unless `_arm` arms it again
    cf._dispatch_key(None)
    call = cls.python_call = _python_call(cf, plain_call, timing_on, bound)
    if C is not None and call is not None:  # (HAVE_C)
        # every call goes through the C call, armed or not: an exception leaving it shows the
        # user's frames only (`regions/hidden_frames`), the capture's included
        cf._dispatch_set(None, _with_self(call.__func__) if isinstance(call, staticmethod) else call)
        cls.__call__ = _C_CALL
        C._vectorcall_class(cls)
    elif call is not None:  # (the plain and the generated calls hide frames themselves)
        hiding = isinstance(call, staticmethod) and HIDE[0] is not None
        cls.__call__ = _hiding(call.__func__, HIDE[0]) if hiding else call


# Without the C call (its exit does it): the exception a call raises goes through HIDE[0]
# (`capture` sets it to `regions.hidden_frames.hide` then), which takes bcfront's frames
# out of its traceback.
HIDE: list = [None]

GENERAL_FIRST = True  # off: the entries tried in the order they were made (the reference)


def _hiding(first, hide):
    """A ``__call__`` calling the chain's `first` link, what it raises given to `hide`: the
    pure-Python counterpart of the C call's ``user_frames``.  (Named ``__call__``: its frame
    is the one a call of the instance enters, as `caller_frames.user_frame` counts it.)"""

    def __call__(self, /, *args, **kwargs):
        try:
            return first(*args, **kwargs)
        except BaseException as e:
            hide(e)
            raise  # (a bare raise adds no entry for this frame)

    return __call__


def _with_self(fn):
    """`fn` (a chain's first link) called as the C call calls its slow way: `self` first."""
    return lambda _self, /, *args, **kwargs: fn(*args, **kwargs)


def _python_call(cf, plain_call, timing_on, bound: bool):
    """The ``__call__`` made of `cf`'s entries in Python (`install`'s): None where `_arm`
    armed the C call instead."""
    # entries fixing fewer input values first (a value-dynamic one before those by value),
    # unless a keyed table picks among them (`chain_order`)
    entries = cf._entries
    if GENERAL_FIRST and len(entries) > 1:
        names = entries[0].link_names
        code = names.code if names is not None and names.exact else None
        entries = chain_order(entries, code, bound, cf.keyed_dispatch and HAVE_C)
    if not entries:
        return plain_call
    if all(getattr(e, "link", None) is not None for e in entries):
        if _arm(cf, entries, plain_call, timing_on, bound):
            return None
        if not any(e.link_names.exact for e in entries):
            return _chain(cf, entries, plain_call, bound)
    args = "___a" if bound else "args"
    body = [
        "if kwargs or ___timing_on[0]:",
        "    return ___plain(self, *args, **kwargs)",
        # not self.calls: self's attributes are read through CapturedFunction.__getattr__'s
        # slow lookup (a miss can afford it: self._miss below)
        "___count[0] += 1",
    ]
    if bound:  # a bound method or module: its self is the root's first argument
        body.append("___a = (___self, *args)")
    body.append(f"___n = len({args})")
    body += [line[4:] for line in _body(entries, args)]
    body.append(f"return self._miss({args}, {{}})")
    if HIDE[0] is not None:  # no C call: what it raises shows the user's frames (`HIDE`)
        body = ["try:", *("    " + line for line in body), "except BaseException as ___e:"]
        body += ["    ___hide(___e)", "    raise"]
    lines = ["def __call__(self, /, *args, **kwargs):", *("    " + line for line in body)]
    namespace = {
        "___plain": plain_call,
        "___timing_on": timing_on,
        "___MISS": getattr(entries[0], "MISS", None),
        "___count": cf._call_count,
        "___self": cf._self,  # held by `cf` already
        "___hide": HIDE[0],
    }
    namespace.update((f"___e{i}", e) for i, e in enumerate(entries))
    name = getattr(cf, "__qualname__", "?")
    code = compile("\n".join(lines) + "\n", f"bcfront:call {name} #{next(_counter)}", "exec")
    exec(code, namespace)  # noqa: S102 - our own generated source, built above
    return namespace["__call__"]
