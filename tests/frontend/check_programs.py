"""Shared by the tests of checked links and C recipes (`test_check_program`,
`test_check_reads`, `test_raise_recipes`): values that log every operation made on them,
random check statements of the generated forms and their Python reference, a CheckedLink
made of check statements, and the Python frames a call runs; and for every test module
that needs the C call, its rule where the C extension is not built (`needs_c_call`).
Not a test module."""

from __future__ import annotations

import os
import random
import sys
import types
import zlib

import pytest

from bcfront import fast_call
from bcfront.cfast import C
from bcfront.frontend.regions.check_program import LinkParameters, compile_checks

MISS = object()


def needs_c_call(namespace: dict) -> None:
    """A test module that needs the C call calls this at its top, with ``globals()``: where
    `bcfront._cfast` is not built, the module skips under ``BCFRONT_PURE_PYTHON`` (the
    pure-Python paths, asked for) and otherwise gets a test that fails -- a missing build
    fails, never skips (CI builds it)."""
    if fast_call.HAVE_C:
        return
    if os.environ.get("BCFRONT_PURE_PYTHON"):
        pytest.skip("BCFRONT_PURE_PYTHON is set: no C call", allow_module_level=True)
    namespace["test_the_c_extension_is_built"] = _the_c_extension_is_built


def _the_c_extension_is_built():
    pytest.fail("bcfront._cfast is not built: reinstall with a C compiler (pip install -e .)")


class Stop(BaseException):
    """Not an Exception: the link's ``except Exception`` lets it out."""


class Logged:
    """A value recording each operation made on it, in order, in `LOG`; `fail` makes its
    operations raise (ValueError: a miss; Stop: out of the checks)."""

    def __init__(self, tag, fail=None, truth=True, size=2):
        self.tag, self.fail, self.truth, self.size = tag, fail, truth, size

    def _op(self, what):
        LOG.append((self.tag, what))
        # (seeded by a checksum, not hash(): a str's hash changes with PYTHONHASHSEED)
        if self.fail is not None and random.Random(zlib.crc32(f"{self.tag}\0{what}".encode())).random() < 0.5:
            raise self.fail(f"{self.tag}.{what}")

    def __eq__(self, other):
        self._op("eq")
        return self.truth

    def __ne__(self, other):
        self._op("ne")
        return not self.truth

    def __lt__(self, other):
        self._op("lt")
        return self.truth

    __hash__ = object.__hash__

    def __len__(self):
        self._op("len")
        return self.size

    def __bool__(self):
        self._op("bool")
        return self.truth

    def __getitem__(self, key):
        self._op(f"item {key!r}")
        return Logged(f"{self.tag}[{key!r}]", self.fail, not self.truth, self.size + 1)

    def __contains__(self, key):
        self._op(f"contains {key!r}")
        return self.truth

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        self._op(f"attr {name}")
        return Logged(f"{self.tag}.{name}", self.fail, self.truth, self.size)


LOG: list = []


def logged_call(*args):
    LOG.append(("call", len(args)))
    return args[0] if args else True


def _module():
    m = types.ModuleType("checked_module")
    m.a = Logged("mod.a")
    m.__getattr__ = lambda name: LOG.append(("mod getattr", name)) or 1  # PEP 562
    return m


GLOBALS = {
    "___mod": _module(),
    "___full": types.CellType(Logged("cell")),
    "___empty": types.CellType(),
    "___type": type,
    "___len": len,
    "___int": int,
    "___str": str,
    "___Logged": Logged,
    "___f": logged_call,
    "___none": None,
    "___cell": [0, 0],
    "___unchanged": C.dicts_unchanged if C is not None else None,  # (`guard_memo._c_memo`)
    "___dict": {"a": 1},
    "___box": {"k": 1, "j": Logged("box.j")},
    "___miss": MISS,
}

PARAMS = LinkParameters(("x", "y"), "args", (), None)


def source(rng, depth=0):
    """A random source expression of the generated forms."""
    roots = ["x", "y", "args[0]", "args[1]", "___box", "___box['j']", "___cell", "___mod", "___mod.a"]
    roots += ["___mod.b", "___full.cell_contents", "___empty.cell_contents", "x.cell_contents"]
    s = rng.choice(roots)
    for _ in range(rng.randrange(3)):
        s = rng.choice([f"{s}.a", f"{s}['k']", f"{s}[0]", f"___f({s})"])
    return s


def conjunct(rng, depth=0):
    s = source(rng)
    forms = [
        f"___type({s}) is {rng.choice(['___int', '___str', '___Logged'])}",
        f"{s} == {rng.choice(['0', '1', '2', repr('a'), '1.0', '-0.0', 'True', 'None', '(1, 2)', '-1'])}",
        f"{s} is {rng.choice(['___none', 'None', 'True', '___int'])}",
        f"{s} is not {rng.choice(['___none', 'None', 'False'])}",
        f"___len({s}) == {rng.randrange(4)}",
        f"{rng.choice([repr('k'), '0', '1'])} {rng.choice(['in', 'not in'])} {s}",
        f"___f({s}, {source(rng)})",
        f"{s} < {source(rng)}",
        f"not {s}",
        f"{s}",
        "___len(args) == 2",
        f"({s} != {rng.choice(['0', repr('a')])})",
        f"___type(args[0]) is ___int and args[0] == {rng.choice(['0', '1'])}",
    ]
    if depth < 2:
        forms += [
            f"({conjunct(rng, depth + 1)} or {conjunct(rng, depth + 1)})",
            f"({conjunct(rng, depth + 1)} or ({conjunct(rng, depth + 1)} and {conjunct(rng, depth + 1)}))",
            f"not ({conjunct(rng, depth + 1)} and {conjunct(rng, depth + 1)})",
        ]
    return rng.choice(forms)


def check_statements(rng, guarded, conjunction, memo=None, prologue=None):
    """Check statements as `GuardSet.function_body` makes them: `prologue`'s lines, a
    memo-like block when `memo` gives one (its test and its body's conjunction, or None),
    then one or two checks that return ___miss where their conjunction (`conjunction(lines
    so far)`) fails; inside ``try``/``except Exception`` when `guarded`."""
    pad = "        " if guarded else "    "
    lines = prologue(pad) if prologue is not None else []
    block = memo() if memo is not None else None
    if block is not None:
        test, body, cell = block if len(block) == 3 else (*block, "___cell")
        lines += [
            f"{pad}if not {test}:",
            f"{pad}    if not ({body}):",
            f"{pad}        return ___miss",
            f"{pad}    {cell}[0] = {cell}[1]",
        ]
    for _ in range(rng.randrange(1, 3)):
        lines += [f"{pad}if not ({conjunction(lines)}):", f"{pad}    return ___miss"]
    if guarded:
        lines = ["    try:", *lines, "    except Exception:", "        return ___miss"]
    return lines


def check_lines(rng, guarded=True):
    """Random checks of the generated forms (`check_statements`): an assignment first,
    sometimes, that later checks may test."""

    def prologue(pad):
        return [f"{pad}___v = {source(rng)}"] if rng.random() < 0.4 else []

    def memo():
        if rng.random() < 0.1:  # `guard_memo._c_memo`'s block (DICTS_SAME ... DICTS_PASSED), of
            # a fresh dict each call (x: a dict's checks run every call, both ways; another
            # value, dicts_unchanged's TypeError) -- skipping is test_check_program's
            test = "___unchanged(___memo, ___box, x, ___dict)"
            return test, " and ".join(conjunct(rng) for _ in range(2)), "___memo"
        if rng.random() < 0.4:
            return f"___f({source(rng)})", " and ".join(conjunct(rng) for _ in range(2))
        return None

    def conjunction(lines):
        conj = [conjunct(rng) for _ in range(rng.randrange(1, 5))]
        if any("___v" in ln for ln in lines) and rng.random() < 0.5:
            conj.append("___v is not None")
        if rng.random() < 0.2:
            conj.append(f"(___w := {source(rng)}) is not None and ___w == 1")
        return " and ".join(conj)

    return check_statements(rng, guarded, conjunction, memo, prologue)


def python_link(lines):
    """The checks as the Python reference: True where they pass, MISS where not."""
    src = "def ref(x, y, *args):\n" + "\n".join(lines) + "\n    return True\n"
    scope = dict(GLOBALS)
    scope["___memo"] = [None, None]  # each link's own guard memo cell, as each guard has
    exec(compile(src, "<checks>", "exec"), scope)  # the test's own source
    return scope["ref"]


def program(lines, ref, params=PARAMS):
    """(the CheckedLink of check statements `lines`, their program); `ref`: the Python link
    (`python_link`) whose globals and locals they read."""
    p = compile_checks(lines, "___miss", ref.__globals__, params, ref.__code__.co_varnames)
    npos = len(params.positional)
    star = params.star is not None
    link = C.CheckedLink(p.code, p.consts, p.nlocals, p.depth, npos, star, p.guarded, ref, ref, ())
    return link, p


def c_link(lines, ref):
    return program(lines, ref)[0]


def guarded(*body):
    """`body`'s statements as a guarded check function has them: in ``try``, a miss where
    they raise."""
    return ["    try:", *("        " + b for b in body), "    except Exception:", "        return ___miss"]


def link_of(lines, scope):
    """(the Python link of `lines` over one parameter x with `scope` as its globals, its
    (CheckedLink, program))."""
    src = "def ref(x):\n" + "\n".join(lines) + "\n    return True\n"
    glb = {**scope, "___miss": MISS}
    exec(compile(src, "<checks>", "exec"), glb)  # the test's own source
    ref = glb["ref"]
    return ref, program(lines, ref, LinkParameters(("x",), None, (), None))


def arguments(rng):
    def value(tag):
        kinds = [
            lambda: rng.choice([0, 1, 2, -1, True, False, None, 1.0, -0.0, "a", "k", (1, 2), [1], {"k": 1}]),
            lambda: {"k": rng.choice([0, 1, Logged(tag)])},
            lambda: Logged(tag, None, rng.random() < 0.5, rng.randrange(4)),
            lambda: Logged(tag, ValueError, rng.random() < 0.5, rng.randrange(4)),
            lambda: Logged(tag, Stop, rng.random() < 0.5, rng.randrange(4)),
        ]
        return rng.choice(kinds)()

    return [value(f"a{i}") for i in range(rng.randrange(2, 5))]


def outcome(fn, args):
    """(result, the log of operations) -- or the escaping exception's type and message."""
    LOG.clear()
    GLOBALS["___cell"][:] = [0, 0]
    try:
        r = fn(*args)
        result = "pass" if r is True else "miss" if r is MISS or r is False else r
    except BaseException as e:  # noqa: BLE001 - what escapes is compared
        result = (type(e).__name__, str(e))
    return result, list(LOG), list(GLOBALS["___cell"])


def frames_run(call, *args):
    """(what the call returns, or the exception it raises; the file of each Python frame
    it runs)."""
    seen = []

    def profile(frame, event, arg):
        if event == "call":
            seen.append(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        result = call(*args)
    except Exception as e:  # noqa: BLE001 - what the call raised is its result here
        result = e
    finally:
        sys.setprofile(None)
    return result, seen
