"""Abstract values of the static graph-break predictor, and what calls produce.

A value is one small frozen `V`: its *kind* says what the predictor knows
about it at run time — a tensor, a Python number read out of a tensor
(`scalar`, remembering which instruction read it), a module or function of a
known library (`mod`, with its dotted name), a function, class or instance
defined in the analysed file, or nothing in particular (`unknown`).  Values
only ever become *more* tainted when paths meet (`join`), so the dataflow
reaches a fixpoint.

What a call returns and whether it breaks the graph is decided by tables
keyed by dotted library names and tensor method names, not by code.
"""

from __future__ import annotations

from dataclasses import dataclass

TAINTED = ("tensor", "scalar")


@dataclass(frozen=True, slots=True)
class V:
    kind: str  # unknown/const/null/tensor/scalar/mod/tmethod/func/class/inst/self/...
    certain: bool = True  # False: only on some paths, or guessed (an unannotated parameter)
    name: str = ""  # dotted library name, qualname, class name or method name
    origin: int = -1  # for scalars: offset of the instruction that read the tensor
    value: object = None  # for small constants (import fromlists, keyword names)

    @property
    def tainted(self) -> bool:
        return self.kind in TAINTED


UNKNOWN = V("unknown")
NULL = V("null")  # the NULL / self slot of a call sequence
TENSOR = V("tensor")
MAYBE_TENSOR = V("tensor", certain=False)
NDARRAY = V("ndarray")  # a numpy array: the interpreter cannot put it in a graph


STRUCTURED = ("tuple", "enumerate", "zip")  # values that remember their items' values


def flat(v: V) -> V:
    """`v` with any structure forgotten: a tuple of tensors is a tensor-derived value."""
    if v.kind in STRUCTURED:
        return derived(v.value)
    return v


def join(a: V, b: V) -> V:
    """The least value describing both `a` and `b` (a may-analysis: taint wins)."""
    if a == b:
        return a
    if a.kind == b.kind and a.kind in STRUCTURED and len(a.value) == len(b.value):
        return V(a.kind, value=tuple(join(x, y) for x, y in zip(a.value, b.value)))
    a, b = flat(a), flat(b)
    if a == b:
        return a
    if a.kind == b.kind and a.name == b.name and a.origin == b.origin:
        return V(a.kind, a.certain and b.certain, a.name, a.origin)
    if a.tainted or b.tainted:
        # A tensor on one path is a tensor to worry about, but not for sure.
        t = a if (a.kind == "tensor" or not b.tainted) else b
        if b.kind == "tensor" and a.kind != "tensor":
            t = b
        return V(t.kind, False, "", t.origin)
    return UNKNOWN


def derived(inputs) -> V:
    """The result of plain computation (arithmetic, indexing, containers) on `inputs`."""
    inputs = [flat(v) for v in inputs]
    tensors = [v for v in inputs if v.kind == "tensor"]
    if tensors:
        return V("tensor", any(v.certain for v in tensors))
    scalars = [v for v in inputs if v.kind == "scalar"]
    if scalars:
        return V("scalar", scalars[0].certain, "", scalars[0].origin)
    if any(v.kind == "ndarray" for v in inputs):
        return NDARRAY
    return UNKNOWN


# -- tensors -------------------------------------------------------------------

# Tensor attributes that are metadata, fixed by guards, not data: using them is free.
TENSOR_META_ATTRS = frozenset(
    {
        "shape",
        "dtype",
        "device",
        "ndim",
        "is_cuda",
        "requires_grad",
        "layout",
        "is_leaf",
        "is_sparse",
        "is_quantized",
        "is_meta",
        "names",
        "itemsize",
        "nbytes",
    }
)
TENSOR_META_METHODS = frozenset(
    {
        "size",
        "dim",
        "numel",
        "stride",
        "element_size",
        "is_contiguous",
        "is_floating_point",
        "is_complex",
        "get_device",
        "nelement",
        "ndimension",
        "storage_offset",
        "type",
        "requires_grad_",
        "register_hook",
        "retain_grad",
    }
)
# Tensor methods that hand a tensor's data to Python: reason and the conversion's name.
TENSOR_TO_PYTHON = {
    "item": ".item()",
    "tolist": ".tolist()",
    "__bool__": "bool()",
    "__int__": "int()",
    "__float__": "float()",
    "__index__": "index()",
}
TENSOR_TO_NUMPY = frozenset({"numpy", "__array__"})

# -- builtins ------------------------------------------------------------------

BUILTIN_TO_PYTHON = frozenset({"int", "float", "bool", "complex"})
BUILTIN_IO = frozenset({"print", "input", "open", "breakpoint"})
BUILTIN_META = frozenset(
    {
        "len",
        "isinstance",
        "issubclass",
        "type",
        "hasattr",
        "getattr",
        "id",
        "callable",
        "hash",
        "range",
        "super",
        "object",
        "setattr",
        "vars",
        "dir",
    }
)
# Builtins that format a value as text: for a tensor, that reads its data.
BUILTIN_FORMAT = frozenset({"str", "repr", "format", "ascii"})
# Builtins that compare or test tensors elementwise in Python: bool() of a tensor inside.
BUILTIN_COMPARE = frozenset({"min", "max", "any", "all", "sorted"})
BUILTINS = (
    BUILTIN_TO_PYTHON
    | BUILTIN_IO
    | BUILTIN_META
    | BUILTIN_COMPARE
    | BUILTIN_FORMAT
    | frozenset(
        {
            "abs",
            "sum",
            "list",
            "tuple",
            "dict",
            "set",
            "zip",
            "enumerate",
            "map",
            "filter",
            "reversed",
            "iter",
            "next",
            "round",
            "divmod",
            "pow",
            "frozenset",
        }
    )
)
# nn.Module methods that bind an attribute name to a tensor.
REGISTER_METHODS = frozenset({"register_buffer", "register_parameter"})

# -- libraries -----------------------------------------------------------------

# torch functions whose result is not a tensor (or that are context managers).
TORCH_NON_TENSOR = frozenset(
    {
        "is_tensor",
        "is_floating_point",
        "is_complex",
        "is_grad_enabled",
        "no_grad",
        "enable_grad",
        "set_grad_enabled",
        "inference_mode",
        "manual_seed",
        "device",
        "dtype",
        "Size",
        "get_default_dtype",
        "set_default_dtype",
        "finfo",
        "iinfo",
        "numel",
        "is_inference_mode_enabled",
        "compile",
        "autocast",
        "get_rng_state",
    }
)
# Roots of dotted names whose calls the interpreter cannot see into.
NUMPY_ROOTS = frozenset({"numpy", "scipy", "pandas"})
# Modules of C functions that want Python numbers; with a tensor argument they
# call float()/int() on it.
SCALAR_C_ROOTS = frozenset({"math", "cmath", "statistics"})
# Dotted names (prefixes) that do I/O.
# (Logging is not here: it is Python code the interpreter can follow, and
# whatever I/O it does happens, and breaks, inside the logging package.)
IO_NAMES = (
    "sys.stdout.write",
    "sys.stderr.write",
    "os.write",
    "builtins.print",
    "builtins.open",
    "pprint.pprint",
    "json.dump",
    "pickle.dump",
)
# How capture is spelled: its result calls the function it wraps.
CAPTURE_NAMES = frozenset({"bcfront.capture", "bcfront.capture.capture", "capture"})


def is_io(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in IO_NAMES)


def torch_call_result(name: str) -> V:
    """What calling the torch callable `name` (dotted, e.g. "torch.nn.functional.relu") gives."""
    parts = name.split(".")
    last = parts[-1]
    if last in TORCH_NON_TENSOR:
        return UNKNOWN
    if len(parts) >= 3 and parts[1] == "nn" and last[:1].isupper():
        return V("tinst", name=name)  # torch.nn.Linear(...) builds a module
    return TENSOR


def root(name: str) -> str:
    return name.split(".", 1)[0]
