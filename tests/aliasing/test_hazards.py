"""Every aliasing hazard of the catalogue matches eager on every backend, call after call.

Oracle: eager PyTorch on an identical, independent world (see `harness`):
results, every argument, the module or object, the globals and closure cells
the case writes, and the sharing pattern of outputs and inputs.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from .harness import BACKENDS, run_hazard  # noqa: E402
from .hazards import HAZARDS  # noqa: E402


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(HAZARDS))
def test_hazard_matches_eager(name, backend):
    run_hazard(HAZARDS[name], backend)


def test_every_hazard_is_documented():
    for name, h in HAZARDS.items():
        assert h.doc, name
