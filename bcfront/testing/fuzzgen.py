"""Random programs for differential fuzzing: `generate(seed, mode)` -> `Program`.

A program is a module (prelude: globals, an exception class, a small `Box`
class, and torch for tensor programs) and one function ``f`` whose body mixes
control flow (if/elif/else, for and while with break/continue/else, match),
containers and their mutation (inputs included), closures (nonlocal
counters, lambdas, generator functions), exceptions (try/except/else/finally,
raise, assert, suppress), comprehensions, prints, globals and, in tensor
programs, tensor ops with views, in-place ops through views, setitem,
data-dependent branches (`bool(t.sum() > 0)`, `.item()`), shape-dependent
Python, `torch.no_grad()` blocks and lists of tensors.

Programs are well-typed by construction (the scope tracks each variable's
type; see `fuzzexpr`), always terminate (every loop is bounded by a small
constant, while loops by a pinned counter, and iteration is over copies so a
loop never sees its container grow) and are deterministic (no randomness,
no hash-order dependence), so eager execution is a valid oracle.  They still
raise exceptions on purpose: a risky index, a missing key or a `raise`
under a condition; matching those is part of the test.

Statements come from `STATEMENTS`, a table of (weight, method, needs);
the calls come from `fuzzinputs`.
"""

from __future__ import annotations

import random

from . import fuzzextra
from .fuzzexpr import TENSOR_TYPES, Expander, NoCandidate, weighted_choice
from .fuzzinputs import py_calls, tensor_calls
from .fuzzprelude import (
    ERRORS,
    FIXED,
    NEW_VAR_TYPES,
    PARAM_TYPES,
    PARAMS,
    POSTLUDE_MODULE,
    PRELUDE_PY,
    PRELUDE_TENSOR,
    PY_TYPES,
    Scope,
)
from .program import Program, Statement, Suite


class Gen:
    """State of one program's generation."""

    MAX_DEPTH = 3

    def __init__(self, seed: int, mode: str, extra: tuple[str, ...] = ()):
        self.rng = random.Random(seed)
        self.mode = mode
        self.scope = Scope(PARAM_TYPES[mode], FIXED[mode])
        allowed = PY_TYPES | {"fn", "gen", "rest"} | (TENSOR_TYPES | {"mod"} if mode != "py" else frozenset())
        self.ex = Expander(
            self.rng, self.scope.names, allowed, hostile=0.15, rules=fuzzextra.rules(extra) if extra else None
        )
        self.statements = STATEMENTS + fuzzextra.statements(extra)
        self.counter = 0
        self.loops = 0  # enclosing loops in the current function
        self.in_def = 0  # nested function depth
        self.in_handler = 0  # enclosing except blocks in the current function
        self.handler_var = None  # the name bound by the innermost `except ... as`, while bound

    # -- helpers ------------------------------------------------------------------------
    def fresh(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def e(self, typ: str) -> str:
        return self.ex.expr(typ, 1)

    def var(self, typ: str, rebind: bool = False) -> str:
        names = self.scope.rebindable(typ) if rebind else self.scope.names(typ)
        if not names:
            raise NoCandidate(typ)
        return self.rng.choice(names)

    def block(self, depth: int, count: int | None = None, define: dict | None = None):
        """A nested block: its new variables are not visible after it."""
        self.scope.frames.append(dict(define or {}))
        try:
            n = count if count is not None else self.rng.randint(1, 4)
            return tuple(self.stmt(depth) for _ in range(n))
        finally:
            self.scope.frames.pop()

    def stmt(self, depth: int) -> Statement:
        options = [(w, m) for w, m, needs in self.statements if self._can(needs, depth)]
        for _ in range(20):
            method = self._weighted(options)
            try:
                return method(self, depth)
            except NoCandidate:
                continue
        return Statement(f"print({self.e('int')})")

    def _can(self, needs: str, depth: int) -> bool:
        if "c" in needs and depth >= self.MAX_DEPTH:
            return False
        if "l" in needs and not self.loops:
            return False
        if "t" in needs and self.mode == "py":
            return False
        if "m" in needs and self.mode != "module":
            return False
        if "g" in needs and self.in_def:
            return False
        if "h" in needs and not self.in_handler:
            return False
        return True

    def _weighted(self, options):
        return weighted_choice(self.rng, options)

    def _new(self, prefix: str, typ: str, value: str, alts=()) -> Statement:
        """``name = value`` for a fresh name, defined (with `typ`) after its value is built."""
        name = self.fresh(prefix)
        self.scope.define(name, typ)
        return Statement(f"{name} = {value}", alts=tuple(f"{name} = {a}" for a in alts))

    def ret_value(self) -> str:
        frames = self.scope.frames[self.scope.fn_base :]
        names = sorted({n for fr in frames for n, t in fr.items() if t not in ("fn", "gen")})
        picked = self.rng.sample(names, min(len(names), self.rng.randint(1, 4)))
        shape = self.rng.random()
        if shape < 0.2 and picked:
            return "[" + ", ".join(picked) + "]"
        if shape < 0.35 and picked:
            return "{" + ", ".join(f"{n!r}: {n}" for n in picked) + "}"
        return "(" + "".join(f"{n}, " for n in picked) + ")"

    # -- simple statements ----------------------------------------------------------------
    def s_assign_new(self, depth):
        typ = self.rng.choice(NEW_VAR_TYPES[self.mode])
        return self._new("v", typ, self.e(typ), (self.ex.expr(typ, Expander.MAX_DEPTH),))

    def s_assign(self, depth):
        typ = self.rng.choice(NEW_VAR_TYPES[self.mode] + ("int", "dict", "str"))
        name = self.var(typ, rebind=True)
        return Statement(
            f"{name} = {self.e(typ)}", alts=(f"{name} = {self.ex.expr(typ, Expander.MAX_DEPTH)}",)
        )

    def s_augassign(self, depth):
        r = self.rng.random()
        if r < 0.5:
            target = self.var("int", rebind=True)
            return Statement(f"{target} {self.rng.choice(('+=', '-=', '*='))} {self.e('int')}")
        if r < 0.7:
            return Statement(f"{self.var('list', rebind=True)} += [{self.e('int')}]")
        if r < 0.8 and not self.in_def:
            return Statement(f"G += {self.ex.fill('$small', 0)}")
        return Statement(f"{self.var('str', rebind=True)} += 'y'")

    def s_list_mut(self, depth):
        xs = self.var("list")
        forms = (
            f"{xs}.append({self.e('int')})",
            f"{xs}.pop()",
            f"{xs}.insert(0, {self.e('int')})",
            f"{xs}.extend([{self.e('int')}, {self.e('int')}])",
            f"{xs}.sort()",
            f"{xs}.reverse()",
            f"if {xs}:\n    {xs}[{self.e('int')} % len({xs})] = {self.e('int')}",
            f"del {xs}[0]",
            f"{xs}.remove({self.e('int')})",
            f"{xs}[1:2] = [{self.e('int')}]",
            f"STATE.append(len({xs}))",
        )
        weights = (6, 0.5, 2, 2, 2, 1, 3, 0.4, 0.3, 1, 1)
        return Statement(self.rng.choices(forms, weights)[0])

    def s_dict_mut(self, depth):
        d = self.var("dict")
        key = self.ex.fill("$key", 0)
        forms = (
            f"{d}[{key}] = {self.e('int')}",
            f"{d}.pop({key}, None)",
            f"{d}.update({{{key}: {self.e('int')}}})",
            f"del {d}[{key}]",
            f"{d}.setdefault({key}, {self.e('int')})",
            f"{d}.clear()",
        )
        return Statement(self.rng.choices(forms, (6, 2, 2, 0.3, 2, 0.5))[0])

    def s_box_mut(self, depth):
        o = self.var("box")
        forms = (
            f"{o}.v = {self.e('int')}",
            f"{o}.v += {self.e('int')}",
            f"{o}.items.append({self.e('int')})",
            f"{o}.w = {self.e('int')}",
            f"{o}.bump({self.e('int')})",
        )
        return Statement(self.rng.choice(forms))

    def s_print(self, depth):
        forms = (
            lambda: f"print({self.e('int')}, {self.e('str')})",
            lambda: f"print({self.e('list')}, {self.e('dict')})",
            lambda: f"print(*{self.e('list')}, sep=',')",
            lambda: f"print('at', {self.e('bool')}, end=';\\n')",
            lambda: f"print(f'{{{self.var('int')}}}:{{{self.var('str')}}}')",
        )
        return Statement(self.rng.choice(forms)())

    def s_assert(self, depth):
        return Statement(f"assert {self.e('bool')}, 'check ' + str({self.e('int')})")

    def s_raise(self, depth):
        forms = (
            f"raise ValueError(f'bad {{{self.var('int')}}}')",
            f"raise FuzzError({self.e('int')})",
            f"raise KeyError({self.ex.fill('$key', 0)})",
            "raise IndexError('fuzz index')",
        )
        return Statement(f"if {self.e('bool')}:", (Suite(None, (Statement(self.rng.choice(forms)),)),))

    def s_return(self, depth):
        return Statement(f"if {self.e('bool')}:", (Suite(None, (Statement(f"return {self.ret_value()}"),)),))

    def s_break(self, depth):
        word = self.rng.choice(("break", "continue"))
        return Statement(f"if {self.e('bool')}:", (Suite(None, (Statement(word),)),))

    # -- compound statements -------------------------------------------------------------
    def s_if(self, depth):
        cond = self.e("bool")
        suites = [Suite(None, self.block(depth + 1))]
        r = self.rng.random()
        if r < 0.3:
            suites.append(Suite(f"elif {self.e('bool')}:", self.block(depth + 1), optional=True))
        if r < 0.6:
            suites.append(Suite("else:", self.block(depth + 1), optional=True))
        return Statement(f"if {cond}:", tuple(suites))

    def _iteration(self):
        """(header text, {loop variable: type}) of a for loop over something that cannot grow.

        Lists are iterated through copies cut to 4 items: a loop over a global
        list that the body extends would otherwise grow it geometrically over
        nested loops and calls.
        """
        forms = [
            (3, lambda: (f"range({self.ex.fill('$small', 0)})", {"int": 1})),
            (2, lambda: (f"range({self.e('int')} % 4)", {"int": 1})),
            (3, lambda: (f"list({self.var('list')})[:4]", {"int": 1})),
            (1, lambda: (f"{self.e('list')}[:3]", {"int": 1})),
            (2, lambda: (f"enumerate(list({self.var('list')})[:4])", {"int": 2})),
            (1, lambda: (f"zip({self.e('list')}[:4], {self.e('list')})", {"int": 2})),
            (2, lambda: (f"list({self.var('dict')}.items())", {"str": 1, "int": 1})),
            (1, lambda: (f"sorted({self.var('dict')})", {"str": 1})),
            (1, lambda: (f"{self.var('str')}[:4]", {"str": 1})),
        ]
        if self.mode != "py":
            forms += [
                (3, lambda: (self.var("M"), {"R": 1})),
                (1, lambda: (f"list({self.var('tlist')})", {"M": 1})),
            ]
        options = [(w, f) for w, f in forms]
        for _ in range(10):
            try:
                return self._weighted(options)()
            except NoCandidate:
                continue
        return f"range({self.ex.fill('$small', 0)})", {"int": 1}

    def _loop_body(self, depth, define):
        self.loops += 1
        try:
            return self.block(depth + 1, define=define)
        finally:
            self.loops -= 1

    def s_for(self, depth):
        it, kinds = self._iteration()
        names, define = [], {}
        for typ, count in kinds.items():
            for _ in range(count):
                n = self.fresh("i")
                names.append(n)
                define[n] = typ
        suites = [Suite(None, self._loop_body(depth, define))]
        if self.rng.random() < 0.15:
            suites.append(Suite("else:", self.block(depth + 1), optional=True))
        return Statement(f"for {', '.join(names)} in {it}:", tuple(suites))

    def s_while(self, depth):
        w = self.fresh("w")
        self.scope.define(w, "int")
        self.scope.frozen.add(w)
        bound = self.ex.fill("$small", 0)
        # The extra condition is parenthesized: one that binds looser than `and` (`a or b`,
        # `a if c else b`) would otherwise take the bound out of force and loop forever.
        cond = f"{w} < {bound}" + (f" and ({self.e('bool')})" if self.rng.random() < 0.3 else "")
        body = (Statement(f"{w} += 1", pinned=True),) + self._loop_body(depth, {})
        suites = [Suite(None, body)]
        if self.rng.random() < 0.15:
            suites.append(Suite("else:", self.block(depth + 1), optional=True))
        return Statement(f"{w} = 0\nwhile {cond}:", tuple(suites), pinned=False)

    def s_try(self, depth):
        suites = [Suite(None, self.block(depth + 1))]
        for _ in range(self.rng.choice((0, 1, 1, 1, 2))):
            err = self.rng.choice(ERRORS)
            if self.rng.random() < 0.5:
                first = Statement(
                    self.rng.choice(("print(type(e).__name__, e)", "print(repr(e))", "print(e.args)"))
                )
                body = (first,) + self._handler(depth, "e", 1)
                suites.append(Suite(f"except {err} as e:", body))
            else:
                suites.append(Suite(f"except {err}:", self._handler(depth, self.handler_var, None)))
        has_handler = len(suites) > 1
        if has_handler and self.rng.random() < 0.2:
            suites.append(Suite("else:", self.block(depth + 1), optional=True))
        if not has_handler or self.rng.random() < 0.35:
            suites.append(Suite("finally:", self.block(depth + 1), optional=has_handler))
        return Statement("try:", tuple(suites))

    def _handler(self, depth, var, count):
        """The body of an except block; `e` is unbound after an ``except ... as e`` ends."""
        self.in_handler += 1
        self.handler_var = var
        try:
            return self.block(depth + 1, count)
        finally:
            self.in_handler -= 1
            self.handler_var = None

    def s_suppress(self, depth):
        return Statement(
            "with suppress(KeyError, IndexError, ZeroDivisionError):", (Suite(None, self.block(depth + 1)),)
        )

    def s_with_ctx(self, depth):
        name = self.fresh("c")
        swallow = self.rng.choice(("False", "False", "True"))
        body = self.block(depth + 1, define={name: "int"})
        return Statement(f"with Ctx({self.e('int')}, {swallow}) as {name}:", (Suite(None, body),))

    def s_walrus(self, depth):
        name = self.fresh("v")
        head = f"if ({name} := {self.e('int')}) > {self.ex.fill('$lit', 0)}:"
        body = self.block(depth + 1)
        self.scope.define(name, "int")  # bound whichever way the test goes
        return Statement(head, (Suite(None, body),))

    def s_unpack(self, depth):
        r = self.rng.random()
        if r < 0.4:
            first, rest = self.fresh("v"), self.fresh("v")
            node = Statement(f"{first}, *{rest} = {self.e('list')} + [{self.e('int')}]")
            self.scope.define(first, "int")
            self.scope.define(rest, "list")
            return node
        if r < 0.7:
            x, y = self.var("int", rebind=True), self.var("int", rebind=True)
            return Statement(f"{x}, {y} = {y}, {x}")
        gen, out = self.fresh("g"), self.fresh("v")
        node = Statement(f"{gen} = {self.var('gen')}({self.e('int')})\n{out} = next({gen}, -1) + sum({gen})")
        self.scope.define(out, "int")
        return node

    def s_del(self, depth):
        names = [
            n
            for n, t in self.scope.frames[-1].items()
            if n not in self.scope.frozen and t not in ("fn", "gen", "rest") and n not in ("kw",)
        ]
        if not names:
            raise NoCandidate("del")
        name = self.rng.choice(sorted(names))
        del self.scope.frames[-1][name]
        return Statement(f"del {name}")

    def s_match(self, depth):
        subject = self.e("int")
        cases = (
            Statement("case 0:", (Suite(None, self.block(depth + 2)),)),
            Statement(f"case 1 | 2 if {self.e('bool')}:", (Suite(None, self.block(depth + 2)),)),
            Statement("case _:", (Suite(None, self.block(depth + 2)),)),
        )
        return Statement(f"match {subject} % 3:", (Suite(None, cases),), hoist=False)

    def _def(self, depth, name, params: dict, body_fn, tail):
        """A nested function: its own locals, the enclosing variables readable (closure cells)."""
        saved = (self.scope.fn_base, self.loops, self.in_handler, self.handler_var)
        self.scope.frames.append(dict(params))
        self.scope.fn_base, self.loops = len(self.scope.frames) - 1, 0
        self.in_handler, self.handler_var = 0, None
        self.in_def += 1
        try:
            body = body_fn() + tail()
        finally:
            self.in_def -= 1
            self.scope.frames.pop()
            self.scope.fn_base, self.loops, self.in_handler, self.handler_var = saved
        return body

    def s_closure(self, depth):
        name = self.fresh("fn")
        counter = self.fresh("cnt") if self.rng.random() < 0.5 else None
        pre = (Statement(f"nonlocal {counter}", pinned=True), Statement(f"{counter} += 1")) if counter else ()
        body = self._def(
            depth,
            name,
            {"z": "int"},
            lambda: self.block(depth + 1, self.rng.randint(0, 3)),
            lambda: (Statement(f"return {self.e('int')}", alts=("return z",), pinned=True),),
        )
        node = Statement(f"def {name}(z):", (Suite(None, pre + body),), hoist=False)
        self.scope.define(name, "fn")
        if counter:
            self.scope.define(counter, "int")
            return Statement(f"{counter} = 0\n" + node.head, node.suites, hoist=False)
        return node

    def s_lambda(self, depth):
        return self._new("fn", "fn", f"lambda z: z * {self.ex.fill('$small', 0)} + {self.var('int')}")

    def s_genfn(self, depth):
        name = self.fresh("gen")
        inner = self.fresh("j")

        def body():
            self.scope.define(inner, "int")
            loop = Statement(
                f"for {inner} in range(m % 4):",
                (Suite(None, (Statement(f"yield {self.e('int')}", alts=(f"yield {inner}",)),)),),
            )
            return (loop,)

        node_body = self._def(depth, name, {"m": "int"}, body, lambda: ())
        self.scope.define(name, "gen")
        return Statement(f"def {name}(m):", (Suite(None, node_body),), hoist=False)

    # -- tensor statements ------------------------------------------------------------------
    def s_tensor_new(self, depth):
        typ = self.rng.choice(("M", "M", "M", "R", "C", "S", "MT", "F"))
        return self._new("x", typ, self.e(typ), (self.ex.expr(typ, Expander.MAX_DEPTH),))

    def s_inplace(self, depth):
        typ = self.rng.choice(("M", "M", "M", "R", "C", "S"))
        v = self.var(typ)
        num = self.ex.fill("$num", 0)
        forms = [
            f"{v}.add_({self.e(typ)})",
            f"{v}.mul_({num})",
            f"{v}.clamp_(min=-1)",
            f"{v}.relu_()",
            f"{v}.sub_({self.e(typ)})",
            f"{v} += {self.e(typ)}",
            f"{v}.copy_({self.e(typ)})",
            f"{v}.masked_fill_({v} < 0, {num})",
            f"{v}.zero_()",
            f"{v} *= {num}",
        ]
        if v in self.scope.fixed:  # `BIAS += x` would make BIAS a local of f
            forms = [fm for fm in forms if "=" not in fm]
        if typ == "M":
            forms += [
                f"{v}[0] = {num}",
                f"{v}[:, 0] = {self.e('C')}",
                f"{v}[0].add_({num})",
                f"{v}[{v} > 1] = {num}",
                f"{v}.t().mul_({num})",
                f"{v}[:, -1].sub_({self.e('C')})",
            ]
        return Statement(self.rng.choice(forms))

    def s_tensor_misc(self, depth):
        forms = [
            lambda: f"{self.var('int', rebind=True)} += {self.e('M')}.shape[0]",
            lambda: f"{self.var('list')}.append(int({self.e('S')}.item()))",
            lambda: f"print({self.e('M')}.shape, {self.e('S')}.item())",
            lambda: f"print({self.e('M')}.tolist())",
            lambda: f"print({self.e('R')})",
            lambda: f"{self.var('tlist')}.append({self.e('M')})",
            lambda: (
                f"if {self.var('M')}.requires_grad:\n    ({self.e('M')} * {self.e('M')}).sum().backward()"
            ),
        ]
        return Statement(self.rng.choice(forms)())

    def s_tlist(self, depth):
        return self._new("ts", "tlist", f"[{self.e('M')}, {self.e('M')}]")

    def s_module_state(self, depth):
        m = self.var("mod")
        forms = (
            f"{m}.calls += 1",
            f"{m}.count.add_(1)",
            f"{m}.last = {self.e('M')}.detach()",
            f"{m}.count.copy_({self.e('S')}.detach())",
            f"print({m}.training, {m}.calls)",
        )
        return Statement(self.rng.choice(forms))

    def s_no_grad(self, depth):
        ctx = self.rng.choice(("torch.no_grad()", "torch.enable_grad()", "torch.set_grad_enabled(False)"))
        return Statement(f"with {ctx}:", (Suite(None, self.block(depth + 1)),))


# (weight, method, needs): c = compound (depth-limited), l = inside a loop,
# t = tensor and module programs only, m = module programs only, g = not inside a nested def,
# h = inside an except block (used by the opt-in statements of `fuzzextra`).
STATEMENTS = (
    (8, Gen.s_assign_new, ""),
    (5, Gen.s_assign, ""),
    (4, Gen.s_augassign, ""),
    (4, Gen.s_list_mut, ""),
    (3, Gen.s_dict_mut, ""),
    (2, Gen.s_box_mut, ""),
    (3, Gen.s_print, ""),
    (0.5, Gen.s_assert, ""),
    (1, Gen.s_raise, ""),
    (1, Gen.s_return, "g"),
    (4, Gen.s_break, "l"),
    (4, Gen.s_if, "c"),
    (3, Gen.s_for, "c"),
    (2, Gen.s_while, "c"),
    (3, Gen.s_try, "c"),
    (1, Gen.s_suppress, "c"),
    (1, Gen.s_match, "c"),
    (2, Gen.s_closure, "cg"),
    (1, Gen.s_lambda, ""),
    (1, Gen.s_genfn, "cg"),
    (1.5, Gen.s_with_ctx, "c"),
    (1, Gen.s_walrus, "c"),
    (1.5, Gen.s_unpack, ""),
    (0.5, Gen.s_del, "g"),
    (12, Gen.s_tensor_new, "t"),
    (6, Gen.s_inplace, "t"),
    (3, Gen.s_tensor_misc, "t"),
    (1, Gen.s_tlist, "t"),
    (2, Gen.s_no_grad, "ct"),
    (3, Gen.s_module_state, "m"),
)


def generate(
    seed: int,
    mode: str = "py",
    size: int | None = None,
    device: str | None = None,
    extra: tuple[str, ...] = (),
) -> Program:
    """A random program of `mode` ("py": no torch, or "tensor") and its calls, from `seed`.

    `device` places a tensor program's argument tensors (e.g. "cuda"); the program is the same.
    `extra` names opt-in grammar features (`fuzzextra.FEATURES`); such programs are named
    ``<mode>x-<seed>``.  Without them the program of a seed never changes with new features.
    """
    if mode not in PARAMS:
        raise ValueError(f"mode must be one of {sorted(PARAMS)}, not {mode!r}")
    extra = tuple(f for f in fuzzextra.FEATURES if f in extra)
    g = Gen(seed, mode, extra)
    prologue = (Statement("global G", pinned=True),)
    n = size if size is not None else g.rng.randint(4, 14)
    body = tuple(g.stmt(0) for _ in range(n))
    tail = (Statement(f"return {g.ret_value()}", alts=("return None",), pinned=False),)
    if mode == "py":
        calls = py_calls(g.rng)
    else:
        calls = tensor_calls(g.rng, device, module=mode == "module")
    if "guards" in extra:
        calls = fuzzextra.between_calls(calls, seed, mode)
    prelude = fuzzextra.prelude(PRELUDE_TENSOR if mode != "py" else PRELUDE_PY, extra)
    post, entry = (POSTLUDE_MODULE, "MOD") if mode == "module" else ("", "f")
    return Program(
        f"{mode}{'x' if extra else ''}-{seed}",
        mode,
        prelude,
        PARAMS[mode],
        prologue + body + tail,
        calls,
        seed,
        postlude=post,
        entry=entry,
    )
