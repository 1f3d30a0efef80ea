"""A name missing from a module of a ModuleType subclass whose class defines ``__getattr__``.

``torch._VF`` is such a module (``VFModule.__getattr__`` reads
``torch._C._VariableFunctions``): ``_VF.lstm`` in ``nn.LSTM.forward`` was answered
with CPython's "module has no attribute" AttributeError -- a wrong result where
eager runs.  CPython's slot_tp_getattr_hook calls the class's ``__getattr__`` after
the generic lookup (and the module's own PEP 562 hook) fail; so does the trace.
Oracle: the same function called plainly.  Torch-free.
"""

from __future__ import annotations

import sys
import types

import pytest

import bcfront


class Delegating(types.ModuleType):
    def __init__(self, name, target):
        super().__init__(name)
        self.target = target

    def __getattr__(self, name):
        return getattr(self.target, name)


class Target:
    scale = 3

    @staticmethod
    def twice(x):
        return 2 * x


@pytest.fixture
def module():
    mod = Delegating("bcfront_test_delegating", Target)
    sys.modules[mod.__name__] = mod
    yield mod
    del sys.modules[mod.__name__]


def reads(mod, x):
    return mod.twice(x) + mod.scale + mod.__name__.count("_")


def missing(mod, x):
    try:
        return mod.nothing
    except AttributeError as e:
        return str(e), x


def test_class_getattr_of_a_module_is_called(module):
    cf = bcfront.capture(reads)
    for x in (1, 2, 3):
        assert cf(module, x) == reads(module, x)
    assert not cf.entries[0].breaks
    Target.scale = 4  # what the hook reads is guarded
    try:
        assert cf(module, 1) == reads(module, 1)
    finally:
        Target.scale = 3


def test_the_hooks_attribute_error_is_pythons(module):
    cf = bcfront.capture(missing)
    assert cf(module, 1) == missing(module, 1)
    module.nothing = 5  # gained later: found in the module's dict first
    assert cf(module, 1) == missing(module, 1) == 5
