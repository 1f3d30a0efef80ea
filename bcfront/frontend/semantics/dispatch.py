"""The few entry points the semantics call recursively, filled in by their owners.

Python's semantics recurse through each other: an operator runs a user's dunder
method (a call), a call of a builtin iterates its argument (iteration), iterating
a generator resumes its frame (the interpreter), and so on.  The modules are
stacked so that each imports only those below it (`docs/architecture.md`,
"Layers"); where a lower module must reach an entry point above it, it calls the
slot of the same name here instead of importing the module that defines it:

=================== ======================================== =========================
slot                what it does                             filled by (at its import)
=================== ======================================== =========================
`call`              call any symbolic value                  `semantics.objects`
`to_list`           the items of any iterable value          `semantics.iteration`
`inline_call`       run a Python function's bytecode inline  `interp.interpreter`
`resume_generator`  run a generator frame to its next yield  `interp.interpreter`
`run_class_body`    run a class body, return its namespace   `interp.interpreter`
=================== ======================================== =========================

Callers read the slot at call time (``dispatch.call(tx, ...)``: one module
attribute load, as cheap as the ``objects.call`` it replaces), never with
``from .dispatch import call``, which would bind the unfilled placeholder.
A slot still unfilled raises: its owner was never imported (the interpreter
imports all of them before it runs a frame).
"""

from __future__ import annotations


def _unfilled(name: str):
    def slot(*args, **kwargs):
        raise RuntimeError(
            f"semantics.dispatch.{name} is not filled in: import its owner "
            "module (see the table in semantics/dispatch.py) first"
        )

    return slot


call = _unfilled("call")  # (tx, fn, args, kwargs) -> Value
to_list = _unfilled("to_list")  # (tx, value) -> list[Value]
inline_call = _unfilled("inline_call")  # (tx, fn value, args, kwargs) -> Value
resume_generator = _unfilled("resume_generator")  # (tx, GeneratorV, sent) -> Value
run_class_body = _unfilled("run_class_body")  # (tx, body fn value) -> (namespace dict, returned)
