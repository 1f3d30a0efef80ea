"""Static analysis of CPython 3.11–3.13 bytecode, for other compilers to use.

Pure Python; imports no torch and runs nothing it analyzes::

    fa = bcfront.analysis.analyze(fn_or_code)     # also bcfront.analyze
    fa.cfg.blocks, fa.cfg.edges                   # basic blocks; edges carry a kind
    fa.idom, fa.dominates(a, b), fa.dom_tree      # dominators (blocks are start offsets)
    fa.dominance_frontier, fa.post_idom           # frontiers; post-dominators (exit = -1)
    fa.loops                                      # natural loops (LoopForest)
    fa.stack                                      # stack depth / slot use per instruction
    fa.liveness                                   # live locals, cells and free variables
    fa.ssa                                        # SSA values of locals and stack slots
    fa.aliases                                    # may-alias sets of locals
    fa.nested()                                   # analyses of nested code objects
    fa.to_text(), fa.render(), fa.to_dot(), fa.to_dict(), fa.to_json()

Every analysis is computed on first access and cached; each one's module
docstring states the definition it computes.  Nothing recurses on the graph.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from .bytecode import Bytecode
from .cfg import CFG, EXIT
from .decode import code_of, decode
from .dominance import CFGDominance, cfg_dominance, cfg_dominance_frontier, cfg_post_idom, dominator_tree
from .liveness import Liveness
from .loops import LoopForest, find_loops
from .ssa import SSA
from .stack import StackInfo

if TYPE_CHECKING:
    from rich.console import Console

    from .objalias import Aliases

__all__ = ["EXIT", "FunctionAnalysis", "analyze"]

T = TypeVar("T")


def analyze(fn_or_code: object) -> FunctionAnalysis:
    """Analysis of a function, method or code object (TypeError for anything else)."""
    if isinstance(fn_or_code, FunctionAnalysis):
        return fn_or_code
    if isinstance(fn_or_code, Bytecode):
        return FunctionAnalysis(fn_or_code.code, fn_or_code)
    return FunctionAnalysis(code_of(fn_or_code))


class _analysis(Generic[T]):
    """A `FunctionAnalysis` property computed on first access and cached as an instance
    attribute (a non-data descriptor, so later reads never reach it: cheaper than
    `functools.cached_property`, which takes a lock on 3.11).  Stored with `setattr`,
    not through ``obj.__dict__``: asking for the instance dict makes one (an object
    for the collector), where an attribute goes in the instance's inline values.  The
    garbage collector is left alone: pausing it is process-wide, for the caller's
    other threads too."""

    def __init__(self, build: Callable[[FunctionAnalysis], T]):
        self.build = build
        self.name = build.__name__
        self.__doc__ = build.__doc__

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _analysis[T]: ...

    @overload
    def __get__(self, obj: FunctionAnalysis, owner: type | None = None) -> T: ...

    def __get__(self, obj: FunctionAnalysis | None, owner: type | None = None) -> T | _analysis[T]:
        if obj is None:
            return self
        value = self.build(obj)
        setattr(obj, self.name, value)
        return value


class FunctionAnalysis:
    """The lazily computed analyses of one code object."""

    def __init__(self, code: types.CodeType, bytecode: Bytecode | None = None):
        self.code = code
        if bytecode is not None:
            self.bytecode = bytecode  # (an instance attribute: the descriptor is not called)

    def __repr__(self) -> str:
        return (
            f"<FunctionAnalysis {self.code.co_qualname} ({self.code.co_filename}:{self.code.co_firstlineno})>"
        )

    # -- control flow ------------------------------------------------------------
    @_analysis
    def bytecode(self) -> Bytecode:
        """The decoded instructions and exception table."""
        return decode(self.code)

    @_analysis
    def cfg(self) -> CFG:
        """Basic blocks and typed edges (see `bcfront.analysis.cfg`)."""
        return CFG(self.bytecode)

    @_analysis
    def dominance(self) -> CFGDominance:
        """The dominator pass's result: `idom`, and the joins, RPO numbers and
        retreating edges that frontiers, loops and post-dominators reuse."""
        return cfg_dominance(self.cfg)

    @_analysis
    def idom(self) -> dict[int, int | None]:
        """Immediate dominator of every reachable block (the entry maps to None)."""
        return self.dominance.idom

    @_analysis
    def dom_tree(self) -> dict[int, list[int]]:
        """Children of each reachable block in the dominator tree."""
        return dominator_tree(self.idom)

    @_analysis
    def dominance_frontier(self) -> dict[int, set[int]]:
        """DF(d): blocks n where d dominates a predecessor of n but not strictly n."""
        return cfg_dominance_frontier(self.cfg, self.dominance)

    @_analysis
    def post_idom(self) -> dict[int, int | None]:
        """Immediate post-dominators, rooted at the virtual exit `EXIT` (-1)."""
        return cfg_post_idom(self.cfg, self.dominance)

    @_analysis
    def _dom_intervals(self) -> dict[int, tuple[int, int]]:
        # preorder entry/exit numbers of the dominator tree: a dominates b iff
        # a's interval contains b's (O(1) queries; built without recursion)
        out: dict[int, tuple[int, int]] = {}
        if not self.idom:
            return out
        tree = self.dom_tree
        clock = 0
        start: dict[int, int] = {}
        work = [(self.cfg.entry, False)]
        while work:
            node, done = work.pop()
            if done:
                out[node] = (start[node], clock)
                continue
            start[node] = clock
            clock += 1
            work.append((node, True))
            work.extend((c, False) for c in reversed(tree[node]))
        return out

    def dominates(self, a: int, b: int) -> bool:
        """Whether block a dominates block b (reflexive; False if either is unreachable)."""
        iv = self._dom_intervals
        ia, ib = iv.get(a), iv.get(b)
        return ia is not None and ib is not None and ia[0] <= ib[0] and ib[1] <= ia[1]

    @_analysis
    def loops(self) -> LoopForest:
        """Natural loops and irreducible regions (`bcfront.analysis.loops.LoopForest`)."""
        return find_loops(self.cfg, self.dominance)

    # -- dataflow ------------------------------------------------------------------
    @_analysis
    def stack(self) -> StackInfo:
        """Stack depth before each instruction and the slots it reads and writes."""
        return StackInfo(self.cfg)

    @_analysis
    def liveness(self) -> Liveness:
        """Live locals, cells and free variables per block and instruction."""
        return Liveness(self.cfg)

    @_analysis
    def ssa(self) -> SSA:
        """SSA values of locals and stack slots, phis, def-use chains."""
        return SSA(self.cfg, self.idom, self.dominance_frontier, self.liveness, self.stack)

    @_analysis
    def aliases(self) -> Aliases:
        """Flow-insensitive may-alias information about the objects locals hold."""
        from .objalias import Aliases

        return Aliases(self.ssa)

    # -- nesting ---------------------------------------------------------------------
    def nested(self, recursive: bool = False) -> list[FunctionAnalysis]:
        """Analyses of the code objects in this one's constants (all descendants if
        `recursive`, in preorder)."""
        out: list[FunctionAnalysis] = []
        work = [c for c in reversed(self.code.co_consts) if isinstance(c, types.CodeType)]
        while work:
            c = work.pop()
            out.append(FunctionAnalysis(c))
            if recursive:
                work.extend(k for k in reversed(c.co_consts) if isinstance(k, types.CodeType))
        return out

    # -- output ------------------------------------------------------------------------
    def to_text(self) -> str:
        """Plain-text report: blocks, edges, dominators, loops, liveness and SSA."""
        from .render import to_text

        return to_text(self)

    def render(self, console: Console | None = None) -> None:
        """Print the report: with rich when `console` is given or stdout is a terminal."""
        from .render import render

        render(self, console)

    def to_dot(self) -> str:
        """Graphviz source: blocks with their instructions, edges styled by kind."""
        from .render import to_dot

        return to_dot(self)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict in the schema documented in `bcfront.analysis.render`."""
        from .render import to_dict

        return to_dict(self)

    def to_json(self, indent: int | None = 2) -> str:
        import json

        return json.dumps(self.to_dict(), indent=indent)
