"""Writes through an object whose ``__dict__`` the trace also holds as a dict.

transformers' configs read ``super().__getattribute__("__dict__").get(...)`` on every
attribute access (the heterogeneous-config check), so a config written in a forward
(``self.config.problem_type = "single_label_classification"`` in every
``*ForSequenceClassification`` given labels) was a graph break: reads and writes
through the object and through its dict would have missed each other.  The trace's
dict (every key known and guarded) is now the one model of the instance dict: a
write through the object goes to it, a read through the object sees it, and it is
written back after the region.  Oracle: the same functions run by CPython on
identical objects, over calls that change the state; no break.  Torch-free.
"""

from __future__ import annotations

import pytest

import bcfront


class Config:
    """Like transformers' PreTrainedConfig: a Python __getattribute__ reading __dict__."""

    attribute_map = {"n": "size"}

    def __init__(self):
        self.size = 4
        self.kind = None

    def __getattribute__(self, key):
        spec = super().__getattribute__("__dict__").get("_spec")
        if spec is not None and key in spec:
            raise AttributeError(key)
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)

    def __setattr__(self, key, value):
        if key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        super().__setattr__(key, value)


def set_once(cfg, x):
    if cfg.kind is None:
        cfg.kind = "single" if x > 0 else "multi"
    return cfg.kind, cfg.n * x


def write_then_read(cfg, x):
    cfg.n = cfg.n + x  # through attribute_map: cfg.size
    cfg.extra = x
    d = vars(cfg)
    return cfg.size, cfg.extra, d["size"], sorted(d)


def write_through_dict_then_object(cfg, x):
    d = super(Config, cfg).__getattribute__("__dict__")
    d["size"] = d["size"] * 2
    cfg.kind = x
    return cfg.size, cfg.kind, d["kind"]


@pytest.mark.parametrize("fn", [set_once, write_then_read, write_through_dict_then_object])
def test_writes_through_the_object_and_its_dict_agree_with_python(fn):
    mine, ref = Config(), Config()
    cf = bcfront.capture(fn)
    for x in (1, 2, -1, 3):
        assert cf(mine, x) == fn(ref, x)
        assert vars(mine) == vars(ref)
    entry = cf.entries[0]
    assert not entry.breaks, [b.message for b in entry.breaks]
    assert not entry.native
