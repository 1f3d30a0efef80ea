"""Integer index expressions: affine sums of loop variables and floor-div/mod atoms.

Views, reshapes, slices and broadcasts are folded into these expressions, so a
load from a transposed or sliced tensor is just a different `Affine`.  The
expressions are kept in a canonical form so that two accesses to the same
element compare equal structurally; fusion relies on that to decide whether a
consumer can read a producer's value straight from registers.

Canonical form: ``Affine(const, terms)`` with `terms` a sorted tuple of
``(atom, coeff)`` pairs, no zero coefficients, atoms being `Var`, `Div` or `Mod`.
All values are assumed non-negative (index values of valid elements are), which
is what makes ``floor`` and ``%`` rewrite cleanly; lanes that a mask disables may
compute garbage indices, which is harmless because their loads are masked.

Imports no torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .symsize import gcd, is_int


@dataclass(frozen=True, slots=True)
class Var:
    """A loop variable ranging over ``0 <= v < size`` (size lives in a context)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Div:
    """``arg // den`` (floor division of a non-negative value by a positive int)."""

    arg: Affine
    den: int

    def __str__(self) -> str:
        return f"({self.arg.paren()} // {self.den})"


@dataclass(frozen=True, slots=True)
class Mod:
    """``arg % den`` for a non-negative `arg`."""

    arg: Affine
    den: int

    def __str__(self) -> str:
        return f"({self.arg.paren()} % {self.den})"


Atom = Var | Div | Mod


def _key(atom: Atom) -> str:
    return str(atom)


@dataclass(frozen=True, slots=True)
class Affine:
    """``const + sum(coeff * atom)`` in canonical form (build with `affine`)."""

    const: int
    terms: tuple

    def __str__(self) -> str:
        parts = []
        for atom, c in self.terms:
            parts.append(str(atom) if c == 1 else f"{c} * {atom}")
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")

    def paren(self) -> str:
        s = str(self)
        return s if len(self.terms) + (self.const != 0) <= 1 else f"({s})"

    @property
    def is_const(self) -> bool:
        return not self.terms

    def atoms(self):
        return [a for a, _ in self.terms]

    def __add__(self, other) -> Affine:
        other = lift(other)
        terms = dict(self.terms)
        for a, c in other.terms:
            terms[a] = terms.get(a, 0) + c
        return affine(self.const + other.const, terms)

    __radd__ = __add__

    def __sub__(self, other) -> Affine:
        return self + lift(other) * -1

    def __mul__(self, k: int) -> Affine:
        if not is_int(k):
            raise TypeError("index expressions scale only by integers")
        if k == 0:
            return ZERO
        return Affine(self.const * k, tuple((a, c * k) for a, c in self.terms))

    __rmul__ = __mul__


def _combine_divmod(terms: dict) -> bool:
    """Rewrite ``k*d*(a // d) + k*(a % d)`` into ``k*a``; True if anything changed."""
    for atom, c in list(terms.items()):
        if not isinstance(atom, Mod):
            continue
        partner = _div_atom(atom.arg, atom.den)
        if partner is None or terms.get(partner) != c * atom.den:
            continue
        del terms[atom], terms[partner]
        for a2, c2 in atom.arg.terms:
            terms[a2] = terms.get(a2, 0) + c * c2
        terms["__const__"] = terms.get("__const__", 0) + c * atom.arg.const
        return True
    return False


def _div_atom(arg: Affine, den: int):
    """The canonical Div atom for ``arg // den`` if it is a single atom, else None."""
    e = _make_div(arg, den, None)
    if e.const == 0 and len(e.terms) == 1 and e.terms[0][1] == 1:
        return e.terms[0][0]
    return None


def affine(const: int, terms) -> Affine:
    """Canonicalize: drop zero coefficients, merge div/mod pairs, sort atoms."""
    terms = dict(terms)
    terms["__const__"] = const
    while _combine_divmod(terms):
        pass
    const = terms.pop("__const__")
    items = sorted(((a, c) for a, c in terms.items() if c != 0), key=lambda t: _key(t[0]))
    return Affine(const, tuple(items))


def lift(x) -> Affine:
    if isinstance(x, Affine):
        return x
    if is_int(x):
        return Affine(x, ())
    if isinstance(x, (Var, Div, Mod)):
        return Affine(0, ((x, 1),))
    raise TypeError(f"not an index expression: {x!r}")


ZERO = Affine(0, ())


def var(name: str) -> Affine:
    return lift(Var(name))


# ---------------------------------------------------------------- bounds

Ranges = Mapping[str, int]  # variable name -> size (values 0 .. size-1)


def bounds(e, ranges: Ranges | None):
    """Inclusive (lo, hi) interval of `e`, or None when a variable's range is unknown."""
    e = lift(e)
    lo = hi = e.const
    for atom, c in e.terms:
        b = _atom_bounds(atom, ranges)
        if b is None:
            return None
        a_lo, a_hi = b
        lo += min(c * a_lo, c * a_hi)
        hi += max(c * a_lo, c * a_hi)
    return lo, hi


def _atom_bounds(atom: Atom, ranges):
    if isinstance(atom, Var):
        if ranges is None or atom.name not in ranges:
            return None
        return 0, max(ranges[atom.name] - 1, 0)
    if isinstance(atom, Div):
        b = bounds(atom.arg, ranges)
        return None if b is None else (b[0] // atom.den, b[1] // atom.den)
    b = bounds(atom.arg, ranges)
    if b is not None and 0 <= b[0] and b[1] < atom.den:
        return b
    return 0, atom.den - 1


# ---------------------------------------------------------------- div / mod


def _split(e: Affine, den: int):
    """e == den*q + r with q collecting the terms (and const part) divisible by den."""
    q_terms, r_terms = {}, {}
    for a, c in e.terms:
        if c % den == 0:
            q_terms[a] = c // den
        else:
            r_terms[a] = c
    qc, rc = divmod(e.const, den)
    return affine(qc, q_terms), affine(rc, r_terms)


def _gcd_of(e: Affine, den: int) -> int:
    g = den
    for _, c in e.terms:
        g = gcd(g, c)
    return gcd(g, e.const)


def _make_div(e: Affine, den: int, ranges) -> Affine:
    if den == 1:
        return e
    q, r = _split(e, den)
    if r.is_const and r.const == 0:
        return q
    b = bounds(r, ranges)
    if b is not None and 0 <= b[0] and b[1] < den:
        return q
    g = _gcd_of(r, den)
    if g > 1:
        r, den = _scale_down(r, g), den // g
    peeled = _peel(r, den, ranges)
    if peeled is not None:
        c, a, _ = peeled
        return q + _make_div(a, den // c, ranges)
    # (a // d1) // d2 == a // (d1 * d2)
    if not r.const and len(r.terms) == 1 and r.terms[0][1] == 1 and isinstance(r.terms[0][0], Div):
        inner = r.terms[0][0]
        return q + _make_div(inner.arg, inner.den * den, ranges)
    return q + lift(Div(r, den))


def _peel(e: Affine, den: int, ranges):
    """Write ``e = c*a + low`` with `c` dividing `den` and ``0 <= low < c``, so that
    ``e // den == a // (den/c)`` and ``e % den == c*(a % (den/c)) + low``.  Picks
    the largest such c among the coefficients; None when none works."""
    for c in sorted({abs(k) for _, k in e.terms if k > 1 and den % k == 0}, reverse=True):
        high = {a: k // c for a, k in e.terms if k % c == 0}
        low = affine(e.const % c, {a: k for a, k in e.terms if k % c != 0})
        b = bounds(low, ranges)
        if b is None or b[0] < 0 or b[1] >= c:
            continue
        return c, affine(e.const // c, high), low
    return None


def _scale_down(e: Affine, g: int) -> Affine:
    return Affine(e.const // g, tuple((a, c // g) for a, c in e.terms))


def _make_mod(e: Affine, den: int, ranges) -> Affine:
    if den == 1:
        return ZERO
    _, r = _split(e, den)
    b = bounds(r, ranges)
    if b is not None and 0 <= b[0] and b[1] < den:
        return r
    g = _gcd_of(r, den)
    if g > 1:
        return _make_mod(_scale_down(r, g), den // g, ranges) * g
    peeled = _peel(r, den, ranges)
    if peeled is not None:
        c, a, low = peeled
        return _make_mod(a, den // c, ranges) * c + low
    # (a % d1) % d2 == a % d2 when d2 divides d1
    if not r.const and len(r.terms) == 1 and r.terms[0][1] == 1 and isinstance(r.terms[0][0], Mod):
        inner = r.terms[0][0]
        if inner.den % den == 0:
            return _make_mod(inner.arg, den, ranges)
    return lift(Mod(r, den))


def floordiv(e, den: int, ranges: Ranges | None = None) -> Affine:
    """Canonical ``e // den`` for non-negative `e` and positive `den`."""
    if den <= 0:
        raise ValueError("index division by a non-positive number")
    return _make_div(lift(e), den, ranges)


def mod(e, den: int, ranges: Ranges | None = None) -> Affine:
    """Canonical ``e % den`` for non-negative `e` and positive `den`."""
    if den <= 0:
        raise ValueError("index modulo by a non-positive number")
    return _make_mod(lift(e), den, ranges)


# ---------------------------------------------------------------- substitution


def substitute(e, mapping: Mapping[str, Affine], ranges: Ranges | None = None) -> Affine:
    """Replace variables by expressions and re-canonicalize.

    Nesting of Div/Mod atoms is shallow (one level per reshape), so the
    recursion here is bounded by the number of stacked reshapes, not data size.
    """
    e = lift(e)
    out = lift(e.const)
    for atom, c in e.terms:
        out = out + _subst_atom(atom, mapping, ranges) * c
    return out


def _subst_atom(atom: Atom, mapping, ranges) -> Affine:
    if isinstance(atom, Var):
        return mapping.get(atom.name, lift(atom))
    inner = substitute(atom.arg, mapping, ranges)
    if isinstance(atom, Div):
        return floordiv(inner, atom.den, ranges)
    return mod(inner, atom.den, ranges)


def free_vars(e) -> set:
    """Names of the variables `e` depends on."""
    out, stack = set(), [lift(e)]
    while stack:
        cur = stack.pop()
        for atom, _ in cur.terms:
            if isinstance(atom, Var):
                out.add(atom.name)
            else:
                stack.append(atom.arg)
    return out


def evaluate(e, env: Mapping[str, int]) -> int:
    """Reference evaluation with Python integers (the oracle for the rewrites)."""
    e = lift(e)
    total = e.const
    for atom, c in e.terms:
        if isinstance(atom, Var):
            v = env[atom.name]
        elif isinstance(atom, Div):
            v = evaluate(atom.arg, env) // atom.den
        else:
            v = evaluate(atom.arg, env) % atom.den
        total += c * v
    return total


def strided(index_vars, strides, offset: int = 0) -> Affine:
    """``offset + sum(v * s)``: the linear offset of an element of a strided tensor."""
    out = lift(offset)
    for v, s in zip(index_vars, strides):
        out = out + lift(v) * s
    return out


def unravel(flat, sizes, ranges: Ranges | None = None) -> list:
    """Row-major multi-index (one Affine per size) of the flat index `flat`."""
    out, inner = [], 1
    for size in reversed(sizes):
        if size == 1:
            out.append(ZERO)
        else:
            out.append(mod(floordiv(flat, inner, ranges), size, ranges))
        inner *= size
    return out[::-1]
