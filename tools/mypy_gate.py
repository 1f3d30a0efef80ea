"""mypy with a baseline: fail on any type error that is not already known.

The package had a few hundred mypy errors when type checking was introduced.  Rather than
fixing them all at once, tools/mypy_baseline.txt lists them, counted, keyed by file, error
code and message (no line numbers, so edits elsewhere in a file do not disturb it).  This gate
runs mypy with the project's configuration and fails when a (file, code, message) occurs more
often than the baseline allows, i.e. on every new error.  Errors that went away only shrink
what is allowed once the baseline is regenerated (--update).

The strict packages (the `[[tool.mypy.overrides]]` that turn on disallow_untyped_defs in
pyproject.toml) may have no baseline entries: every error there fails the gate, and --update
refuses to record one.

    python tools/mypy_gate.py            # check
    python tools/mypy_gate.py --update   # rewrite the baseline from the current errors

Run it with the interpreter of the environment the baseline was made in (the README's
.venv, with torch): mypy reads installed packages' types, so another environment can see
other errors.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BASELINE = REPO / "tools" / "mypy_baseline.txt"

# path:line: error: message  [code]
ERROR_LINE = re.compile(
    r"^(?P<path>[^:\n]+):(?P<line>\d+): error: (?P<message>.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$"
)
# Messages that quote another line ("already defined on line 12") would tie the key to lines.
LINE_REFERENCE = re.compile(r"\bline \d+\b")

Key = tuple[str, str, str]  # (path, code, message)
# A quoted type in a message ("int | str | None"): mypy prints a union's members in the
# order it met them, which can change when unrelated code changes; keys sort them.
QUOTED = re.compile(r'"([^"]*)"')


def _split_top(text: str, sep: str) -> list[str]:
    """`text` split at `sep` where no bracket is open."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def canonical_type(text: str) -> str:
    """A printed type with every union's members sorted, at any depth."""
    members = []
    for part in _split_top(text, "|"):
        open_at = part.find("[")
        if open_at > 0 and part.endswith("]"):
            args = _split_top(part[open_at + 1 : -1], ",")
            part = part[: open_at + 1] + ", ".join(canonical_type(a) for a in args) + "]"
        members.append(part)
    return " | ".join(sorted(members))


def run_mypy(mypy_args: list[str], cwd: Path) -> tuple[int, str]:
    """mypy's exit status and its output, run as this interpreter's module in `cwd`."""
    cmd = [
        sys.executable,
        "-m",
        "mypy",
        "--no-pretty",
        "--no-error-summary",
        "--show-error-codes",
        "--hide-error-context",
        *mypy_args,
    ]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def parse_errors(output: str) -> list[tuple[Key, int]]:
    """Each error of mypy's output as (key, line number); notes are dropped."""
    found = []
    for raw in output.splitlines():
        m = ERROR_LINE.match(raw)
        if m:
            path = m["path"].replace("\\", "/")
            message = LINE_REFERENCE.sub("line N", m["message"])
            message = QUOTED.sub(lambda q: f'"{canonical_type(q[1])}"', message)
            found.append(((path, m["code"] or "misc", message), int(m["line"])))
    return found


def read_baseline(path: Path) -> Counter[Key]:
    """The baseline file: `count<TAB>path<TAB>code<TAB>message` lines; # starts a comment."""
    allowed: Counter[Key] = Counter()
    if not path.exists():
        return allowed
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        count, file, code, message = raw.split("\t", 3)
        allowed[(file, code, message)] += int(count)
    return allowed


def write_baseline(path: Path, errors: Counter[Key]) -> None:
    lines = [
        "# mypy errors known when the gate was introduced: count, file, code, message.",
        "# Regenerate with `python tools/mypy_gate.py --update`; never add to it by hand.",
    ]
    lines += [f"{n}\t{file}\t{code}\t{message}" for (file, code, message), n in sorted(errors.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def strict_prefixes(config: Path) -> list[str]:
    """Path prefixes of the modules whose mypy override sets disallow_untyped_defs."""
    if not config.exists():
        return []
    data = tomllib.loads(config.read_text(encoding="utf-8"))
    prefixes = []
    for override in data.get("tool", {}).get("mypy", {}).get("overrides", []):
        if not override.get("disallow_untyped_defs"):
            continue
        modules = override["module"]
        for module in [modules] if isinstance(modules, str) else modules:
            base = module.removesuffix(".*").replace(".", "/")
            prefixes += [base + "/", base + ".py"]
    return sorted(set(prefixes))


def is_strict(path: str, prefixes: list[str]) -> bool:
    return any(path == p or path.startswith(p) for p in prefixes)


def report(errors: list[tuple[Key, int]]) -> None:
    for (file, code, message), line in errors:
        print(f"{file}:{line}: error: {message}  [{code}]")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite the baseline from the current errors")
    parser.add_argument("--baseline", type=Path, default=DEFAULT_BASELINE)
    parser.add_argument(
        "--config-file",
        type=Path,
        default=None,
        help="the mypy configuration (default: pyproject.toml in the working directory)",
    )
    parser.add_argument("targets", nargs="*", help="files or packages (default: the config's `files`)")
    args = parser.parse_args(argv)

    cwd = Path.cwd()
    config = args.config_file or cwd / "pyproject.toml"
    mypy_args = (["--config-file", str(config)] if args.config_file else []) + args.targets
    status, output = run_mypy(mypy_args, cwd)
    errors = parse_errors(output)
    if status not in (0, 1) or (status == 1 and not errors):
        print(output, end="")
        print(f"mypy gate: mypy itself failed (exit {status}); see above")
        return 2

    current: Counter[Key] = Counter(key for key, _ in errors)
    prefixes = strict_prefixes(config)
    strict_errors = [(key, line) for key, line in errors if is_strict(key[0], prefixes)]

    if args.update:
        baselined = Counter({k: n for k, n in current.items() if not is_strict(k[0], prefixes)})
        write_baseline(args.baseline, baselined)
        print(f"mypy gate: baseline {args.baseline} rewritten: {sum(baselined.values())} error(s)")
        if strict_errors:
            report(strict_errors)
            print(
                f"mypy gate: {len(strict_errors)} error(s) in strict modules, which are never "
                "baselined: fix them."
            )
            return 1
        return 0

    allowed = read_baseline(args.baseline)
    for key in list(allowed):
        if is_strict(key[0], prefixes):
            del allowed[key]  # a hand-edited baseline cannot excuse a strict module
    seen: Counter[Key] = Counter()
    new = []
    for key, line in errors:
        seen[key] += 1
        if seen[key] > allowed[key]:
            new.append((key, line))
    fixed = sum((allowed - current).values())
    if new:
        report(new)
        print(
            f"mypy gate: {len(new)} new error(s) (baseline {args.baseline.name} allows "
            f"{sum(allowed.values())}). Fix them; the baseline only records old errors."
        )
        if fixed:
            print(f"mypy gate: (also {fixed} baselined error(s) gone)")
        return 1
    note = f"; {fixed} baselined error(s) gone: run with --update to shrink the baseline" if fixed else ""
    print(f"mypy gate: no new errors ({sum(current.values())} baselined remain{note})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
