"""Shared helpers of the robustness tests: outcomes of a call, and comparing them with eager.

The oracle is always the plain function: `outcome(fn, *args)` is what a call
does (its value, or its exception's type and message); `assert_agree` checks
that the captured function does the same, comparing values with
`bcfront.testing.differential.diff` (structure, tensor metadata and values,
aliasing), and that bcfront did not get there by falling back after an
internal error (its "internal error" warning).
"""

from __future__ import annotations

import copy
import importlib.util
import textwrap
import warnings

from bcfront.testing.differential import diff

HAS_TORCH = importlib.util.find_spec("torch") is not None


def outcome(fn, /, *args, **kwargs):
    """("value", v) or ("raise", type name, message) for ``fn(*args, **kwargs)``."""
    try:
        return ("value", fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - the exception is the outcome
        return ("raise", type(e).__name__, str(e))


def assert_agree(captured, plain, /, *args, where: str = "", **kwargs):
    """The captured call and the plain call on equal arguments behave the same.

    The plain call gets a deep copy of the arguments (so mutations of one side
    do not leak into the other); the captured call gets the originals, so a
    test can keep passing the same objects to it across calls.
    """
    try:
        p_args, p_kwargs = copy.deepcopy((args, kwargs))
    except Exception:  # noqa: BLE001 - not copyable (a module, a lock): share it
        p_args, p_kwargs = args, kwargs
    expected = outcome(plain, *p_args, **p_kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        actual = outcome(captured, *args, **kwargs)
    internal = [str(w.message) for w in caught if "internal error" in str(w.message)]
    assert not internal, f"{where}: bcfront hit an internal error (it fell back to native): {internal[0]}"
    problem = diff(expected, actual)
    assert problem is None, f"{where}: captured call differs from the plain call {problem}"
    return actual


def make_namespace(source: str, name: str = "robust_mod", **globals_) -> dict:
    """Execute `source` as a fresh module namespace (so a test may rebind its globals)."""
    ns = {"__name__": name, **globals_}
    exec(compile(textwrap.dedent(source), f"<{name}>", "exec"), ns)
    return ns
