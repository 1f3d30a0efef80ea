"""``bcfront-explain``: run a script and explain what bcfront did with it.

Three modes, one per kind of question:

* ``bcfront-explain SCRIPT [ARGS...]`` — run the script as ``__main__`` and
  report every captured function that ran (graphs, graph breaks, guards,
  recompiles, side effects, time split), after the script's own output.
* ``--analyze TARGET`` — static analysis of one function (no execution).
* ``--static FILE`` — graph breaks predicted for each function of a file,
  without running it.

Exit status: 0 on success; the script's own status when it calls
``sys.exit``; 1 when the script raises or does not compile; 2 for usage
errors (missing file, unknown function, bad option); 3 for an internal
error of bcfront itself (``BCFRONT_DEBUG=1`` shows its traceback).
"""

from __future__ import annotations

import argparse
import os
import sys

from .runner import CliError

PROG = "bcfront-explain"
DOT_VIEWS = ("cfg", "domtree", "loops", "ssa")  # bcfront.cli.dot.VIEWS, without importing it

DESCRIPTION = """\
Explain what bcfront does with a PyTorch program: where graphs break and why,
what is guarded, and which guard failed on a recompile.

Runs SCRIPT as __main__ (with ARGS as its sys.argv[1:] and its directory on
sys.path), lets its output through, then prints a report of every function
captured with bcfront.capture that ran.  Options go before SCRIPT; everything
after SCRIPT is passed to the script.
"""

EPILOG = """\
examples:
  bcfront-explain examples/gpt.py                  report after the script's output
  bcfront-explain examples/gpt.py --steps 4        ARGS after SCRIPT go to the script
  bcfront-explain --json examples/gpt.py > r.json  report as JSON (docs/explain-schema.md)
  bcfront-explain -v examples/gpt.py               also graph code, kernels, every guard
  bcfront-explain --html report.html examples/gpt.py   the report as one HTML page
  bcfront-explain --analyze examples/gpt.py:GPT.forward        CFG, dominators, loops,
                                                                liveness, SSA
  bcfront-explain --analyze json.decoder:JSONDecoder.raw_decode --dot | dot -Tsvg > cfg.svg
  bcfront-explain --analyze examples/gpt.py:generate --dot loops | dot -Tpng > loops.png
                                                   --dot VIEW: cfg (default), domtree,
                                                   loops, ssa (def-use chains)
  bcfront-explain --static examples/breaks.py      predicted graph breaks, no execution

exit status: 0 ok; the script's own sys.exit status; 1 the script raised or has
a syntax error; 2 usage error (missing file, unknown function, bad option).
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mode = p.add_argument_group("modes (default: run SCRIPT and report its captures)")
    mode.add_argument(
        "--analyze",
        metavar="TARGET",
        help="static analysis of one function, without running it: CFG, dominator "
        "tree, loops, liveness, SSA.  TARGET is path.py:function or "
        "module:function, dotted for methods and nested functions "
        "(e.g. --analyze examples/gpt.py:GPT.forward)",
    )
    mode.add_argument(
        "--static",
        metavar="FILE",
        help="predict the graph breaks of every function in FILE from static "
        "analysis alone, each with a confidence; FILE is not run "
        "(e.g. --static examples/breaks.py)",
    )
    out = p.add_argument_group("output")
    out.add_argument(
        "--json",
        action="store_true",
        help="print the result as JSON and nothing else on stdout; the script's "
        "own stdout goes to stderr (e.g. --json examples/gpt.py > report.json)",
    )
    out.add_argument(
        "--dot",
        nargs="?",
        const="cfg",
        metavar="VIEW",
        help="with --analyze: one view as graphviz source -- cfg (the default: "
        "blocks and edges by kind), domtree (dominator tree, dominance "
        "frontier dotted), loops (the CFG with each natural loop as a "
        "nested cluster, back edges red) or ssa (def-use chains: "
        "instructions, SSA values and phis) "
        "(e.g. --analyze f.py:g --dot domtree | dot -Tpng > g.png)",
    )
    out.add_argument(
        "--html",
        metavar="FILE",
        help="write the report as one self-contained HTML page to FILE (overview, source with "
        "breaks marked, graph pictures, guards and recompiles; with --analyze: CFG, dominator "
        "tree, loops, SSA); opens from disk, offline (e.g. --html report.html examples/gpt.py)",
    )
    out.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the report to FILE instead of stdout (e.g. -o report.txt)",
    )
    out.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also show graph code, generated kernels and every guard (e.g. -v examples/gpt.py)",
    )
    out.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour output: auto (on a terminal only), always, never "
        "(e.g. --color always examples/gpt.py | less -R)",
    )
    out.add_argument(
        "--width",
        type=int,
        metavar="N",
        help="render for N columns instead of the terminal's width (e.g. --width 100)",
    )
    out.add_argument(
        "--min-confidence",
        type=float,
        default=0.0,
        metavar="P",
        help="with --static: only predictions with confidence >= P (e.g. --static f.py --min-confidence 0.7)",
    )
    out.add_argument(
        "--no-op-count",
        action="store_true",
        help="do not count tensor ops in graphs vs natively (it runs torch's profiler during "
        "captured calls; use this when the script profiles them itself, e.g. --no-op-count train.py)",
    )
    out.add_argument(
        "--full-traceback",
        action="store_true",
        help="when the script raises, keep bcfront's own frames in its traceback "
        "(for reporting bcfront bugs; e.g. --full-traceback examples/gpt.py)",
    )
    p.add_argument(
        "--version", action="version", version=f"%(prog)s {_version()}", help="print the version and exit"
    )
    p.add_argument(
        "script",
        nargs="?",
        metavar="SCRIPT",
        help="the Python script to run as __main__ (e.g. examples/gpt.py)",
    )
    p.add_argument(
        "args",
        nargs=argparse.REMAINDER,
        metavar="ARGS",
        help="arguments passed to the script as sys.argv[1:]",
    )
    return p


def _version() -> str:
    import bcfront

    return bcfront.__version__


def _console(args, file=None):
    from rich.console import Console

    from .render import StripTrailing

    target = file if file is not None else sys.stdout
    kw = {"highlight": False, "soft_wrap": False}
    if args.color == "always":
        kw["force_terminal"] = True
    elif args.color == "never" or not _isatty(target):
        kw["no_color"] = args.color == "never"
        if args.color == "never":
            kw["color_system"] = None
        target = StripTrailing(target)  # plain text: no padding at line ends
    if args.width:
        kw["width"] = args.width
    return Console(file=target, **kw)


def _isatty(f) -> bool:
    try:
        return f.isatty()
    except (AttributeError, ValueError):
        return False


def _open_output(args):
    from .ranks import output_path

    path = output_path(args.output, bool(getattr(args, "json", False)))  # one per rank
    if not path:
        return None
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as e:
        raise CliError(f"cannot write {path}: {e.strerror}") from None


def _emit_text(args, render) -> None:
    """Call ``render(console)`` on stdout or on the --output file."""
    f = _open_output(args)
    console = _console(args, f)
    try:
        render(console)
    finally:
        console.file.flush()
        if f is not None:
            f.close()


def _emit_raw(args, text: str) -> None:
    f = _open_output(args)
    if f is None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return
    with f:
        f.write(text + "\n")


def _write_html(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise CliError(f"cannot write {path}: {e.strerror}") from None
    print(f"{PROG}: wrote {path}", file=sys.stderr)


def cmd_run(args) -> int:
    import bcfront

    from .advice import enrich, with_raised_break
    from .runner import compile_script, run_script, stdout_to_stderr

    compile_script(args.script)  # missing file or syntax error: fail before anything runs
    # keeps what ran alive, times it and counts its tensor ops
    with bcfront.explain.collect(count_ops=not args.no_op_count) as run:
        if args.json:
            with stdout_to_stderr():
                result = run_script(args.script, args.args, full_traceback=args.full_traceback)
        else:
            result = run_script(args.script, args.args, full_traceback=args.full_traceback)
        if result.traceback:
            sys.stderr.write(result.traceback)
            sys.stderr.flush()
    report = enrich(with_raised_break(run.report(), result.exception))
    if args.html:
        _write_html(args.html, report.to_html(title=f"bcfront explain: {args.script}"))
    if args.json:
        _emit_raw(args, report.to_json())
    elif not args.html or args.output:
        from .render import RenderOptions, render_report

        _emit_text(args, lambda c: render_report(report, c, RenderOptions(verbose=args.verbose)))
    if result.error:
        print(f"{PROG}: {args.script} raised {result.error} (its traceback is above)", file=sys.stderr)
    return result.exit_code


def cmd_analyze(args) -> int:
    from .analyze import analyze_target, emit

    fa = analyze_target(args.analyze)
    if args.html:
        from ..html import analysis_html

        _write_html(args.html, analysis_html(fa))
        if not (args.dot or args.json or args.output):
            return 0
    if args.dot:
        from .dot import to_dot

        _emit_raw(args, to_dot(fa, args.dot).rstrip("\n"))
    elif args.json:
        _emit_raw(args, emit(fa, "json", None))
    else:
        _emit_text(args, lambda c: emit(fa, "text", c))
    return 0


def cmd_static(args) -> int:
    from .static import predict_file
    from .static_render import render_static, to_json

    report = predict_file(args.static)
    if args.json:
        _emit_raw(args, to_json(report, args.min_confidence))
    else:
        _emit_text(args, lambda c: render_static(report, c, args.min_confidence))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.dot is not None and not args.analyze:
        parser.error("--dot goes with --analyze")
    if args.dot is not None and args.dot not in DOT_VIEWS:
        parser.error(f"--dot takes one of {', '.join(DOT_VIEWS)} (got {args.dot!r})")
    modes = [m for m in ("analyze", "static") if getattr(args, m)]
    if len(modes) > 1:
        parser.error("--analyze and --static are separate modes; give one")
    if args.html and args.static:
        parser.error("--html goes with a SCRIPT or --analyze, not --static")
    if modes and args.script:
        parser.error(f"--{modes[0]} takes no SCRIPT (got {args.script!r})")
    if not modes and not args.script:
        parser.error("give a SCRIPT to run, or --analyze TARGET, or --static FILE")
    command = {"analyze": cmd_analyze, "static": cmd_static}.get(modes[0] if modes else "", cmd_run)
    try:
        return command(args)
    except CliError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except Exception as e:  # a bcfront bug: short message, trace on request
        if os.environ.get("BCFRONT_DEBUG"):
            raise
        print(
            f"{PROG}: internal error: {type(e).__name__}: {e} (this is a bcfront bug; "
            f"BCFRONT_DEBUG=1 shows its traceback)",
            file=sys.stderr,
        )
        return 3


if __name__ == "__main__":
    sys.exit(main())
