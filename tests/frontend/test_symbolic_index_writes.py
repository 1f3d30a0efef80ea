"""In-place writes at an index that is a symbolic int, in code a handler watches.

``seqs[:, :, cur_len] = ids`` (beam search's step in transformers' ``generate``), with
``cur_len`` symbolic after automatic dynamic shapes, inside ``try``: the region must make
such writes undoable or end the graph before them.  Functionalization used to fail on the
symbolic int input (it looked for a tensor example for every graph input) and the region
ended before the write on every call.  Now a write into a tensor made in the graph needs
no undoing: one graph, no break; a write into an input at a symbolic index is specialized
(the functional write holds the index as a constant).  (Python indexing with a SymInt,
``t[:, n]``, is specialized by torch's own fake indexing anyway: an entry per length.)

Oracle: the same function run eagerly on identical inputs: results or the exception's
type and message, and the inputs after the call.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


def write_into_made(seqs, ids, n, bad):
    try:
        s = seqs.clone()
        s[:, :, n] = ids
        out = s * 2
        out = out + out.index_select(2, bad)  # an index error after the write, at run time
    except IndexError as e:
        return ("caught", str(e))
    return out


def write_into_input(seqs, ids, n, bad):
    try:
        seqs[:, :, n] = ids
        out = seqs * 2 + seqs.index_select(2, bad)
    except IndexError as e:
        return ("caught", str(e))
    return out


def inputs(n, bad):
    seqs = torch.arange(32, dtype=torch.long).reshape(2, 2, 8)
    return seqs, torch.full((2, 2), 100 + n, dtype=torch.long), n, torch.tensor([bad])


def same(got, want):
    if isinstance(want, torch.Tensor):
        return isinstance(got, torch.Tensor) and torch.equal(got, want)
    return got == want


CALLS = [(3, 1), (4, 2), (5, 1), (6, 99), (7, 0), (5, 99)]


@pytest.mark.parametrize("fn", [write_into_made, write_into_input])
def test_symbolic_index_write_matches_eager(fn):
    cf = bcfront.capture(fn)
    for n, bad in CALLS:
        a, b = inputs(n, bad), inputs(n, bad)
        got, want = cf(*a), fn(*b)
        assert same(got, want), (n, bad)
        assert torch.equal(a[0], b[0]), f"the input after the call, n={n}"


def test_write_into_a_made_tensor_at_a_symbolic_index_does_not_break():
    cf = bcfront.capture(write_into_made)
    for n, bad in CALLS:
        cf(*inputs(n, bad))
    report = cf.report()
    assert report.graph_breaks == (), [(b.reason, b.message) for b in report.graph_breaks]


def write_and_count(seqs, ids, n):
    try:
        s = seqs.clone()
        s[:, :, n] = ids
        out = s * 2
        next_len = n + 1  # a number the graph computes from the symbolic int: a graph output
    finally:
        pass
    return out, next_len


def test_a_symbolic_number_the_graph_returns_does_not_break():
    cf = bcfront.capture(write_and_count)
    for n in (3, 4, 5, 6):
        a, b = inputs(n, 0), inputs(n, 0)
        (got, got_len), (want, want_len) = cf(*a[:3]), write_and_count(*b[:3])
        assert torch.equal(got, want) and got_len == want_len, n
    report = cf.report()
    assert report.graph_breaks == (), [(b.reason, b.message) for b in report.graph_breaks]
