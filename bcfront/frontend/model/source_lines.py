"""Source lines for reports, read without touching ``linecache.cache``.

A trace names the line of each graph node, guard and break (`Tracer.loc`,
`Tracer.report_frame`).  ``linecache.getline`` would add the file to ``linecache.cache``
-- an object the traced code may have read (``traceback.extract_tb`` reads its keys, under
a DICT_KEYS guard), so the fresh entry's guards would fail on the very call they were made
for.  `source_line` reads a line from ``linecache.cache`` where the file is there already
(never loading a lazy entry in place), else from a cache of its own.
"""

from __future__ import annotations

import linecache
import tokenize

_OWN: dict[str, list[str]] = {}  # filename -> its lines, for files linecache does not hold
_OWN_LIMIT = 256  # files kept (a trace meets a few dozen)


def source_line(filename: str, lineno: int | None) -> str:
    """Line `lineno` of `filename`, stripped; "" where there is none."""
    if not lineno or lineno < 1:
        return ""
    lines = _lines(filename)
    return lines[lineno - 1].strip() if lineno <= len(lines) else ""


def _lines(filename: str) -> list[str]:
    entry = linecache.cache.get(filename)
    if entry is not None and len(entry) != 1:
        return entry[2]
    lines = _OWN.get(filename)
    if lines is None:
        lines = _read(filename, entry)
        if len(_OWN) >= _OWN_LIMIT:
            _OWN.clear()
        _OWN[filename] = lines
    return lines


def _read(filename: str, entry) -> list[str]:
    if entry is not None:  # a lazy entry (generated code): its loader, called, not stored
        try:
            text = entry[0]()
        except Exception:  # noqa: BLE001 - no source: no line
            return []
        return text.splitlines(keepends=True) if isinstance(text, str) else []
    if not filename or (filename.startswith("<") and filename.endswith(">")):
        return []
    try:
        with tokenize.open(filename) as f:
            return f.readlines()
    except (OSError, SyntaxError, UnicodeDecodeError):
        return []
