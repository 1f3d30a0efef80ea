"""Link functions: an entry's guard and region as one function that takes the root's own
arguments and calls the next entry's link where its guard fails; `bcfront.fast_call`
chains them into a captured function's cached call.

Two kinds, by who calls the first link:

- a *chain* link is the captured function's ``__call__`` itself, called by Python with
  whatever the caller passed; so binding must never fail where Python's would not: the
  root's positional parameters are positional-only and default to ABSENT, catch-alls take
  what the root does not, and a call that passes such things, leaves a parameter out or is
  measured goes the slow way (the plain call).  It counts the call.
- an *exact* link is called from C (`bcfront/_cfast.c`) with the call's positional
  arguments, after the C side has checked that the root takes that many, that nobody
  measures and that the root's ``__code__`` is the traced one, and counted the call --
  or with the call's keywords too, where the link binds them as the root does
  (`keywords_bind`: Python's binding of the link, errors included, is then the root's,
  and the C call leaves the count checks to it): its parameters are the root's and
  nothing else, with the root's ``__defaults__`` and ``__kwdefaults__`` (the very
  objects, which the C call checks the root still has; a keyword-only default changed in
  place is then the link's too, and its guard checks it as the argument it is).  For a
  root whose keyword-only parameters all have defaults (a call without keywords binds
  them all; ``*args`` and ``**kwargs`` are fine).  A region that ends raising its result
  returns ``raised(result)`` instead, and the C call raises it: the link's frame is not
  in the traceback (a Python ``raise`` puts it there), and its locals, which hold the
  exception, make no cycle with the exception's traceback (the collector's work).  Where
  that region's code only makes the exception, a checked link makes and raises it in C
  (`raise_recipes`), with no frame at all.

An exact link's checks run in C where they translate (`checked_link`: a `CheckedLink`, its
checks compiled to a program by `check_program`), made when a call first reaches the entry,
not at the capture (`PendingCheckedLink`: a function called once never pays for it).

A generator region has no link (its body cannot follow the checks), nor has a root with
defaults a chain link (a call leaving one out would go the slow way each time):
`fast_call`'s generated call serves those.
"""

from __future__ import annotations

import inspect
import threading
from dataclasses import dataclass, replace

from ...cfast import C
from ..model.namespace import Namespace
from .check_program import (
    LARGEST_TRANSLATED,
    LinkParameters,
    Untranslatable,
    compile_checks,
)
from .codegen import compile_function
from .raise_recipes import region_raise
from .result_recipes import region_result, returned_expression
from .step_recipes import region_steps

ABSENT = object()  # a chain link's default for each parameter: the call did not pass it
GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


@dataclass(frozen=True)
class LinkNames:
    """What `bcfront.fast_call` needs to chain a link: the names of its globals it binds,
    and for an exact link the root and how many positional arguments it takes."""

    next: str  # called with the arguments where the guard fails
    count: str | None  # a chain link's call counter (a one-item list); None: exact
    slow: str | None  # slow(positional, rest, keywords, extra): the plain call; None: exact
    root: object = None  # an exact link's root function (its ``__code__`` checked in C)
    nargs: int = 0  # an exact link's positional parameters
    varargs: bool = False  # ... and whether it also takes ``*args``
    code: object = None  # the root's ``__code__`` the exact link was traced with
    defaults: tuple | None = None  # ... and its ``__defaults__``, which the link has too
    kwdefaults: dict | None = None  # ... and its ``__kwdefaults__``: the link's, the same dict
    keywords_bind: bool = False  # an exact link binds a keyword call as the root does (below)
    # an exact link's checks run in C (`_cfast.CheckedLink`, next unset), or None: no program
    # (yet: see `pending`)
    checked: object = None
    # what makes `checked`, where it is not made yet (`PendingCheckedLink`): `fast_call` arms
    # the Python link first and has it made on the first call that reaches the entry
    pending: PendingCheckedLink | None = None

    @property
    def exact(self) -> bool:
        return self.count is None

    def with_checked(self) -> LinkNames:
        """These names with `checked` made from `pending` (None where no program can be
        made: the link serves alone), nothing pending."""
        return replace(self, checked=self.pending.make(), pending=None) if self.pending is not None else self


@dataclass(frozen=True)
class _LinkSignature:
    """A chain link's parameters (see the module docstring)."""

    params: str
    passing: str  # the parameters passed on, to the next link or to `_miss`
    slow_test: str
    slow_call: str


def _chain_signature(parts: list[str], absent: str, rest: str, extra: str, slow: str) -> _LinkSignature:
    root = LinkParameters.of(parts)
    positional, kwonly, star, dstar = list(root.positional), list(root.kwonly), root.star, root.dstar
    params = [f"{p}={absent}" for p in positional] + (["/"] if positional else [])
    params += [f"*{star or rest}", *(f"{k}={absent}" for k in kwonly), f"**{dstar or extra}"]
    tests = ([] if star else [rest]) + ([] if dstar else [extra])
    tests += [f"{p} is {absent}" for p in positional + kwonly]
    tuple_ = f"({', '.join(positional)},)" if positional else "()"
    keywords = "{" + ", ".join(f"{k!r}: {k}" for k in kwonly) + "}"
    slow_call = f"{slow}({tuple_}, {star or rest}, {keywords}, {dstar or extra})"
    return _LinkSignature(", ".join(params), root.passing, " or ".join(tests), slow_call)


def exact_parameters(parts: list[str], kwdefaults: dict | None) -> list[str] | None:
    """The root's parameters if an exact link can take them, else None: where each
    keyword-only one has a default in `kwdefaults` (the root's ``__kwdefaults__``), so
    that a call without keywords binds."""
    return parts if all(k in (kwdefaults or {}) for k in LinkParameters.of(parts).kwonly) else None


def link_function(
    root, ns, parts, prefix, guard_lines, miss, region_body, region, tag, exact=False, raises=None
):
    """The entry's link function and its `LinkNames`, or ``(None, None)`` where there is
    none; an exact one where `exact` is asked and the root allows it, else a chain one.
    `region_body`: the region's code but for the statements that end it raising, if it
    does (`raises`: `entry.RegionRaise`, which has them)."""
    if region.__code__.co_flags & GENERATOR_FLAGS:
        return None, None
    params = exact_parameters(parts, root.__kwdefaults__) if exact else None
    if params is None and (root.__defaults__ or root.__kwdefaults__):
        return None, None
    inner = [line.replace(f"return {miss}", "break") for line in guard_lines]
    if params is not None:
        exact_sig = LinkParameters.of(params)
        next_ = ns.const(object(), "next")
        names = LinkNames(
            next_,
            None,
            None,
            root,
            len(exact_sig.positional),
            exact_sig.star is not None,
            root.__code__,
            root.__defaults__,
            root.__kwdefaults__,
        )
        passing = exact_sig.passing
        head = []
        signature = ", ".join(params)
        region_lines = [*region_body, *_exact_ending(raises, ns), "    return None"]
        inner += region_lines
    else:
        names, signature, head, passing = _chain_head(root, ns, parts)
        ending = raises.lines if raises is not None else ()
        inner += [f"    {names.count}[0] += 1", *region_body, *ending, "    return None"]
    body = [
        *head,
        "    while True:",  # left by `break` where a check fails
        *("    " + line for line in "\n".join(inner).split("\n")),
        f"    return {names.next}({passing})",
    ]
    name = f"{prefix}link"
    src = f"def {name}({signature}):\n" + "\n".join(body) + "\n"
    kind = "exact link" if names.exact else "link"
    link = compile_function(src, ns, name, f"bcfront:{kind} {root.__qualname__} {tag}")
    link.__name__, link.__qualname__ = root.__name__, root.__qualname__  # in Python's errors
    if names.exact:
        link.__defaults__ = names.defaults  # the same tuple: the C call compares it
        link.__kwdefaults__ = names.kwdefaults  # the same dict (not a copy): so does it
        names = replace(names, keywords_bind=keywords_bind(link.__code__, root.__code__))
        if can_check(guard_lines):  # its CheckedLink: made when wanted (`PendingCheckedLink`)
            body = region if raises is None else None  # the region's own code, else one ending its way
            pending = PendingCheckedLink(
                link,
                ns.globals,
                frozenset(ns.pure),
                tuple(guard_lines),
                miss,
                tuple(region_lines),
                tuple(params),
                body,
                f"{prefix}body",
                tag,
            )
            names = replace(names, pending=pending)
    return link, names


def can_check(guard_lines) -> bool:
    """Whether a CheckedLink may be made for checks `guard_lines`: the C module has it, and
    they are not so long that the first call would pay more than the program saves."""
    if C is None or getattr(C, "CheckedLink", None) is None:
        return False
    return sum(map(len, guard_lines)) <= LARGEST_TRANSLATED


@dataclass(frozen=True)
class PendingCheckedLink:
    """An exact link's `checked_link`, made when first wanted (`LinkNames.pending`): compiling
    the checks to a C program costs about what the capture's trace does, and a function
    called once never runs its link.  Holds what the link holds and no more: the link, its
    region function, source text, and the namespace's globals, the very objects the link's
    own globals are a copy of (no user value the link does not hold already)."""

    link: object
    globals: dict  # the namespace's (`Namespace.globals`), as the link was compiled with them
    pure: frozenset  # the namespace's pure calls (`Namespace.pure`) then
    guard_lines: tuple
    miss: str
    region_lines: tuple
    params: tuple
    body: object  # the region function, where it is the region's code (`checked_link`)
    name: str
    tag: str

    def make(self):
        """`checked_link` of the link: its CheckedLink, or None.  One at a time, process-wide:
        it parses the checks with `ast`, and CPython 3.11's conversion of a parse to Python
        objects keeps one recursion count per interpreter, which two threads parsing at once
        corrupt ("AST constructor recursion depth mismatch": tests/robustness/
        test_concurrency.py, threads whose cached calls make their entries' programs)."""
        ns = Namespace()
        ns.globals, ns.pure = self.globals, set(self.pure)
        lines, params, region = list(self.guard_lines), list(self.params), list(self.region_lines)
        with _MAKING:
            return checked_link(
                self.link, ns, lines, self.miss, region, params, self.body, self.name, self.tag
            )


_MAKING = threading.Lock()


def checked_link(link, ns, guard_lines, miss, region_lines, params, body, name, tag):
    """The exact `link` with its checks as a C program (`check_program`) and its region's
    code `region_lines` as a function of the link's parameters and defaults -- `body`, the
    region function, where it is that code, else one compiled here -- or None where the
    program cannot be made (the link serves alone)."""
    if not can_check(guard_lines):
        return None
    sig = LinkParameters.of(params)
    local_names = link.__code__.co_varnames + link.__code__.co_cellvars
    scope = link.__globals__  # the link's own copy of the namespace (`DeferredFunction`)
    # what the region returns where that is all it does: the checks may make it (a runtime
    # value's pure call, which the guard computes to check its type), and the C call return it
    returned = returned_expression(region_lines) if body is not None else None
    try:
        program = compile_checks(guard_lines, miss, scope, sig, local_names, frozenset(ns.pure), returned)
    except Untranslatable:
        return None
    # what the C call makes itself, without the region's frame, where that is all it does
    recipe = region_result(region_lines, scope, local_names)
    if body is not None:  # ... or its stores and built-in calls, then its result
        recipe = recipe or region_steps(region_lines, scope, local_names, sig.positional, sig.star, ns.prefix)
    if body is None:  # a region ending in a raise: the body returns `raised(...)` as the link
        recipe = recipe or region_raise(region_lines, scope, local_names, sig.positional)
        while name in scope:  # not a constant's name: the function would take its place
            name += "_"
        src = f"def {name}({', '.join(params)}):\n" + "\n".join(region_lines) + "\n"
        body = compile_function(src, ns, name, f"bcfront:exact link {link.__qualname__} {tag}")
        body.__name__, body.__qualname__ = link.__name__, link.__qualname__
        body.__defaults__, body.__kwdefaults__ = link.__defaults__, link.__kwdefaults__
    return C.CheckedLink(
        program.code,
        program.consts,
        program.nlocals,
        program.depth,
        len(sig.positional),
        sig.star is not None,
        program.guarded,
        body,
        link,
        tuple(C.Recipe(r) for r in recipe),
        -1 if recipe else program.kept_result,
    )


def keywords_bind(link_code, root_code) -> bool:
    """Whether a call with keywords binds to the link with the code `link_code` exactly as to
    the root with `root_code` -- the same values to the same parameters, or the same
    TypeError, message and all -- given the root's own defaults (the very objects, which the
    C call checks) and its ``__qualname__`` (which Python's binding errors name; the C call
    checks that too): where the link's named parameters are the root's, in order, of the
    same kinds (``*args`` and ``**kwargs`` as the root has them, whatever their names).  Not
    so where the root has compiler-made names (a comprehension's ``.0``: the link takes
    ``*___args`` instead)."""
    named = root_code.co_argcount + root_code.co_kwonlyargcount  # co_varnames' first ones
    return (
        link_code.co_varnames[:named] == root_code.co_varnames[:named]
        and link_code.co_argcount == root_code.co_argcount
        and link_code.co_posonlyargcount == root_code.co_posonlyargcount
        and link_code.co_kwonlyargcount == root_code.co_kwonlyargcount
        and link_code.co_flags & _STARS == root_code.co_flags & _STARS
    )


_STARS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _exact_ending(raises, ns) -> list[str]:
    """An exact link's last statements where its region ends raising (`raises`:
    `entry.RegionRaise`): ``return raised(exc, chain)``, for the C call to raise (the module
    docstring) -- or, without the C call, the region's own raise."""
    if raises is None:
        return []
    if C is None:
        return list(raises.lines)
    return [f"    return {ns.const(C.raised, 'raised')}({raises.name}, {raises.chain})"]


def _chain_head(root, ns, parts):
    """A chain link's names, parameters, first statements (the slow way out) and the
    arguments it passes on."""
    from ...timing import ON

    names = LinkNames(*(ns.const(object(), hint) for hint in ("next", "count", "slow")))
    # the catch-alls' names: fresh, as the region's own locals (a constant may be `___rest`)
    rest, extra = ns.fresh("rest"), ns.fresh("extra")
    sig = _chain_signature(parts, ns.const(ABSENT, "absent"), rest, extra, names.slow)
    timing = ns.const(ON, "timing_on")
    head = [
        f"    if {timing}[0] or {sig.slow_test}:" if sig.slow_test else f"    if {timing}[0]:",
        f"        return {sig.slow_call}",
    ]
    return names, sig.params, head, sig.passing
