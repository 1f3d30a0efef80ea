"""Graph breaks: what happens when the trace reaches something it cannot represent.

(Placeholder until continuations land: the function runs natively under the
guards collected so far, and the break is recorded.)
"""
from __future__ import annotations

from .driver import break_record, native_entry


def compile_break(cf, root, tx, err, frame):
    return native_entry(cf, root, tx, breaks_=[break_record(err)])
