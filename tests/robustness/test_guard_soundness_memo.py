"""Guard soundness of memoized guards (`frontend/model/guard_memo.py`).

The checks that read only watched dicts (module instance dicts and stores, class dicts,
function globals) are skipped while those dicts' version tags are the ones of the last
call on which they passed.  Each case calls the captured model several times (the memo
is filled and hit), changes one fact a guard relies on, and compares the next call with
the model run eagerly after the change (the oracle).  Every kind of change is caught,
whether its check is memoized (a dict changed) or not (tensor metadata, hooks, a class
swapped on the instance, which change no dict).
"""

from __future__ import annotations

import gc
import re
import weakref

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402 - after the importorskip

import bcfront  # noqa: E402
from bcfront.frontend.model import guard_memo  # noqa: E402

SCALE = 2.0


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)
        self.conv = nn.Conv1d(2, 2, 3, padding=1)
        self.act = nn.ReLU()
        self.scale = 1.5

    def forward(self, x):
        y = self.act(self.bn(self.lin(x))) * self.scale * SCALE
        z = self.conv(x.view(2, 2, 2))
        return y + z.view(2, 4)


def _model():
    torch.manual_seed(0)
    return Block().eval()


def _swap_param(m):
    m.lin.weight = nn.Parameter(torch.full((4, 4), 0.5))


def _param_data_resized(m):
    m.lin.weight.data = torch.ones(4, 4).t()  # same shape, other strides


def _param_requires_grad(m):
    m.lin.weight.requires_grad_(False)


def _param_dtype(m):
    m.double()  # param.data replaced in place: no dict changes


def _swap_buffer(m):
    m.bn.running_mean = torch.full((4,), 3.0)


def _plain_attribute(m):
    m.scale = 4.0


def _tuple_attribute(m):
    m.conv.padding = (2,)
    m.conv.padding = (1,)  # back, a new tuple: the tag changed, the checks pass again
    m.conv.dilation = (2,)
    m.conv.padding = (2,)


def _submodule(m):
    m.act = nn.Tanh()


def _instance_shadow(m):
    object.__setattr__(m, "lin", nn.Identity())  # found before _modules['lin']


def _class_attribute(m):
    type(m.act).forward = lambda self, x: x * 10  # ReLU's own subclass: see _private_class


def _class_swap(m):
    m.act.__class__ = nn.Tanh  # no dict changes


def _hook(m):
    m.lin.register_forward_hook(lambda mod, inp, out: out + 100)


def _tensor_hook(m):
    m.lin.weight.register_hook(lambda g: g)  # no effect on the forward, but guarded
    m.lin.register_forward_pre_hook(lambda mod, inp: (inp[0] * 3,))


def _new_dict(m):
    d = dict(m.__dict__)
    d["scale"] = 7.0
    m.__dict__ = d  # a new dict: a new tag


def _global(m):
    global SCALE
    SCALE = 5.0


def _store_key_added(m):
    m.lin.register_parameter("extra", nn.Parameter(torch.ones(1)))
    m.lin.bias = None


CHANGES = {
    f.__name__[1:]: f
    for f in (
        _swap_param,
        _param_data_resized,
        _param_requires_grad,
        _param_dtype,
        _swap_buffer,
        _plain_attribute,
        _tuple_attribute,
        _submodule,
        _instance_shadow,
        _class_attribute,
        _class_swap,
        _hook,
        _tensor_hook,
        _new_dict,
        _global,
        _store_key_added,
    )
}


@pytest.fixture(autouse=True)
def _restore_globals():
    global SCALE
    relu_forward = nn.ReLU.forward
    yield
    SCALE = 2.0
    nn.ReLU.forward = relu_forward


def _private_relu():
    """A ReLU subclass of this test's own, so a class attribute change stays here."""
    return type("PrivateReLU", (nn.ReLU,), {})()


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_memoized_guard_catches_the_change(name):
    m = _model()
    m.act = _private_relu()
    cf = bcfront.capture(m)
    x = torch.randn(2, 4)
    for _ in range(3):
        assert torch.equal(cf(x), m(x))
    CHANGES[name](m)
    xs = x.double() if name == "param_dtype" else x
    want = m(xs)
    got = cf(xs)
    assert got.dtype == want.dtype and torch.equal(got, want), name
    assert torch.equal(cf(xs), m(xs))  # and the entry made for the change is right too


# the memo's test in a guard's source: the plain one (a tuple of tags) or the C call
MEMO_TEST = r"if ___tags|if not ___dicts_unchanged\("


def _guard_function(cf):
    fn = cf.entries[-1].guard
    while not hasattr(fn, "__globals__"):
        fn = fn.__wrapped__
    return fn


def test_memoized_checks_are_skipped_until_a_dict_changes():
    """The memo is filled by a passing call, kept while nothing changes, and replaced after
    a watched dict changed (the checks ran again and passed).  The Python links' memo (its
    cell): the C check program keeps its tags in its DICTS_SAME op instead (next test)."""
    if guard_memo.dict_version_reader() is None:
        pytest.skip("no dict version tags in this interpreter")
    m = _model()
    cf = bcfront.capture(m)
    cf.checked_links = False  # the Python links, whose memo is the cell
    x = torch.randn(2, 4)
    cf(x)
    memo = _guard_function(cf).__globals__["___memo"]
    cf(x)
    tags = memo[0]
    assert tags is not None
    cf(x)
    assert memo[0] is tags  # hit: the checks were skipped, the memo kept
    m.scale = float("1.5")  # an equal value: the dict's tag changes, the checks pass
    assert torch.equal(cf(x), m(x))
    assert memo[0] is not tags and len(cf.entries) == 1
    src = cf.entries[-1].guard_source
    memo_block = re.split(MEMO_TEST, src.split("___memo[0] = ")[0])[1]
    rest = src.split("___memo[0] = ")[1]
    # module-tree facts are memoized; the class of each module, hooks and tensors are not
    assert "not in ___Block_dict" in memo_block and "___Block_modules['lin'] is" in memo_block
    assert "___check_tensors(" in rest and "_forward_hooks" in rest
    assert re.search(r"___type\(self\) is \S*_Block\b", rest), rest  # the module's class


def test_a_c_check_program_memo_follows_every_watched_change():
    # the same guard as a C check program (`check_program.memo_block`): skipped while the
    # watched dicts are unchanged, re-run after a change -- an equal value passes again, a
    # new one misses; oracle: the module called natively
    if guard_memo.dict_version_reader() is None:
        pytest.skip("no dict version tags in this interpreter")
    m = _model()
    cf = bcfront.capture(m)
    x = torch.randn(2, 4)
    for _ in range(3):
        assert torch.equal(cf(x), m(x))
    entry = cf.entries[0]
    assert entry.link_names is not None and entry.link_names.checked is not None
    assert re.search(MEMO_TEST, entry.guard_source)
    m.scale = float("1.5")  # equal: the checks run again and pass, no new entry
    assert torch.equal(cf(x), m(x)) and torch.equal(cf(x), m(x)) and len(cf.entries) == 1
    m.scale = 2.5  # a new value: a miss, the result follows it
    assert torch.equal(cf(x), m(x)) and torch.equal(cf(x), m(x))
    m.scale = 1.5
    assert torch.equal(cf(x), m(x))


def _call(mod, x):
    return mod(x)


def test_memo_keeps_no_user_object_alive():
    m = _model()
    cf = bcfront.capture(_call)
    x = torch.randn(2, 4)
    for _ in range(3):
        assert torch.equal(cf(m, x), m(x))
    assert re.search(MEMO_TEST, cf.entries[-1].guard_source) or guard_memo.dict_version_reader() is None
    refs = [weakref.ref(m), weakref.ref(m.lin.weight)]
    del m
    gc.collect()
    assert [r() for r in refs] == [None, None]
    m2 = _model()
    assert torch.equal(cf(m2, x), m2(x))  # another module: the old entry's guard fails


def test_without_dict_versions_the_checks_run_every_call(monkeypatch):
    monkeypatch.setattr(guard_memo, "_READER", [None])
    m = _model()
    cf = bcfront.capture(m)
    x = torch.randn(2, 4)
    assert torch.equal(cf(x), m(x))
    assert not re.search(MEMO_TEST, cf.entries[-1].guard_source)
    m.scale = 3.0
    assert torch.equal(cf(x), m(x))


def test_probe_refuses_a_reader_that_misses_stores():
    assert not guard_memo._probe(lambda d: 0)
    assert not guard_memo._probe(lambda d: len(d))
