"""Opt-in grammar of the fuzzer: constructs the fixed-seed budget does not generate.

``generate(seed, mode, extra=FEATURES)`` (``tools/fuzz.py --extra all``) adds,
per named feature, expression templates (`RULES`) and statements
(`STATEMENTS`) to the standard grammar.  They are opt-in so that the
fixed-seed programs of tests/robustness/test_fuzz.py stay what they are, and
so that a campaign can leave out a feature whose known bug would hide
everything else (``--extra sets,loops``).

    sets      set displays, set comprehensions and set algebra
    opaque    C containers the interpreter does not model: deque, Counter, dict views
              (also one held across a graph break)
    dictiter  loops directly over a dict or its items (the body may mutate the dict)
    classattr a class attribute of `Box`, written through the class and read through instances
    exc       bare ``raise`` and ``raise ... from`` in handlers, exception attributes
    loops     ``while True`` with a pinned break, star targets, closures made in loops
    tuples    tuples built in the function compared with constant tuples (``t.shape == (2, 3)``)
    builtins  builtins and methods with their optional arguments: index/find with a start,
              sum/pow/round/divmod/format, printf-style and str.format formatting
    breaks    graph breaks (print, .item(), data-dependent branches) where state must cross
              them: loops calling a nonlocal-counting closure, generators consumed partly before
              and partly after a break, try/finally in loops with break/continue/return, with
              blocks and exception handlers around a break, an exception object kept across one
    objects   instances of a `__slots__` class with a property and setter (`Slot`): stores,
              augmented stores, deletes, a store to a missing slot, getattr/hasattr with defaults
    calls     calls with keyword, default, ``*args`` and ``**kwargs`` arguments (`kwf`), and calls
              that fail to bind
    guards    state changed between calls (`CallSpec.before`): globals, the `STATE` list, `Box`
              methods and class attributes, and in tensor programs the global tensor `BIAS`

Statements are functions of the generator (`fuzzgen.Gen`) and the depth, like
`Gen` methods; `needs` letters are the ones of `fuzzgen.STATEMENTS` plus
``h`` (inside an ``except`` handler of the current function).
"""

from __future__ import annotations

from .fuzzexpr import RULES as BASE_RULES
from .fuzzexpr import NoCandidate
from .program import Statement, Suite

FEATURES = (
    "sets",
    "opaque",
    "dictiter",
    "classattr",
    "exc",
    "loops",
    "tuples",
    "builtins",
    "breaks",
    "objects",
    "calls",
    "guards",
)

# feature -> type -> [(weight, template)]
TEMPLATES: dict[str, dict[str, list[tuple[float, str]]]] = {
    "sets": {
        "int": [
            (1, "len({$c % 3 for $c in $list})"),
            (1, "len(set($list) | {$int})"),
            (0.5, "sum({$c for $c in $list if $c > $lit})"),
        ],
        "list": [
            (1, "sorted({$c % 4 for $c in $list})"),
            (1, "sorted(set($list) - {$int})"),
            (0.5, "sorted(set($list) & set($list))"),
        ],
        "bool": [
            (1, "$int in {$int, $lit}"),
            (0.5, "set($list) <= set($list)"),
            (0.5, "bool({$c for $c in $list} ^ {$lit})"),
        ],
    },
    "opaque": {
        "int": [
            (1, "len($v_dict.keys())"),
            (1, "len($v_dict.items())"),
            (1, "len(collections.deque($list, maxlen=3))"),
            (1, "collections.Counter($list)[$lit]"),
            (0.5, "len(collections.Counter($str))"),
        ],
        "list": [(1, "list(collections.deque($list, maxlen=2))"), (1, "sorted($v_dict.values())")],
        "bool": [(1, "$key in $v_dict.keys()")],
    },
    "dictiter": {
        "list": [(0.3, "[$c for $c in $v_dict.values()]")],
        "int": [(0.3, "sum(len($c) for $c in $v_dict)")],
    },
    "classattr": {
        "int": [(2, "$v_box.kind"), (1, "Box.kind"), (0.5, "Box(0).kind")],
    },
    "exc": {
        "int": [(0.3, "StopIteration($int).value")],
    },
    "tuples": {
        "bool": [
            (1, "($int, $lit) == ($lit, $lit)"),
            (1, "tuple($list) != ($lit,)"),
            (0.5, "($int, $int) in [($lit, $small), ($small, $lit)]"),
            (0.5, "($int, $lit) < ($lit, $int)"),
            (1, "divmod($int, $nz) == ($lit, $small)"),
            (1, "tuple($v_M.shape) == ($small, $small)"),
            (2, "$v_M.shape == ($small, $small)"),
            (1, "$M.size() != ($small, $small)"),
        ],
        "int": [
            (0.5, "len(($int, $int) + tuple($list))"),
            (0.5, "sorted([($int, $lit), ($lit, $int)])[0][0]"),
        ],
    },
    "calls": {
        "int": [
            (1, "kwf($int)"),
            (1, "kwf($int, $int, $int)"),
            (1, "kwf(*($list[:3] or [0]), c=$int)"),
            (1, "kwf($int, *$list)"),
            (1, "kwf($int, c=$int, b=$int)"),
            (0.5, "kwf(**{'a': $int, 'c': $int})"),
            (1, "kwf($int, **$v_dict)"),
            (0.5, "kwf(*[$int, $int], *$list[:1], **{'z': $int})"),
            (0.5, "(lambda *p, **q: len(p) + len(q))(*$list, **$v_dict)"),
            (0.5, "functools.partial(kwf, $int, c=$lit)($int)"),
        ],
    },
    "builtins": {
        "int": [
            (1, "[$int, $lit, $int].count($lit)"),
            (1, "sum([$int, $int], $int)"),
            (1, "round($int / $nz)"),
            (1, "divmod($int, $nz)[1]"),
            (1, "int(str($int))"),
            (1, "len('%s|%s' % ($int, $str))"),
            (0.5, "len('%s' % $list)"),
            (1, "pow($int, 2, $nz)"),
            (1, "$str.find('a', 1)"),
            (1, "len(dict.fromkeys($list))"),
            (0.5, "([$lit, $int, $lit] + $list).index($lit, 1)"),
            (0.5, "max($list, key=lambda $c: -$c, default=$lit)"),
            (0.5, "int(round($int / 3, 1) * 10)"),
        ],
        "str": [
            (1, "'%s' % ($int,)"),
            (1, "'{}-{}'.format($int, $str)"),
            (0.5, "'%(k)s' % {'k': $int}"),
            (1, "str(($int, $lit))"),
            (1, "format($int, '03d')"),
            (0.5, "'%5.1f|%-3s|' % ($int / 4, $str)"),
            (0.5, "$str.rjust(4, '*')"),
            (0.5, "':'.join(sorted($str))"),
        ],
        "bool": [
            (1, "isinstance($int, (int, str))"),
            (0.5, "$str.endswith(('a', 'x'))"),
            (0.5, "$str.isdigit() or $str.isalpha()"),
        ],
        "list": [
            (1, "sorted([$int, $lit], key=abs)"),
            (1, "list(divmod($int, $nz))"),
            (1, "sorted($list, reverse=True)[:2]"),
            (0.5, "[*reversed($list)]"),
            (0.5, "list(itertools.islice($list, 1, None, 2))"),
            (1, "$list[:2] * min($v_int, 2)"),
        ],  # a bool argument stays a bool through min
    },
}

CLASS_ATTR = "    kind = 0\n\n"

SLOT_CLASS = """

class Slot:
    __slots__ = ('a', '_b')

    def __init__(self, a):
        self.a = a
        self._b = 0

    @property
    def b(self):
        return self._b + 1

    @b.setter
    def b(self, v):
        self._b = v * 2
"""

KW_FUNCTION = """

def kwf(a, b=1, *more, c=2, **named):
    return a + 2 * b + 3 * sum(more) + 5 * c + 7 * len(named) + sum(named.values())
"""


def rules(features) -> dict:
    """The standard rules plus the templates of `features`."""
    out = {t: list(rs) for t, rs in BASE_RULES.items()}
    for feat in features:
        for typ, templates in TEMPLATES.get(feat, {}).items():
            out[typ] += templates
    return out


def prelude(text: str, features) -> str:
    """The program prelude, with a class attribute on `Box` for 'classattr', the `Slot`
    class for 'objects' and the `kwf` function for 'calls'."""
    if "classattr" in features:
        text = text.replace("class Box:\n", "class Box:\n" + CLASS_ATTR, 1)
    if "objects" in features:
        text += SLOT_CLASS
    if "calls" in features:
        text += KW_FUNCTION
    return text


# -- statements --------------------------------------------------------------------------------
def s_view(g, depth):
    """A dict view kept in a local across a graph break."""
    view, n = g.fresh("vw"), g.fresh("v")
    node = Statement(
        f"{view} = {g.var('dict')}.{g.rng.choice(('keys', 'items', 'values'))}()\n"
        f"print(end='')\n{n} = len({view}) + len(list({view}))"
    )
    g.scope.define(n, "int")
    return node


def s_deque(g, depth):
    dq = g.fresh("dq")
    return Statement(
        f"{dq} = collections.deque({g.e('list')}, maxlen=4)\n{dq}.appendleft({g.e('int')})\n"
        f"{dq}.rotate({g.ex.fill('$small', 0)})\nprint(list({dq}), len({dq}))"
    )


def s_for_dict(g, depth):
    """A loop straight over a dict (not a copy): a body that grows it raises RuntimeError eagerly."""
    d = g.var("dict")
    if g.rng.random() < 0.5:
        k = g.fresh("i")
        head, define = f"for {k} in {d}:", {k: "str"}
    else:
        k, v = g.fresh("i"), g.fresh("i")
        head, define = f"for {k}, {v} in {d}.items():", {k: "str", v: "int"}
    return Statement(head, (Suite(None, g._loop_body(depth, define)),))


def s_class_attr(g, depth):
    forms = (
        lambda: f"Box.kind = {g.e('int')}",
        lambda: f"type({g.var('box')}).kind += {g.ex.fill('$small', 0)}",
        lambda: "Box.kind += 1",
        lambda: f"{g.var('box')}.kind = {g.e('int')}",
    )
    return Statement(g.rng.choice(forms)())


def s_reraise(g, depth):
    forms = (
        "raise",
        "raise ValueError('again') from e" if g.handler_var else "raise ValueError('again')",
        "raise FuzzError('in handler')",
    )
    return Statement(f"if {g.e('bool')}:", (Suite(None, (Statement(g.rng.choice(forms)),)),))


def s_exc_attrs(g, depth):
    if not g.handler_var:
        raise NoCandidate("handler variable")
    e = g.handler_var
    forms = (
        f"print(type({e}.__context__).__name__, {e}.__cause__ is None)",
        f"print({e}.__traceback__ is None)",
        f"print(type({e}).__mro__[1].__name__)",
    )
    return Statement(g.rng.choice(forms))


def s_while_true(g, depth):
    w = g.fresh("w")
    g.scope.define(w, "int")
    g.scope.frozen.add(w)
    bound = g.ex.fill("$small", 0)
    body = (
        Statement(f"{w} += 1", pinned=True),
        Statement(f"if {w} > {bound}:", (Suite(None, (Statement("break"),)),), pinned=True),
    ) + g._loop_body(depth, {})
    return Statement(f"{w} = 0\nwhile True:", (Suite(None, body),), pinned=False)


def s_star_for(g, depth):
    first, rest = g.fresh("i"), g.fresh("i")
    head = f"for {first}, *{rest} in [{g.e('list')} + [{g.e('int')}], [{g.e('int')}]]:"
    return Statement(head, (Suite(None, g._loop_body(depth, {first: "int", rest: "list"})),))


def s_loop_closures(g, depth):
    fs, i, out = g.fresh("fs"), g.fresh("i"), g.fresh("v")
    late = g.rng.random() < 0.5
    fn = f"lambda: {i} * 2" if late else f"lambda {i}={i}: {i} * 2"
    node = Statement(
        f"{fs} = []\nfor {i} in range({g.ex.fill('$small', 0)}):\n    {fs}.append({fn})\n"
        f"    print(end='')\n{out} = [h() for h in {fs}]"
    )
    g.scope.define(out, "list")
    return node


# -- breaks: state that must cross a graph break ------------------------------------------------
def _break_point(g) -> str:
    """A statement that breaks the graph: I/O, or in tensor programs also .item() and a
    data-dependent branch."""
    if g.mode == "py" or g.rng.random() < 0.4:
        return g.rng.choice(("print(end='')", "print('b', end=';')"))
    s = g.e("S")
    return g.rng.choice((f"if {s} > 0:\n    print(end='')", f"STATE.append(int({s}.item()))"))


def s_loop_closure_break(g, depth):
    """A loop whose body breaks the graph and calls a closure counting in a nonlocal."""
    acc, fn, i = g.fresh("acc"), g.fresh("fn"), g.fresh("i")
    it, kinds = g._iteration()
    if kinds != {"int": 1}:
        it = f"range({g.ex.fill('$small', 0)})"
    head = (
        f"{acc} = {g.e('int')}\ndef {fn}(z):\n    nonlocal {acc}\n    {acc} += z\n    return {acc}\n"
        f"for {i} in {it}:"
    )
    body = (Statement(_break_point(g)), Statement(f"{fn}({i})")) + g._loop_body(depth, {i: "int"})
    g.scope.define(acc, "int")
    g.scope.define(fn, "fn")
    return Statement(head, (Suite(None, body),), hoist=False)


def s_gen_across_break(g, depth):
    """A generator started before a break and finished after it (its frame crosses the break)."""
    gen, it, a, b = g.fresh("gen"), g.fresh("g"), g.fresh("v"), g.fresh("v")
    k = g.ex.fill("$small", 0)
    node = Statement(
        f"def {gen}(m):\n    for j in range(m % 5):\n        print('y', j, end=';')\n"
        f"        yield j * {k}\n    print('gen done')\n"
        f"{it} = {gen}({g.e('int')})\n{a} = next({it}, -1)\n{_break_point(g)}\n"
        f"{b} = sum({it}) + next({it}, -2)"
    )
    g.scope.define(a, "int")
    g.scope.define(b, "int")
    return node


def s_loop_try_finally(g, depth):
    """try/finally inside a loop, with break/continue in the body and a break point (and
    sometimes break/continue) in the finally block."""
    i = g.fresh("i")
    word = g.rng.choice(("break", "continue"))
    body = (Statement(f"if {g.e('bool')}:", (Suite(None, (Statement(word),)),)),) + g._loop_body(
        depth, {i: "int"}
    )
    fin = [Statement(f"print('fin', {i}, end=';')")]
    if g.rng.random() < 0.5:
        fin.append(Statement(_break_point(g)))
    if g.rng.random() < 0.3:
        cond = g.e("bool")
        jump = Statement(g.rng.choice(("break", "continue")))
        fin.append(Statement(f"if {cond}:", (Suite(None, (jump,)),)))
    if g.rng.random() < 0.2 and not g.in_def:
        fin.append(Statement(f"if {g.e('bool')}:", (Suite(None, (Statement(f"return {g.ret_value()}"),)),)))
    suites = (Suite(None, (Statement("try:", (Suite(None, body), Suite("finally:", tuple(fin)))),)),)
    return Statement(f"for {i} in range({g.ex.fill('$small', 0)}):", suites)


def s_with_break(g, depth):
    """A with block (a printing context manager that may swallow, or a grad mode) around a break."""
    if g.mode != "py" and g.rng.random() < 0.5:
        head = (
            "with "
            + g.rng.choice(("torch.no_grad()", "torch.enable_grad()", "torch.set_grad_enabled(False)"))
            + ":"
        )
        define = {}
    else:
        c = g.fresh("c")
        head = f"with Ctx({g.e('int')}, {g.rng.choice(('False', 'True'))}) as {c}:"
        define = {c: "int"}
    body = g.block(depth + 1, define=define)
    cut = g.rng.randint(0, len(body))
    return Statement(head, (Suite(None, body[:cut] + (Statement(_break_point(g)),) + body[cut:]),))


def s_exc_across_break(g, depth):
    """An exception caught, a break in the handler, the exception object read after it."""
    e, keep = g.fresh("e"), g.fresh("err")
    raiser = g.rng.choice(
        (
            f"raise FuzzError({g.e('int')})",
            f"raise KeyError({g.ex.fill('$key', 0)})",
            f"{g.var('list')}[{g.e('int')} + 100]",
            f"{g.e('int')} // 0",
        )
    )
    handler = (
        Statement(_break_point(g)),
        Statement(f"{keep} = {e}"),
        Statement(f"print(type({e}).__name__, {e}.args, {e}.__traceback__ is None)"),
    )
    after = Statement(f"print(repr({keep}), type({keep}.__context__).__name__)")
    node = Statement(
        f"{keep} = None\ntry:",
        (Suite(None, (Statement(raiser),)), Suite(f"except Exception as {e}:", handler)),
        hoist=False,
    )
    return Statement(node.head, node.suites + (Suite("finally:", (after,)),), hoist=False)


# -- objects: a __slots__ class with a property --------------------------------------------------
def s_slot_object(g, depth):
    sl, v = g.fresh("sl"), g.fresh("v")
    ops = [
        f"{sl}.b = {g.e('int')}",
        f"{sl}.a += {g.e('int')}",
        f"{sl}.b += {g.ex.fill('$small', 0)}",
        f"print({sl}.a, {sl}.b, getattr({sl}, 'c', 'none'), hasattr({sl}, '_b'))",
        f"try:\n    {sl}.c = 1\nexcept AttributeError as e:\n    print('no slot', e)",
        (
            f"del {sl}.a\ntry:\n    print({sl}.a)\nexcept AttributeError as e:\n    print('deleted', e)\n"
            f"{sl}.a = {g.e('int')}"
        ),
        _break_point(g),
    ]
    picked = [ops[k] for k in sorted(g.rng.sample(range(len(ops)), g.rng.randint(2, 4)))]
    node = Statement(f"{sl} = Slot({g.e('int')})\n" + "\n".join(picked) + f"\n{v} = {sl}.a + {sl}.b")
    g.scope.define(v, "int")
    return node


# -- calls ---------------------------------------------------------------------------------------
def s_bad_call(g, depth):
    call = g.rng.choice(
        (
            "kwf()",
            f"kwf({g.e('int')}, a={g.e('int')})",
            f"kwf(*{g.e('list')}[:0])",
            f"kwf({g.e('int')}, c={g.e('int')}, **{{'c': 1}})",
            f"(lambda x, /: x)(x={g.e('int')})",
        )
    )
    return Statement(f"try:\n    {call}\nexcept TypeError as e:\n    print('bind', e)")


# -- guards: state changed between calls -----------------------------------------------------------
BETWEEN = {
    "py": (
        "G = {n}",
        "STATE.append({n})",
        "STATE.clear()",
        "Box.bump = lambda self, k: self.v * k + {n}",
        "Box.v = {n}",
        "Box.extra = {n}",
        "del STATE[:]",
    ),
    "tensor": (
        "G = {n}",
        "STATE.append({n})",
        "BIAS = torch.tensor({n}.5)",
        "BIAS.add_({n})",
        "Box.bump = lambda self, k: self.v - k",
    ),
}
BETWEEN["module"] = BETWEEN["tensor"] + ("MOD.scale.data.fill_({n})", "MOD.calls = {n}")


def between_calls(calls: tuple, seed: int, mode: str) -> tuple:
    """`calls` with some calls after the first preceded by a change of module state (its own
    random stream, so the rest of the program does not depend on it)."""
    import random
    from dataclasses import replace

    rng = random.Random(seed * 7919 + 17)
    out = [calls[0]]
    for c in calls[1:]:
        if rng.random() < 0.5:
            change = rng.choice(BETWEEN[mode]).format(n=rng.randint(-2, 4))
            c = replace(c, before=f"{c.before}\n{change}" if c.before else change)
        out.append(c)
    return tuple(out)


# feature -> [(weight, statement, needs)]
STATEMENTS = {
    "opaque": [(1, s_view, ""), (0.5, s_deque, "")],
    "dictiter": [(1.5, s_for_dict, "c")],
    "classattr": [(1, s_class_attr, "")],
    "exc": [(3, s_reraise, "h"), (1, s_exc_attrs, "h")],
    "loops": [(1.5, s_while_true, "c"), (1, s_star_for, "c"), (0.7, s_loop_closures, "")],
    "breaks": [
        (1.5, s_loop_closure_break, "c"),
        (1, s_gen_across_break, ""),
        (1.5, s_loop_try_finally, "c"),
        (1, s_with_break, "c"),
        (1, s_exc_across_break, ""),
    ],
    "objects": [(1.5, s_slot_object, "")],
    "calls": [(0.7, s_bad_call, "")],
}


def statements(features) -> tuple:
    return tuple(s for feat in features for s in STATEMENTS.get(feat, ()))


def parse_features(text: str) -> tuple[str, ...]:
    """'all', '' or a comma-separated list of FEATURES -> a tuple of feature names."""
    if text in ("", "none"):
        return ()
    if text == "all":
        return FEATURES
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    bad = [n for n in names if n not in FEATURES]
    if bad:
        raise ValueError(
            f"unknown fuzz feature(s) {', '.join(bad)}; choose from {', '.join(FEATURES)} or 'all'"
        )
    return names
