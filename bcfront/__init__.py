"""bcfront: a bytecode-level Python frontend and program analyzer for PyTorch.

Public API (see DESIGN.md): `capture`, `explain`, `analyze`, `GraphBreakError`.
Importing bcfront never imports torch; the parts that need it import it lazily.
"""

from __future__ import annotations

from .errors import BackendCompilerFailed, BcfrontError, GraphBreakError

__all__ = [
    "BackendCompilerFailed",
    "BcfrontError",
    "GraphBreakError",
    "analyze",
    "capture",
    "explain",
    "mark_dynamic",
    "mark_static",
    "maybe_mark_dynamic",
]
__version__ = "0.1.0"


def analyze(fn_or_code):
    """Static analysis of a function or code object (no execution, no torch)."""
    from .analysis import analyze as _analyze

    return _analyze(fn_or_code)


# Import the submodules before defining the functions of the same name: importing
# a submodule binds it as a package attribute, which must not shadow the functions.
from . import capture as _capture_module  # noqa: E402  (torch-free)
from . import explain as _explain_module  # noqa: E402  (torch-free)
from .frontend.regions.hidden_frames import hide as _hide_frames  # noqa: E402  (torch-free)
from .shapes import mark_dynamic, mark_static, maybe_mark_dynamic  # noqa: E402  (torch-free)


def capture(fn=None, *, backend="auto", fullgraph=False, **options):
    """Capture `fn` (function, bound method or nn.Module); usable as a decorator."""
    return _capture_module.capture(fn, backend=backend, fullgraph=fullgraph, **options)


capture.registry = _capture_module.registry
capture.CapturedFunction = _capture_module.CapturedFunction


def explain(fn, /, *args, **kwargs):
    """Run `fn` once under capture and return a `Report` of graphs, breaks, guards."""
    try:
        return _explain_module.explain(fn, *args, **kwargs)
    except BaseException as e:  # what `fn` raised: with the user's frames only, as natively
        _hide_frames(e)
        raise


explain.collect = _explain_module.collect  # with bcfront.explain.collect() as run: ...
