"""An int reached through an item of a dict subclass (a ``ModelOutput``) becomes a symbol
once it changes, like one reached through a plain item or attribute.

transformers' ``generate()`` loop reads ``outputs["cache"].layers[i].cumulative_length``
(a sliding-window cache's counter, one more each step) through the ModelOutput's stored
item (``StoredItemSource``), which did not count as an input path: the counter stayed a
constant, the loop's continuation recaptured every step up to its limit and then ran
natively (Mistral generate: 80% of the ops in graphs, 2 native fallbacks; 98% now).
Oracle: the same function called eagerly; the count of captures is the measure.
"""

from __future__ import annotations

import collections

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


class Output(collections.OrderedDict):
    """Like transformers' ModelOutput: an OrderedDict subclass read by key."""


class Layer:
    def __init__(self, n):
        self.cumulative_length = n


def window(out, x):
    n = out["cache"].cumulative_length
    offset = max(n - 4 + 1, 0)
    return x[:, offset:] * n


def test_a_changing_counter_in_a_stored_item_is_one_symbolic_capture():
    cf = bcfront.capture(window)
    x = torch.arange(40.0).reshape(2, 20)
    with bcfront.explain.collect() as run:
        for n in range(5, 11):
            out = Output(cache=Layer(n))
            torch.testing.assert_close(cf(out, x), window(out, x))
    report = run.report()
    assert len(report.graphs) <= 2, [r.reason for r in report.recompiles]
    assert not report.native_fallbacks
