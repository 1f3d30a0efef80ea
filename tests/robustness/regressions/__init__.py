"""The shrunk fuzzer mismatches `tests/robustness/test_regressions.py` runs, by theme.

A `Regression` is module source defining ``f``, the calls to make, where it came from
and what went wrong; `open_bug` marks one that still fails (a strict xfail)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Regression:
    source: str
    calls: tuple
    found: str  # campaign / program, and the symptom
    open_bug: str | None = None  # set while the bug is not fixed (strict xfail)
    open_from: tuple = (3, 0)  # the Python versions the bug shows on (this one and later)
    isolate: bool = False  # run in a child process (the bug crashes the interpreter)
