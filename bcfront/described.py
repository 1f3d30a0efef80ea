"""`DescribedStrEnum`: a closed vocabulary whose members are strings with a one-line meaning.

Members are declared as ``NAME = "value", "meaning"``; the member is the string
``value`` (so comparisons with plain strings and JSON output are unchanged) and
carries ``.meaning``.  `reasons.BreakReason` and `frontend.model.guard_kinds.GuardKind`
are built on it.  A leaf module: it imports nothing from bcfront.
"""

from __future__ import annotations

import enum
from typing import Self


class DescribedStrEnum(enum.StrEnum):
    """A `StrEnum` whose members also carry a one-line `.meaning`."""

    meaning: str

    def __new__(cls, value: str, meaning: str) -> Self:
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    @classmethod
    def of(cls, value: str) -> Self:
        """The member whose value is `value` (a member is itself); ValueError for any other."""
        # (mypy reads the member-defining __new__ above as the signature of the lookup)
        return cls(value)  # type: ignore[call-arg]
