"""Render a `report.Report` with rich: one section per captured function.

Each section is a sequence of parts (time and op share, what ran natively,
warnings, graphs, breaks, guards, recompiles, side effects, notes), produced by small functions in a
table, each returning renderables or nothing.  Nothing here decides colours
or width: the `Console` does (colour on a terminal, plain text when piped,
the terminal's width or ``COLUMNS``).
"""

from __future__ import annotations

import io
import linecache
import os
import re
from collections import Counter
from dataclasses import dataclass

from rich import box
from rich.console import Console, Group
from rich.padding import Padding
from rich.rule import Rule
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from bcfront.report import FunctionReport, GraphBreak, Report, UserFrame

from .advice import describe_changes


@dataclass(frozen=True)
class RenderOptions:
    verbose: bool = False  # graph code, kernel source, every guard
    max_guards: int = 12  # guards listed per function unless verbose
    max_recompiles: int = 8  # recompiles listed per function unless verbose
    theme: str = "ansi_dark"  # pygments theme of highlighted source


class StripTrailing(io.TextIOBase):
    """A text stream that drops trailing spaces from each line before passing it on.

    Rich pads lines to the width of their block; on a terminal that is
    invisible, but piped plain text should not carry it.
    """

    def __init__(self, target):
        self.target = target
        self.pending = ""

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, s: str) -> int:
        *lines, self.pending = (self.pending + s).split("\n")
        for line in lines:
            self.target.write(line.rstrip(" ") + "\n")
        return len(s)

    def flush(self) -> None:
        if self.pending:
            self.target.write(self.pending.rstrip(" "))
            self.pending = ""
        self.target.flush()


def short_path(filename: str | None) -> str:
    """`filename` relative to the working directory when it lies below it."""
    if not filename:
        return "?"
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive on Windows
        return filename
    if not rel.startswith(".."):
        return rel
    # Library code: from the package down is what a person recognizes.
    for marker in ("site-packages" + os.sep, "dist-packages" + os.sep):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def indent(renderable, n: int) -> Padding:
    """`renderable` indented by `n` columns, without padding lines out to the full width."""
    return Padding(renderable, (0, 0, 0, n), expand=False)


def where(filename: str | None, lineno: int | None) -> str:
    return f"{short_path(filename)}:{lineno}" if lineno else short_path(filename)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _heading(title: str, n: int | None = None) -> Text:
    text = Text(title, style="bold")
    if n is not None:
        text.append(f" ({n})", style="dim")
    return text


def _table(*columns: str) -> Table:
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
    for c in columns:
        t.add_column(c, overflow="fold")
    return t


def _source(filename: str | None, lineno: int | None, line: str, opts: RenderOptions):
    """The source line at filename:lineno, highlighted, with its line number."""
    text = line or (linecache.getline(filename, lineno).rstrip() if filename and lineno else "")
    if not text.strip():
        return None
    return Syntax(
        text.strip(),
        "python",
        line_numbers=True,
        start_line=lineno or 1,
        theme=opts.theme,
        word_wrap=True,
        background_color="default",
    )


def _frame_text(f: UserFrame) -> str:
    return f"{f.function} ({where(f.filename, f.lineno)})"


# -- parts of a function section -----------------------------------------------


def part_time(fr: FunctionReport, opts: RenderOptions):
    return _time_split(fr) + _op_share(fr) + _symbolic_sizes(fr)


_LEGEND = re.compile(r"\b(s\d+) = ([^,)]+)")


def _symbolic_sizes(fr: FunctionReport) -> list:
    """Which sizes the newest entry keeps symbolic (from its SHAPE guards' legends)."""
    seen: dict[str, str] = {}
    for g in fr.guards:
        if g.kind == "SHAPE":
            for sym, what in _LEGEND.findall(g.expr.partition("  (")[2]):
                seen.setdefault(sym, what)
    if not seen:
        return []
    return [Text("dynamic sizes: " + ", ".join(f"{s} = {w}" for s, w in seen.items()), style="cyan")]


def _op_share(fr: FunctionReport) -> list:
    if not fr.op_share:
        return []
    total = fr.ops_in_graphs + fr.ops_native
    style = "green" if fr.ops_in_graphs == total else ("yellow" if fr.ops_in_graphs else "red")
    text = Text(fr.op_share, style=style)
    if fr.ops_native:
        text.append(f"; {_plural(fr.ops_native, 'op')} ran natively", style="dim")
    return [text]


def _time_split(fr: FunctionReport) -> list:
    total = fr.compiled_seconds + fr.python_seconds
    calls = _plural(fr.calls, "call")
    if fr.timed_calls <= 0 or total <= 0:
        return [Text(f"{calls}; time split not measured", style="dim")]
    share = fr.compiled_seconds / total
    bar_len = 20
    filled = round(share * bar_len)
    text = Text(f"{calls}; run time ")
    text.append("█" * filled, style="green")
    text.append("░" * (bar_len - filled), style="yellow")
    text.append(
        f" {share:.0%} compiled ({_ms(fr.compiled_seconds)}), "
        f"{1 - share:.0%} Python ({_ms(fr.python_seconds)})"
    )
    extra = [] if fr.timed_calls == fr.calls else [f"over {_plural(fr.timed_calls, 'timed call')}"]
    if fr.capture_seconds > 0:
        extra.append(f"capture {_ms(fr.capture_seconds)} not counted")
    if extra:
        text.append(f"; {', '.join(extra)}", style="dim")
    return [text]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _graph_groups(graphs) -> list[tuple[object, int]]:
    """Identical-looking graphs (one per cache entry, typically) as (first, count)."""
    groups: dict[tuple, list] = {}
    for g in graphs:
        key = (g.function, g.backend, g.op_count, len(g.kernels), tuple(sorted(set(g.fallback_ops))))
        groups.setdefault(key, []).append(g)
    return [(gs[0], len(gs)) for gs in groups.values()]


def part_graphs(fr: FunctionReport, opts: RenderOptions):
    if not fr.graphs:
        return [_heading("Graphs", 0), indent(Text("no graph captured", style="dim"), 2)]
    t = _table("#", "graph of", "backend", "ops", "kernels", "left to torch")
    for i, (g, n) in enumerate(_graph_groups(fr.graphs), 1):
        left = ", ".join(sorted(set(g.fallback_ops))) or "—"
        name = g.function if n == 1 else f"{g.function} ×{n}"
        t.add_row(str(i), name, g.backend, str(g.op_count), str(len(g.kernels)), left)
    out = [_heading("Graphs", len(fr.graphs)), indent(t, 2)]
    if opts.verbose:
        for i, (g, n) in enumerate(_graph_groups(fr.graphs), 1):
            same = f", first of {n} alike" if n > 1 else ""
            out.append(indent(Text(f"graph {i} ({g.function}{same}):", style="bold dim"), 2))
            out.append(
                indent(
                    Syntax(g.code, "python", theme=opts.theme, word_wrap=True, background_color="default"), 4
                )
            )
            for k in g.kernels:
                out.append(indent(Text(f"kernel {k.name} fuses {', '.join(k.ops)}:", style="bold dim"), 4))
                out.append(
                    indent(
                        Syntax(
                            k.source, "python", theme=opts.theme, word_wrap=True, background_color="default"
                        ),
                        6,
                    )
                )
    return out


def _break_item(i: int, b: GraphBreak, opts: RenderOptions):
    head = Text(f"{i}. ", style="bold")
    head.append(b.reason, style="bold red")
    if b.count > 1:
        head.append(f" ×{b.count}", style="bold")
    head.append(f"  {where(b.filename, b.lineno)}", style="cyan")
    parts = [head, indent(Text(b.message), 3)]
    src = _source(b.filename, b.lineno, b.source_line, opts)
    if src is not None:
        parts.append(indent(src, 3))
    if b.instruction:
        parts.append(indent(Text(f"instruction: {b.instruction}", style="dim"), 3))
    if len(b.user_stack) > 1:
        stack = " → ".join(_frame_text(f) for f in b.user_stack)
        parts.append(indent(Text(f"user stack: {stack}", style="dim"), 3))
    return Group(*parts)


def part_breaks(fr: FunctionReport, opts: RenderOptions):
    if not fr.graph_breaks:
        text = (
            Text("none — the whole function ran as compiled graphs", style="green")
            if fr.graphs
            else Text("none recorded", style="dim")
        )
        return [_heading("Graph breaks", 0), indent(text, 2)]
    total = sum(b.count for b in fr.graph_breaks)
    out = [_heading("Graph breaks", total)]
    out += [indent(_break_item(i, b, opts), 2) for i, b in enumerate(fr.graph_breaks, 1)]
    return out


def _more(shown: int, total: int) -> list:
    if shown >= total:
        return []
    return [indent(Text(f"… {total - shown} more (--verbose shows all)", style="dim"), 2)]


def _guard_rank(g) -> int:
    """Guards on the arguments first (what a person changes), then globals, then the rest."""
    if g.source.startswith("L[") and "." not in g.source.split("]")[0]:
        return 0 if g.kind in ("TENSOR_MATCH", "CONSTANT_MATCH", "CONSTANT") else 1
    if g.source.startswith(("L[", "G[")):
        return 2
    return 3


def _use(fr: FunctionReport, f) -> str:
    if f is None:
        return ""
    at = f"line {f.lineno}" if f.filename == fr.filename and f.lineno else where(f.filename, f.lineno)
    return f"{at}  {f.source_line.strip()}" if f.source_line else at


def part_guards(fr: FunctionReport, opts: RenderOptions):
    if not fr.guards:
        return []
    ranked = sorted(fr.guards, key=_guard_rank)  # stable: original order within a rank
    shown = ranked if opts.verbose else ranked[: opts.max_guards]
    kinds = Counter(g.kind for g in fr.guards).most_common()
    head = _heading("Guards", len(fr.guards))
    head.append("  " + ", ".join(f"{n} {k}" for k, n in kinds), style="dim")
    out = [head]
    for g in shown:
        line = Text(g.source, style="bold")
        line.append(f"  {g.kind}", style="dim")
        out.append(indent(line, 2))
        out.append(indent(Text(g.expr), 6))
        if g.first_use is not None:
            out.append(indent(Text(f"first used at {_use(fr, g.first_use)}", style="dim"), 6))
    return out + _more(len(shown), len(fr.guards))


def part_recompiles(fr: FunctionReport, opts: RenderOptions):
    if not fr.recompiles:
        return []
    shown = fr.recompiles if opts.verbose else fr.recompiles[: opts.max_recompiles]
    out = [_heading("Recompiles", len(fr.recompiles))]
    for i, r in enumerate(shown, 1):
        line = Text(f"{i}. ", style="bold")
        line.append(r.source or r.guard, style="bold")
        line.append(f"  {describe_changes(r.expected, r.actual)}")
        out.append(indent(line, 2))
        detail = []
        if opts.verbose or i == len(shown):
            detail.append(f"failed check: {r.guard}")
        if r.reason and r.guard not in r.reason:
            detail.append(r.reason)
        if r.first_use is not None and "first used" not in r.reason:
            detail.append(f"value first used at {_use(fr, r.first_use)}")
        out += [indent(Text(d, style="dim"), 5) for d in detail]
    return out + _more(len(shown), len(fr.recompiles))


def part_side_effects(fr: FunctionReport, opts: RenderOptions):
    if not fr.side_effects:
        return []
    t = _table("side effect replayed", "target", "at")
    for s in fr.side_effects:
        t.add_row(s.kind, s.target, where(s.filename, s.lineno) if s.filename else "")
    return [_heading("Side effects", len(fr.side_effects)), indent(t, 2)]


def part_notes(fr: FunctionReport, opts: RenderOptions):
    if not fr.notes:
        return []
    return [_heading("Notes")] + [indent(Text(f"• {n}"), 2) for n in fr.notes]


def part_fallbacks(fr: FunctionReport, opts: RenderOptions):
    """Whatever ran natively instead of captured: never silent."""
    if not fr.native_fallbacks:
        return []
    out: list[Text | Padding] = [_heading("Ran natively", len(fr.native_fallbacks))]
    for i, f in enumerate(fr.native_fallbacks, 1):
        head = Text(f"{i}. ", style="bold")
        head.append(f.kind, style="bold red")
        if f.count > 1:
            head.append(f" ×{f.count}", style="bold")
        if f.filename:
            head.append(f"  {where(f.filename, f.lineno)}", style="cyan")
        if f.function and f.function != fr.function:
            head.append(f"  in {f.function}", style="dim")
        out.append(indent(head, 2))
        out.append(indent(Text(f.message), 5))
        if opts.verbose:
            out.append(indent(Text(f.kind.meaning, style="dim"), 5))
    return out


def _plain_warnings(fr: FunctionReport) -> list[str]:
    """Warnings other than the native fallbacks' messages (shown by `part_fallbacks`)."""
    shown = {f.message for f in fr.native_fallbacks}
    return [w for w in fr.warnings if w not in shown]


def part_warnings(fr: FunctionReport, opts: RenderOptions):
    out = []
    for w in _plain_warnings(fr):
        text = Text("⚠ warning: ", style="bold yellow")
        text.append(w)
        out.append(text)
    return out


# Sections of a function, in the order a person reads them.
PARTS = (
    part_time,
    part_fallbacks,
    part_warnings,
    part_graphs,
    part_breaks,
    part_recompiles,
    part_guards,
    part_side_effects,
    part_notes,
)


def function_section(fr: FunctionReport, opts: RenderOptions) -> Group:
    title = Text(fr.function, style="bold magenta")
    if fr.filename:
        title.append(f"  {where(fr.filename, fr.lineno)}", style="cyan")
    parts: list = [Rule(title, align="left", style="magenta")]
    for part in PARTS:
        got = part(fr, opts)
        if got:
            parts.extend(got)
            parts.append(Text(""))
    return Group(*parts)


def summary_line(report: Report) -> Text:
    n_breaks = sum(b.count for b in report.graph_breaks)
    text = Text("bcfront explain: ", style="bold")
    text.append(
        ", ".join(
            [
                _plural(len(report.functions), "captured function"),
                _plural(len(report.graphs), "graph"),
                _plural(n_breaks, "graph break"),
                _plural(len(report.recompiles), "recompile"),
            ]
        )
    )
    storms = sum(len(_plain_warnings(f)) for f in report.functions)
    if storms:
        text.append(f", {_plural(storms, 'warning')}", style="bold yellow")
    native = len(report.native_fallbacks)
    if native:
        text.append(f", {_plural(native, 'native fallback')}", style="bold red")
    return text


def render_report(
    report: Report, console: Console | None = None, opts: RenderOptions = RenderOptions()
) -> None:
    """Print `report` to `console` (a new one on stdout by default).

    Also for reports from the API: ``render_report(bcfront.explain(fn, x))``.
    """
    console = console if console is not None else Console(highlight=False)
    console.print()
    console.print(summary_line(report))
    if not report.functions:
        console.print(
            Text(
                "No captured function ran. Wrap the code to inspect with "
                "bcfront.capture (as a decorator or cf = bcfront.capture(fn)).",
                style="yellow",
            )
        )
        return
    for fr in report.functions:
        console.print(function_section(fr, opts))
