"""The explain report as one self-contained HTML page (``bcfront-explain --html``).

`report_html(report)` renders a `bcfront.report.Report` (plain data, no
torch): an overview of the captured functions, the source with breaks,
regions and guard sites marked, a picture of each graph's dataflow, and the
guards and recompiles.  `analysis_html(fa)` renders a static analysis
(`bcfront.analyze`): CFG with loops, dominator tree, SSA with phis.  The
pictures are laid out here as inline SVG (`layout`); the page fetches
nothing, so it opens from disk offline.
"""

from __future__ import annotations

from .analysis import analysis_html
from .graphview import graphs_section
from .guards import guards_section
from .overview import overview
from .page import page
from .source import source_section

NAV = [
    ("overview", "Overview"),
    ("source", "Source"),
    ("graphs", "Graphs"),
    ("guards", "Guards and recompiles"),
]


def report_html(report, title: str = "bcfront explain") -> str:
    """The whole page for `report`."""
    n = len(report.functions)
    sections = [overview(report), source_section(report), graphs_section(report), guards_section(report)]
    return page(title, NAV, sections, f"{n} captured function(s)")


__all__ = ["analysis_html", "report_html"]
