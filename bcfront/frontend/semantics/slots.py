"""Real callables that stand for the methods of values with no real object yet.

A symbolic iterator or generator made in the trace has no real object whose bound
method (``it.__next__``, ``gen.send``) a `MethodV` could hold.  It holds a
`SlotMethod` instead: a real callable, registered in `registry.MODELS` by the
module that models it, that behaves exactly as the method it stands for when it
reaches real code (a graph break, a returned value): called unbound,
``slot(obj, *args)`` runs ``type(obj).<name>(obj, *args)``; bound (``__get__``,
as the generated code rebuilds a method) it is ``obj.<name>``, the real bound
method.  No model function is ever placed where real code can call it.
"""

from __future__ import annotations


class SlotMethod:
    """The method `name` of objects of kind `owner` (a description, for messages)."""

    __slots__ = ("__name__", "__qualname__")

    def __init__(self, owner: str, name: str):
        self.__name__ = name
        self.__qualname__ = f"{owner}.{name}"

    def __call__(self, obj, /, *args, **kwargs):
        return getattr(type(obj), self.__name__)(obj, *args, **kwargs)

    def __get__(self, obj, owner=None):
        return self if obj is None else getattr(obj, self.__name__)

    def __repr__(self):
        return f"<slot method {self.__qualname__}>"
