"""Typed access to the CPython internals the analyzer reads.

Code objects and `dis` keep a few undocumented attributes that the analyzer
needs (the name of a fast-locals slot, 3.11's adaptive bytes, dis's private
tables).  They are read here, in one place, with their types, so that the
passes neither repeat the lookups nor need a type checker's exemption.
"""

from __future__ import annotations

import dis
from collections.abc import Callable
from types import CodeType
from typing import Any, cast


def varname_from_oparg(code: CodeType) -> Callable[[int], str]:
    """The name of fast-locals slot k of `code` (locals, then cells and free variables),
    as a function of k: IndexError past the last slot."""
    # (the type as a string: `Callable[[int], str]` itself would build a generic alias on
    # every call, about 1.5 us, and this runs once or twice per code object)
    return cast("Callable[[int], str]", code._varname_from_oparg)  # type: ignore[attr-defined]  # undocumented


def adaptive_code(code: CodeType) -> bytes:
    """3.11's adaptive bytes of `code`: co_code, quickened once the code has run a while
    (co_code itself where the attribute does not exist)."""
    try:  # (no `cast` call and no co_code read ahead: the decoder asks once per code object)
        return code._co_code_adaptive  # type: ignore[attr-defined,no-any-return]  # undocumented
    except AttributeError:
        return code.co_code


def dis_table(name: str) -> Any:
    """One of `dis`'s private tables (``_inline_cache_entries``, ``_nb_ops``, ...)."""
    return getattr(dis, name)
