"""Tracebacks for exceptions the trace raised and a continuation rebuilds (O30).

An exception raised symbolically has no real traceback.  When it crosses a graph
break it is rebuilt as a real object, and code after the break may read its
``__traceback__``, print it or walk it.  The interpreter records the frames the
exception passed through, outermost first, as ``(filename, name, positions)``
triples (`model.frame.frame_entry`: CPython adds one traceback entry per frame
the exception leaves or is caught in, none for a bare ``raise``/RERAISE in the
frame that re-raises it).
`attach` gives the rebuilt object a real traceback with those entries: it raises
the exception through one small synthesized function per entry, each claiming
the user's file, function name and the raising instruction's source position
(so a printed traceback shows the same lines and carets as CPython's).
"""

from __future__ import annotations

_RAISERS: dict = {}  # (filename, name, positions) -> function; bounded below

_TEMPLATE = "def _raiser(exc, rest):\n    rest[0](exc, rest[1:]) if rest else None; raise exc\n"


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 64:
        out.append(0x40 | (n & 63))
        n >>= 6
    out.append(n)
    return bytes(out)


def location_table(n_units: int, end_line_delta: int, col, end_col) -> bytes:
    """A location table (the 3.11+ format, Objects/locations.md) putting every code unit at
    one source position: the long form with columns when known, else line-only."""
    if col is None or end_col is None or end_line_delta < 0:
        entry, kind = b"\x00", 13  # kind 13: line delta only (svarint 0)
    else:
        entry, kind = (
            (b"\x00" + _varint(end_line_delta) + _varint(col + 1) + _varint(end_col + 1)),
            14,
        )  # kind 14: long form
    out = bytearray()
    while n_units > 0:
        length = min(n_units, 8)
        out.append(0x80 | (kind << 3) | (length - 1))
        out += entry
        n_units -= length
    return bytes(out)


def claiming(template: str, filename: str, name: str, qualname: str, positions: tuple, fn_globals: dict):
    """The one function `template` defines (fixed source), its code claiming `filename`,
    function `name` and, for every instruction, source `positions` (lineno, end_lineno, col,
    end_col), with globals `fn_globals`."""
    lineno, end_lineno, col, end_col = positions
    ns: dict = {}
    exec(compile(template, "<bcfront-claiming>", "exec"), ns)  # noqa: S102 - a fixed template
    made = next(v for k, v in ns.items() if k != "__builtins__")
    code = made.__code__
    table = location_table(len(code.co_code) // 2, (end_lineno or lineno) - lineno, col, end_col)
    code = code.replace(
        co_filename=filename,
        co_name=name,
        co_qualname=qualname,
        co_firstlineno=max(int(lineno), 1),
        co_linetable=table,
    )
    return type(made)(code, fn_globals, name)


def _raiser(filename: str, name: str, positions: tuple):
    key = (filename, name, positions)
    fn = _RAISERS.get(key)
    if fn is None:
        fn = claiming(_TEMPLATE, filename, name, name, positions, {"__builtins__": __builtins__})
        if len(_RAISERS) > 10_000:
            _RAISERS.clear()
        _RAISERS[key] = fn
    return fn


def attach(exc: BaseException, entries) -> BaseException:
    """Give `exc` a traceback through `entries` ((filename, name, positions), outermost first),
    keeping its chaining fields as they were."""
    if not entries:
        return exc
    chain = (exc.__context__, exc.__cause__, exc.__suppress_context__)
    raisers = tuple(_raiser(*e) for e in entries)
    try:
        raisers[0](exc, raisers[1:])
    except BaseException:  # noqa: BLE001 - it is `exc` itself
        pass
    tb = exc.__traceback__
    exc.__traceback__ = tb.tb_next if tb is not None else None  # drop this frame's own entry
    exc.__context__, exc.__cause__, exc.__suppress_context__ = chain
    del tb
    return exc
