"""The fixed frame of a random program (`fuzzgen`): prelude, parameters, typed scope.

The prelude is the module text every program starts from (globals, `FuzzError`,
the `Box` class, the `Ctx` context manager; torch, `BIAS` and, for module
programs, the module `M` around ``f``).  `PARAMS` and `PARAM_TYPES` are ``f``'s
parameters and their types per mode, `FIXED` the globals it may read or mutate
but never rebind, `NEW_VAR_TYPES` the types a new variable is drawn from, and
`Scope` the variables in reach while the generator writes the body.
"""

from __future__ import annotations

PRELUDE_PY = """\
import bisect
import collections
import copy
import functools
import heapq
import itertools
import json
import math
from contextlib import suppress

G = 0
STATE = []


class FuzzError(Exception):
    pass


class Box:
    def __init__(self, v, items=()):
        self.v = v
        self.items = list(items)

    def bump(self, k):
        self.v += k
        return self.v


class Ctx:
    def __init__(self, tag, swallow=False):
        self.tag, self.swallow = tag, swallow

    def __enter__(self):
        print('enter', self.tag)
        return self.tag

    def __exit__(self, typ, exc, tb):
        print('exit', self.tag, None if typ is None else typ.__name__)
        return self.swallow
"""

PRELUDE_TENSOR = "import torch\n" + PRELUDE_PY + "\n\nBIAS = torch.tensor(1.5)\n"

# A module program's `f` becomes the forward of `M`; `MOD` is what gets captured and called.
POSTLUDE_MODULE = """\
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor(1.5))
        self.register_buffer("count", torch.zeros(()))
        self.act = torch.nn.ReLU()
        self.calls = 0

    forward = f


MOD = M()
"""

PARAMS = {"py": "a, b, xs, d, s, o, k=2, *rest, **kw", "tensor": "t, u, n, xs", "module": "self, t, u, n, xs"}
PARAM_TYPES = {
    "py": {
        "a": "int",
        "b": "int",
        "xs": "list",
        "d": "dict",
        "s": "str",
        "o": "box",
        "k": "int",
        "rest": "rest",
        "kw": "dict",
    },
    "tensor": {"t": "M", "u": "M", "n": "int", "xs": "list"},
    "module": {"self": "mod", "t": "M", "u": "M", "n": "int", "xs": "list"},
}
# Names the function may read or mutate but never rebind (rebinding would make them local).
FIXED = {
    "py": {"STATE": "list"},
    "tensor": {"STATE": "list", "BIAS": "S"},
    "module": {"STATE": "list", "BIAS": "S"},
}
PY_TYPES = frozenset({"int", "bool", "list", "dict", "str", "box"})
NEW_VAR_TYPES = {
    "py": ("int", "int", "list", "dict", "str"),
    "tensor": ("M", "M", "M", "R", "C", "S", "MT", "F", "int", "list"),
}
NEW_VAR_TYPES["module"] = NEW_VAR_TYPES["tensor"]
ERRORS = (
    "ValueError",
    "KeyError",
    "IndexError",
    "ZeroDivisionError",
    "FuzzError",
    "(KeyError, IndexError)",
    "LookupError",
    "ArithmeticError",
    "Exception",
    "RuntimeError",
    "TypeError",
    "AssertionError",
)


class Scope:
    """Variables by name -> type, in nested blocks; `fn_base` marks the current function."""

    def __init__(self, params: dict, fixed: dict):
        self.frames = [dict(params)]
        self.fixed = dict(fixed)
        self.fn_base = 0
        self.frozen: set[str] = set()  # loop counters: rebinding one could make a loop endless

    def names(self, typ: str) -> list[str]:
        out = [n for fr in self.frames for n, t in fr.items() if t == typ]
        out += [n for n, t in self.fixed.items() if t == typ]
        return sorted(set(out))

    def rebindable(self, typ: str) -> list[str]:
        return sorted(
            {
                n
                for fr in self.frames[self.fn_base :]
                for n, t in fr.items()
                if t == typ and n not in self.frozen
            }
        )

    def define(self, name: str, typ: str) -> None:
        self.frames[-1][name] = typ
