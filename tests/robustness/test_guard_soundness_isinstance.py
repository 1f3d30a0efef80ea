"""isinstance/issubclass follow Python's protocol (issue 25, item 9): a metaclass
``__instancecheck__``/``__subclasscheck__`` (traced when it is Python, so what it reads is
guarded), ABC registrations made after capture, and an overridden ``__class__`` (proxies,
``Mock(spec=...)``).  Same protocol as `test_guard_soundness`: never a stale answer."""

from __future__ import annotations

import abc
import unittest.mock

import pytest

from .helpers import HAS_TORCH, assert_agree
from .test_guard_soundness import Case, _run_case


class _Flagged(type):
    def __instancecheck__(cls, inst):
        return getattr(inst, "flag", False)

    def __subclasscheck__(cls, sub):
        return getattr(sub, "flag", False)


class _K(metaclass=_Flagged):
    pass


class _Holder:
    flag = False


def _instancecheck_reads_instance():
    o = _Holder()
    return Case(lambda x: isinstance(x, _K), lambda: (o,), lambda: setattr(o, "flag", True))


def _instancecheck_reads_class():
    class H:
        flag = False

    return Case(lambda x: isinstance(x, (int, _K)), lambda: (H(),), lambda: setattr(H, "flag", True))


def _subclasscheck_reads_class():
    class H:
        flag = False

    return Case(lambda c: issubclass(c, _K), lambda: (H,), lambda: setattr(H, "flag", True))


def _instancecheck_patched_on_metaclass():
    class M(type):
        def __instancecheck__(cls, inst):
            return False

    class C(metaclass=M):
        pass

    def change():
        M.__instancecheck__ = lambda cls, inst: True

    return Case(lambda x: isinstance(x, C), lambda: (1,), change)


def _abc_register():
    class A(abc.ABC):  # noqa: B024 - registration only
        pass

    class B:
        pass

    return Case(lambda x: (isinstance(x, A), issubclass(type(x), A)), lambda: (B(),), lambda: A.register(B))


def _abc_register_subclass_of_argument():
    class A(abc.ABC):  # noqa: B024 - registration only
        pass

    class B:
        pass

    class C(B):
        pass

    return Case(lambda c: issubclass(c, (int, A)), lambda: (C,), lambda: A.register(B))


def _class_property(value_after):
    class P:
        kind = int

        @property
        def __class__(self):
            return type(self).kind

    return Case(
        lambda x: (isinstance(x, int), isinstance(x, P), isinstance(x, (str, int))),
        lambda: (P(),),
        lambda: setattr(P, "kind", value_after),
    )


def _getattribute_answers_class():
    class P:
        pass

    def change():
        P.__getattribute__ = lambda s, n: float if n == "__class__" else object.__getattribute__(s, n)

    return Case(lambda x: isinstance(x, float), lambda: (P(),), change)


def _proxy_class_attribute():
    class Target:
        pass

    class Proxy:
        def __init__(self):
            self.wrapped = Target()

        @property
        def __class__(self):
            return self.wrapped.__class__

    p = Proxy()
    return Case(lambda x: isinstance(x, Target), lambda: (p,), lambda: setattr(p, "wrapped", 5))


def _union():
    state = {"v": 1}
    return Case(
        lambda x: isinstance(x, int | str), lambda: (state["v"],), lambda: state.__setitem__("v", 1.5)
    )


CASES = {
    "instancecheck_reads_instance": _instancecheck_reads_instance,
    "instancecheck_reads_class": _instancecheck_reads_class,
    "subclasscheck_reads_class": _subclasscheck_reads_class,
    "instancecheck_patched_on_metaclass": _instancecheck_patched_on_metaclass,
    "abc_register": _abc_register,
    "abc_register_base_of_argument": _abc_register_subclass_of_argument,
    "class_property_changes": lambda: _class_property(str),
    "class_property_to_self": lambda: _class_property(float),
    "getattribute_answers_class": _getattribute_answers_class,
    "proxy_class_follows_the_wrapped_object": _proxy_class_attribute,
    "union_type": _union,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_isinstance_protocol_is_never_stale(name):
    _run_case(CASES[name](), name)


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_mock_with_a_spec_is_an_instance_of_the_spec():
    import torch

    import bcfront

    def f(m):
        return isinstance(m, torch.nn.Linear), isinstance(m, torch.nn.Module), isinstance(m, torch.Tensor)

    m = unittest.mock.Mock(spec=torch.nn.Linear)
    assert_agree(bcfront.capture(f), f, m, where="Mock(spec=nn.Linear)")


@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_legacy_storage_classes_answer_as_python(lenient):
    import warnings

    import torch

    import bcfront

    def f(s):
        return isinstance(s, torch.BoolStorage), isinstance(s, torch.FloatStorage)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # TypedStorage is deprecated
        s = torch.BoolStorage(2)
        cf = bcfront.capture(f)
        for _ in range(2):
            assert cf(s) == f(s) == (True, False)
