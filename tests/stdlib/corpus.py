"""The differential corpus: pure-Python standard-library functions and their inputs.

`CORPUS` maps a name to ``(function, [argument tuples])``; some inputs make the
function raise.  `tests/stdlib/test_corpus.py` runs each under `bcfront.capture`
and compares with the native call (result and its type, exception type and
message, the arguments' state afterwards); `tools/stdlib_coverage.py` reports
the share captured with no graph break.  No torch: it runs on every Python.
"""

from __future__ import annotations

import base64
import bisect
import calendar
import collections
import colorsys
import copy
import dataclasses
import difflib
import enum
import fnmatch
import fractions
import functools
import graphlib
import heapq
import html
import ipaddress
import itertools
import json
import keyword
import operator
import posixpath
import re
import shlex
import statistics
import string
import textwrap
import urllib.parse

from .corpus_wider import WIDER


def rooted(fn):
    """A Python root for `fn` (some corpus entries are C functions or lru_cache wrappers,
    which have no bytecode to capture): the call is inside the captured code."""

    def call(*args):
        return fn(*args)

    return call


@dataclasses.dataclass
class Pt:
    x: int
    y: int = 0


@dataclasses.dataclass(frozen=True)
class FPt:
    x: int


class Color(enum.Enum):
    RED = 1
    GREEN = 2


NT = collections.namedtuple("NT", "a b")


def _dc_replace(x):
    return dataclasses.replace(Pt(x, 1), y=x + 1)


def _dc_asdict(x):
    return dataclasses.asdict(Pt(x))


def _dc_astuple(x):
    return dataclasses.astuple(Pt(x, 2))


def _dc_fields(x):
    return [f.name for f in dataclasses.fields(Pt)] + [x]


def _dc_init(*a, **k):
    p = Pt(*a, **k)
    return p.x, p.y


def _dc_frozen(x):
    p = FPt(x)
    p.x = 2  # raises FrozenInstanceError
    return p


def _enum_lookup(v):
    return Color(v).name


def _enum_by_name(n):
    return Color[n].value


def _nt_make(a, b):
    t = NT(a, b)
    return t._replace(a=b), t._asdict(), tuple(t)


def _nt_bad(*a):
    return NT(*a)


def _counter(s):
    return sorted(collections.Counter(s).items())


def _counter_most(s):
    return collections.Counter(s).most_common(2)


def _defaultdict(xs):
    d = collections.defaultdict(list)
    for k, v in xs:
        d[k].append(v)
    return sorted(d.items())


def _ordered(xs):
    d = collections.OrderedDict(xs)
    d.move_to_end(xs[0][0])
    return list(d.items())


def _deque(xs):
    d = collections.deque(xs, maxlen=3)
    d.append(99)
    d.rotate(1)
    return list(d)


def _chainmap(a, b):
    return dict(collections.ChainMap(a, b))


def _merge(a, b):
    return list(heapq.merge(a, b))


def _heappush(xs, x):
    heapq.heappush(xs, x)
    return xs


def _heappop(xs):
    heapq.heapify(xs)
    return heapq.heappop(xs), xs


def _insort(xs, x):
    bisect.insort(xs, x)
    return xs


def _static_order(g):
    return list(graphlib.TopologicalSorter(g).static_order())


def _ratio(a, b):
    return difflib.SequenceMatcher(None, a, b).ratio()


def _opcodes(a, b):
    return difflib.SequenceMatcher(None, a, b).get_opcodes()


def _ndiff(a, b):
    return list(difflib.ndiff(a, b))


def _unified(a, b):
    return list(difflib.unified_diff(a, b, lineterm=""))


def _fraction(a, b):
    f = fractions.Fraction(a, b)
    return f + 1, f * f, f.limit_denominator(10)


def _fraction_str(s):
    return fractions.Fraction(s)


def _template(s, **kw):
    return string.Template(s).substitute(**kw)


def _safe_template(s, **kw):
    return string.Template(s).safe_substitute(**kw)


def _formatter(s, *a):
    return string.Formatter().format(s, *a)


def _groupby(s):
    return [(k, len(list(g))) for k, g in itertools.groupby(s)]


def _accumulate(xs):
    return list(itertools.accumulate(xs))


def _pairwise(xs):
    return list(itertools.pairwise(xs))


def _combinations(xs, r):
    return list(itertools.combinations(xs, r))


def _permutations(xs):
    return list(itertools.permutations(xs, 2))


def _zip_longest(a, b):
    return list(itertools.zip_longest(a, b, fillvalue=0))


def _reduce(xs):
    return functools.reduce(operator.add, xs)


def _partial(x):
    return functools.partial(int, base=2)(x)


def _cmp_to_key(xs):
    return sorted(xs, key=functools.cmp_to_key(lambda a, b: b - a))


def _itemgetter(xs):
    return sorted(xs, key=operator.itemgetter(1))


def _attrgetter(x):
    return operator.attrgetter("real", "imag")(x)


def _json_roundtrip(s):
    return json.loads(s)


def _copy(x):
    y = copy.copy(x)
    return y, y is x


def _ip(s):
    return str(ipaddress.ip_address(s))


def _ipnet(s):
    return [str(a) for a in ipaddress.ip_network(s).hosts()][:3]


CORPUS: dict = {
    # text
    "textwrap.dedent": (textwrap.dedent, [("    a\n      b\n",), ("x",), (3,)]),
    "textwrap.wrap": (textwrap.wrap, [("hello world " * 5, 20), ("abc", 0)]),
    "textwrap.fill": (textwrap.fill, [("hello world " * 5, 30)]),
    "textwrap.indent": (textwrap.indent, [("a\nb", "> "), ("a", 1)]),
    "textwrap.shorten": (textwrap.shorten, [("Hello  world!  How are you?", 12), ("a b", 1)]),
    "string.capwords": (string.capwords, [("hello big world",), ("a-b", "-")]),
    "string.Template.substitute": (_template, [("$a and ${b}",), ("$a",)]),
    "string.Template.safe_substitute": (_safe_template, [("$a and ${b}",)]),
    "string.Formatter.format": (
        _formatter,
        [("{0}-{1:>3}", 1, 2), ("{0}",), ("{0.real}{1[0]!r}", 2, "ab")]
        + [("a{0}}", 1), ("{0.}", 1), ("{0[0]x}", [1])],
    ),
    "shlex.quote": (shlex.quote, [("a b",), ("",), ("abc",)]),
    "shlex.split": (shlex.split, [("a 'b c' d",), ("a 'b",)]),
    "shlex.join": (shlex.join, [(["a", "b c"],)]),
    "html.escape": (html.escape, [("<a & b>",), ("'\"", False)]),
    "html.unescape": (html.unescape, [("&lt;a&gt; &amp; &#39;",), ("plain",)]),
    "fnmatch.fnmatch": (fnmatch.fnmatch, [("foo.py", "*.py"), ("a", "[")]),
    "fnmatch.fnmatchcase": (fnmatch.fnmatchcase, [("Foo.PY", "*.py")]),
    "fnmatch.filter": (fnmatch.filter, [(["a.py", "b.c"], "*.py")]),
    "fnmatch.translate": (fnmatch.translate, [("*.py",), ("[a-z]?",)]),
    "keyword.iskeyword": (keyword.iskeyword, [("for",), ("x",)]),
    "base64.b64encode": (base64.b64encode, [(b"hello",), ("str",)]),
    "base64.b64decode": (base64.b64decode, [(b"aGVsbG8=",), (b"a",)]),
    "base64.urlsafe_b64encode": (base64.urlsafe_b64encode, [(b"\xff\xfe",)]),
    "base64.b16encode": (base64.b16encode, [(b"ab",)]),
    # paths and urls
    "posixpath.join": (posixpath.join, [("a", "b", "c"), ("/a", "/b"), ("a", 1)]),
    "posixpath.normpath": (posixpath.normpath, [("a//b/../c/.",), ("",), ("/..",)]),
    "posixpath.split": (posixpath.split, [("/a/b/c.txt",), ("c",)]),
    "posixpath.splitext": (posixpath.splitext, [("a/b.tar.gz",), (".bashrc",)]),
    "posixpath.basename": (posixpath.basename, [("/a/b",), ("/a/",)]),
    "posixpath.dirname": (posixpath.dirname, [("/a/b",), ("b",)]),
    "posixpath.isabs": (posixpath.isabs, [("/a",), ("a",)]),
    "posixpath.commonprefix": (posixpath.commonprefix, [(["/a/b", "/a/c"],), ([],)]),
    "posixpath.relpath": (posixpath.relpath, [("/a/b/c", "/a"), ("", "/a")]),
    "posixpath.commonpath": (posixpath.commonpath, [(["/a/b", "/a/c"],), (["/a", "b"],)]),
    "urllib.parse.urlparse": (urllib.parse.urlparse, [("http://x.org/a?b=1#f",), ("rel/path",)]),
    "urllib.parse.urlsplit": (urllib.parse.urlsplit, [("https://u:p@h:80/p?q",)]),
    "urllib.parse.urlunparse": (urllib.parse.urlunparse, [(("http", "x", "/p", "", "q=1", ""),)]),
    "urllib.parse.urljoin": (urllib.parse.urljoin, [("http://a/b/c", "../d"), ("http://a/b", "//e/f")]),
    "urllib.parse.quote": (
        urllib.parse.quote,
        [("a b/c",), ("é",), (b"a b",), ("a b/~", ""), ("x y", b"/ "), (1,), ("x", 1)],
    ),
    "urllib.parse.unquote": (urllib.parse.unquote, [("a%20b",), ("%zz",)]),
    "urllib.parse.urlencode": (urllib.parse.urlencode, [({"a": 1, "b": "x y"},), ([("a", 1)],)]),
    "urllib.parse.parse_qs": (urllib.parse.parse_qs, [("a=1&b=2&a=3",), ("",)]),
    "urllib.parse.parse_qsl": (urllib.parse.parse_qsl, [("a=1&b=2",)]),
    # numbers
    "colorsys.rgb_to_hsv": (colorsys.rgb_to_hsv, [(0.2, 0.4, 0.4), (0, 0, 0)]),
    "colorsys.hsv_to_rgb": (colorsys.hsv_to_rgb, [(0.5, 0.5, 0.5), (0.0, 0.0, 1.0)]),
    "colorsys.rgb_to_hls": (colorsys.rgb_to_hls, [(0.2, 0.4, 0.4)]),
    "colorsys.rgb_to_yiq": (colorsys.rgb_to_yiq, [(0.2, 0.4, 0.4)]),
    "statistics.mean": (statistics.mean, [([1, 2, 3, 4],), ([],)]),
    "statistics.fmean": (statistics.fmean, [([1.0, 2.0, 4.0],), ([],)]),
    "statistics.median": (statistics.median, [([3, 1, 2],), ([3, 1, 2, 4],), ([],)]),
    "statistics.median_low": (statistics.median_low, [([3, 1, 2, 4],)]),
    "statistics.mode": (statistics.mode, [([1, 1, 2],), ([],)]),
    "statistics.pstdev": (statistics.pstdev, [([1.0, 2.0, 4.0],)]),
    "statistics.variance": (statistics.variance, [([1, 2, 4],), ([1],)]),
    "statistics.geometric_mean": (statistics.geometric_mean, [([1.0, 4.0],)]),
    "statistics.harmonic_mean": (statistics.harmonic_mean, [([1, 4],), ([1, -1],)]),
    "fractions.Fraction": (_fraction, [(1, 3), (1, 0)]),
    "fractions.Fraction(str)": (_fraction_str, [("3/7",), ("x",)]),
    "calendar.isleap": (calendar.isleap, [(2000,), (1900,)]),
    "calendar.leapdays": (calendar.leapdays, [(1900, 2020)]),
    "calendar.monthrange": (calendar.monthrange, [(2024, 2), (2024, 13)]),
    "calendar.weekday": (calendar.weekday, [(2024, 2, 29)]),
    "ipaddress.ip_address": (_ip, [("10.0.0.1",), ("::1",), ("x",)]),
    "ipaddress.ip_network.hosts": (_ipnet, [("10.0.0.0/30",)]),
    # containers and algorithms
    "heapq.nlargest": (heapq.nlargest, [(2, [5, 1, 9, 3]), (0, [1])]),
    "heapq.nsmallest": (heapq.nsmallest, [(2, [5, 1, 9, 3]), (2, [1, None])]),
    "heapq.merge": (_merge, [([1, 3], [2, 4]), ([], [1])]),
    "heapq.heappush": (_heappush, [([1, 5, 3], 2)]),
    "heapq.heappop": (_heappop, [([5, 1, 3],), ([],)]),
    "bisect.insort": (_insort, [([1, 3, 5], 4), ([1, 3], None)]),
    "bisect.bisect": (bisect.bisect, [([1, 3, 5], 4)]),
    "graphlib.static_order": (_static_order, [({"a": {"b"}, "b": {"c"}},), ({"a": {"a"}},)]),
    "difflib.SequenceMatcher.ratio": (_ratio, [("abcd", "abxd"), ("", "")]),
    "difflib.SequenceMatcher.get_opcodes": (_opcodes, [("abcd", "abxd")]),
    "difflib.get_close_matches": (difflib.get_close_matches, [("appel", ["ape", "apple", "peach"])]),
    "difflib.ndiff": (_ndiff, [(["a\n", "b\n"], ["a\n", "c\n"])]),
    "difflib.unified_diff": (_unified, [(["a", "b"], ["a", "c"])]),
    "collections.Counter": (_counter, [("abracadabra",)]),
    "collections.Counter.most_common": (_counter_most, [("abracadabra",)]),
    "collections.defaultdict": (_defaultdict, [([("a", 1), ("b", 2), ("a", 3)],)]),
    "collections.OrderedDict": (_ordered, [([("a", 1), ("b", 2)],)]),
    "collections.deque": (_deque, [([1, 2, 3, 4],)]),
    "collections.ChainMap": (_chainmap, [({"a": 1}, {"a": 2, "b": 3}), ({}, {}), ({"a": [1]}, {1: None})]),
    "collections.namedtuple": (_nt_make, [(1, 2)]),
    "collections.namedtuple(bad)": (_nt_bad, [(1, 2, 3)]),
    "dataclasses.init": (_dc_init, [(1,), (1, 2), (1, 2, 3)]),
    "dataclasses.replace": (_dc_replace, [(1,)]),
    "dataclasses.asdict": (_dc_asdict, [(1,)]),
    "dataclasses.astuple": (_dc_astuple, [(1,)]),
    "dataclasses.fields": (_dc_fields, [(1,)]),
    "dataclasses.frozen": (_dc_frozen, [(1,)]),
    "enum.Enum(value)": (_enum_lookup, [(1,), (3,)]),
    "enum.Enum[name]": (_enum_by_name, [("GREEN",), ("BLUE",)]),
    "itertools.groupby": (_groupby, [("aabccc",)]),
    "itertools.accumulate": (_accumulate, [([1, 2, 3],)]),
    "itertools.pairwise": (_pairwise, [([1, 2, 3],)]),
    "itertools.combinations": (_combinations, [([1, 2, 3], 2)]),
    "itertools.permutations": (_permutations, [([1, 2, 3],)]),
    "itertools.zip_longest": (_zip_longest, [([1, 2, 3], [4])]),
    "functools.reduce": (_reduce, [([1, 2, 3],), ([],)]),
    "functools.partial": (_partial, [("101",), ("2",)]),
    "functools.cmp_to_key": (_cmp_to_key, [([3, 1, 2],)]),
    "operator.itemgetter": (_itemgetter, [([(1, 3), (2, 1)],)]),
    "operator.attrgetter": (_attrgetter, [(3,)]),
    "json.dumps": (
        json.dumps,
        [({"a": [1, 2.5, None]},), ({1, 2},), ({"b": (1, "é\n"), 2: {"c": True}, None: -0.0},)]
        + [([float("nan"), 10**20, []],), ([{}, "x", b"bytes"],)],
    ),
    "json.loads": (
        _json_roundtrip,
        [('{"a": [1, 2.5, null]}',), ("{",), ("[1 2]",), ('"a\x01"',), ('{"a": 1,}',)]
        + [('[NaN, -1e5, "\\u00e9"]',)],
    ),
    "copy.deepcopy": (copy.deepcopy, [({"a": [1, 2]},)]),
    "copy.copy": (_copy, [([1, 2],), ((1, 2),)]),
    "re.split(pure python wrapper)": (re.split, [(r"\W+", "a, b  c"), ("(", "x")]),
}

CORPUS.update(WIDER)
