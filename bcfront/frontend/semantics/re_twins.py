"""``re`` substitutions with a function as replacement, as Python code to inline.

``Pattern.sub(fn, s)`` runs the user's `fn` on each match, so it cannot fold at
capture time (`pure_c`); these twins do the C loop's steps in Python (the
matches found by one pure call, `matches`; each replacement by calling `fn`;
the pieces joined as `_sre`'s ``pattern_subx`` joins them: same result, same
exceptions) and are inlined in the trace.  A replacement that is not callable
goes back to the C method, which folds when its arguments are known.  Real code
never sees these functions.
"""

from __future__ import annotations

import operator
import re
import sys

from . import own_code

# globals of our own, read unguarded (`own_code`): the C code they stand for calls them directly
_index, _compile = operator.index, re.compile


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


def re_sub(pattern, repl, string, count=0, flags=0):
    return _subx(_compile(pattern, flags), repl, string, count)[0]


def re_subn(pattern, repl, string, count=0, flags=0):
    return _subx(_compile(pattern, flags), repl, string, count)


# 3.13's re.sub warns on a positional count: no twin there (the call stays a break)
RE_SUB = re_sub if sys.version_info < (3, 13) else None
RE_SUBN = re_subn if sys.version_info < (3, 13) else None

own_code.register(globals())
