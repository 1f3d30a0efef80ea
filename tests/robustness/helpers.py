"""Shared helpers of the robustness tests: outcomes of a call, and comparing them with eager.

The oracle is always the plain function: `outcome(fn, *args)` is what a call
does (its value, or its exception's type and message); `assert_agree` checks
that the captured function does the same, comparing values with
`bcfront.testing.differential.diff` (structure, tensor metadata and values,
aliasing).
"""
from __future__ import annotations

import importlib.util
import textwrap

from bcfront.testing.differential import diff

HAS_TORCH = importlib.util.find_spec("torch") is not None


def outcome(fn, /, *args, **kwargs):
    """("value", v) or ("raise", type name, message) for ``fn(*args, **kwargs)``."""
    try:
        return ("value", fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - the exception is the outcome
        return ("raise", type(e).__name__, str(e))


def assert_agree(captured, plain, /, *args, where: str = "", **kwargs):
    """The captured call and the plain call on equal arguments behave the same."""
    expected = outcome(plain, *args, **kwargs)
    actual = outcome(captured, *args, **kwargs)
    problem = diff(expected, actual)
    assert problem is None, f"{where}: captured call differs from the plain call {problem}"
    return actual


def make_namespace(source: str, name: str = "robust_mod", **globals_) -> dict:
    """Execute `source` as a fresh module namespace (so a test may rebind its globals)."""
    ns = {"__name__": name, **globals_}
    exec(compile(textwrap.dedent(source), f"<{name}>", "exec"), ns)
    return ns
