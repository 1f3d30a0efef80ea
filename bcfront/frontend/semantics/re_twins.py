"""``re`` substitutions with a function as replacement, as Python code to inline.

``Pattern.sub(fn, s)`` runs the user's `fn` on each match, so it cannot fold at
capture time (`pure_c`); these twins do the C loop's steps in Python (the
matches found by one pure call, `matches`; each replacement by calling `fn`;
the pieces joined as `_sre`'s ``pattern_subx`` joins them: same result, same
exceptions) and are inlined in the trace.  A replacement that is not callable
goes back to the C method, which folds when its arguments are known.  Real code
never sees these functions, nor a traceback their frames: they stand in for C code,
which adds none (``frameless``).  ``re.sub``/``re.subn`` are re's own Python code over
globals of ours (its ``_compile`` is ``re.compile``, which folds): the frame a native
call shows is theirs.
"""

from __future__ import annotations

import operator
import re
import sys
import types

from . import own_code

# globals of our own, read unguarded (`own_code`): the C code they stand for calls them directly
_index = operator.index


def matches(pattern, string):
    """Each match of `pattern` in `string`, with its span (what ``sub`` iterates): pure."""
    return tuple((m, m.start(), m.end()) for m in pattern.finditer(string))


def _subx(pattern, repl, string, count):
    if not callable(repl):
        return pattern.subn(repl, string, count)
    count = _index(count)
    found = matches(pattern, string)  # raises the C method's TypeError on the wrong string
    pieces = []
    last = n = 0
    for m, begin, end in found:
        if count and n >= count:
            break
        if last < begin:
            pieces.append(string[last:begin])
        item = repl(m)
        if item is not None:
            pieces.append(item)
        last = end
        n += 1
    if last < len(string):
        pieces.append(string[last:])
    return string[:0].join(pieces), n


def pattern_sub(pattern, repl, string, count=0):
    return _subx(pattern, repl, string, count)[0]


def pattern_subn(pattern, repl, string, count=0):
    return _subx(pattern, repl, string, count)


own_code.register(globals(), frameless=True)

# re's module functions over globals of ours, read unguarded: ``_compile(pattern,
# flags).sub(...)`` folds the compile and calls ``Pattern.sub`` (`pattern_sub`)
_RE_GLOBALS = {"_compile": re.compile, "__builtins__": own_code.OWN_BUILTINS}
own_code.register(_RE_GLOBALS)


def _re_function(fn):
    """`fn`'s own code over `_RE_GLOBALS`; None where it reads another global or has cells
    (not the ``_compile(...).sub(...)`` this expects: the call stays a break)."""
    code = fn.__code__
    if code.co_freevars or not set(code.co_names) <= {"_compile", "sub", "subn"}:
        return None
    return types.FunctionType(code, _RE_GLOBALS, fn.__name__, fn.__defaults__)


# 3.13's re.sub warns on a positional count: no twin there (the call stays a break)
RE_SUB = _re_function(re.sub) if sys.version_info < (3, 13) else None
RE_SUBN = _re_function(re.subn) if sys.version_info < (3, 13) else None
