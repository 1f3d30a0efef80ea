"""Models of ``io.StringIO`` made in the trace, and of ``print(..., file=<one of them>)``.

A StringIO is a `c_instances.StringIOV`: its text and position, known at capture.
Writing text not known at capture (the text of a tensor) is a graph break; so is a
newline translation other than the default (``newline="\\n"``: none).  The text
semantics are CPython's: a write at a position overwrites, a write past the end
pads with NUL characters, a closed one raises ``ValueError``.  Each model is
registered under the StringIO method it stands for.
"""

from __future__ import annotations

import io

from ...errors import UnsupportedError
from ...reasons import BreakReason
from ..model.c_instances import StringIOV
from ..model.values import Const, ListV, ObjectV, Value
from . import dispatch
from .folding import raise_
from .iteration import to_list
from .registry import MODELS, ctor, model

StringIO = io.StringIO


def _sio(v, check_open: bool = True) -> StringIOV:
    if not isinstance(v, StringIOV):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"StringIO method on {v.describe()}")
    if check_open and v.closed:
        raise_(ValueError, "I/O operation on closed file")
    return v


def _known(v: Value, what: str):
    if not isinstance(v, Const):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, f"StringIO.{what} of {v.describe()}")
    return v.value


@ctor(StringIO)
def _new(tx, clsv, args, kwargs):
    if set(kwargs) - {"initial_value", "newline"} or len(args) > 2:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "StringIO() with these arguments")
    init = args[0] if args else kwargs.get("initial_value", Const(""))
    newline = args[1] if len(args) > 1 else kwargs.get("newline", Const("\n"))
    if not (isinstance(newline, Const) and newline.value == "\n"):
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "StringIO with newline translation")
    text = _known(init, "__init__")
    if text is None:
        text = ""
    if type(text) is not str:
        raise_(TypeError, f"initial_value must be str or None, not {type(text).__name__}")
    return StringIOV(text, 0)


def write_text(tx, s: StringIOV, text: str) -> None:
    """Write `text` at the position, as CPython's StringIO does."""
    pad = "\0" * max(0, s.pos - len(s.text))
    head = s.text[: s.pos] + pad
    tx.set(s, "text", head + text + s.text[s.pos + len(text) :])
    tx.set(s, "pos", s.pos + len(text))


@model(StringIO.write)
def _write(tx, args, kwargs):
    s = _sio(args[0])
    text = _known(args[1], "write")
    if type(text) is not str:
        raise_(TypeError, f"string argument expected, got '{type(text).__name__}'")
    write_text(tx, s, text)
    return Const(len(text))


@model(StringIO.writelines)
def _writelines(tx, args, kwargs):
    s = _sio(args[0])
    for line in to_list(tx, args[1]):
        _write(tx, [s, line], {})
    return Const(None)


@model(StringIO.getvalue)
def _getvalue(tx, args, kwargs):
    return Const(_sio(args[0]).text)


def _size(args, default=-1) -> int:
    n = _known(args[0], "read") if args else default
    if n is None:
        return -1
    if type(n) is not int:
        raise_(TypeError, f"argument should be integer or None, not '{type(n).__name__}'")
    return n


@model(StringIO.read)
def _read(tx, args, kwargs):
    s = _sio(args[0])
    n = _size(args[1:])
    end = len(s.text) if n < 0 else min(len(s.text), s.pos + n)
    out = s.text[s.pos : end] if s.pos < end else ""
    tx.set(s, "pos", max(s.pos, end))
    return Const(out)


@model(StringIO.readline)
def _readline(tx, args, kwargs):
    s = _sio(args[0])
    n = _size(args[1:])
    rest = s.text[s.pos :]
    nl = rest.find("\n")
    line = rest if nl < 0 else rest[: nl + 1]
    if n >= 0:
        line = line[:n]
    tx.set(s, "pos", s.pos + len(line))
    return Const(line)


@model(StringIO.readlines)
def _readlines(tx, args, kwargs):
    lines = []
    while True:
        line = _readline(tx, [args[0]], {})
        if not line.value:
            return ListV(lines)
        lines.append(line)


@model(StringIO.__next__)
def _next(tx, args, kwargs):
    line = _readline(tx, [args[0]], {})
    if not line.value:
        raise_(StopIteration)
    return line


@model(StringIO.__iter__, StringIO.__enter__)
def _self(tx, args, kwargs):
    _sio(args[0])
    return args[0]


@model(StringIO.__exit__, StringIO.close)
def _close(tx, args, kwargs):
    s = _sio(args[0], check_open=False)
    if not s.closed:
        tx.set(s, "closed", True)
    return Const(None)


@model(StringIO.closed)
def _closed(tx, args, kwargs):
    return Const(_sio(args[0], check_open=False).closed)


@model(StringIO.tell)
def _tell(tx, args, kwargs):
    return Const(_sio(args[0]).pos)


@model(StringIO.seek)
def _seek(tx, args, kwargs):
    s = _sio(args[0])
    pos = _known(args[1], "seek")
    whence = _known(args[2], "seek") if len(args) > 2 else 0
    if type(pos) is not int or type(whence) is not int:
        raise UnsupportedError(BreakReason.UNSUPPORTED_CALL, "StringIO.seek with these arguments")
    if whence not in (0, 1, 2):
        raise_(ValueError, f"Invalid whence ({whence}, should be 0, 1 or 2)")
    if whence == 0 and pos < 0:
        raise_(ValueError, f"Negative seek position {pos}")
    if whence != 0 and pos != 0:
        raise_(OSError, "Can't do nonzero cur-relative seeks")
    new = pos if whence == 0 else s.pos if whence == 1 else len(s.text)
    tx.set(s, "pos", new)
    return Const(new)


@model(StringIO.truncate)
def _truncate(tx, args, kwargs):
    s = _sio(args[0])
    size = _size(args[1:], s.pos) if len(args) > 1 and not _is_none(args[1]) else s.pos
    if size < 0:
        raise_(ValueError, f"Negative size value {size}")
    if size < len(s.text):
        tx.set(s, "text", s.text[:size])
    return Const(size)


def _is_none(v) -> bool:
    return isinstance(v, Const) and v.value is None


for _name in ("readable", "writable", "seekable"):
    MODELS[getattr(StringIO, _name)] = lambda tx, args, kwargs: (_sio(args[0]), Const(True))[1]


def print_to(tx, args, kwargs) -> Value | None:
    """``print(*args, sep=, end=, file=s, flush=)`` to a StringIO made in the trace: each
    argument's ``str()``, written; None when `file` is not one (the caller breaks)."""
    target = kwargs.get("file")
    if not isinstance(target, StringIOV) or set(kwargs) - {"sep", "end", "file", "flush"}:
        return None
    s = _sio(target)
    sep, end = (_text(kwargs.get(k), d, k) for k, d in (("sep", " "), ("end", "\n")))
    parts = []
    for a in args:
        text = dispatch.call(tx, ObjectV(str), [a], {})
        parts.append(_known(text, "write"))
    write_text(tx, s, sep.join(parts) + end)
    return Const(None)


def _text(v, default: str, name: str) -> str:
    if v is None or _is_none(v):
        return default
    text = _known(v, "write")
    if type(text) is not str:
        raise_(TypeError, f"{name} must be None or a string, not {type(text).__name__}")
    return text
