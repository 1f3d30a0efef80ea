"""C accelerators traced through their Python twins.

Some standard-library modules are written in Python and then replace their
functions by a C module's (`heapq` by `_heapq`, `bisect` by `_bisect`): the C
function mutates its arguments, so it is not pure (`pure_c`), but the Python
version it replaced does the very same thing and can be inlined.  `twin(obj)`
is that Python version: the module's source loaded once more, privately, with
its accelerator blocked.  The twin runs only inside traces; real code never
sees it.
"""

from __future__ import annotations

import importlib.util
import sys

# module -> its C accelerator, whose functions the module's own Python ones stand for
_ACCELERATED = {"heapq": "_heapq", "bisect": "_bisect"}
_TWINS: dict = {}
_LOADED: set = set()


def _load(name: str, accel: str) -> None:
    _LOADED.add(name)
    spec = importlib.util.find_spec(name)
    c_mod = sys.modules.get(accel) or importlib.import_module(accel)
    if spec is None or spec.loader is None:
        return
    saved = sys.modules.get(accel)
    sys.modules[accel] = None  # type: ignore[assignment]  # `from _heapq import *` fails: Python ones stay
    try:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except Exception:  # noqa: BLE001 - no twin: the C call stays a graph break
        return
    finally:
        sys.modules[accel] = saved  # type: ignore[assignment]
    for attr, fn in vars(c_mod).items():
        py = getattr(mod, attr, None)
        if callable(fn) and py is not None and getattr(py, "__code__", None) is not None:
            _TWINS[fn] = py


def twin(obj):
    """The Python function a C accelerator function stands for, or None."""
    mod = getattr(obj, "__module__", None)
    for name, accel in _ACCELERATED.items():
        if mod == accel and name not in _LOADED:
            _load(name, accel)
    try:
        return _TWINS.get(obj)
    except TypeError:
        return None
