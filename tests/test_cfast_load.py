"""`bcfront.cfast.load`: an extension module is used only when built from this source."""

from __future__ import annotations

import types

import pytest

from bcfront import cfast


def _fake(interface):
    m = types.ModuleType("bcfront._cfast")
    if interface is not None:
        m.INTERFACE = interface
    return m


@pytest.mark.parametrize("interface", [None, cfast.INTERFACES["_cfast"] - 1, "3"])
def test_a_stale_build_is_not_used_and_says_so(monkeypatch, interface):
    monkeypatch.delenv("BCFRONT_PURE_PYTHON", raising=False)
    monkeypatch.setattr(cfast.importlib, "import_module", lambda name: _fake(interface))
    with pytest.warns(RuntimeWarning, match="built from another version of its source"):
        assert cfast.load("_cfast") is None


def test_a_build_of_this_source_is_used(monkeypatch):
    monkeypatch.delenv("BCFRONT_PURE_PYTHON", raising=False)
    made = _fake(cfast.INTERFACES["_cfast"])
    monkeypatch.setattr(cfast.importlib, "import_module", lambda name: made)
    assert cfast.load("_cfast") is made


def test_pure_python_asked_for_loads_nothing(monkeypatch):
    monkeypatch.setenv("BCFRONT_PURE_PYTHON", "1")
    monkeypatch.setattr(cfast.importlib, "import_module", lambda name: pytest.fail("imported"))
    assert cfast.load("_cfast") is None


def test_the_built_extensions_declare_the_interfaces_this_source_needs():
    # fails (never skips) where the extensions are not built: CI builds them
    import bcfront._canalysis
    import bcfront._cfast

    assert bcfront._cfast.INTERFACE == cfast.INTERFACES["_cfast"]
    assert bcfront._canalysis.INTERFACE == cfast.INTERFACES["_canalysis"]
