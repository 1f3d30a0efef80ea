"""``io.StringIO`` made in the function captured whole (#28): write, ``print(file=)``,
getvalue, read, readline, seek, tell, iteration, close, against plain Python
(`container_oracle`: a StringIO that leaves the call has the same text and position)."""

from __future__ import annotations

import io

import pytest

from .container_oracle import check


def writes(xs):
    s = io.StringIO()
    for x in xs:
        s.write(str(x))
        s.write(",")
    print("total", sum(xs), sep="=", end="!\n", file=s)
    print(*xs, file=s)
    return s.getvalue(), s.tell(), s


def reads(text):
    s = io.StringIO(text)
    first = s.read(3)
    line = s.readline()
    rest = s.readlines()
    s.seek(0)
    lines = [ln for ln in s]
    s.seek(1)
    s.write("Z")
    return first, line, rest, lines, s.getvalue(), s.tell(), s.seek(0, 2)


def overwrite_and_pad(text):
    s = io.StringIO(text)
    s.seek(len(text) + 2)
    s.write("end")
    s.seek(0)
    n = s.write("AB")
    s.truncate(4)
    return repr(s.getvalue()), n, s.tell()


def closed_errors(text):
    with io.StringIO(text) as s:
        got = s.read()
    out = [got, s.closed]
    for op in (s.read, s.getvalue, lambda: s.write("x")):
        try:
            op()
        except ValueError as e:
            out.append(str(e))
    return out


def bad_arguments(x):
    s = io.StringIO()
    out = []
    for op in (lambda: s.write(x), lambda: s.seek(-1), lambda: s.seek(1, 1)):
        try:
            op()
        except (TypeError, ValueError, OSError) as e:
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize(
    "fn, args",
    [
        (writes, ([1, 2, 3],)),
        (reads, ("abc\ndef\nghi",)),
        (reads, ("one line",)),
        (overwrite_and_pad, ("hello",)),
        (closed_errors, ("text",)),
        (bad_arguments, (5,)),
    ],
    ids=lambda a: getattr(a, "__name__", repr(a)),
)
def test_made_in_the_function(fn, args):
    check(fn, lambda: args)
