"""Names for generated source: parameters, constants and helpers, collision-free.

Generated functions (guards, regions, entries) take the captured function's
own parameters, so the source ``L['x']`` is spelled ``x``.  Everything else a
generated function needs (the globals dict, classes, torch functions,
dtypes, builtins such as ``type``) lives in its globals under a reserved
prefix (``___`` by default, longer if the user's code uses names starting
with it), so neither user names nor user constants can change what the
generated code means.
"""

from __future__ import annotations

import builtins
import types

from ...ir.graph import is_identifier, qualified_name, sanitize


def reserved_prefix(code: types.CodeType | None) -> str:
    names = set()
    if code is not None:
        names = set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars) | set(code.co_names)
    prefix = "___"
    while any(n.startswith(prefix) for n in names):
        prefix += "_"
    return prefix


class Namespace:
    """Spells locals, constants and helpers for one generated module of code."""

    def __init__(self, params: dict[str, str] | None = None, prefix: str = "___"):
        self.prefix = prefix
        self.params = dict(params or {})  # local name -> python expression
        self.globals: dict[str, object] = {"__builtins__": builtins}
        self._by_id: dict[int, str] = {}
        self._keep: list = []  # keep constants alive (ids must stay unique)
        # the names of constants the code calls as pure functions (`PureCallSource`): a call
        # of one made twice on the same reads gives the same value (`check_shortcuts`)
        self.pure: set[str] = set()
        # Sources whose object identity a guard checked earlier in the same function:
        # anything reached through them starts from the constant instead of re-walking.
        self.rebased: dict = {}

    def sibling(self) -> Namespace:
        """A namespace for more code in the same module (the guard checks ahead of a region's
        code): the same globals and names, so no name means two things, but spelling of its
        own (a source one rebases is not rebased in the other).  Made once the first one is
        done: new locals continue its numbering."""
        other = Namespace(self.params, self.prefix)
        other.globals, other._by_id, other._keep = self.globals, self._by_id, self._keep
        other.pure = self.pure
        other._fresh = getattr(self, "_fresh", 0)
        return other

    def spell(self, source) -> str:
        """The expression for `source`, starting from the nearest identity-checked prefix."""
        hit = self.rebased.get(source)
        return hit if hit is not None else source.expr(self)

    def local(self, name: str) -> str:
        try:
            return self.params[name]
        except KeyError:
            raise KeyError(f"generated code has no access to local {name!r}") from None

    def const(self, obj, hint: str | None = None) -> str:
        key = id(obj)
        name = self._by_id.get(key)
        if name is None:
            if hint is None:
                hint = qualified_name(obj) if callable(obj) else type(obj).__name__
                hint = hint or type(obj).__name__
            name = f"{self.prefix}{sanitize(str(hint))}"
            base, i = name, 1
            while name in self.globals:
                name, i = f"{base}_{i}", i + 1
            self.globals[name] = obj
            self._by_id[key] = name
            self._keep.append(obj)
        return name

    def helper(self, name: str) -> str:
        """A builtin under a reserved name (so a parameter called `type` cannot shadow it)."""
        return self.const(getattr(builtins, name), hint=name)

    def fresh(self, hint: str = "v") -> str:
        """A fresh local variable name for generated code."""
        n = getattr(self, "_fresh", 0)
        self._fresh = n + 1
        return f"{self.prefix}{sanitize(hint)}{n}"


def signature_params(code: types.CodeType) -> tuple[list[str], dict[str, str]] | None:
    """The parameter list text of `code` (defaults are copied separately) and the
    name -> expression map for its parameters; None when a name is not an identifier."""
    argc, kwc = code.co_argcount, code.co_kwonlyargcount
    posonly = code.co_posonlyargcount
    names = code.co_varnames
    parts: list[str] = []
    i = 0
    for i in range(argc):
        parts.append(names[i])
        if posonly and i + 1 == posonly:
            parts.append("/")
    idx = argc
    star = None
    if code.co_flags & 0x04:
        star = names[argc + kwc]
    if star:
        parts.append("*" + star)
    elif kwc:
        parts.append("*")
    parts.extend(names[idx : idx + kwc])
    if code.co_flags & 0x08:
        parts.append("**" + names[argc + kwc + (1 if star else 0)])
    params = [p.lstrip("*") for p in parts if p not in ("/", "*")]  # ("*": keyword-only follow)
    if all(is_identifier(p) for p in params):
        return parts, {p: p for p in params}
    # Compiler-made parameters such as a 3.11 comprehension's ".0": positional only.
    if kwc or code.co_flags & 0x0C:
        return None
    prefix = reserved_prefix(code)
    return [f"*{prefix}args"], {names[i]: f"{prefix}args[{i}]" for i in range(argc)}
