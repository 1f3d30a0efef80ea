"""The symbolic frontend: bytecode interpreter, values, guards, graph IR, codegen.

Layering (each module imports only those above it):

    graph      SSA graph IR, printer, reference evaluator
    sources    how to fetch a value from the inputs at run time
    values     symbolic values held on the symbolic stack and in locals
    guards     guard records and their compilation into one function
    fake       torch-side helpers (fake tensors, global state), imported lazily
    builder    real object + source -> symbolic value (+ guards)
    frame      the symbolic frame; tracer: per-capture state
    objects, builtins, torch_calls   call/attribute semantics
    handlers/  opcode tables; interpreter: the run loop
    codegen    generated entry/region source; resume: continuation bytecode

Nothing here imports torch at module level.
"""
