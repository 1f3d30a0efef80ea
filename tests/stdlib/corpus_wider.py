"""The corpus's second ring (session 26): standard-library code no earlier entry reached.

`WIDER` has the shape of `corpus.CORPUS` (name -> ``(function, [argument tuples])``) and
is merged into it: text formats (pprint, reprlib, tomllib, configparser, html.parser,
email.utils, base32/85), numbers (statistics' newer functions, `NormalDist`, decimal,
fractions, dates), objects (Flag enums, singledispatch, UserDict, SimpleNamespace,
context managers, lru_cache'd user functions) and seeded `random`.  Nothing here reads a
file or the environment.  `MISSING` names the entries a Python version lacks, with why.
"""

from __future__ import annotations

import abc
import ast
import base64
import collections
import configparser
import contextlib
import csv
import datetime
import decimal
import difflib
import email.utils
import enum
import fractions
import functools
import gettext
import html.parser
import ipaddress
import itertools
import mimetypes
import operator
import pprint
import random
import reprlib
import shlex
import statistics
import string
import sys
import textwrap
import types
import uuid

if sys.version_info >= (3, 11):
    import tomllib


def _pformat(obj, width=80):
    return pprint.pformat(obj, width=width)


def _pformat_bad(indent):
    return pprint.pformat([1], indent=indent)


def _reprlib(obj):
    return reprlib.repr(obj)


def _reprlib_limits(obj, maxlist):
    r = reprlib.Repr()
    r.maxlist = maxlist
    r.maxstring = 12
    return r.repr(obj)


def _b32(data):
    enc = base64.b32encode(data)
    return enc, base64.b32decode(enc)


def _b85(data):
    enc = base64.b85encode(data)
    return enc, base64.b85decode(enc), base64.a85encode(data)


def _parseaddr(s):
    return email.utils.parseaddr(s)


def _formataddr(name, addr):
    return email.utils.formataddr((name, addr)), email.utils.quote(name)


_MIME = mimetypes.MimeTypes(filenames=())


def _guess_type(url):
    return _MIME.guess_type(url), _MIME.guess_extension("text/html")


def _toml(s):
    return tomllib.loads(s)


def _literal_eval(s):
    return ast.literal_eval(s)


class _TagLog(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.events = []

    def handle_starttag(self, tag, attrs):
        self.events.append(("start", tag, attrs))

    def handle_endtag(self, tag):
        self.events.append(("end", tag))

    def handle_data(self, data):
        self.events.append(("data", data))


def _html_parse(text):
    p = _TagLog()
    p.feed(text)
    p.close()
    return p.events


def _configparser(text):
    cp = configparser.ConfigParser()
    cp.read_string(text)
    return {s: dict(cp[s]) for s in cp.sections()}, cp.getint("a", "n", fallback=-1)


def _uuid(s):
    u = uuid.UUID(s)
    return str(u), u.hex, u.version, u.int % 1000


class Perm(enum.Flag):
    R = 4
    W = 2
    X = 1


def _flag_ops(a, b):
    f = Perm(a) | Perm(b)
    return [m.name for m in f], (f & Perm.W) == Perm.W, str(~f), bool(f)


class _PercentTemplate(string.Template):
    delimiter = "%"
    idpattern = r"[a-z]+_[a-z]+"


def _custom_template(s, mapping):
    return _PercentTemplate(s).substitute(mapping)


def _quantiles(xs, n):
    return statistics.quantiles(xs, n=n)


def _correlation(xs, ys):
    return statistics.correlation(xs, ys), statistics.covariance(xs, ys)


def _linear_regression(xs, ys):
    r = statistics.linear_regression(xs, ys)
    return r.slope, r.intercept


def _normal_dist(mu, sigma):
    d = statistics.NormalDist(mu, sigma)
    return d.cdf(1.0), d.inv_cdf(0.25), (d + 1.0).mean, d.overlap(statistics.NormalDist(0, 1))


def _text_wrapper(text, width):
    w = textwrap.TextWrapper(width=width, initial_indent="* ", subsequent_indent="  ", max_lines=3)
    return w.wrap(text)


class _LowerDict(collections.UserDict):
    def __setitem__(self, key, value):
        super().__setitem__(key.lower(), value)


def _userdict(pairs):
    d = _LowerDict()
    for k, v in pairs:
        d[k] = v
    return dict(d), "a" in d, d.get("Z", 0)


def _userlist(xs):
    u = collections.UserList(xs)
    u.append(len(u))
    u.sort(reverse=True)
    return list(u + [0]), u.index(max(u)), u[1:]


def _namespace(**kw):
    ns = types.SimpleNamespace(**kw)
    ns.extra = len(kw)
    return vars(ns), ns == types.SimpleNamespace(**vars(ns)), repr(ns)


def _suppress(xs, i):
    with contextlib.suppress(IndexError):
        return xs[i]
    return "suppressed"


def _exit_stack(n):
    log = []
    with contextlib.ExitStack() as stack:
        for i in range(n):
            stack.callback(log.append, i)
        log.append("body")
        if n > 2:
            raise ValueError(f"too many: {n}")
    return log


@functools.lru_cache(maxsize=32)
def _fib(n):
    if n < 0:
        raise ValueError("negative")
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


def _lru_user(n):
    return _fib(n)


@functools.singledispatch
def _describe(x):
    return f"object {x!r}"


@_describe.register
def _(x: int):
    return f"int {x + 1}"


@_describe.register(list)
def _(x):
    return [_describe(i) for i in x]


def _singledispatch(x):
    return _describe(x)


def _methodcaller(s, name):
    return operator.methodcaller(name, "-")(s)


def _chunked(xs, n):
    it = iter(xs)
    return list(iter(lambda: tuple(itertools.islice(it, n)), ()))


def _recipes(xs):
    flat = list(itertools.chain.from_iterable(xs))
    uniq = list(dict.fromkeys(flat))
    prod = list(itertools.product(uniq[:2], repeat=2))
    sums = list(itertools.starmap(operator.add, zip(flat, flat[1:])))
    return flat, uniq, prod, sums, list(itertools.compress(flat, [1, 0] * len(flat)))


def _html_table(a, b):
    difflib.HtmlDiff._default_prefix = 0  # its anchors count the tables made: a class attribute
    return difflib.HtmlDiff(wrapcolumn=20).make_table(a, b, context=True, numlines=1)


def _fraction_arith(a, b):
    x, y = fractions.Fraction(a), fractions.Fraction(b)
    return x + y, x - y, x / y, x**2, round(x / y, 2), x < y, float(x), divmod(x, y)


def _collapse(nets):
    return [str(n) for n in ipaddress.collapse_addresses(ipaddress.ip_network(s) for s in nets)]


def _shlex_tokens(s):
    lex = shlex.shlex(s, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    return list(lex)


def _c2py(plural, n):
    return gettext.c2py(plural)(n)


def _csv_rows(lines):
    return list(csv.reader(lines))


def _csv_dicts(lines):
    return [dict(r) for r in csv.DictReader(lines)]


def _random(seed, xs):
    r = random.Random(seed)
    ys = list(xs)
    r.shuffle(ys)
    return r.choice(xs), ys, r.sample(xs, 2), r.randrange(100), r.uniform(0, 1)


def _dates(y, m, d):
    day = datetime.date(y, m, d)
    later = day + datetime.timedelta(days=40)
    return later, later.isoformat(), (later - day).days, day.weekday(), day.replace(day=1)


def _quantize(s, places):
    return decimal.Decimal(s).quantize(decimal.Decimal(1).scaleb(-places), rounding=decimal.ROUND_HALF_EVEN)


def _formatting(x):
    return "%-6s|%5.2f|%x" % ("ab", x, int(x)), f"{x:>10,.3f}", format(x, "e"), "{:%}".format(x / 100)


def _calendar_month(y, m):
    import calendar

    return calendar.TextCalendar(calendar.SUNDAY).formatmonth(y, m)


def _context_diff(a, b):
    return list(difflib.context_diff(a, b, lineterm=""))


def _multimode(xs):
    return statistics.multimode(xs), statistics.pvariance(xs) if xs else None


def _int_enum(a):
    class Level(enum.IntEnum):
        LOW = enum.auto()
        HIGH = enum.auto()

    return Level(a) + 1, Level(a).name, sorted(Level, reverse=True), Level.HIGH > Level.LOW


def _urldefrag(url):
    import urllib.parse

    d = urllib.parse.urldefrag(url)
    return d.url, d.fragment, urllib.parse.quote_plus(url), urllib.parse.unquote_plus("a+b%21")


def _dc_ordering(a, b):
    import dataclasses

    @dataclasses.dataclass(order=True)
    class Item:
        rank: int
        tags: list = dataclasses.field(default_factory=list, compare=False)

        def __post_init__(self):
            if self.rank < 0:
                raise ValueError(f"rank {self.rank}")

    # a new class on every call: its instances compare equal to no earlier call's, so by repr
    return repr(sorted([Item(a), Item(b)])), Item(a) == Item(a, ["x"])


def _set_order(xs):
    s = set(xs)
    s.discard(xs[0])
    return list(s), list(s | {"z", 8}), list(frozenset(xs) & s), repr({*xs})


class _Shape(abc.ABC):
    @abc.abstractmethod
    def area(self): ...


class _Square(_Shape):
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side**2


def _abc_instances(side):
    try:
        _Shape()
    except TypeError as e:
        return _Square(side).area(), str(e), isinstance(_Square(side), _Shape)
    return None


def _wraps(x):
    def traced(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            return fn(*args) + 1

        return wrapper

    @traced
    def double(y):
        "Doubles."
        return y * 2

    return double(x), double.__name__, double.__doc__, double.__wrapped__(x)


def _adapters(xs):
    it = iter(xs)
    head = list(itertools.takewhile(lambda v: v > 0, it))
    return (
        head,
        list(it),
        list(itertools.dropwhile(lambda v: v > 0, xs)),
        list(itertools.starmap(max, zip(xs, xs[1:]))),
    )


WIDER: dict = {
    "pprint.pformat": (
        _pformat,
        [({"b": [1, 2], "a": (3, "x" * 30)},), ([list(range(30)), {"k": {1, 2}}], 40), ("s" * 90, 20)],
    ),
    "pprint.pformat(bad indent)": (_pformat_bad, [(-1,), (2,)]),
    "reprlib.repr": (_reprlib, [(list(range(100)),), ("x" * 100,), ({i: str(i) for i in range(10)},)]),
    "reprlib.Repr": (
        _reprlib_limits,
        [(list(range(10)), 3), ("abcdefghijklmnopq", 1), ([[1, [2, [3, [4]]]]], 2)],
    ),
    "base64.b32encode": (_b32, [(b"hello",), (b"",), ("text",)]),
    "base64.b32decode": (base64.b32decode, [(b"NBSWY3DP",), (b"A",), (b"nbswy3dp", True)]),
    "base64.b85encode": (_b85, [(b"hello world",), (b"\x00\x00\x00\x00",)]),
    "base64.b85decode": (base64.b85decode, [(b"Xk~0{Zy<MXa%^M",), (b"|||||",)]),
    "email.utils.parseaddr": (_parseaddr, [("Ann <ann@x.org>",), ("bob@y.org (Bob)",), ("<>",), ("a, b",)]),
    "email.utils.formataddr": (_formataddr, [("Ann Lee", "ann@x.org"), ('Q "x"', "q@x"), ("é", "e@x")]),
    "mimetypes.MimeTypes.guess_type": (_guess_type, [("a/b.tar.gz",), ("x.PNG",), ("noext",), ("data:,hi",)]),
    "ast.literal_eval": (_literal_eval, [("[1, (2, 'a'), {3: -4.5}]",), ("1 + 2j",), ("f(x)",), ("{",)]),
    "html.parser.HTMLParser.feed": (
        _html_parse,
        [('<p class="a">x &amp; y<br/></p>',), ("<a href=b>t</a><!-- c -->",), ("plain",)],
    ),
    "configparser.read_string": (
        _configparser,
        [("[a]\nn = 3\nk = v\n[b]\nx=%(n)s\n",), ("[a]\nn = x\n",), ("no header",), ("[a]\n[a]\n",)],
    ),
    "uuid.UUID(str)": (
        _uuid,
        [("12345678-1234-5678-1234-567812345678",), ("{12345678123456781234567812345678}",), ("xyz",)],
    ),
    "enum.Flag": (_flag_ops, [(4, 2), (1, 1), (0, 7), (8, 1)]),
    "string.Template(custom pattern)": (
        _custom_template,
        [("%ab_cd and %{ab_cd}", {"ab_cd": 1}), ("%%ab_cd", {}), ("%x_y", {}), ("%A_b", {})],
    ),
    "statistics.quantiles": (_quantiles, [([1, 5, 2, 8, 4, 6], 4), ([1.5, 2.5], 3), ([1], 4), ([1, 2], 0)]),
    "statistics.correlation": (_correlation, [([1, 2, 3, 4], [2, 4, 5, 9]), ([1, 2], [1]), ([1, 1], [2, 3])]),
    "statistics.linear_regression": (_linear_regression, [([1, 2, 3], [2, 4, 7]), ([1, 1], [1, 2])]),
    "statistics.NormalDist": (_normal_dist, [(0.0, 1.0), (2, 0.5), (0, -1)]),
    "textwrap.TextWrapper": (
        _text_wrapper,
        [("the quick brown fox jumps over the lazy dog " * 3, 18), ("a", 2)],
    ),
    "collections.UserDict": (_userdict, [([("A", 1), ("b", 2)],), ([("Z", 3)],), ([(1, 2)],)]),
    "collections.UserList": (_userlist, [([3, 1, 2],), ([],), (["a", 1],)]),
    "types.SimpleNamespace": (_namespace, [({},), ({"a": 1, "b": [2]},)]),
    "contextlib.suppress": (_suppress, [([1, 2], 1), ([1], 5), ({}, 1)]),
    "contextlib.ExitStack": (_exit_stack, [(2,), (3,), (0,)]),
    "functools.lru_cache(user)": (_lru_user, [(10,), (1,), (-1,)]),
    "functools.singledispatch": (_singledispatch, [(1,), ("s",), ([1, "a", [2]],), (True,)]),
    "operator.methodcaller": (_methodcaller, [("a-b-c", "split"), ("a-b", "partition"), ("x", "nope")]),
    "itertools.islice(chunked)": (_chunked, [(range(7), 3), ("abcd", 2), ([], 1), ([1], 0)]),
    "itertools recipes": (_recipes, [([[1, 2], [2, 3], [1]],), ([],), ([["a"], [None]],)]),
    "difflib.HtmlDiff.make_table": (
        _html_table,
        [(["a\n", "b\n", "c\n"], ["a\n", "B\n", "c\n"]), ([], ["x"])],
    ),
    "fractions arithmetic": (_fraction_arith, [("1/3", "2/5"), (3, "-7/2"), ("1", "0"), ("1.25", 0.5)]),
    "ipaddress.collapse_addresses": (
        _collapse,
        [
            (["10.0.0.0/25", "10.0.0.128/25", "10.0.1.0/24"],),
            (["::/1", "8000::/1"],),
            (["1.0.0.0/8", "::/0"],),
        ],
    ),
    "shlex.shlex": (_shlex_tokens, [("a && b | c > 'd e'",), ("x;y",), ("'open",)]),
    "gettext.c2py": (_c2py, [("n != 1", 1), ("n%10==1 && n%100!=11 ? 0 : n != 0 ? 1 : 2", 21), ("n++", 1)]),
    "csv.reader": (_csv_rows, [(["a,b", '"c,d",e', ""],), (['"x', "y"],)]),
    "csv.DictReader": (_csv_dicts, [(["h1,h2", "1,2", "3"],), ([],)]),
    "random.Random(seed)": (_random, [(1, [1, 2, 3, 4]), ("s", "abcde"), (2, [1])]),
    "datetime.date arithmetic": (_dates, [(2024, 2, 28), (2023, 12, 31), (2023, 2, 29)]),
    "decimal.Decimal.quantize": (_quantize, [("3.14159", 2), ("2.5", 0), ("x", 1), ("1e30", 2)]),
    "str formatting": (_formatting, [(3.14159,), (-1234.5,), (0.0,)]),
    "calendar.TextCalendar.formatmonth": (_calendar_month, [(2024, 2), (2023, 13)]),
    "difflib.context_diff": (_context_diff, [(["a", "b", "c"], ["a", "c", "d"]), ([], [])]),
    "statistics.multimode": (_multimode, [([1, 1, 2, 2, 3],), ([],), (["a", "b", "a"],)]),
    "enum.IntEnum": (_int_enum, [(1,), (2,), (3,)]),
    "urllib.parse.urldefrag": (_urldefrag, [("http://a/b#frag",), ("x y",)]),
    "dataclasses(order, post_init)": (_dc_ordering, [(2, 1), (1, -1)]),
    "set iteration order": (_set_order, [(["pear", "fig", "kiwi", "plum", "lime"],), ([17, 1, 9, 33, 8],)]),
    "abc.ABC instances": (_abc_instances, [(3,), ("x",)]),
    "functools.wraps": (_wraps, [(3,), ("ab",)]),
    "itertools takewhile/dropwhile/starmap": (_adapters, [([3, 1, 0, 2],), ([],), ([1, "a"],)]),
}

MISSING: dict = {}
"""Entries this Python lacks: name -> why (the test skips them with that reason)."""

if sys.version_info >= (3, 11):
    WIDER["tomllib.loads"] = (
        _toml,
        [('a = 1\n[t]\nb = "x"\nc = [1, 2.5, true]\n',), ("d = 2024-01-02T03:04:05Z\n",), ("a = \n",)]
        + [('s = """\nmulti\nline"""\n',), ("[[arr]]\nx=1\n[[arr]]\nx=2\n",)],
    )

if hasattr(itertools, "batched"):

    def _batched(xs, n):
        return list(itertools.batched(xs, n))

    WIDER["itertools.batched"] = (_batched, [(range(5), 2), ([], 3), ([1], 0)])
else:
    MISSING["itertools.batched"] = "itertools.batched is new in Python 3.12"
