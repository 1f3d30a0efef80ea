"""Capture real library code (the standard library) and compare with running it natively.

These functions were not written for bcfront: they mix C calls (graph breaks),
regular expressions, generators, closures and cells.  Oracle: the same call,
native.  A break must never change the result; an internal error would show
as a warning, which the test forbids.
"""

from __future__ import annotations

import colorsys
import copy
import difflib
import fnmatch
import heapq
import html
import json
import posixpath
import shlex
import statistics
import string
import textwrap
import urllib.parse
import warnings

import pytest

import bcfront
from bcfront.report import NativeFallbackWarning

CASES = {
    "textwrap.dedent": (textwrap.dedent, ("    a\n      b\n",)),
    "textwrap.wrap": (textwrap.wrap, ("hello world " * 5, 20)),
    "textwrap.indent": (textwrap.indent, ("a\nb", "> ")),
    "colorsys.rgb_to_hsv": (colorsys.rgb_to_hsv, (0.2, 0.4, 0.4)),
    "statistics.mean": (statistics.mean, ([1, 2, 3, 4],)),
    "statistics.median": (statistics.median, ([3, 1, 2],)),
    "statistics.pstdev": (statistics.pstdev, ([1.0, 2.0, 4.0],)),
    "heapq.nlargest": (heapq.nlargest, (2, [5, 1, 9, 3])),
    "string.capwords": (string.capwords, ("hello big world",)),
    "posixpath.normpath": (posixpath.normpath, ("a//b/../c/.",)),
    "fnmatch.fnmatch": (fnmatch.fnmatch, ("foo.py", "*.py")),
    "shlex.quote": (shlex.quote, ("a b",)),
    "difflib.ratio": (lambda a, b: difflib.SequenceMatcher(None, a, b).ratio(), ("abcd", "abxd")),
    "copy.deepcopy": (copy.deepcopy, ({"a": [1, 2]},)),
    "html.escape": (html.escape, ("<a & b>",)),
    "urllib.parse.urlparse": (urllib.parse.urlparse, ("http://x.org/a?b=1",)),
    "json.dumps": (json.dumps, ({"a": [1, 2.5, None]},)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_library_function_matches_native(name):
    fn, args = CASES[name]
    expected = fn(*copy.deepcopy(args))
    cf = bcfront.capture(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        # a legitimate native fallback (e.g. no continuation after a break) warns too; an
        # internal error raises (strict mode, tests/conftest.py) and lands in cf.warnings
        warnings.simplefilter("ignore", NativeFallbackWarning)
        for _ in range(3):
            assert cf(*copy.deepcopy(args)) == expected
    assert not cf.warnings
