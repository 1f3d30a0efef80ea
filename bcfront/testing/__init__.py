"""Robustness tooling: random programs, a differential runner against eager, a shrinker.

    program       the program IR the fuzzer emits (statement tree, call specs) and its rendering
    fuzzexpr      typed expression grammar (pure Python and tensor), as rule tables
    fuzzgen       random programs: statements, control flow, closures, exceptions, tensors
    fuzzinputs    the five calls each program is run with (values, shapes, dtypes, layouts)
    fuzzextra     opt-in grammar features for campaigns (sets, opaque containers, ...)
    differential  run eagerly and captured over several calls; compare everything observable
    shrink        reduce a mismatching program to a small reproducer

Nothing here imports torch at module level: pure-Python programs generate,
run and shrink without it (so the 3.12/3.13 venvs can fuzz too).
"""
