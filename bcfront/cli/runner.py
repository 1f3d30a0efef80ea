"""Run a script as ``__main__`` the way ``python script.py ARGS`` would.

The script gets its own ``sys.argv``, its directory first on ``sys.path`` and a
fresh ``__main__`` module.  Whatever it raises is caught and formatted as *its*
traceback: frames that belong to bcfront (the runner itself, capture
internals between user frames) are dropped, because a person debugging their
script needs their own frames, and a bcfront frame there only says "the tool
was involved".  ``full_traceback=True`` keeps them (for bcfront bugs).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import traceback
import types
from dataclasses import dataclass

import bcfront

_BCFRONT_DIR = os.path.dirname(os.path.abspath(bcfront.__file__)) + os.sep
# Frames of the machinery that starts a script, never the script's own.
_MACHINERY = ("<frozen runpy>", "<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")


class CliError(Exception):
    """A problem the user fixes on the command line: printed as one short message."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class ScriptResult:
    exit_code: int  # what ``python script.py`` would have exited with
    error: str = ""  # one-line summary when the script raised, else ""
    traceback: str = ""  # the script's own traceback, bcfront frames trimmed
    exception: BaseException | None = None  # what it raised, if anything


def compile_script(path: str) -> types.CodeType:
    """Read and compile `path`; missing files and syntax errors become `CliError`."""
    if not os.path.exists(path):
        raise CliError(f"no such file: {path}")
    if os.path.isdir(path):
        raise CliError(f"{path} is a directory; give a Python script")
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror}") from None
    try:
        return compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        raise CliError(format_syntax_error(e, path), exit_code=1) from None
    except ValueError as e:  # e.g. null bytes in the source
        raise CliError(f"cannot compile {path}: {e}", exit_code=1) from None


def format_syntax_error(e: SyntaxError, path: str) -> str:
    where = f"{e.filename or path}:{e.lineno}" if e.lineno else (e.filename or path)
    lines = [f"syntax error in {where}: {e.msg}"]
    if e.text:
        text = e.text.rstrip("\n")
        stripped = text.lstrip()
        lines.append("    " + stripped)
        if e.offset:
            col = max(0, e.offset - 1 - (len(text) - len(stripped)))
            lines.append("    " + " " * col + "^")
    return "\n".join(lines)


def run_script(path: str, argv: list[str], *, full_traceback: bool = False) -> ScriptResult:
    """Run the script at `path` as ``__main__`` with ``sys.argv = [path, *argv]``."""
    code = compile_script(path)
    main = types.ModuleType("__main__")
    main.__dict__.update(
        __file__=os.path.abspath(path),
        __builtins__=__builtins__,
        __loader__=None,
        __spec__=None,
        __cached__=None,
    )
    saved_argv, saved_path = sys.argv, list(sys.path)
    saved_main = sys.modules.get("__main__")
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    # Pickle, dataclasses and typing look the script's classes up in
    # sys.modules["__main__"], so the script must really be __main__.
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)  # noqa: S102 - running the user's script is the job
    except SystemExit as e:
        return ScriptResult(_exit_code(e))
    except KeyboardInterrupt:
        return ScriptResult(130, "interrupted")
    except BaseException as e:  # noqa: BLE001 - anything the script raises is reported
        return ScriptResult(1, _summary(e), format_script_traceback(e, full=full_traceback), e)
    finally:
        _flush()
        sys.argv = saved_argv
        sys.path[:] = saved_path
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
    return ScriptResult(0)


def _exit_code(e: SystemExit) -> int:
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message") prints the message, exits 1
    return 1


def _summary(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(e).__name__}: {first}" if first else type(e).__name__


def _is_ours(filename: str) -> bool:
    return filename.startswith(_BCFRONT_DIR) or filename in _MACHINERY


def format_script_traceback(e: BaseException, *, full: bool = False) -> str:
    """The traceback of `e` (and its chained causes) without bcfront's own frames."""
    te = traceback.TracebackException(type(e), e, e.__traceback__, compact=True)
    hidden = 0
    if not full:
        todo, seen = [te], set()
        while todo:  # the chain of causes and contexts, iteratively
            t = todo.pop()
            if id(t) in seen:
                continue
            seen.add(id(t))
            kept = [f for f in t.stack if not _is_ours(f.filename)]
            hidden += len(t.stack) - len(kept)
            t.stack = traceback.StackSummary.from_list(kept)
            todo.extend(x for x in (t.__cause__, t.__context__) if x is not None)
    text = "".join(te.format())
    if hidden and any(
        _is_ours(f.filename) and f.filename.startswith(_BCFRONT_DIR)
        for f in traceback.extract_tb(e.__traceback__)[1:]
    ):
        text += "(bcfront frames hidden; --full-traceback shows them)\n"
    return text


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


@contextlib.contextmanager
def stdout_to_stderr():
    """Send everything written to stdout (Python and file descriptor 1) to stderr.

    Used by ``--json``: the script's output stays visible, and stdout, once
    restored, carries nothing but the report.
    """
    _flush()
    try:
        fd = sys.stdout.fileno()
        saved_fd = os.dup(fd)
        os.dup2(sys.stderr.fileno(), fd)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        fd = saved_fd = None  # no real descriptor (e.g. under a test harness)
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        _flush()
        sys.stdout = saved
        if saved_fd is not None:
            os.dup2(saved_fd, fd)
            os.close(saved_fd)
