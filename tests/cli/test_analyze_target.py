"""`--analyze TARGET`: resolving path.py:function / module:function, and the analysis output."""

from __future__ import annotations

import dis
import importlib.util
import json
import re
import textwrap

import pytest

from bcfront.cli.runner import CliError
from bcfront.cli.target import resolve

from .helpers import run_cli

SOURCE = """\
import os   # the file is compiled, never imported: this import must not matter


class Model:
    def forward(self, x):
        for i in range(3):
            if x > i:
                x = x - 1
            else:
                break
        return x

    @property
    def size(self):
        return 3

    class Inner:
        def method(self, y):
            return [v * 2 for v in y]


def outer(a):
    def inner(b):
        return a + b
    return inner


def simple(x, y=2):
    try:
        return x / y
    except ZeroDivisionError:
        return 0
"""


@pytest.fixture
def mod_file(tmp_path):
    p = tmp_path / "mod.py"
    p.write_text(SOURCE)
    return p


def _imported(path):
    """The oracle: CPython's own objects for the file, by importing it."""
    spec = importlib.util.spec_from_file_location("mod_under_test", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


@pytest.mark.parametrize(
    "name, get",
    [
        ("Model.forward", lambda m: m.Model.forward),
        ("Model.size", lambda m: m.Model.size.fget),
        ("Model.Inner.method", lambda m: m.Model.Inner.method),
        ("outer", lambda m: m.outer),
        ("outer.inner", lambda m: m.outer(1)),
        ("outer.<locals>.inner", lambda m: m.outer(1)),
        ("simple", lambda m: m.simple),
    ],
)
def test_resolve_finds_the_same_code_cpython_binds(mod_file, name, get):
    code = resolve(f"{mod_file}:{name}")
    real = get(_imported(mod_file)).__code__
    assert (code.co_qualname, code.co_firstlineno, code.co_code) == (
        real.co_qualname,
        real.co_firstlineno,
        real.co_code,
    )


def test_resolve_module_form_without_importing(monkeypatch):
    import json.decoder as oracle

    code = resolve("json.decoder:JSONDecoder.raw_decode")
    assert code.co_code == oracle.JSONDecoder.raw_decode.__code__.co_code


@pytest.mark.parametrize(
    "target, words",
    [
        ("{f}:Model.forwrd", "did you mean Model.forward"),
        ("{f}:nothing_like_it_at_all", "it defines: Model.Inner.method"),
        ("{f}:Model", "no function 'Model'"),  # a class is not a function
        ("{f}", "bad target"),
        ("{f}:", "bad target"),
        ("no_such_module_xyz:f", "no module named 'no_such_module_xyz'"),
        ("missing_dir/x.py:f", "no such file"),
    ],
)
def test_resolve_errors(mod_file, target, words):
    with pytest.raises(CliError) as e:
        resolve(target.format(f=mod_file))
    assert words in str(e.value)


def test_analyze_json_blocks_match_dis(mod_file, tmp_path):
    r = run_cli("--analyze", f"{mod_file}:Model.forward", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    starts = {b["start"] for b in data["blocks"]}
    real = _imported(mod_file).Model.forward.__code__
    jump_targets = {i.offset for i in dis.get_instructions(real) if i.is_jump_target}
    assert jump_targets <= starts
    assert starts <= {i.offset for i in dis.get_instructions(real)} | {0}


def test_analyze_text_and_dot(mod_file, tmp_path):
    r = run_cli("--analyze", f"{mod_file}:simple", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "simple" in r.stdout and "block" in r.stdout
    lines = r.stdout.splitlines()
    assert max(map(len, lines)) <= 100  # COLUMNS=100 in the test env
    d = run_cli("--analyze", f"{mod_file}:simple", "--dot", cwd=tmp_path)
    assert d.returncode == 0 and d.stdout.lstrip().startswith("digraph")
    assert d.stdout.rstrip().endswith("}")
    js = json.loads(run_cli("--analyze", f"{mod_file}:simple", "--json", cwd=tmp_path).stdout)
    assert d.stdout.count("[label=") >= len(js["blocks"])


def test_analyze_module_target(tmp_path):
    r = run_cli("--analyze", "json.decoder:JSONDecoder.raw_decode", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["function"]["qualname"] == "JSONDecoder.raw_decode"


@pytest.mark.parametrize(
    "target, code, words",
    [
        ("{f}:Model.forwrd", 2, "did you mean Model.forward"),
        ("nope.py:f", 2, "no such file"),
        ("{bad}:f", 1, "syntax error"),
    ],
)
def test_analyze_errors_are_short(mod_file, tmp_path, target, code, words):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    r = run_cli("--analyze", target.format(f=mod_file, bad=bad), cwd=tmp_path)
    assert r.returncode == code and words in r.stderr and "Traceback" not in r.stderr


def test_analyze_and_static_never_run_the_file(tmp_path):
    marker = tmp_path / "ran.txt"
    p = tmp_path / "sideeffect.py"
    p.write_text(
        textwrap.dedent(f"""\
        open({str(marker)!r}, "w").write("ran")
        def f(x):
            return x + 1
    """)
    )
    assert run_cli("--analyze", f"{p}:f", cwd=tmp_path).returncode == 0
    assert run_cli("--static", str(p), cwd=tmp_path).returncode == 0
    assert not marker.exists()


def test_analyze_text_shows_dominator_tree_and_loops(mod_file, tmp_path):
    r = run_cli("--analyze", f"{mod_file}:Model.forward", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "dominator tree: block 0" in out
    assert "loops (1)" in out  # the source has exactly one loop
    # The loop header is the block of the `for` line (line 6 of SOURCE).
    assert re.search(r"header block \d+ \(line 6\)", out)
    r = run_cli("--analyze", f"{mod_file}:simple", cwd=tmp_path)
    assert "loops (0)" in r.stdout
