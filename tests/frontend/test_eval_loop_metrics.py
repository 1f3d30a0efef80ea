"""An evaluation loop's body: ``.item()`` accuracies summed into an attribute and a dict.

``acc = (logits.argmax(-1) == y).float().mean().item()`` breaks (data-dependent); the
continuation adds `acc` to running totals kept on an object.  Once those have changed
twice they are runtime values (`semantics/runtime_values.py`), never guarded by value:
whether an attribute is set back to what it was (`model.effects.unchanged_targets`)
must not read one, or every call recompiles until the limit and the body runs natively.
Oracle: the same body run eagerly on a twin object: outputs and the totals after each call.
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402
from bcfront.report import NativeFallbackWarning  # noqa: E402


class Metrics:
    def __init__(self):
        self.total = 0.0
        self.counts = {"acc": 0.0, "n": 0, "batches": 0}


def eval_body(m: Metrics, logits, y):
    with torch.no_grad():
        acc = (logits.argmax(-1) == y).float().mean().item()
        m.total += acc
        m.counts["acc"] += acc * y.shape[0]
        m.counts["n"] += y.shape[0]
        m.counts["batches"] += 1
    return logits.softmax(-1), m.total


def test_running_totals_are_not_guarded_by_value():
    got, want = Metrics(), Metrics()
    cf = bcfront.capture(eval_body)
    with bcfront.explain.collect() as run, warnings.catch_warnings():
        warnings.simplefilter("error", NativeFallbackWarning)
        for i in range(12):
            g = torch.Generator().manual_seed(i)
            logits, y = torch.randn(8, 2, generator=g), torch.randint(0, 2, (8,), generator=g)
            a, b = cf(got, logits, y), eval_body(want, logits, y)
            torch.testing.assert_close(a[0], b[0])
            assert a[1] == b[1] and got.total == want.total and got.counts == want.counts
    assert len(run.report().recompiles) <= 3
