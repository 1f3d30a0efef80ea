"""Token-by-token generation with a key/value cache captures the decode loop once (issue #26).

The prefill call has no cache; the first decode call brings a cache whose length is the
prompt's, a size that just changed (the input's length went from the prompt's to 1).
The cache, an input with no history, inherits that changing size as a symbol, so every
later length reuses the decode entry: two captures in all, never one per length.
Every step is compared with eager on the same inputs.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

D, V = 8, 11


def _weights():
    g = torch.Generator().manual_seed(0)
    return {
        n: torch.randn(s, generator=g)
        for n, s in {"emb": (V, D), "wq": (D, D), "wk": (D, D), "wv": (D, D)}.items()
    }


def _step(w):
    def step(ids, past):
        x = w["emb"][ids]  # (B, T, D)
        q, k, v = x @ w["wq"], x @ w["wk"], x @ w["wv"]
        if past is not None:
            k = torch.cat([past[0], k], 1)
            v = torch.cat([past[1], v], 1)
        att = torch.softmax(q @ k.transpose(1, 2) / D**0.5, -1)
        logits = (att @ v) @ w["emb"].t()
        return logits[:, -1].argmax(-1, keepdim=True), (k, v)

    return step


def _step_cache_first(w):
    inner = _step(w)

    def step(past, ids):  # the cache is met before the ids
        return inner(ids, past)

    return step


def _generate(step, cache_first, prompt=6, n=22):
    g = torch.Generator().manual_seed(1)
    cur = torch.randint(0, V, (2, prompt), generator=g)
    past, out = None, []
    for _ in range(n):
        tok, past = step(past, cur) if cache_first else step(cur, past)
        out.append((tok, past))
        cur = tok
    return out


@pytest.mark.parametrize("cache_first", [False, True])
def test_generation_loop_takes_two_captures(cache_first):
    w = _weights()
    fn = (_step_cache_first if cache_first else _step)(w)
    cf = bcfront.capture(fn)
    got, want = _generate(cf, cache_first), _generate(fn, cache_first)
    for (t1, (k1, v1)), (t2, (k2, v2)) in zip(got, want):
        assert torch.equal(t1, t2)
        torch.testing.assert_close(k1, k2)
        torch.testing.assert_close(v1, v2)
    assert len(cf.entries) == 2  # prefill, then one decode entry for every cache length
    assert not cf.native_fallbacks


def test_a_new_input_with_an_unrelated_size_stays_static():
    def f(x, y=None):
        return x.sum() if y is None else x.sum() + y.sum(0)

    cf = bcfront.capture(f)
    for n in (4, 5):
        x = torch.randn(n, 3)
        torch.testing.assert_close(cf(x), f(x))
    y = torch.randn(7, 3)  # met after the first dimension of x changed 4 -> 5, size 7: static
    x = torch.randn(6, 3)
    torch.testing.assert_close(cf(x, y), f(x, y))
    symbolic = cf.entries[-1].guards
    text = " ".join(g.readable() for g in symbolic)
    assert "L['y']" in text and "shape=[7, 3]" in text, text


def test_a_new_input_carrying_a_changed_size_is_symbolic():
    def f(x, y=None):
        return x.sum(1) if y is None else x.sum(1)[-1] + y.sum(1)

    cf = bcfront.capture(f)
    for n in (4, 5):
        x = torch.randn(2, n)
        torch.testing.assert_close(cf(x), f(x))
    for m in (4, 9, 12, 2, 30):  # y first met with 4, the size x had before it changed
        x, y = torch.randn(m, 3), torch.randn(m, 5)
        torch.testing.assert_close(cf(x, y), f(x, y))
    assert len(cf.entries) == 3


def test_a_new_input_carrying_a_value_of_a_changed_int_is_symbolic():
    # beam search: ``cur_len`` (an int) changes first; the ids, first read a step later,
    # have the length it had: symbolic at once, not one more capture at that length
    def f(x, n, y=None):
        return x * n if y is None else x * n + y.sum(0)

    cf = bcfront.capture(f)
    x = torch.randn(3)
    for n in (4, 5):
        torch.testing.assert_close(cf(x, n), f(x, n))
    for n in (6, 7, 8, 9):
        y = torch.randn(n - 1, 3)  # first met with length 5, a value n had
        torch.testing.assert_close(cf(x, n, y), f(x, n, y))
    assert len(cf.entries) == 3
