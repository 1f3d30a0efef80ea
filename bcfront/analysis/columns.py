"""Whole-column helpers in C speed: shared int objects, flagged positions, byte sums.

The decoder and the passes after it work on columns (one entry per instruction:
a bytes object of opcodes, lists of offsets, arguments, ...) rather than on one
object per instruction.  These helpers keep such column work inside C loops;
each says what it computes in plain terms, and `byte_sum` has a plain reference
(`byte_sum_reference`) that the tests compare it with.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import compress
from zlib import adler32

SHARED_INTS: list[int] = []


def shared_ints(n: int) -> list[int]:
    """At least the ints 0..n-1, each ``ints[k]`` the int k: one list of int objects
    shared by the decoder and every CFG (picking from it allocates no ints, and two
    picks of k are the same object), grown on demand."""
    have = len(SHARED_INTS)
    if n > have:
        SHARED_INTS.extend(range(have, n))
    return SHARED_INTS


def positions_flagged(opbytes: bytes, flags: bytes) -> Iterator[int]:
    """The positions in `opbytes` of the opcodes that `flags` (a 256-byte translate
    table) maps to 1: a translate and a compress over the shared ints, in C (a regex
    search costs ~40 machine instructions per byte, and a match object per hit)."""
    n = len(opbytes)
    ints = SHARED_INTS if n <= len(SHARED_INTS) else shared_ints(n)
    return compress(ints, opbytes.translate(flags))


# adler32's low 16 bits are (1 + the sum of the bytes) modulo 65521.
_ADLER_MODULUS = 65521


def byte_sum(data: bytes, top: int) -> int:
    """``sum(data)``, for bytes that are each at most `top`, several times faster.

    Why: the decoder sums a function's instruction sizes and its line table's entry
    lengths (one byte each) on every call; ``sum`` makes a Python int per byte, while
    zlib's adler32 sums bytes in C.  What: the low half of ``adler32(data)`` is 1 plus
    the byte sum modulo 65521, which is the exact sum while that stays below 65520;
    `data` is summed in slices short enough for that (one slice unless a function is
    very big).  `byte_sum_reference` is the plain version the tests compare it with.
    """
    step = (_ADLER_MODULUS - 2) // top
    if len(data) <= step:
        return (adler32(data) & 0xFFFF) - 1
    view = memoryview(data)
    return sum([(adler32(view[i : i + step]) & 0xFFFF) - 1 for i in range(0, len(data), step)])


def byte_sum_reference(data: bytes) -> int:
    """The sum of the bytes of `data`: what `byte_sum` computes, written plainly."""
    total = 0
    for b in data:
        total += b
    return total
