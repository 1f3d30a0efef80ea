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


OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(CaptureOptions))


def capture_options(options: dict) -> CaptureOptions:
    """`options` checked: each name known, each value of the field's type."""
    unknown = sorted(set(options) - OPTION_NAMES)
    if unknown:
        raise TypeError(
            f"bcfront.capture got unknown option(s) {', '.join(map(repr, unknown))}; "
            f"known options: {', '.join(sorted(OPTION_NAMES))}"
        )
    for name, value in options.items():
        if not isinstance(value, bool):
            raise TypeError(f"bcfront.capture option {name!r} must be a bool, got {type(value).__name__}")
    return CaptureOptions(**options)
