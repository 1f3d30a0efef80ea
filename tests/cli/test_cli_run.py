"""`bcfront-explain SCRIPT`: running scripts, their output, exit codes, errors (subprocess)."""

from __future__ import annotations

import json
import re
import subprocess
import textwrap

import pytest

from bcfront.cli.schema import validate

from .helpers import REPO, run_cli

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def script(tmp_path, body: str, name: str = "script.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


ECHO = """\
    import os, sys
    print("first line from the script")
    print("argv:", sys.argv)
    print("name:", __name__, "file:", os.path.basename(__file__))
    import sibling                                # the script's directory is on sys.path
    print("sibling says", sibling.VALUE)
    os.write(1, b"raw fd write\\n")               # C-level output to descriptor 1
    print("last line from the script")
"""


@pytest.fixture
def echo(tmp_path):
    script(tmp_path, "VALUE = 42\n", "sibling.py")
    return script(tmp_path, ECHO)


def test_script_runs_as_main_with_its_args_and_output_first(echo, tmp_path):
    r = run_cli(str(echo), "a", "--b", "-c", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert f"argv: ['{echo}', 'a', '--b', '-c']" in out
    assert "name: __main__ file: script.py" in out
    assert "sibling says 42" in out and "raw fd write" in out
    # The report comes after everything the script printed.
    assert out.index("last line from the script") < out.index("bcfront explain:")
    assert "0 captured functions" in out
    assert r.stderr == ""


def test_console_script_entry_point_matches_module(echo, tmp_path):
    a = run_cli(str(echo), "x", cwd=tmp_path)
    b = run_cli(str(echo), "x", cwd=tmp_path, module=False)
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout


def test_json_stdout_is_only_the_report(echo, tmp_path):
    r = run_cli("--json", str(echo), "arg", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)  # nothing but JSON on stdout
    assert validate(data) == [] and data["functions"] == []
    # The script's own output went to stderr, all of it, in order.
    assert "first line from the script" in r.stderr and "raw fd write" in r.stderr
    assert r.stderr.index("first line") < r.stderr.index("last line from the script")


def test_output_file(echo, tmp_path):
    out = tmp_path / "report.json"
    r = run_cli("--json", "-o", str(out), str(echo), cwd=tmp_path)
    assert r.returncode == 0
    assert "first line from the script" in r.stderr  # the script's stdout, moved aside
    assert validate(json.loads(out.read_text())) == []
    txt = tmp_path / "report.txt"
    r = run_cli("--output", str(txt), str(echo), cwd=tmp_path)
    assert "bcfront explain:" in txt.read_text() and "bcfront explain:" not in r.stdout
    assert "first line from the script" in r.stdout


def test_script_exit_status_is_kept(tmp_path):
    p = script(tmp_path, "import sys\nprint('bye')\nsys.exit(7)\n")
    r = run_cli(str(p), cwd=tmp_path)
    assert r.returncode == 7 and "bye" in r.stdout and "bcfront explain:" in r.stdout
    p = script(tmp_path, "import sys\nsys.exit('fatal: no data')\n", "msg.py")
    r = run_cli(str(p), cwd=tmp_path)
    assert r.returncode == 1 and "fatal: no data" in r.stderr


def test_script_raising_shows_only_its_own_traceback(tmp_path):
    p = script(
        tmp_path,
        """\
        def inner(v):
            raise ValueError(f"bad value {v}")

        def outer():
            inner(3)

        print("before the error")
        outer()
    """,
    )
    r = run_cli(str(p), cwd=tmp_path)
    assert r.returncode == 1
    assert "before the error" in r.stdout
    err = r.stderr
    assert "Traceback (most recent call last):" in err
    assert "line 8, in <module>" in err and "in outer" in err and "in inner" in err
    assert "ValueError: bad value 3" in err
    assert "raised ValueError: bad value 3" in err.splitlines()[-1]
    # No frame of bcfront or of the machinery that started the script.
    files = re.findall(r'File "([^"]+)"', err)
    assert files and all(f.endswith("script.py") for f in files), files
    assert "bcfront" not in "".join(files) and "runpy" not in err


def test_chained_exceptions_are_trimmed_too(tmp_path):
    p = script(
        tmp_path,
        """\
        try:
            {}["k"]
        except KeyError as e:
            raise RuntimeError("lookup failed") from e
    """,
    )
    r = run_cli(str(p), cwd=tmp_path)
    assert r.returncode == 1
    assert "KeyError: 'k'" in r.stderr and "RuntimeError: lookup failed" in r.stderr
    assert "direct cause" in r.stderr
    assert all(f.endswith("script.py") for f in re.findall(r'File "([^"]+)"', r.stderr))


def test_full_traceback_option_keeps_bcfront_frames(tmp_path):
    p = script(tmp_path, "raise KeyError('x')\n")
    r = run_cli("--full-traceback", str(p), cwd=tmp_path)
    assert r.returncode == 1 and "bcfront" in r.stderr and "runner.py" in r.stderr


def test_syntax_error_is_reported_briefly(tmp_path):
    p = script(tmp_path, "x = 1\ndef f(:\n    pass\n", "broken.py")
    r = run_cli(str(p), cwd=tmp_path)
    assert r.returncode == 1
    assert "syntax error in " in r.stderr and "broken.py:2" in r.stderr
    assert "def f(:" in r.stderr and "^" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


@pytest.mark.parametrize(
    "args, words",
    [
        (["missing.py"], "no such file: missing.py"),
        (["."], "is a directory"),
        ([], "give a SCRIPT to run"),
        (["--analyze", "a.py:f", "--static", "a.py"], "separate modes"),
        (["--dot", "x.py"], "--dot goes with --analyze"),
        (["--static", "x.py", "y.py"], "takes no SCRIPT"),
        (["--color", "purple", "x.py"], "invalid choice"),
    ],
)
def test_usage_errors(tmp_path, args, words):
    r = run_cli(*args, cwd=tmp_path)
    assert r.returncode == 2
    assert words in r.stderr
    assert "Traceback" not in r.stderr


def test_unreadable_output_path_is_a_short_error(echo, tmp_path):
    r = run_cli("-o", str(tmp_path / "no" / "such" / "dir.txt"), str(echo), cwd=tmp_path)
    assert r.returncode == 2 and "cannot write" in r.stderr and "Traceback" not in r.stderr


def test_pickling_a_class_defined_in_the_script_works(tmp_path):
    # pickle finds classes through sys.modules["__main__"]: the script must really be it.
    p = script(
        tmp_path,
        """\
        import pickle
        class Point:
            def __init__(self, x): self.x = x
        print("roundtrip", pickle.loads(pickle.dumps(Point(5))).x)
    """,
    )
    r = run_cli(str(p), cwd=tmp_path)
    assert r.returncode == 0 and "roundtrip 5" in r.stdout, r.stderr


def test_colour_choices(echo, tmp_path):
    assert not ANSI.search(run_cli(str(echo), cwd=tmp_path).stdout)  # piped: plain
    assert ANSI.search(run_cli("--color", "always", str(echo), cwd=tmp_path).stdout)
    assert not ANSI.search(
        run_cli("--color", "never", str(echo), cwd=tmp_path, env={"FORCE_COLOR": "1"}).stdout
    )


def test_help_documents_every_option_with_an_example():
    r = run_cli("--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    from bcfront.cli.explain import build_parser

    for action in build_parser()._actions:
        for flag in action.option_strings:
            assert flag in text, flag
        if action.option_strings and action.dest not in ("help", "version"):
            assert "e.g." in (action.help or ""), f"{action.dest} has no example"
    assert "bcfront-explain examples/gpt.py" in text and "exit status" in text


def test_version():
    r = run_cli("--version")
    assert r.returncode == 0 and re.fullmatch(r"bcfront-explain \d+\.\d+\.\d+\n", r.stdout)


def test_installed_console_script():
    exe = REPO.parent / "venv" / "bin" / "bcfront-explain"
    found = subprocess.run(["which", "bcfront-explain"], capture_output=True, text=True).stdout
    path = found.strip() or (str(exe) if exe.exists() else "")
    if not path:
        pytest.skip("bcfront-explain is not installed on PATH")
    r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "bcfront-explain" in r.stdout
