"""The bytecode interpreter: the run loop and its opcode handler tables.

`interpreter` (the run loop) sits above `handlers/` (which it dispatches to)
and `generators`; it fills the semantics' `dispatch.inline_call` and
`dispatch.resume_generator` slots, so the semantics run bytecode without
importing it.
"""
