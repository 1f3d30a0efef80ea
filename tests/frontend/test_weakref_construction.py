"""``weakref.ref(o)`` made inside a captured function, of an object from outside.

torch's ``RemovableHandle`` keeps a weak reference to the module's hooks dict, so every
``register_forward_hook`` inside a forward (transformers installs its output-capturing
hooks on the first call, SegFormer among them) was a graph break: "constructing the C
type ReferenceType".  The reference is now made at capture and, where the region needs
it, made again from the referent's source; no guard holds the referent.  Oracle: the same
function run by CPython (the reference's identity and referent, hooks that fire, handles
that remove them).
"""

from __future__ import annotations

import collections
import gc
import weakref

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


class Box:
    pass


def ref_of(box, x):
    r = weakref.ref(box.payload)
    return x * 2, r, r() is box.payload


def test_reference_to_an_outside_object_matches_python():
    box = Box()
    box.payload = collections.OrderedDict(a=1)  # (a plain dict takes no weak reference)
    cf = bcfront.capture(ref_of)
    for i in range(4):
        if i == 2:
            box.payload = collections.OrderedDict(b=2)  # another referent at the same place
        x = torch.randn(3)
        got, exp = cf(box, x), ref_of(box, x)
        assert torch.equal(got[0], exp[0])
        assert got[1] is exp[1] and got[1]() is box.payload and got[2] is exp[2] is True
    assert not [b.message for e in cf.entries for b in e.breaks]


def test_the_capture_holds_no_referent():
    box = Box()
    box.payload = Box()
    cf = bcfront.capture(ref_of)
    cf(box, torch.randn(3))
    cf(box, torch.randn(3))
    dead = weakref.ref(box.payload)
    box.payload = Box()
    gc.collect()
    assert dead() is None
    cf(box, torch.randn(3))


def _net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))


def _installing_forward(net, seen):
    def hook(module, args, out):
        seen.append(tuple(out.shape))

    def forward(x):
        if not getattr(net, "_hooked", False):  # installed once, on the first call
            net.handles = [m.register_forward_hook(hook) for m in net]
            net._hooked = True
        return net(x)

    return forward


def test_hooks_registered_in_the_forward_match_python():
    runs = []
    for capture in (False, True):
        net, seen = _net(), []
        fn = _installing_forward(net, seen)
        f = bcfront.capture(fn) if capture else fn
        outs = [f(torch.full((2, 3), float(i))) for i in range(3)]
        for h in net.handles:
            h.remove()
        outs.append(f(torch.ones(1, 3)))  # no hook fires any more
        runs.append((outs, seen, [len(m._forward_hooks) for m in net]))
        if capture:
            assert not [b.message for e in f.entries for b in e.breaks if "ReferenceType" in b.message]
    (got, got_seen, got_hooks), (exp, exp_seen, exp_hooks) = runs[1], runs[0]
    for a, b in zip(got, exp):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert got_seen == exp_seen and got_hooks == exp_hooks == [0, 0, 0]
