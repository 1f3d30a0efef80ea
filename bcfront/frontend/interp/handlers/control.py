"""Control flow: jumps, conditional branches, iteration.

A branch on a value whose truth is not known at capture time (a tensor) is a
graph break ("data-dependent-branch").  FOR_ITER on exhaustion follows dis's
model: 3.11 pops the iterator and jumps; 3.12+ "pushes" a dummy and jumps to
END_FOR, whose handler pops both (3.13: END_FOR and the POP_TOP after it).
"""

from __future__ import annotations

import sys

from ...model.values import NULL, Const, is_unread
from ...semantics import iteration, ops

PY = sys.version_info[:2]


def jump(tx, f, ins):
    f.jump(ins.jump_target)


def pop_jump_if_false(tx, f, ins):
    if not ops.truth(tx, f.pop()):
        f.jump(ins.jump_target)


def pop_jump_if_true(tx, f, ins):
    if ops.truth(tx, f.pop()):
        f.jump(ins.jump_target)


def _is_none(v) -> bool:
    # a runtime text is not None whatever its value (its type is guarded)
    return isinstance(v, Const) and not is_unread(v) and v.value is None


def pop_jump_if_none(tx, f, ins):
    if _is_none(f.pop()):
        f.jump(ins.jump_target)


def pop_jump_if_not_none(tx, f, ins):
    if not _is_none(f.pop()):
        f.jump(ins.jump_target)


def jump_if_true_or_pop(tx, f, ins):
    if ops.truth(tx, f.peek()):
        f.jump(ins.jump_target)
    else:
        f.pop()


def jump_if_false_or_pop(tx, f, ins):
    if not ops.truth(tx, f.peek()):
        f.jump(ins.jump_target)
    else:
        f.pop()


def to_bool(tx, f, ins):
    f.push(Const(ops.truth(tx, f.pop())))


def get_iter(tx, f, ins):
    f.push(iteration.get_iter(tx, f.pop()))


def for_iter(tx, f, ins):
    try:
        v = iteration.next_value(tx, f.peek())
    except iteration.Exhausted:
        if PY < (3, 12):
            f.pop()
        else:
            f.push(NULL)
        f.jump(ins.jump_target)
        return
    f.push(v)


HANDLERS = {
    "JUMP": jump,
    "POP_JUMP_IF_FALSE": pop_jump_if_false,
    "POP_JUMP_IF_TRUE": pop_jump_if_true,
    "POP_JUMP_IF_NONE": pop_jump_if_none,
    "POP_JUMP_IF_NOT_NONE": pop_jump_if_not_none,
    "JUMP_IF_TRUE_OR_POP": jump_if_true_or_pop,
    "JUMP_IF_FALSE_OR_POP": jump_if_false_or_pop,
    "TO_BOOL": to_bool,
    "GET_ITER": get_iter,
    "FOR_ITER": for_iter,
}
