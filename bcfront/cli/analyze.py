"""``--analyze TARGET``: the analyzer's view of one function, as text, JSON or graphviz."""
from __future__ import annotations

import bcfront

from .runner import CliError
from .target import resolve


def analyze_target(target: str):
    """`bcfront.analyze` of the function `target` names; user errors become `CliError`."""
    obj = resolve(target)
    try:
        return bcfront.analyze(obj)
    except ImportError as e:
        raise CliError(f"the analyzer is not available: {e}", exit_code=3) from None
    except (TypeError, ValueError) as e:  # not a Python function; foreign bytecode
        raise CliError(f"cannot analyze {target}: {e}") from None


def emit(fa, fmt: str, console):
    """Text goes to `console`; "json" and "dot" are returned as strings."""
    if fmt == "dot":
        return fa.to_dot()
    if fmt == "json":
        data = fa.to_json()
        if not isinstance(data, str):
            import json
            data = json.dumps(data, indent=2, default=str)
        return data
    if hasattr(fa, "render"):
        fa.render(console)
    else:
        console.print(fa.to_text(), markup=False, highlight=False)
    return None
