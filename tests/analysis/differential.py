"""What the differential tests (a fast pass against its plain reference) share: the
sample they run over, and a loop that names the code object a check fails on."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable

from corpus import corpus_code_objects, stdlib_code_objects


def named(code: types.CodeType) -> str:
    """Where a code object comes from, for a failure message: ``file:line qualname``."""
    return f"{code.co_filename}:{code.co_firstlineno} {code.co_qualname}"


def differential_sample(max_corpus_blocks: int | None = None) -> list[tuple[str, types.CodeType]]:
    """The differential tests' sample, named: the corpus (its code objects of at most
    `max_corpus_blocks` blocks, when given) and every 4th code object of every 40th
    standard-library file (deterministic)."""
    corpus = corpus_code_objects()
    if max_corpus_blocks is not None:
        from bcfront.analysis import FunctionAnalysis

        corpus = [(n, c) for n, c in corpus if len(FunctionAnalysis(c).cfg.blocks) <= max_corpus_blocks]
    return corpus + [(named(c), c) for c in stdlib_code_objects(every=40)[::4]]


def check_each(
    named_codes: Iterable[tuple[str, types.CodeType]], check: Callable[[types.CodeType], None]
) -> None:
    """`check(code)` on each (name, code) pair; an AssertionError names the code object."""
    for name, code in named_codes:
        try:
            check(code)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from exc
