"""Resolve ``path.py:function`` or ``module:function`` to a code object, without running it.

The file is compiled, never executed: the function's code object is found
among the nested constants of the module's code by its qualified name
(``Class.method``, ``outer.inner`` or CPython's ``outer.<locals>.inner``).
So analysing a file imports nothing it imports, and needs no torch.  A module
whose source cannot be found (a C extension) is imported instead.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import os
import types

from .runner import CliError, compile_script


def iter_code_objects(code: types.CodeType):
    """Every code object nested in `code` (functions, methods, lambdas, class bodies), in order."""
    todo = [code]
    while todo:
        c = todo.pop(0)
        yield c
        todo[0:0] = [k for k in c.co_consts if isinstance(k, types.CodeType)]


def is_function(code: types.CodeType) -> bool:
    """Function bodies (and lambdas, 3.11 comprehensions); not module or class bodies."""
    return bool(code.co_flags & inspect.CO_NEWLOCALS)


def short_qualname(code: types.CodeType) -> str:
    return code.co_qualname.replace(".<locals>", "")


def functions_by_name(module_code: types.CodeType) -> dict[str, list[types.CodeType]]:
    """Function code objects keyed by qualname, and by qualname without ``<locals>``."""
    out: dict[str, list[types.CodeType]] = {}
    for c in iter_code_objects(module_code):
        if not is_function(c):
            continue
        for key in {c.co_qualname, short_qualname(c)}:
            out.setdefault(key, []).append(c)
    return out


def split_target(target: str) -> tuple[str, str]:
    where, sep, name = target.rpartition(":")
    # "C:\\x.py:f" keeps its drive: rpartition splits at the last colon.
    if not sep or not where or not name:
        raise CliError(
            f"bad target {target!r}: use path.py:function or module:function "
            f"(e.g. examples/gpt.py:GPT.forward)"
        )
    return where, name


def module_code(where: str) -> tuple[types.CodeType | None, types.ModuleType | None, str]:
    """The compiled code of a file or module (or the imported module when it has no source)."""
    if where.endswith(".py") or os.sep in where or "/" in where or os.path.isfile(where):
        return compile_script(where), None, where
    try:
        spec = importlib.util.find_spec(where)
    except (ImportError, ValueError) as e:
        raise CliError(f"cannot find module {where!r}: {e}") from None
    if spec is None:
        raise CliError(f"no module named {where!r} (and no file {where!r})")
    origin = spec.origin or ""
    if origin.endswith(".py") and os.path.isfile(origin):
        return compile_script(origin), None, origin
    try:
        return None, importlib.import_module(where), origin or where
    except Exception as e:  # noqa: BLE001 - a broken module is the user's error
        raise CliError(f"importing {where!r} failed: {type(e).__name__}: {e}") from None


def resolve(target: str):
    """The code object (or, for source-less modules, the object) named by `target`."""
    where, name = split_target(target)
    code, module, label = module_code(where)
    if module is not None:
        obj = module
        for part in name.split("."):
            if not hasattr(obj, part):
                raise CliError(f"{label} has no function {name!r}")
            obj = getattr(obj, part)
        return obj
    table = functions_by_name(code)
    found = table.get(name)
    if not found:
        raise CliError(_unknown(name, label, table))
    return found[0]


def _unknown(name: str, label: str, table: dict) -> str:
    names = sorted({k for k in table if "<" not in k})
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    msg = f"no function {name!r} in {label}"
    if close:
        return msg + f"; did you mean {', '.join(close)}?"
    if not names:
        return msg + " (it defines no functions)"
    shown = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
    return msg + f"; it defines: {shown}"
