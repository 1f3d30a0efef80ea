"""``sys.modules``, whose keys change with every import, is read by key: guarded on the key
read (present and the same module, or absent), never on all its keys -- which failed the
entry's own guards as soon as anything was imported (O58: ``warnings.catch_warnings`` reads
``sys.modules['warnings']``)."""

from __future__ import annotations

import sys
import types

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def reads_modules(x):
    sep = sys.modules["os"].sep
    try:
        sys.modules["bcfront_no_such_module"]
    except KeyError as e:
        missing = str(e)
    return x + len(sep), missing


def test_a_module_read_by_key_survives_imports_without_recompiling():
    run = bcfront.capture(reads_modules, fullgraph=True)
    x = torch.ones(1)
    assert run(x)[1] == reads_modules(x)[1]
    sys.modules["bcfront_test_volatile_new"] = types.ModuleType("bcfront_test_volatile_new")
    try:
        got = run(x)
        assert torch.equal(got[0], reads_modules(x)[0]) and got[1] == reads_modules(x)[1]
        report = bcfront.explain(reads_modules, x)
        assert not report.graph_breaks and not report.recompiles and not report.native_fallbacks
    finally:
        del sys.modules["bcfront_test_volatile_new"]


def test_a_key_added_later_is_seen():
    name = "bcfront_test_volatile_later"

    def fn(x):
        try:
            return x + sys.modules[name].value
        except KeyError:
            return x

    run = bcfront.capture(fn)
    assert torch.equal(run(torch.ones(1)), torch.ones(1))
    mod = types.ModuleType(name)
    mod.value = 5
    sys.modules[name] = mod
    try:
        assert torch.equal(run(torch.ones(1)), torch.ones(1) + 5)
    finally:
        del sys.modules[name]
