"""A module's attributes that live on its type, not in its namespace.

``m.__dict__`` (dataclasses reads ``sys.modules[cls.__module__].__dict__`` for a class
made in a function), ``vars(m)``, ``m.__dir__`` and ``m.__repr__`` are ModuleType's or
object's; the trace used to look only in the module's namespace and raise
"module 'm' has no attribute '__dict__'" where CPython gives the attribute.  Oracle:
CPython on the same function (result or exception, by repr), on the first and the cached
call, and after the module gains the name in its namespace.
"""

from __future__ import annotations

import types

import pytest

import bcfront
from tests.stdlib.corpus_wider import _dc_ordering as dataclass_made_in_the_function


def _module():
    m = types.ModuleType("mod_under_test")
    m.x = 1
    return m


def namespace_keys(m):
    return sorted(m.__dict__)


def vars_of_module(m):
    return vars(m)["x"], len(vars(m))


def methods_of_module_type(m):
    return m.__repr__(), m.__dir__()[:2], m.__class__.__name__, m.__eq__(m)


def _outcome(fn, *args):  # (the dataclass: the corpus's, made anew on each call)
    try:
        return repr(fn(*args))
    except Exception as e:  # noqa: BLE001 - compared with CPython's
        return f"raise {type(e).__name__}: {e}"


@pytest.mark.parametrize("fn", [namespace_keys, vars_of_module, methods_of_module_type])
def test_module_type_attributes_same_as_plain_python(fn):
    m = _module()
    cf = bcfront.capture(fn)
    want = _outcome(fn, m)
    assert _outcome(cf, m) == want
    assert _outcome(cf, m) == want


def test_a_class_made_in_the_function_reads_its_module_namespace():
    cf = bcfront.capture(dataclass_made_in_the_function)
    for a, b in ((2, 1), (1, -1)):
        assert _outcome(cf, a, b) == _outcome(dataclass_made_in_the_function, a, b)


def test_a_name_the_module_gains_shadows_its_type_attribute():
    m = _module()
    cf = bcfront.capture(methods_of_module_type)
    assert _outcome(cf, m) == _outcome(methods_of_module_type, m)
    m.__repr__ = lambda: "own repr"  # now in the namespace: found before the type's
    assert _outcome(cf, m) == _outcome(methods_of_module_type, m)
