"""A named corpus of tricky functions for the bytecode analyzer's tests.

`CORPUS` maps a name to a Python function whose docstring says what makes it
hard.  Class bodies and module code are wrapped in functions too
(`types.FunctionType(code, ...)`, the way `__build_class__` runs a class body),
so every entry is accepted by `bcfront.analyze` / `decode` and has a docstring.
The functions are never called by the tests; they exist to be compiled.

Generated entries (10,000 lines, >300 constants, far jumps) are built from
source text; a few entries exist only on the CPython that has their syntax.
`all_code_objects(fn)` walks every nested code object of an entry.
"""

from __future__ import annotations

import asyncio
import sys
import types

PY = sys.version_info[:2]
CORPUS: dict[str, types.FunctionType] = {}


def case(fn):
    """Register `fn` in the corpus under its name (it must have a docstring)."""
    assert fn.__doc__, f"corpus entry {fn.__name__} needs a docstring"
    CORPUS[fn.__name__] = fn
    return fn


def _from_source(name: str, src: str, doc: str, glb: dict | None = None) -> types.FunctionType:
    """Compile `src` (which defines `name`) and register the function it defines."""
    ns: dict = {} if glb is None else glb
    exec(compile(src, f"<corpus {name}>", "exec"), ns)
    fn = ns[name]
    fn.__doc__ = doc
    CORPUS[name] = fn
    return fn


def _wrap_code(name: str, code: types.CodeType, doc: str) -> types.FunctionType:
    """Register a non-function code object (module, class body) as a function."""
    fn = types.FunctionType(code, {"__name__": name})
    fn.__doc__ = doc
    CORPUS[name] = fn
    return fn


def corpus_code_objects() -> list[tuple[str, types.CodeType]]:
    """(``entry/qualname``, code object) for every code object of every entry, nested ones too."""
    return [(f"{name}/{c.co_qualname}", c) for name, fn in CORPUS.items() for c in all_code_objects(fn)]


def all_code_objects(obj) -> list[types.CodeType]:
    """`obj`'s code object and every code object nested in its constants (iterative)."""
    root = obj if isinstance(obj, types.CodeType) else obj.__code__
    out, work = [], [root]
    while work:
        c = work.pop()
        out.append(c)
        work.extend(k for k in reversed(c.co_consts) if isinstance(k, types.CodeType))
    return out


# -- straight line and branches ----------------------------------------------


@case
def empty():
    """Just RESUME + RETURN_CONST None: a single block."""


@case
def straight_line(a, b):
    """No control flow at all: one block ending in RETURN_VALUE."""
    c = a + b
    d = c * a - b
    return d**2


@case
def if_elif_else(x):
    """Three-way branch joining at the return: frontier of each arm is the join."""
    if x > 0:
        y = 1
    elif x < 0:
        y = -1
    else:
        y = 0
    return y


@case
def short_circuit(a, b, c):
    """and/or chains and a conditional expression: many tiny blocks."""
    r = (a and b) or (c and not a)
    s = a if b else c
    return r or s and (a or b or c)


@case
def chained_compare(a, b, c, d):
    """Chained comparisons compile to a COPY/SWAP cleanup block on the false path."""
    return a < b <= c != d


@case
def assert_and_raise(x):
    """assert and a bare raise: blocks ending in RAISE_VARARGS with no handler."""
    assert x, "x must be truthy"
    if x is None:
        raise ValueError("none")
    return x


@case
def early_returns(x):
    """Several returns: several predecessors of the virtual exit."""
    if x == 1:
        return "one"
    if x == 2:
        return "two"
    for i in range(x):
        if i == 7:
            return i
    return None


# -- loops -------------------------------------------------------------------


@case
def while_loop(n):
    """A while loop: one back edge to the header."""
    i = 0
    while i < n:
        i += 1
    return i


@case
def for_else(xs):
    """for ... else with break: the else block is not in the loop body."""
    for x in xs:
        if x < 0:
            break
    else:
        return "no negatives"
    return x


@case
def nested_loops(n):
    """Triply nested loops with continue and break: nesting depth 3."""
    total = 0
    for i in range(n):
        j = 0
        while j < i:
            j += 1
            if j % 2:
                continue
            for k in range(j):
                if k > 5:
                    break
                total += k
    return total


@case
def while_true():
    """An infinite loop with no exit: blocks that never reach the virtual exit."""
    i = 0
    while True:
        i += 1


@case
def while_true_break(it):
    """while True with a break out of a nested if: loop exits via a jump."""
    while True:
        x = next(it)
        if x:
            break
    return x


@case
def loop_in_try(xs):
    """A loop inside try/except: exception edges leave the loop."""
    out = []
    try:
        for x in xs:
            out.append(1 / x)
    except ZeroDivisionError:
        out.append(None)
    return out


@case
def try_in_loop(xs):
    """try/except/continue inside a loop: handler blocks belong to the loop."""
    out = []
    for x in xs:
        try:
            v = int(x)
        except ValueError:
            continue
        finally:
            out.append(x)
        out.append(v)
    return out


# -- exceptions --------------------------------------------------------------


@case
def try_except_else_finally(f):
    """All four clauses: nested exception-table entries with lasti and depths."""
    try:
        r = f()
    except (KeyError, IndexError) as e:
        r = e
    except Exception:  # noqa: BLE001 - the subject catches broadly
        r = None
    else:
        r = (r,)
    finally:
        f = None
    return r


@case
def nested_try_finally(f, g):
    """try/finally nested three deep, with a return inside the innermost finally."""
    try:
        try:
            try:
                return f()
            finally:
                g(1)
        finally:
            if g(2):
                return 2  # noqa: B012 - the subject returns from finally
    finally:
        g(3)


@case
def try_except_star(f):
    """except* (exception groups): CHECK_EG_MATCH and PREP_RERAISE_STAR/intrinsics."""
    try:
        f()
    except* ValueError as eg:
        r = eg
    except* (TypeError, KeyError):
        r = None
    return r


@case
def with_statements(a, b, f):
    """Nested with blocks: __exit__ calls on both normal and exceptional paths."""
    with a as x, b:
        with open(f) as fh:
            return x, fh.read()


@case
def with_in_try_in_loop(cms):
    """with inside try inside a loop, with break: deep handler nesting."""
    for cm in cms:
        try:
            with cm:
                if cm is None:
                    break
        except OSError:
            pass
        finally:
            cm = None


@case
def raise_from(x):
    """raise ... from ... inside an except clause."""
    try:
        return x[0]
    except IndexError as e:
        raise KeyError(x) from e


# -- generators and coroutines ----------------------------------------------


@case
def generator(n):
    """yield inside a loop: RETURN_GENERATOR/POP_TOP prologue, yields in try."""
    try:
        for i in range(n):
            yield i
    finally:
        n = 0


@case
def yield_from(it):
    """yield from: the SEND loop with its exception handler (CLEANUP_THROW)."""
    r = yield from it
    return r


@case
async def coroutine(aw, lock):
    """await, async with, and await inside except: SEND loops and handlers."""
    async with lock:
        try:
            r = await aw
        except Exception:  # noqa: BLE001 - the subject catches broadly
            r = await asyncio.sleep(0)
    return r


@case
async def async_generator(ait):
    """async for + yield inside an async generator."""
    async for x in ait:
        if x:
            yield x
    yield None


@case
async def async_comprehensions(ait, aws):
    """async comprehensions and an await inside a comprehension."""
    a = [x async for x in ait]
    b = [await w for w in aws]
    return a, b


# -- match -------------------------------------------------------------------


@case
def match_statement(cmd):
    """match with sequence, mapping, class, or and guard patterns."""
    match cmd:
        case []:
            return "empty"
        case [x]:
            return x
        case [x, *rest] if rest:
            return rest
        case {"op": op, **kw}:
            return op, kw
        case int() | float() as num:
            return num
        case complex(real=r, imag=0):
            return r
        case str(s) if s.startswith("q"):
            return s
        case _:
            return None


# -- comprehensions and closures --------------------------------------------


@case
def comprehensions(xs):
    """list/set/dict comprehensions and a genexpr (inlined on 3.12+, nested on 3.11)."""
    a = [x * 2 for x in xs if x]
    b = {x for x in xs for y in xs if x != y}
    c = {k: v for k, v in zip(xs, a)}
    d = sum(x for x in xs)
    return a, b, c, d


@case
def comprehension_shadowing(x):
    """An inlined comprehension whose variable shadows a local (LOAD_FAST_AND_CLEAR)."""
    y = [x for x in range(x)]
    try:
        z = [x for x in y if 1 / x]
    except ZeroDivisionError:
        z = None
    return x, y, z


@case
def closures(a):
    """Cells, free variables, nonlocal and a lambda: MAKE_CELL/COPY_FREE_VARS."""

    def inner(b):
        nonlocal a
        a += b
        return lambda: a + b

    return inner


@case
def calls_and_unpacking(f, *args, **kwargs):
    """Star-args, keyword calls, unpacking assignment, f-strings, walrus, slices."""
    a, *b, c = args
    if (n := len(b)) > 2:
        f(*b, key=n, **kwargs)
    d = {**kwargs, "x": 1}
    s = f"{a!r:>10} {c}"
    b[1:n] = args[::2]
    return s, d, args[1:-1]


@case
def global_and_delete(x):
    """global statement, del of locals and subscripts."""
    global _CORPUS_GLOBAL
    _CORPUS_GLOBAL = x
    y = [x]
    del y[0]
    del y
    return x


# -- generated: large and far --------------------------------------------------


def _many_constants_src(n: int = 400) -> str:
    lines = ["def many_constants():"]
    lines += [f"    v{i} = 's{i}'" for i in range(n)]
    lines.append("    return " + " + ".join(f"v{i}" for i in range(0, n, 37)))
    return "\n".join(lines)


_from_source(
    "many_constants",
    _many_constants_src(),
    "400 string constants and 400 locals: LOAD_CONST/STORE_FAST need EXTENDED_ARG.",
)


def _far_jumps_src(n: int = 300) -> str:
    body = [f"            y = y + x * {i}" for i in range(n)]
    return "\n".join(
        [
            "def far_jumps(xs, c):",
            "    y = 0",
            "    for x in xs:",
            "        if c:",
            *body,
            "        else:",
            "            y = -y",
            "    return y",
        ]
    )


_from_source(
    "far_jumps",
    _far_jumps_src(),
    "An if-body and a loop body longer than 255 code units: jumps with EXTENDED_ARG.",
)


def _huge_function_src(n_lines: int = 10_000) -> str:
    """A 10,000-line body mixing straight code, branches, loops and try blocks."""
    lines = ["def huge_function(a, b):", "    acc = 0"]
    i = 0
    while len(lines) < n_lines:
        k = i % 5
        if k == 0:
            lines += [f"    if a > {i}:", f"        acc += {i}", "    else:", "        acc -= b"]
        elif k == 1:
            lines += [f"    for j in range({i % 7}):", "        acc ^= j"]
        elif k == 2:
            lines += [
                "    try:",
                f"        acc //= (b - {i})",
                "    except ZeroDivisionError:",
                "        acc = 0",
            ]
        elif k == 3:
            lines += [
                f"    while acc > {i}:",
                "        acc -= 3",
                "        if acc == 1:",
                "            break",
            ]
        else:
            lines += [f"    acc = (acc * {i} + a) % 1000003"]
        i += 1
    lines.append("    return acc")
    return "\n".join(lines)


_from_source(
    "huge_function", _huge_function_src(), "A generated 10,000-line function: thousands of blocks and loops."
)

_from_source(
    "many_exception_handlers",
    "\n".join(
        ["def many_exception_handlers(f):"]
        + [
            line
            for i in range(60)
            for line in ("    try:", f"        f({i})", f"    except Exception as e{i}:", f"        f(e{i})")
        ]
        + ["    return f"]
    ),
    "60 sequential try/except blocks with named exceptions: many exception-table entries.",
)


# -- code that is not a function --------------------------------------------

_MODULE_SRC = '''
"""A module docstring."""
import os
from collections import OrderedDict as OD

CONST = 3

def helper(x):
    return x + CONST

class Widget:
    size = 1
    def grow(self):
        self.size += 1

try:
    import _not_a_real_module
except ImportError:
    _not_a_real_module = None

for _i in range(CONST):
    CONST += _i
else:
    del _i

if __name__ == "__main__":
    print(helper(1))
'''

_wrap_code(
    "module_code",
    compile(_MODULE_SRC, "<corpus module>", "exec"),
    "Module-level code: STORE_NAME/IMPORT_NAME, defs, a class, try and for at top level.",
)

_CLASS_SRC = '''
class Body(Base, metaclass=Meta):
    """docstring"""
    x: int = 1
    y = [i for i in range(3)]
    if x:
        z = 2
    def method(self):
        return __class__
    try:
        w = y[5]
    except IndexError:
        w = None
'''


def _class_body() -> types.CodeType:
    mod = compile(_CLASS_SRC, "<corpus class>", "exec")
    return next(c for c in mod.co_consts if isinstance(c, types.CodeType))


_wrap_code(
    "class_body",
    _class_body(),
    "A class body: LOAD_NAME/STORE_NAME, annotations, __classcell__, a comprehension "
    "in class scope, and try/except.",
)

# -- version-specific syntax -------------------------------------------------

if PY >= (3, 12):
    _from_source(
        "generic_function",
        "\n".join(
            [
                "def generic_function[T: int, *Ts, **P](x: T) -> T:",
                "    type Alias[U] = list[U]",
                "    return x",
            ]
        ),
        "PEP 695 type parameters and a type alias (3.12+): annotation-scope code objects.",
    )


# -- hand-made code objects (not in CORPUS: CPython's compiler never emits them) ----


def dead_code() -> types.CodeType:
    """``return None`` twice: the second return (offset 6) is unreachable."""
    import dis

    def f():
        return None

    op = dis.opmap
    units = [
        op["RESUME"],
        0,
        op["LOAD_CONST"],
        0,
        op["RETURN_VALUE"],
        0,
        op["LOAD_CONST"],
        0,
        op["RETURN_VALUE"],
        0,
    ]
    return f.__code__.replace(co_code=bytes(units), co_linetable=b"", co_exceptiontable=b"")


def irreducible_code() -> types.CodeType:
    """A two-entry cycle: the entry branches into the middle of a loop (assembled
    with the `bytecode` package; CPython's compiler only emits reducible graphs).

    Blocks: entry (branch to B), A (exit test), B (exit test), C (jump back to A).
    """
    from bytecode import Bytecode, Instr, Label

    cond = "POP_JUMP_FORWARD_IF_FALSE" if PY == (3, 11) else "POP_JUMP_IF_FALSE"
    a, b, out = Label(), Label(), Label()
    code = Bytecode(
        [
            Instr("RESUME", 0),
            Instr("LOAD_FAST", "x"),
            Instr(cond, b),
            a,
            Instr("LOAD_FAST", "x"),
            Instr(cond, out),
            b,
            Instr("LOAD_FAST", "y"),
            Instr(cond, out),
            Instr("JUMP_BACKWARD", a),
            out,
            Instr("LOAD_CONST", None),
            Instr("RETURN_VALUE"),
        ]
    )
    code.argnames = ["x", "y"]
    code.argcount = 2
    code.name = "irreducible"
    return code.to_code()


# -- the standard library ------------------------------------------------------


def stdlib_files() -> list[str]:
    """This interpreter's standard-library ``.py`` files in a fixed (sorted walk) order."""
    import os
    import sysconfig

    lib = sysconfig.get_paths()["stdlib"]
    out = []
    for root, dirs, names in os.walk(lib):
        dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "__pycache__"))
        out.extend(os.path.join(root, n) for n in sorted(names) if n.endswith(".py"))
    return out


def stdlib_code_objects(every: int = 1, limit: int | None = None) -> list[types.CodeType]:
    """Every code object (nested ones too) of every `every`-th standard-library file.

    Files that do not compile (test data in other dialects) are skipped; the
    walk and the sample are deterministic.  At most `limit` code objects.
    """
    import warnings

    codes: list[types.CodeType] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in stdlib_files()[::every]:
            try:
                with open(path, "rb") as f:
                    top = compile(f.read(), path, "exec", dont_inherit=True)
            except (SyntaxError, ValueError, UnicodeDecodeError):
                continue
            codes.extend(all_code_objects(top))
            if limit is not None and len(codes) >= limit:
                return codes[:limit]
    return codes
