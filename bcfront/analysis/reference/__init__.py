"""Plain reference versions of the analyzer's passes, written to be read.

Each module computes what one fast pass computes, by the textbook algorithm
its docstring names, on the `Instr` objects and plain sets and dicts: no bit
tricks, no shared int objects, no column tricks, no specialized paths.  They
are slow (several times the fast passes) and exist to be compared with them:
`tests/analysis/test_reference.py` (the aliases: `test_objalias_reference.py`)
runs both over the standard library sample on CPython 3.11-3.13 and asserts identical results.

* `cfg` — basic blocks, typed edges, reachability, exit edges;
* `dominance` — dominators, post-dominators, dominance frontiers (iterative
  dataflow over dominator sets);
* `loops` — back edges and natural loops;
* `liveness` — live variables (iterative backward dataflow over sets);
* `stack` — stack depths (a worklist over instructions);
* `ssa` — SSA of the fast locals: phi placement (Cytron et al.'s iterated
  dominance frontier, pruned by liveness) and renaming (a walk of the
  dominator tree);
* `objalias` — may-alias sets of the objects locals hold (chaotic iteration of
  per-instruction transfer rules over plain sets, to a fixpoint).
"""
