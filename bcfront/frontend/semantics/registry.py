"""The model tables: which symbolic model stands for a real callable or class.

`MODELS` maps a real callable (a builtin, a method of a builtin type, a torch
state manager's ``__enter__``...) to ``model(tx, args, kwargs) -> Value``;
`CONSTRUCTORS` maps a builtin class to ``ctor(tx, clsv, args, kwargs)``.  The
modules that define models register them here when imported (`builtins`,
`builtins_iter`, `containers`, `torch_calls`); `objects.call` looks them up
through `builtins.model_for` / `builtins.constructor_for`.  A leaf, so that
registering never imports the reader and reading never imports the registrars.

`model.effects` names a container mutation by the model running it; it is
below the semantics, so it gets `MODELS` handed here (`effects.use_models`).
"""

from __future__ import annotations

from ..model import effects

MODELS: dict = {}
CONSTRUCTORS: dict = {}
effects.use_models(MODELS)


def model(*targets):
    def register(fn):
        for t in targets:
            MODELS[t] = fn
        return fn

    return register


def ctor(*classes):
    def register(fn):
        for c in classes:
            CONSTRUCTORS[c] = fn
        return fn

    return register
