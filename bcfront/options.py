"""The options of `bcfront.capture`, checked once: an unknown name is an error, not ignored.

``capture(fn, backend=..., fullgraph=..., recompile_limit=..., **options)`` passes
``options`` here; `CaptureOptions` is what the tracer reads (``tx.options``).
Continuations are created with the same options as the function they continue.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CaptureOptions:
    # What ``torch.compiler.is_compiling()`` (and its Dynamo spellings) answers inside
    # captured code.  True, as under torch.compile: libraries test it to take their
    # trace-friendly paths (transformers skips its ContextVar output collector and
    # data-dependent mask shortcuts).  The native parts of a function (after a graph
    # break) always see torch's own answer, False.
    compiling: bool = True
    # ``t.item()``, ``int(t)``/``float(t)``/``bool(t)`` and ``t.tolist()`` stay in the graph:
    # the number is computed there and reaches Python only where it escapes (returned,
    # branched on, printed: a graph break hands over the real number).  Arithmetic with
    # it and its use as a value operand of tensor ops are captured; a use whose result
    # depends on its value (a branch, a shape) breaks.  Off: each read is a break.
    capture_scalar_outputs: bool = False
    # Symbolic sizes (`frontend/model/shape_policy.py`).  None (automatic): a size or an int
    # argument that changes between two captures is a symbol from the next capture on, so
    # one entry serves every later value.  True: every input size (and int argument) is a
    # symbol from the first capture.  False: only what `bcfront.mark_dynamic` marks.
    dynamic: bool | None = None
    # ``loss.backward()`` in a graph for a backend that compiles (fx, a compiler callable,
    # triton): the graph is cut at the backward, ``.grad`` accesses, optimizer steps and
    # user autograd Functions, and each piece between them goes to torch's AOT autograd,
    # which gives the backend a forward and a backward graph (`backends/joint.py`).  Off:
    # such a graph runs on the eager backend, with a note.  The eager backend runs eager's
    # own backward either way (the option changes nothing there).
    joint_graph: bool = False


OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(CaptureOptions))
_OPTIONAL = frozenset({"dynamic"})  # None is a value of these


def capture_options(options: dict) -> CaptureOptions:
    """`options` checked: each name known, each value of the field's type."""
    unknown = sorted(set(options) - OPTION_NAMES)
    if unknown:
        raise TypeError(
            f"bcfront.capture got unknown option(s) {', '.join(map(repr, unknown))}; "
            f"known options: {', '.join(sorted(OPTION_NAMES))}"
        )
    for name, value in options.items():
        if value is None and name in _OPTIONAL:
            continue
        if not isinstance(value, bool):
            raise TypeError(f"bcfront.capture option {name!r} must be a bool, got {type(value).__name__}")
    return CaptureOptions(**options)
