"""How a guard function reads identity-checked nn.Modules: their dicts in locals.

A guard's sources below an identity-checked module (``m.fc``, ``m._parameters['w']``,
``m.padding``) would each go through ``nn.Module.__getattr__``.  `ModuleViews` (the
function's `Namespace.rebased`) spells them through that module's `_ModuleView` instead:
its instance ``__dict__`` and its stores (``_parameters``, ``_buffers``, ``_modules``)
read once into locals by the function's prologue, then plain item reads.  The locals of
exact dicts are what `guard_memo` watches.
"""

from __future__ import annotations

from .namespace import Namespace
from .sources import AttrSource, ModuleAttrSource

# nn.Module.__getattr__ looks a name up in these instance-dict stores, in this order
STORES = ("_parameters", "_buffers", "_modules")


class _ModuleView:
    """How the guard function reads one identity-checked nn.Module: its instance dict in a
    local, each store (``_modules``...) in a local taken from it, plain attributes as items.

    Reading ``d[name]`` is what ``m.name`` does when the class has no data descriptor of that
    name and does not override ``__getattribute__`` (checked here; the class itself is
    guarded by TYPE_MATCH).  A name absent from the dict raises: the guard fails, no worse."""

    def __init__(self, ns: Namespace, const: str, module):
        self.ns, self.const, self.module = ns, const, module
        self.locals: dict[str, str] = {}  # "__dict__" or an attribute -> local name
        self.cls = type(module)

    def _plain(self, attr: str) -> bool:
        if attr not in self.module.__dict__:
            return False
        for c in self.cls.__mro__:
            raw = c.__dict__.get(attr)
            if raw is not None:
                t = type(raw)
                return not (hasattr(t, "__set__") or hasattr(t, "__delete__"))
        return True

    def local(self, key: str) -> str:
        name = self.locals.get(key)
        if name is None:
            const = self.const.removesuffix("()")  # a weak reference's call
            base = f"{const}_{'dict' if key == '__dict__' else key.strip('_')}"
            name, i = base, 1
            while name in self.ns.globals:
                name, i = f"{base}_{i}", i + 1
            self.ns.globals[name] = None  # reserved: no constant may take the name
            self.locals[key] = name
        return name

    def spell(self, source):
        if type(source) is ModuleAttrSource:
            return f"{self.local(source.where)}[{source.name!r}]" if self._plain(source.where) else None
        attr = source.attr
        if attr == "__dict__":
            return self.local("__dict__")
        if not self._plain(attr):
            return None
        if attr in STORES:
            return self.local(attr)
        return f"{self.local('__dict__')}[{attr!r}]"

    def watched(self, attr: str) -> bool:
        """``m.<attr>`` is a dict the guard function holds in a local and watches
        (`guard_memo`): the instance dict, or a store that is an exact dict."""
        if attr == "__dict__":
            return True
        return attr in STORES and self._plain(attr) and type(self.module.__dict__[attr]) is dict

    def watched_locals(self) -> list[str]:
        return [name for key, name in self.locals.items() if self.watched(key)]

    def prologue(self) -> list[str]:
        if not self.locals:
            return []
        d = self.local("__dict__")
        return [f"{d} = {self.const}.__dict__"] + [
            f"{name} = {d}[{key!r}]" for key, name in self.locals.items() if key != "__dict__"
        ]


def _default_getattribute(cls) -> bool:
    for c in cls.__mro__:
        if "__getattribute__" in c.__dict__:
            return c is object
    return True


class ModuleViews(dict):
    """`Namespace.rebased` for a guard function: besides the identity-checked sources (plain
    entries), sources one attribute below an identity-checked nn.Module are spelled through
    that module's `_ModuleView`.  `prologue()` binds the locals those spellings use."""

    def __init__(self, ns: Namespace):
        super().__init__(ns.rebased)
        self.ns = ns
        self.views: dict = {}  # module source -> _ModuleView
        ns.rebased = self

    def add(self, source, module, const: str) -> None:
        if source not in self.views and _default_getattribute(type(module)):
            self.views[source] = _ModuleView(self.ns, const, module)

    def get(self, source, default=None):
        hit = dict.get(self, source)
        if hit is not None:
            return hit
        if type(source) is AttrSource or type(source) is ModuleAttrSource:
            view = self.views.get(source.base)
            if view is not None:
                text = view.spell(source)
                if text is not None:
                    return text
        return default

    def prologue(self) -> list[str]:
        return [line for v in self.views.values() for line in v.prologue()]

    def watched(self) -> list[str]:
        """The locals of watched dicts (call after `prologue`: it binds every local)."""
        return [name for v in self.views.values() for name in v.watched_locals()]
