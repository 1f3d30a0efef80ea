"""A named corpus for the static break predictor: small files with hand-labelled breaks.

Each case is module source; a line that should be predicted as a break ends
with ``# break: <reason>``.  Every other line of a captured function must not
be predicted (at the default confidence threshold).  The cases are compiled,
never run, so they need no torch.
"""

from __future__ import annotations

CASES: dict[str, str] = {}


def case(name: str, source: str) -> None:
    CASES[name] = source


case(
    "annotated_branch",
    """
import torch
def f(x: torch.Tensor, n: int):
    if x.sum() > n:                 # break: data-dependent-branch
        return x
    if n > 3:
        return x * 2
    return x
""",
)

case(
    "torch_call_result",
    """
import torch
import bcfront
@bcfront.capture
def f(n: int):
    t = torch.ones(n)
    while t.max() < 10:             # break: data-dependent-branch
        t = t * 2
    return t
""",
)

case(
    "shape_dtype_none_len_are_static",
    """
import torch
def f(x: torch.Tensor, mask: torch.Tensor = None):
    if x.shape[0] > 2 and x.ndim == 2:
        x = x[1:]
    if mask is not None:
        x = x * mask
    if x.dtype == torch.float16 or x.is_cuda:
        x = x.float()
    if len(x) > 1 and x.size(0) > 1 and x.numel() > 0:
        x = x + 1
    return x
""",
)

case(
    "item_steers_flow",
    """
import torch
def f(x: torch.Tensor):
    v = x.max().item()              # break: data-dependent
    if v > 0.5:
        return x / v
    return x
""",
)

case(
    "int_of_tensor_as_loop_count",
    """
import torch
def f(x: torch.Tensor, k: torch.Tensor):
    for _ in range(int(k)):         # break: data-dependent
        x = x * 2
    return x
""",
)

case(
    "print_and_numpy",
    """
import numpy as np
import torch
def f(x: torch.Tensor):
    print("shape", x.shape)         # break: io
    y = np.asarray(x)               # break: numpy
    return torch.from_numpy(y)      # break: numpy-array
""",
)

case(
    "numpy_on_python_values_is_fine",
    """
import numpy as np
import torch
def f(x: torch.Tensor, n: int):
    scale = np.sqrt(n)
    return x * float(scale)
""",
)

case(
    "helper_called_with_tensor",
    """
import torch
import bcfront

def helper(t, threshold):
    if t.mean() > threshold:        # break: data-dependent-branch
        return t
    return -t

@bcfront.capture
def f(x):
    return helper(x * 2, 0.5)

f(torch.randn(3))
""",
)

case(
    "uncalled_helper_is_not_captured",
    """
import torch
import bcfront

def debug_dump(t):
    print(t)

@bcfront.capture
def f(x: torch.Tensor):
    return x + 1
""",
)

case(
    "method_and_self_attributes",
    """
import torch
from torch import nn

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.threshold = 0.5

    def forward(self, x: torch.Tensor):
        h = self.lin(x)
        if self.threshold > 0.1:
            h = h * 2
        if h.norm() > self.threshold:    # break: data-dependent-branch
            h = h / h.norm()
        return self.post(h)

    def post(self, h):
        if (h < 0).any():                # break: data-dependent-branch
            return h.abs()
        return h
""",
)

case(
    "tuples_and_enumerate",
    """
import torch
def f(xs: torch.Tensor, ws: list):
    a, b = xs.shape[0], xs
    for i, w in enumerate(ws):
        if i > 0:
            b = b @ w
    if a > 2:
        b = b + 1
    return b
""",
)

case(
    "tensor_truthiness_and_assert",
    """
import torch
def f(x: torch.Tensor):
    assert x.numel() > 0
    assert (x > -100).all()              # break: data-dependent-branch
    ok = x.any() and x.all()             # break: data-dependent-branch
    return x if ok else -x               # break: data-dependent-branch
""",
)

case(
    "logging_and_stdout",
    """
import logging
import sys
import torch
log = logging.getLogger(__name__)
def f(x: torch.Tensor):
    log.info("running")                  # Python code: any I/O breaks inside logging
    sys.stdout.write("hi\\n")            # break: io
    return x + 1
""",
)

case(
    "math_on_tensor_vs_int",
    """
import math
import torch
def f(x: torch.Tensor, d: int):
    s = math.sqrt(d)
    t = math.exp(x.sum())                # break: data-dependent
    return x / s
""",
)

case(
    "imports_inside_function",
    """
def f(x):
    import torch
    import torch.nn.functional as F
    y = F.relu(torch.as_tensor(x))
    if y.sum() > 0:                      # break: data-dependent-branch
        return y
    return -y
""",
)

case(
    "try_except_and_with",
    """
import torch
def f(x: torch.Tensor):
    with torch.no_grad():
        y = x * 2
    try:
        z = y / 3
    except RuntimeError:
        print("failed")                  # break: io
        z = y
    if z.max() > 1:                      # break: data-dependent-branch
        z = z.clamp(max=1)
    return z
""",
)


case(
    "formatting_a_tensor_reads_it",
    """
import torch
def f(x: torch.Tensor, n: int):
    a = f"{n} items"
    b = f"sum {x.sum():.3f}"            # break: data-dependent
    c = str(x)                          # break: data-dependent
    return x, a, b, c
""",
)

case(
    "registered_buffer",
    """
import torch
from torch import nn
class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(()))
        self.limit = 3
    def forward(self, x: torch.Tensor):
        if self.total > self.limit:     # break: data-dependent-branch
            return x
        return x + 1
""",
)

case(
    "unbound_tensor_methods",
    """
import torch
def f(x: torch.Tensor):
    y = torch.Tensor.relu(x)
    n = torch.Tensor.tolist(y)          # break: data-dependent
    return y, n
""",
)


def labels(source: str) -> dict[int, str]:
    out = {}
    for i, line in enumerate(source.splitlines(), 1):
        if "# break:" in line:
            out[i] = line.split("# break:")[1].strip()
    return out


case(
    "class_statement_in_function",
    """
import abc
import enum
import torch
class Top:
    class Nested:
        pass
def f(x: torch.Tensor):
    class Local:
        scale = 2
        def get(self):
            return self.scale
    class Meta(type):
        pass
    class WithMeta(metaclass=Meta):     # break: call-to-c-function
        pass
    class Abstract(abc.ABC):            # break: call-to-c-function
        pass
    class Colour(enum.Enum):            # break: call-to-c-function
        RED = 1
    ids = {id(x): x}
    return x * Local().get(), ids[id(x)]
""",
)

case(
    "sort_enum_cached_property",
    """
import enum
import functools
import torch
class Colour(enum.Enum):
    RED = 1
class Lazy:
    @functools.cached_property
    def size(self):
        return 3
def cmp(a, b):
    return a - b
def f(x: torch.Tensor, n: int):
    order = sorted([3, n, 1], key=functools.cmp_to_key(cmp))
    c = Colour(n)
    return x * Lazy().size * order[0], c.value
""",
)


case(
    "containers_in_function",
    """
import collections
import io
import torch
def f(x: torch.Tensor, xs: list):
    q = collections.deque(xs, maxlen=4)
    q.appendleft(0)
    d = collections.defaultdict(list)
    for v in q:
        d[v % 2].append(v)
    o = collections.OrderedDict(a=1)
    o.move_to_end("a")
    s = io.StringIO()
    print("n", len(q), file=s)
    print(s.getvalue())                 # break: io
    return x * len(d), s.getvalue()
""",
)
