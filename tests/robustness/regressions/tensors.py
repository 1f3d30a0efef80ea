"""Regressions of tensor programs: run-time op errors, tensor setitem and attributes,
graph errors rerun natively."""

from __future__ import annotations

from . import Regression

TENSOR = {
    "runtime-op-error-skips-finally": Regression(
        """
import torch

def f(t, u):
    try:
        t @ u
    finally:
        print('finally')
""",
        (
            ("torch.ones(2, 2, dtype=torch.float64)", "torch.ones(2, 2)"),
            ("torch.ones(2, 2)", "torch.ones(2, 2)"),
        ),
        "test_fuzz tensor program 20250063: matmul of float64 by float32 passes the meta kernel "
        "but raises in the real one; the error escaped the compiled region without running `finally`",
    ),
    "runtime-op-error-not-caught-by-except": Regression(
        """
import torch

def f(t, u):
    try:
        t @ u
    except RuntimeError as e:
        print('caught', e)
    return 1
""",
        (
            ("torch.ones(2, 2, dtype=torch.float64)", "torch.ones(2, 2)"),
            ("torch.ones(2, 2)", "torch.ones(2, 2)"),
        ),
        "shrunk by hand from test_fuzz tensor program 20250063: the same error is not caught by the "
        "user's `except RuntimeError`",
    ),
    "raise-in-loop-in-with-after-tensor-branch": Regression(
        """
import torch

def f(t):
    with torch.no_grad():
        for i in range(2):
            if t.sum() > 0:
                raise ValueError('a')
    return t
""",
        (("torch.ones(2)",), ("-torch.ones(2)",), ("torch.ones(3)",)),
        "tools/fuzz.py --seed 2 --mode tensor, program 2000132: after a data-dependent branch, an "
        "exception raised in a for loop inside a with block unwound a wrong stack: "
        "TypeError: 'range_iterator' object is not callable (the iterator taken for __exit__)",
    ),
    "torch-size-equals-tuple-is-false": Regression(
        """
import torch

def f(t):
    return t.shape == (2, 2), t.size() != (2, 2), (2, 2) == t.shape, t.shape in [(2, 2)]
""",
        (("torch.ones(2, 2)",), ("torch.ones(3, 2)",)),
        "hand probe of tensor idioms (session 3): `t.shape == (2, 2)` is False under capture "
        "(eager True); comparing with torch.Size or a list is right; no graph break",
    ),
    "tensor-setitem-called-as-a-method-is-lost": Regression(
        """
import torch

def f(t):
    t.__setitem__(0, 5.0)
    return t
""",
        (("torch.ones(2, 2)",),),
        "hand probe of tensor idioms (session 3): an explicit `t.__setitem__(0, 5.0)` call does "
        "not change the tensor (`t[0] = 5.0` does)",
    ),
    "native-rerun-after-a-failing-graph-chains-the-graph-error": Regression(
        """
import torch

def f(t):
    return t.long() // 0
""",
        (("torch.ones(2)",),),
        "hand probe of tensor errors (session 3), seen once differential.py compared exception "
        "chains: the error raised by the native rerun of a graph that failed carries the graph's "
        "own error as __context__ (traceback: 'During handling of the above exception, another "
        "exception occurred'); also `torch.tensor([[1, 2]]).pow(-1)`",
    ),
    "requires-grad-assignment-is-not-seen": Regression(
        """
import torch

def f(t):
    t.requires_grad = True
    return t.requires_grad, (t * 2).requires_grad
""",
        (("torch.ones(2)",),),
        "hand probe of tensor attributes (session 3): after `t.requires_grad = True` (or "
        "setattr) the function still sees requires_grad False, and ops on t record no autograd "
        "history; `t.requires_grad_()` is right",
    ),
    "python-attribute-stored-on-a-tensor-is-missing-after-break": Regression(
        """
import torch

def f(t):
    t.tag = 5
    return t.tag
""",
        (("torch.ones(2)",),),
        "hand probe of tensor attributes (session 3): reading back a Python attribute stored on a "
        "tensor breaks the graph, and the continuation raises AttributeError: 'Tensor' object has "
        "no attribute 'tag' (the store is replayed only afterwards)",
    ),
    "runtime-op-error-in-try-with-breaking-finally-is-swallowed": Regression(
        """
import torch

def f(t, u):
    x = u.long()
    try:
        x.mul_(1.5)
        u.sub_(u)
    finally:
        if t.sum() > -2:
            print('x')
    return u
""",
        (("torch.tensor([[0.0, 3.0]])", "torch.tensor([[-2.0, 0.0]])"),),
        "tools/fuzz.py --seed 44 --mode tensor --extra sets,opaque,dictiter,classattr,exc,loops, "
        "program tensorx-44000262 (107 statements, shrunk to 16, then by hand to 8): eager raises "
        "RuntimeError at x.mul_ (Float can't be cast to Long) and leaves u alone; captured raises "
        "nothing, prints 'x' and zeroes u (the write after the failing op happened)",
    ),
}
