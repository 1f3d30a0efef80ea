"""Typed expression grammar of the fuzzer, as rule tables.

`RULES[type]` lists ``(weight, template)`` pairs.  A template is Python source
with ``$name`` placeholders that `Expander` fills:

    $int $bool $list $dict $str $box $M $R $C $S $MT $F $tlist
                    a sub-expression of that type (one level deeper)
    $v_<type>       the name of a variable of that type (rule skipped if none); the
                    same name everywhere in one template
    $lit $nz $small a small int literal / a non-zero one / 0..4
    $num            a number a tensor is combined with (literal or int variable)
    $key $skey      a dict key literal (sometimes hostile: quotes, newline, unicode)
    $cmp            a comparison operator
    $c $c2          fresh comprehension variables (one name per template)

Types: int, bool, list (of ints), dict (str -> int), str, box (a `Box`),
rest (the ``*rest`` tuple of ints), mod (the module ``self`` of a module program),
fn (a closure int -> int), gen (a generator function int -> ints), and for
tensor programs M (r, c), MT (c, r), R (c,), C (r,), S (0-d), F (r*c,) and
tlist (a non-empty list of M tensors).  Templates keep every value bounded:
no list or string doubles in a loop, and `range` only ever sees ``% 4``.

Every type has at least one rule whose template holds no type placeholder
(a "leaf"), used once the depth budget is spent.
"""

from __future__ import annotations

import re

PLACEHOLDER = re.compile(r"\$(\w+)")
KEYS = ("'k'", "'p'", "'q'", "'k'", "'p'")
HOSTILE_KEYS = ('"it\'s"', "'q\"x'", "'é'", "'a\\nb'", "'{x}'", "'\\\\'")
CMPS = ("<", "<=", ">", ">=", "==", "!=")
NUMS = ("2", "0.5", "-1", "3", "1.5", "-2")


def _t(weight, template):
    return (weight, template)


RULES: dict[str, list[tuple[int, str]]] = {
    "int": [
        _t(6, "$lit"),
        _t(10, "$v_int"),
        _t(4, "($int + $int)"),
        _t(3, "($int - $int)"),
        _t(2, "($int * $small)"),
        _t(2, "($int // $nz)"),
        _t(2, "($int % $nz)"),
        _t(0.3, "($int // $int)"),
        _t(3, "len($list)"),
        _t(1, "len($dict)"),
        _t(1, "len($str)"),
        _t(0.3, "$list[$int]"),
        _t(2, "($v_list[$int % len($v_list)] if $v_list else $lit)"),
        _t(2, "$dict.get($key, $lit)"),
        _t(0.3, "$v_dict[$key]"),
        _t(2, "sum($list)"),
        _t(1, "max($list, default=$lit)"),
        _t(2, "min($int, $int)"),
        _t(1, "abs($int)"),
        _t(2, "($int if $bool else $int)"),
        _t(1, "int($bool)"),
        _t(1, "$str.count('a')"),
        _t(1, "sum($c * $small for $c in $list)"),
        _t(1, "len([$c for $c in $list if $c > $lit])"),
        _t(3, "$v_fn($int)"),
        _t(2, "sum($v_gen($int))"),
        _t(2, "$v_box.v"),
        _t(1, "len($v_box.items)"),
        _t(1, "$v_box.bump($small)"),
        _t(1, "G"),
        _t(1, "len(STATE)"),
        _t(2, "$M.shape[0]"),
        _t(2, "$M.size(1)"),
        _t(1, "$M.numel()"),
        _t(1, "len($v_M)"),
        _t(1, "$F.shape[0]"),
        _t(2, "int($S.item())"),
        _t(1, "int($S > 0)"),
        _t(1, "len($v_tlist)"),
        _t(2, "len($v_rest)"),
        _t(1, "sum($v_rest)"),
        _t(1, "functools.reduce(lambda p, q: p + q, $list, 0)"),
        _t(1, "bisect.bisect(sorted($list), $int)"),
        _t(1, "math.gcd($int, $int)"),
        _t(2, "$v_mod.calls"),
        # prints inside expressions: graph breaks with values still on the stack
        _t(1, "(print('b', end='|') or $int)"),
        _t(1, "($int + (print(end='') or $int))"),
        _t(1, "sum(print($c, end='|') or $c for $c in $list)"),
        _t(1, "min($int, print(end='') or $int)"),
    ],
    "bool": [
        _t(3, "True"),
        _t(8, "$int $cmp $int"),
        _t(1, "$int < $int <= $int"),
        _t(2, "$int in $list"),
        _t(2, "$key in $dict"),
        _t(2, "not $bool"),
        _t(2, "($bool and $bool)"),
        _t(2, "($bool or $bool)"),
        _t(1, "$str.startswith('a')"),
        _t(1, "isinstance($v_int, bool)"),
        _t(1, "bool($list)"),
        _t(1, "any($c > $lit for $c in $list)"),
        _t(1, "all($c != $lit for $c in $list)"),
        _t(1, "hasattr($v_box, 'w')"),
        _t(1, "$v_box.v > $lit"),
        _t(3, "bool($S > $lit)"),
        _t(1, "$M.is_contiguous()"),
        _t(1, "$v_M.dtype == torch.float32"),
        _t(1, "$v_M.requires_grad"),
        _t(1, "torch.is_grad_enabled()"),
        _t(2, "$v_M.shape[0] > $small"),
        _t(1, "bool(($M > 0).any())"),
        _t(1, "bool($v_rest)"),
        _t(3, "$v_mod.training"),
        _t(1, "(print(end='') or $bool)"),
    ],
    "list": [
        _t(5, "$v_list"),
        _t(3, "[$int, $int]"),
        _t(2, "($list + [$int])"),
        _t(2, "$list[1:]"),
        _t(1, "$list[::-1]"),
        _t(2, "sorted($list)"),
        _t(1, "list(reversed($list))"),
        _t(2, "[$c + $int for $c in $list]"),
        _t(2, "[$c for $c in $list if $c % 2 == 0]"),
        _t(2, "list(range($small))"),
        _t(1, "[*$list, $int]"),
        _t(1, "list($dict.values())"),
        _t(1, "[$c * $c2 for $c in $list for $c2 in range(2)]"),
        _t(1, "list(map(abs, $list))"),
        _t(1, "[$c * $c2 for $c, $c2 in enumerate($list)]"),
        _t(1, "[$c - $c2 for $c, $c2 in zip($list, $list)]"),
        _t(1, "list($v_gen($int))"),
        _t(1, "list($v_M.shape)"),
        _t(1, "[int($c) for $c in $C.tolist()]"),
        _t(1, "list($v_rest)"),
        _t(1, "list(itertools.accumulate($list))"),
        _t(1, "heapq.nsmallest(2, $list)"),
        _t(1, "copy.deepcopy($v_list)"),
        _t(1, "[$c for $c, _ in collections.Counter($list).most_common(2)]"),
        _t(1, "[print($c, end='|') or $c for $c in $list]"),
        _t(1, "[$int, (print(end='') or $int)]"),
    ],
    "dict": [
        _t(5, "$v_dict"),
        _t(3, "{$key: $int}"),
        _t(1, "dict($dict)"),
        _t(2, "{**$dict, $key: $int}"),
        _t(2, "{$c: $c2 + $small for $c, $c2 in $dict.items()}"),
        _t(1, "{str($c): $c for $c in $list}"),
        _t(1, "dict(zip(['k', 'p'], $list))"),
        _t(1, "{**$dict, $key: print(end='') or $int}"),
    ],
    "str": [
        _t(4, "$v_str"),
        _t(2, "$skey"),
        _t(2, "f'{$v_int}|{$v_str}'"),
        _t(1, "($str + 'x')"),
        _t(2, "str($int)"),
        _t(1, "$str.upper()"),
        _t(1, "','.join(str($c) for $c in $list)"),
        _t(1, "$str[::-1]"),
        _t(1, "$str.replace('a', 'b')"),
        _t(1, "repr($str)"),
        _t(1, "type($v_box).__name__"),
        _t(1, "str($v_M.dtype)"),
        _t(1, "json.dumps($dict, sort_keys=True)"),
    ],
    "box": [_t(5, "$v_box"), _t(1, "Box($int, $list)")],
    "M": [
        _t(8, "$v_M"),
        _t(3, "($M + $M)"),
        _t(2, "($M - $M)"),
        _t(2, "($M * $M)"),
        _t(3, "($M * $num)"),
        _t(2, "($M + $num)"),
        _t(2, "($M + $R)"),
        _t(1, "($M * $C.unsqueeze(1))"),
        _t(2, "torch.relu($M)"),
        _t(1, "$M.abs()"),
        _t(1, "(-$M)"),
        _t(1, "$M.clamp(min=-1, max=$small)"),
        _t(1, "torch.where($M > 0, $M, $M)"),
        _t(2, "$M.clone()"),
        _t(2, "$MT.t()"),
        _t(1, "$MT.transpose(0, 1)"),
        _t(1, "$F.reshape($v_M.shape)"),
        _t(1, "$M.sin()"),
        _t(1, "torch.tanh($M)"),
        _t(1, "$M.contiguous()"),
        _t(1, "$M.cumsum(0)"),
        _t(1, "$M.softmax(-1)"),
        _t(1, "$M.masked_fill($M > 1, 0.0)"),
        _t(1, "(($M @ $MT) @ $M)"),
        _t(1, "$v_tlist[0]"),
        _t(1, "torch.stack($v_tlist).sum(0)"),
        _t(1, "$M[:, :]"),
        _t(1, "$M.view_as($v_M)"),
        _t(1, "$M.detach()"),
        _t(1, "($M * BIAS)"),
        _t(1, "$M[torch.arange($v_M.shape[0])]"),
        _t(1, "torch.where($M > 0, 1.0, 0.0)"),
        _t(1, "($M > 0).to($v_M.dtype)"),
        _t(1, "$M.gather(1, ($M.abs() * 0).long())"),
        _t(1, "torch.cat([$M, $M], 0)[:$v_M.shape[0]]"),
        _t(1, "$M.new_zeros($v_M.shape)"),
        _t(3, "$v_mod.act($M)"),
        _t(3, "($M * $v_mod.scale)"),
        _t(1, "torch.nn.functional.dropout($M, 0.0, $v_mod.training)"),
        _t(1, "(print(end='') or $M)"),
        _t(1, "($M + (print(end='') or $M))"),
    ],
    "MT": [
        _t(3, "$v_M.t()"),
        _t(2, "$M.transpose(0, 1)"),
        _t(1, "$M.permute(1, 0)"),
        _t(1, "$M.T"),
        _t(2, "$v_MT"),
    ],
    "R": [
        _t(3, "$v_M[0]"),
        _t(1, "$v_M[-1]"),
        _t(2, "$M.sum(0)"),
        _t(1, "$M.mean(0)"),
        _t(1, "$M.amax(0)"),
        _t(1, "$MT[:, 0]"),
        _t(1, "($R * $num)"),
        _t(1, "($R + $R)"),
        _t(1, "$v_M.select(0, 0)"),
        _t(1, "torch.relu($R)"),
        _t(3, "$v_R"),
    ],
    "C": [
        _t(3, "$v_M[:, 0]"),
        _t(2, "$M.sum(1)"),
        _t(1, "$M.amax(-1)"),
        _t(1, "$MT[0]"),
        _t(1, "$M.norm(dim=1)"),
        _t(3, "$v_C"),
        _t(1, "$M.argmax(1)"),
    ],
    "S": [
        _t(3, "$v_M.sum()"),
        _t(2, "$M.sum()"),
        _t(1, "$R.max()"),
        _t(1, "($M * $M).sum()"),
        _t(1, "$C.mean()"),
        _t(1, "$M.amin()"),
        _t(1, "($S + $S)"),
        _t(1, "$v_M[0, 0]"),
        _t(3, "$v_S"),
        _t(1, "BIAS"),
        _t(2, "$v_mod.scale"),
        _t(2, "$v_mod.count"),
    ],
    "F": [_t(2, "$v_M.reshape(-1)"), _t(1, "$M.flatten()"), _t(1, "$M.contiguous().view(-1)"), _t(2, "$v_F")],
    "tlist": [_t(3, "$v_tlist"), _t(1, "[$M, $M]")],
}

TENSOR_TYPES = frozenset({"M", "MT", "R", "C", "S", "F", "tlist"})


def leaf_rules(rules):
    return {
        t: [(w, s) for w, s in rs if not any(m.group(1) in rules for m in PLACEHOLDER.finditer(s))]
        for t, rs in rules.items()
    }


LEAVES = leaf_rules(RULES)


def weighted_choice(rng, options):
    """The second item of one (weight, item) pair of `options`, drawn by weight."""
    total = sum(w for w, _ in options)
    x = rng.uniform(0, total)
    for w, item in options:
        x -= w
        if x <= 0:
            return item
    return options[-1][1]


class NoCandidate(Exception):
    """A template needs something the scope does not have (e.g. no list variable)."""


class Expander:
    """Fills templates from a scope.  `scope(type)` lists the variables of a type."""

    MAX_DEPTH = 3

    def __init__(self, rng, scope, allowed_types, hostile: float = 0.0, rules=None):
        self.rng = rng
        # `rules` (same types as RULES) lets a generator add templates; None: the standard grammar
        self.rules = RULES if rules is None else rules
        self.leaves = LEAVES if rules is None else leaf_rules(rules)
        self.scope = scope
        self.allowed = allowed_types
        self.hostile = hostile
        self.fresh = 0

    def expr(self, typ: str, depth: int = 0) -> str:
        table = (self.leaves if depth >= self.MAX_DEPTH else self.rules)[typ]
        options = [(w, s) for w, s in table if self._possible(s)]
        for _ in range(8 if options else 0):
            template = self._weighted(options)
            try:
                return self.fill(template, depth)
            except NoCandidate:
                continue
        for _, template in self.leaves[typ]:
            try:
                return self.fill(template, self.MAX_DEPTH)
            except NoCandidate:
                continue
        raise NoCandidate(typ)

    def _possible(self, template: str) -> bool:
        if "torch." in template and "M" not in self.allowed:
            return False
        for m in PLACEHOLDER.finditer(template):
            name = m.group(1)
            base = name[2:] if name.startswith("v_") else name
            if base in self.rules and base not in self.allowed:
                return False
            if name.startswith("v_") and not self.scope(base):
                return False
        return True

    def _weighted(self, options):
        return weighted_choice(self.rng, options)

    def fill(self, template: str, depth: int) -> str:
        fresh: dict[str, str] = {}
        return PLACEHOLDER.sub(lambda m: self._one(m.group(1), depth, fresh), template)

    def _one(self, name: str, depth: int, fresh: dict) -> str:
        rng = self.rng
        if name in self.rules:
            return self.expr(name, depth + 1)
        if name.startswith("v_"):
            # One variable per template: "$v_list[$int % len($v_list)] if $v_list" names one list.
            if name not in fresh:
                names = self.scope(name[2:])
                if not names:
                    raise NoCandidate(name)
                fresh[name] = rng.choice(names)
            return fresh[name]
        if name in ("c", "c2"):
            if name not in fresh:
                self.fresh += 1
                fresh[name] = f"{name}_{self.fresh}"
            return fresh[name]
        return FILLERS[name](self)


def _key(ex: Expander) -> str:
    if ex.rng.random() < ex.hostile:
        return ex.rng.choice(HOSTILE_KEYS)
    return ex.rng.choice(KEYS)


def _num(ex: Expander) -> str:
    ints = ex.scope("int")
    if ints and ex.rng.random() < 0.2:
        return ex.rng.choice(ints)
    return ex.rng.choice(NUMS)


FILLERS = {
    "lit": lambda ex: str(ex.rng.randint(-3, 9)),
    "nz": lambda ex: str(ex.rng.choice((1, 2, 3, -2, 5))),
    "small": lambda ex: str(ex.rng.randint(0, 4)),
    "key": _key,
    "skey": lambda ex: ex.rng.choice(KEYS + HOSTILE_KEYS),
    "cmp": lambda ex: ex.rng.choice(CMPS),
    "num": _num,
}
