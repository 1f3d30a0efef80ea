"""`capture`'s options: checked names and types; `compiling` is what is_compiling() answers."""

from __future__ import annotations

import pytest

import bcfront
from bcfront.options import OPTION_NAMES, capture_options


def test_unknown_option_is_a_clear_error():
    known = r"known options: capture_scalar_outputs, compiling"
    with pytest.raises(TypeError, match=r"unknown option\(s\) 'capture_scalars'.*" + known):
        bcfront.capture(lambda x: x, capture_scalars=True)


def test_option_of_the_wrong_type_is_an_error():
    with pytest.raises(TypeError, match="'compiling' must be a bool, got str"):
        capture_options({"compiling": "yes"})


def test_known_options_are_the_dataclass_fields():
    assert {"compiling"} <= OPTION_NAMES
    assert capture_options({}).compiling is True


@pytest.mark.parametrize("compiling", [True, False])
def test_is_compiling_answers_the_option_inside_the_capture(compiling):
    torch = pytest.importorskip("torch")

    def f(x):
        if torch.compiler.is_compiling():
            return x + 1
        return x - 1

    x = torch.zeros(3)
    cf = bcfront.capture(f, fullgraph=True, compiling=compiling)
    expected = x + 1 if compiling else x - 1
    assert torch.equal(cf(x), expected)
    assert torch.equal(cf(x), expected)  # the cached entry answers the same
    assert torch.equal(f(x), x - 1)  # outside the capture torch answers False


def test_a_recorded_side_effect_keeps_the_traced_answer():
    torch = pytest.importorskip("torch")
    seen = []

    def f(x):
        seen.append(("traced", torch.compiler.is_compiling()))
        y = x * 2
        print(end="")  # a graph break: what follows is a continuation
        return y + 1

    x = torch.ones(2)
    assert torch.equal(bcfront.capture(f)(x), x * 2 + 1)
    assert seen == [("traced", True)]
