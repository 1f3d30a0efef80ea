"""Relative imports (``from . import x``, ``from ..pkg import y``) inside captured code.

transformers imports lazily inside functions (``from ..modeling_utils import
PreTrainedModel`` in the output-capturing hooks a segmentation head installs on its
first call); such an import was a graph break, and its continuation could not start
at the IMPORT_NAME, so the function ran natively.  An import of a module already
imported resolves against the frame's package as CPython's does (``__package__``,
else ``__spec__.parent``, else ``__name__``).  Oracle: the same function called
plainly; no break where the modules are imported, and a module not yet imported
still breaks (its import runs module code).  Torch-free.
"""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

import bcfront
from bcfront.report import NativeFallbackWarning

PKG = "bcfront_relimport_pkg"


@pytest.fixture
def package(tmp_path, monkeypatch):
    root = tmp_path / PKG
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("SCALE = 3\n")
    (root / "helpers.py").write_text("def twice(x):\n    return 2 * x\n")
    (root / "lazy.py").write_text("VALUE = 7\n")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "user.py").write_text(
        textwrap.dedent(
            """
            def near(x):
                from . import sibling
                from .sibling import OFFSET
                return sibling.OFFSET + OFFSET + x

            def far(x):
                from .. import helpers
                from ..helpers import twice
                from .. import SCALE
                return helpers.twice(x) + twice(x) * SCALE

            def lazy(x):
                from ..lazy import VALUE
                return VALUE + x

            def beyond(x):
                from .... import nothing
                return x
            """
        )
    )
    (root / "sub" / "sibling.py").write_text("OFFSET = 10\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in (f"{PKG}.helpers", f"{PKG}.sub.user", f"{PKG}.sub.sibling"):
        importlib.import_module(name)
    yield importlib.import_module(f"{PKG}.sub.user")
    for name in [m for m in sys.modules if m == PKG or m.startswith(PKG + ".")]:
        del sys.modules[name]


@pytest.mark.parametrize("fn", ["near", "far"])
def test_relative_import_of_an_imported_module_is_traced(package, fn):
    f = getattr(package, fn)
    cf = bcfront.capture(f)
    for x in (1, 2, 5):
        assert cf(x) == f(x)
    entry = cf.entries[0]
    assert not entry.breaks, [b.message for b in entry.breaks]
    assert not entry.native


def test_relative_import_runs_module_code_breaks(package):
    cf = bcfront.capture(package.lazy)
    assert f"{PKG}.lazy" not in sys.modules
    with pytest.warns(NativeFallbackWarning, match="IMPORT_NAME"):  # said, with its reason
        assert cf(1) == 8
    assert cf(2) == package.lazy(2)


def test_relative_import_beyond_the_top_level_raises_as_python(package):
    with pytest.raises(ImportError) as plain:
        package.beyond(1)
    with pytest.raises(ImportError) as captured, pytest.warns(NativeFallbackWarning):
        bcfront.capture(package.beyond)(1)
    assert str(captured.value) == str(plain.value)
