"""A module-level table read by key (``html.unescape``'s entity map) is guarded through its
dict version tag: cheap when unchanged, and every change to it is still seen.  Torch-free:
on 3.11-3.13 without torch the tag is read from the dict's memory (`guard_memo`)."""

from __future__ import annotations

import sys

import pytest

import bcfront
from bcfront.frontend.model import guard_memo

TABLE = {f"k{i}": i for i in range(200)}


def lookup(name):
    return (
        TABLE[TABLE.index(name)] * 2
        if type(TABLE) is not dict and name in TABLE
        else (TABLE[name] * 2 if name in TABLE else -1)
    )


needs_reader = pytest.mark.skipif(
    guard_memo.dict_version_reader() is None,
    reason="no dict version reader here (3.13's tags fail the probe): every check runs",
)


@pytest.mark.skipif(sys.version_info[:2] not in ((3, 11), (3, 12)), reason="3.11/3.12 layout")
def test_the_version_reader_sees_every_store():
    assert guard_memo.dict_version_reader() is not None


@needs_reader
def test_a_table_read_by_key_is_watched_not_compared_item_by_item():
    cf = bcfront.capture(lookup, fullgraph=True)
    assert cf("k5") == 10
    source = cf.entries[-1].guard_source
    assert "TABLE" in source and "memo" in source, source[:400]


def test_every_change_to_the_table_is_seen():
    cf = bcfront.capture(lookup, fullgraph=True)
    global TABLE
    saved = dict(TABLE)
    try:
        for _ in range(2):
            assert cf("k5") == lookup("k5") == 10
        TABLE["k5"] = 7  # a value replaced in place
        assert cf("k5") == lookup("k5") == 14
        del TABLE["k5"]  # a key deleted
        assert cf("k5") == lookup("k5") == -1
        TABLE["k5"] = 1  # inserted again
        assert cf("k5") == lookup("k5") == 2
        TABLE = {"k5": 100}  # the table replaced
        assert cf("k5") == lookup("k5") == 200
        TABLE = ["k5", "x"]  # replaced by another type
        assert cf("k5") == lookup("k5") == "k5k5"
        TABLE = ("k6",)
        assert cf("k6") == lookup("k6") == "k6k6"
    finally:
        TABLE = saved
    assert cf("k6") == 12


BYTES_TABLE = {bytes([i]) * 2: i for i in range(200)}  # keyed by bytes (urllib's _hextobyte)


def bytes_lookup(key):
    return BYTES_TABLE.get(key, -1) * 3


@needs_reader
def test_a_table_keyed_by_bytes_is_watched_too():
    cf = bcfront.capture(bytes_lookup, fullgraph=True)
    assert cf(b"\x05\x05") == bytes_lookup(b"\x05\x05") == 15
    source = cf.entries[-1].guard_source
    memo_part, _, every_call = source.partition("___memo[0] = ")
    assert "BYTES_TABLE" not in every_call and "BYTES_TABLE" in memo_part, source[-600:]


def test_every_change_to_a_bytes_keyed_table_is_seen():
    cf = bcfront.capture(bytes_lookup, fullgraph=True)
    key = b"\x05\x05"
    saved = dict(BYTES_TABLE)
    try:
        for value in (None, 7, "gone", None):
            if value == "gone":
                del BYTES_TABLE[key]
            elif value is not None:
                BYTES_TABLE[key] = value
            assert cf(key) == bytes_lookup(key)
    finally:
        BYTES_TABLE.clear()
        BYTES_TABLE.update(saved)
    assert cf(key) == 15


class Registry:
    """A table held by an object's attribute (as ``mimetypes._MIME.suffix_map``)."""

    def __init__(self, n=30):
        self.table = {f"k{i}": i for i in range(n)}


REG = Registry()


class Table(dict):
    pass


def registry_sum(name):
    total = 0
    for key in REG.table:  # every key read: the guard pins them all
        total += REG.table[key]
    return total + (100 if name in REG.table else 0)


@needs_reader
def test_a_table_held_by_an_objects_attribute_is_watched_by_its_spelling():
    cf = bcfront.capture(registry_sum, fullgraph=True)
    assert cf("k5") == registry_sum("k5")
    source = cf.entries[-1].guard_source
    memo_part, _, every_call = source.partition("___memo[0] = ")
    watched = memo_part.partition("___dicts_unchanged(")[2].partition(")")[0]
    assert ".table" in watched, source[:800]  # its tag, read through the attribute each call
    assert "keys_are" in memo_part and "keys_are" not in every_call, source[-800:]


def test_every_change_to_a_table_held_by_an_attribute_is_seen():
    global REG
    cf = bcfront.capture(registry_sum, fullgraph=True, recompile_limit=64)  # each change recompiles
    saved = REG
    try:
        for change in (
            lambda: None,
            lambda: REG.table.__setitem__("k3", 100),  # a value in place
            lambda: REG.table.pop("k4"),  # a key deleted
            lambda: REG.table.__setitem__("k4", 4),  # inserted again, now last
            lambda: setattr(REG, "table", dict(REG.table)),  # an equal new dict
            lambda: setattr(REG, "table", {k: 1 for k in REG.table}),  # same keys, new values
            lambda: globals().__setitem__("REG", Registry(5)),  # another holder
            lambda: setattr(REG, "table", Table(k1=1, k5=5)),  # not an exact dict
            lambda: setattr(REG, "table", {"k5": 2}),
        ):
            change()
            for name in ("k5", "zz"):
                copy = dict(REG.table)
                assert cf(name) == registry_sum(name), (name, REG.table)
                assert REG.table == copy
        assert cf.native_reason is None and not cf.native_fallbacks  # every call ran captured
    finally:
        REG = saved


def argument_sum(reg, name):
    total = 0
    for key in reg.table:
        total += reg.table[key]
    return total + (100 if name in TABLE else 0)


@needs_reader
def test_a_table_held_by_an_argument_is_not_watched_by_its_spelling():
    # a dict reached from an argument is most often a new one each call: watched, its new tag
    # would make the memo run every check (the global table's too) on every call
    cf = bcfront.capture(argument_sum, fullgraph=True)
    assert cf(Registry(), "k5") == argument_sum(Registry(), "k5")
    source = cf.entries[-1].guard_source
    memo_part, _, every_call = source.partition("___memo[0] = ")
    watched = memo_part.partition("___dicts_unchanged(")[2].partition(")")[0]
    assert "TABLE" in memo_part and "reg" not in watched, source[:800]
    for reg in (Registry(), Registry(4)):  # another argument each call: still as plain Python
        assert cf(reg, "k5") == argument_sum(reg, "k5")
