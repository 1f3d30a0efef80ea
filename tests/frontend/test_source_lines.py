"""Source lines for reports are read without touching ``linecache.cache``.

Traced code may read ``linecache.cache`` (``traceback.extract_tb`` does) under a guard on its
keys; the trace then names the line of every guard and node it records, in files that may
not be in that cache yet.  Loading them there would change what the guard read before the
fresh entry's self-check: the call ran natively.  Oracle: the file's text read directly, and
plain Python's results.
"""

from __future__ import annotations

import importlib.util
import linecache

import bcfront
from bcfront.frontend.model.source_lines import source_line


def _module(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, str(path)


def test_source_line_reads_the_file_and_leaves_linecache_alone(tmp_path):
    _, path = _module(tmp_path, "bcfront_src_a", "x = 1\n\ny = 2  \n")
    linecache.cache.pop(path, None)
    assert source_line(path, 1) == "x = 1"
    assert source_line(path, 3) == "y = 2"
    assert source_line(path, 9) == "" and source_line(path, 0) == ""
    assert path not in linecache.cache


def test_a_trace_reading_linecache_keys_keeps_its_entry(tmp_path):
    helper, path = _module(tmp_path, "bcfront_src_b", "K = 3\n\ndef scaled(n):\n    return n * K\n")
    linecache.cache.pop(path, None)

    def f(n):
        known = len(list(linecache.cache))  # a guard on the cache's keys
        return helper.scaled(n), known

    cf = bcfront.capture(f)
    got = cf(2)
    assert got == (6, len(list(linecache.cache)))
    assert cf.native_fallbacks == [], [(x.kind, x.message) for x in cf.native_fallbacks]
    assert len(cf.entries) == 1
