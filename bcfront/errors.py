"""Exceptions that bcfront raises to its users."""

from __future__ import annotations

from .reasons import BreakReason


class BcfrontError(Exception):
    """Base class of every error bcfront raises on purpose."""


class GraphBreakError(BcfrontError):
    """Raised by ``capture(fn, fullgraph=True)`` at the first graph break.

    Carries the same fields as a `report.GraphBreak`: reason (short
    category), message, filename, lineno, user_stack.
    """

    def __init__(
        self,
        reason: str,
        message: str,
        filename: str | None = None,
        lineno: int | None = None,
        user_stack: tuple = (),
        instruction: str | None = None,
    ):
        self.reason = reason
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.user_stack = tuple(user_stack)
        self.instruction = instruction
        where = f" at {filename}:{lineno}" if filename else ""
        super().__init__(f"graph break ({reason}){where}: {message}")


class BackendCompilerFailed(BcfrontError):
    """A user-supplied backend (a ``(gm, example_inputs) -> callable`` compiler) raised, or
    returned something not callable; its exception is the ``__cause__``."""

    def __init__(self, backend: str, error: BaseException | str):
        self.backend = backend
        what = error if isinstance(error, str) else f"raised {type(error).__name__}: {error}"
        super().__init__(f"backend {backend!r} {what}")


class DynamicDimSpecializedError(BcfrontError):
    """Raised by ``capture(fn, fullgraph=True)`` when the code needs the value of a size the
    user marked with ``bcfront.mark_dynamic`` (without fullgraph: a
    `DynamicDimSpecializedWarning` and a note, and the size is specialized)."""


class DynamicDimSpecializedWarning(UserWarning):
    """A size marked with ``bcfront.mark_dynamic`` was specialized (each size recaptures)."""


class UnsupportedError(BcfrontError):
    """Internal signal: the interpreter cannot represent something (becomes a graph break).

    `reason` must be a `BreakReason` (or its value): an unknown one raises ValueError.
    """

    def __init__(self, reason: BreakReason | str, message: str):
        self.reason = BreakReason.of(reason)
        self.message = message
        super().__init__(f"{reason}: {message}")
