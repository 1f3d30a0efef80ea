"""ABCMeta's answers and abc's cache token (`semantics.instancecheck.AbcAnswers`).

An ``isinstance``/``issubclass`` against an ABC is answered at capture time.  Every
``register`` anywhere in the process changes ``abc.get_cache_token()``: torch's own lazy
imports during a capture (sympy, mpmath, numpy.random with the first fake env, networkx
with the first symbolic int), or a module the program imports between calls.  A
registration that changes none of the entry's answers must not cost a recapture (nor fail
a fresh entry's own guards); one that changes an answer must.  The plain Python call is
the oracle.
"""

from __future__ import annotations

import abc
import collections.abc
import os
import subprocess
import sys
import textwrap

import pytest

import bcfront


class _Sized:
    def __len__(self):
        return 0


def _check(x):
    return isinstance(x, collections.abc.Sized), isinstance(x, collections.abc.Mapping), len(x)


def test_an_unrelated_registration_between_calls_keeps_the_entry():
    class Elsewhere(abc.ABC):  # noqa: B024 - registration only
        pass

    cf = bcfront.capture(_check)
    x = _Sized()
    assert cf(x) == _check(x) == (True, False, 0)
    Elsewhere.register(type("Lazy", (), {}))  # a module imported lazily does this
    assert cf(x) == _check(x)
    assert len(cf.entries) == 1 and cf.recompiles == []


def test_a_registration_that_changes_an_answer_recaptures():
    class Mine(abc.ABC):  # noqa: B024 - registration only
        pass

    def f(x):
        return isinstance(x, Mine)

    cf = bcfront.capture(f)
    x = _Sized()
    assert cf(x) is f(x) is False
    Mine.register(_Sized)
    assert cf(x) is f(x) is True
    assert len(cf.entries) == 2
    assert "abc_answers_hold" in cf.recompiles[0].guard


def test_a_registration_during_the_capture_does_not_fail_the_fresh_entry(monkeypatch):
    # a subclass hook that registers another class the first time it runs: the token
    # changes after the capture answered (as torch's lazy imports make it change)
    class Elsewhere(abc.ABC):  # noqa: B024 - registration only
        pass

    ran = []

    class Hooked(abc.ABC):  # noqa: B024 - its hook only
        @classmethod
        def __subclasshook__(cls, sub):
            if not ran:
                ran.append(sub)
                Elsewhere.register(type("Lazy", (), {}))
            return NotImplemented

    def f(x):
        return isinstance(x, Hooked), isinstance(x, collections.abc.Sized)

    monkeypatch.setenv("BCFRONT_STRICT", "1")  # a fresh entry failing its own guards raises
    cf = bcfront.capture(f)
    x = _Sized()
    for _ in range(3):
        assert cf(x) == f(x) == (False, True)
    assert len(cf.entries) == 1 and cf.recompiles == []


class _A(abc.ABC):  # noqa: B024 - registration only
    pass


class _B:
    pass


def test_answers_are_asked_again_only_after_a_registration():
    from bcfront.frontend.semantics.instancecheck import AbcAnswers

    answers = AbcAnswers()
    answers.note((issubclass, _B, _A), False)
    assert answers() is True
    token = answers.version
    type("Elsewhere", (abc.ABC,), {}).register(type("Lazy", (), {}))  # unrelated
    assert answers() is True and answers.version == abc.get_cache_token() != token
    answers.note((issubclass, _B, _A), True)  # answered both ways in one trace
    answers.version = -1
    assert answers() is False


def test_a_registration_changing_an_answer_fails_the_answers():
    from bcfront.frontend.semantics.instancecheck import AbcAnswers

    class A(abc.ABC):  # noqa: B024 - registration only
        pass

    class B:
        pass

    answers = AbcAnswers()
    answers.note((issubclass, B, A), issubclass(B, A))
    A.register(B)
    assert answers() is False
    assert answers() is False  # and stays failed


def test_torch_imports_during_the_first_captures_cost_no_recapture():
    pytest.importorskip("torch")
    # a fresh interpreter, torch imported, bcfront's fake env not yet: the first tensor read
    # (after an ABC check) imports sympy, mpmath and numpy.random, which register ABCs; the
    # first symbolic int, in a later capture, imports networkx, which registers one more
    code = textwrap.dedent(
        """
        import abc, collections.abc, sys, warnings
        warnings.simplefilter("error")
        import torch
        import bcfront
        assert "sympy" not in sys.modules

        class Box:
            pass

        def f(box):
            return isinstance(box, collections.abc.Mapping), box.w + 1

        def g(x, n):
            return x * n + 2

        box = Box()
        box.w = torch.ones(3)
        cf, cg = bcfront.capture(f), bcfront.capture(g)
        out, tokens = [], []
        for n in range(2, 6):
            got, want = cf(box), f(box)
            out.append(got[0] == want[0] and torch.equal(got[1], want[1]))
            tokens.append(abc.get_cache_token())
            out.append(cg(1.5, n) == g(1.5, n))
        assert tokens[0] != tokens[-1], "nothing registered after the first entry was built"
        print(all(out), len(cf.entries), len(cf.recompiles))
        """
    )
    env = {**os.environ, "BCFRONT_STRICT": "1"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.split() == ["True", "1", "0"]
