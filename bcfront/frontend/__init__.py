"""The symbolic frontend, in the order a call flows through it.

    model/      the data of a trace: values, sources, guards, frame, tracer, effects
    semantics/  what Python and torch operations mean on symbolic values
    interp/     the bytecode run loop and its opcode handler tables
    regions/    from a trace to an entry: codegen, graph breaks, continuations

Each sub-package imports only those listed before it (and `bcfront.ir`,
`bcfront.backends`, `bcfront.analysis` below them), never a private name of
another module, and no import cycle; `tests/test_layers.py` enforces it.
Where a lower layer must call into a higher one (a call inlines a function,
iterating a generator resumes its frame), it goes through a slot in
`semantics/dispatch.py` that the higher module fills in when imported; see
"Layers" in `docs/architecture.md`.  Nothing here imports torch at module level.
"""
