"""Python and torch semantics on symbolic values.

Operators, calls, attributes, iteration, builtins, torch calls.

The modules are stacked (lowest first: `dispatch`, `registry`, `classes`,
`folding`, `torch_calls`, `ops`, `iteration`, `compare`, `containers`,
`builtins_iter`, `attrs`, `builtins`, `objects`); a lower one reaches the
recursive entry points above it through `dispatch` (see its docstring).
"""
