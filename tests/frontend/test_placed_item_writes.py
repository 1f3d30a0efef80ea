"""Item writes to outside containers made among the graph's statements (`placed_writes`).

A training step that first writes Python state -- a config attribute stored through the
``__dict__`` the trace holds (transformers' ``config.problem_type = ...``), a dict's item,
a list's or a set's -- then runs a backward and an optimizer step (lasting writes) and then
an op that may raise at run time: eager leaves the Python writes made and the parameters
updated when the op raises.  The region used to end before the backward for any such write
but an attribute's or a global's constant ("write-before-error"); now every write whose value
the capture knows is made at its place among the graph's statements.  Oracle: the same step
run by CPython on identical state, over calls that raise and calls that return, the state
compared after each; and no graph break.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402


class Config:
    """Like transformers' PreTrainedConfig: its attributes read through ``__dict__``."""

    attribute_map = {"n": "size"}

    def __init__(self):
        self.size = 4
        self.problem_type = None

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)

    def __setattr__(self, key, value):
        if super().__getattribute__("__dict__").get("_frozen"):
            raise AttributeError(key)
        if key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        super().__setattr__(key, value)


class State:
    def __init__(self):
        self.cfg = Config()
        self.group = {"lr": 0.1, "old": 1}
        self.seen = [1, 2]
        self.tags = {"a"}


def _train(net, opt, x, idx):
    loss = net(x).sum()
    loss.backward()
    opt.step()
    return x[idx] * loss.detach()  # an index out of range raises only at run time


def config_write(net, opt, st, x, idx):
    if st.cfg.problem_type is None:
        st.cfg.problem_type = "single_label_classification"
    st.cfg.n = 8  # through attribute_map: cfg.size
    return _train(net, opt, x, idx)


def dict_writes(net, opt, st, x, idx):
    st.group["lr"] = 0.05
    st.group.pop("old", None)
    st.group["mode"] = "train" if st.group.get("mode") is None else "steady"
    return _train(net, opt, x, idx)


def list_and_set_writes(net, opt, st, x, idx):
    st.seen[0] = -1  # (the items read: an append to a list never read is replayed whole)
    st.seen.append("step")
    st.tags.add("b")
    st.tags.discard("a")
    return _train(net, opt, x, idx)


def between_nodes(net, opt, st, x, idx):
    """Writes between graph nodes: each made just before the node after it (the
    state is compared; whether the region ends before the optimizer's step is not)."""
    loss = net(x).sum()
    loss.backward()
    st.group["phase"] = "backward"
    y = x[idx]
    st.seen.insert(0, 7)
    opt.step()
    st.cfg.problem_type = "regression"
    return y * 2.0, x[idx.flip(0)]


def _run(fn, calls):
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 3)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    st = State()
    seen = []
    for i, idx in enumerate(calls):
        x = torch.linspace(0.0, 1.0, 3) + i
        try:
            outcome = ("return", fn(net, opt, st, x, torch.tensor(idx)))
        except IndexError as e:
            outcome = ("raise", str(e))
        state = (dict(vars(st.cfg)), dict(st.group), list(st.seen), sorted(st.tags))
        params = [p.detach().clone() for p in net.parameters()] + [p.grad.clone() for p in net.parameters()]
        seen.append((outcome, state, params))
    return seen


@pytest.mark.parametrize(
    "fn, whole",
    [(config_write, True), (dict_writes, True), (list_and_set_writes, True), (between_nodes, None)],
)
def test_writes_before_a_raising_op_leave_eager_state(fn, whole):
    calls = [[9, 0], [0, 2], [1, 7], [2, 1]]
    cf = bcfront.capture(fn)
    got, exp = _run(cf, calls), _run(fn, calls)
    for i, (g, e) in enumerate(zip(got, exp)):
        assert g[0][0] == e[0][0], f"call {i}: {g[0]} vs {e[0]}"
        if e[0][0] == "return":
            torch.testing.assert_close(g[0][1], e[0][1], rtol=0, atol=0)
        assert g[1] == e[1], f"call {i}: Python state"
        for a, b in zip(g[2], e[2]):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
    breaks = [b.reason.value for entry in cf.entries for b in entry.breaks]
    assert whole in (None, "write-before-error" not in breaks), breaks


def stores_a_tensor(net, opt, st, x, idx):
    """A value the capture does not know (a tensor) stored before the raising op: it still
    splits, with eager's state."""
    st.group["last"] = x.sum()
    return _train(net, opt, x, idx)


def test_unknown_value_still_matches_eager():
    calls = [[9, 0], [0, 2], [1, 7]]
    cf = bcfront.capture(stores_a_tensor)
    got, exp = _run(cf, calls), _run(stores_a_tensor, calls)
    for g, e in zip(got, exp):
        assert g[0][0] == e[0][0]
        assert sorted(g[1][1]) == sorted(e[1][1])
        for a, b in zip(g[2], e[2]):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
