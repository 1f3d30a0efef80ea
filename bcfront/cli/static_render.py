"""Output of ``--static``: a table per function, or JSON."""

from __future__ import annotations

import json
from dataclasses import asdict

from rich.console import Console, Group
from rich.rule import Rule
from rich.syntax import Syntax
from rich.text import Text

from .render import indent, short_path
from .static import StaticReport

STATIC_SCHEMA_VERSION = 1


def _filtered(report: StaticReport, min_confidence: float):
    for f in report.functions:
        yield f, [p for p in f.predictions if p.confidence >= min_confidence]


def to_json(report: StaticReport, min_confidence: float = 0.0) -> str:
    functions = []
    for f, preds in _filtered(report, min_confidence):
        functions.append(
            {
                "function": f.function,
                "lineno": f.lineno,
                "captured": f.captured,
                "predictions": [asdict(p) for p in preds],
            }
        )
    return json.dumps(
        {
            "schema_version": STATIC_SCHEMA_VERSION,
            "kind": "static-predictions",
            "filename": report.filename,
            "min_confidence": min_confidence,
            "functions": functions,
        },
        indent=2,
    )


def _confidence_style(c: float) -> str:
    return "bold red" if c >= 0.8 else "yellow" if c >= 0.5 else "dim"


def render_static(report: StaticReport, console: Console, min_confidence: float = 0.0) -> None:
    rows = list(_filtered(report, min_confidence))
    total = sum(len(p) for _, p in rows)
    head = Text("bcfront static: ", style="bold")
    head.append(
        f"{total} predicted graph break{'s' if total != 1 else ''} in {short_path(report.filename)} (not run)"
    )
    console.print(head)
    for f, preds in rows:
        title = Text(f.function, style="bold magenta")
        title.append(f"  line {f.lineno}", style="cyan")
        if not f.captured:
            title.append("  not captured", style="dim")
        parts: list = [Rule(title, align="left", style="magenta")]
        if not f.captured:
            parts.append(indent(Text("not reached from a captured function: no predictions", style="dim"), 2))
        elif not preds:
            parts.append(indent(Text("no graph break predicted", style="green"), 2))
        for p in preds:
            line = Text(f"{p.confidence:.0%} ", style=_confidence_style(p.confidence))
            line.append(p.reason, style="bold")
            line.append(f"  {short_path(p.filename)}:{p.lineno}", style="cyan")
            item = [line, indent(Text(p.message), 5)]
            if p.source_line:
                item.append(
                    indent(
                        Syntax(
                            p.source_line,
                            "python",
                            line_numbers=True,
                            start_line=p.lineno or 1,
                            theme="ansi_dark",
                            background_color="default",
                            word_wrap=True,
                        ),
                        5,
                    )
                )
            parts.append(indent(Group(*item), 2))
        console.print(Group(*parts))
