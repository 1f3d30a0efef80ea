"""Why a graph breaks: every graph-break reason, with its meaning.

A reason is the short category of a graph break (`report.GraphBreak.reason`,
`GraphBreakError.reason`, the JSON report's `reason`, and the static
predictor's `reason`).  Its value is the public string; members are `str`s,
so comparisons with plain strings and the JSON output are unchanged.
`docs/explain-schema.md` lists every member (a test keeps the two equal).

Layer 0: it imports only `described`, the enum base it shares with `GuardKind`.
"""

from __future__ import annotations

from .described import DescribedStrEnum


class BreakReason(DescribedStrEnum):
    """The category of a graph break; `.meaning` says what it means in one line."""

    @classmethod
    def _missing_(cls, value: object) -> None:
        raise ValueError(
            f"{value!r} is not a graph-break reason; add it to "
            f"bcfront.reasons.BreakReason (and docs/explain-schema.md)"
        )

    # -- tensor data reaching Python
    DATA_DEPENDENT = "data-dependent", "Python needs a value computed from tensor data"
    DATA_DEPENDENT_BRANCH = "data-dependent-branch", "a branch condition depends on tensor data"
    IO = "io", "I/O (print, input, open, a tensor's repr) runs natively"
    NUMPY = "numpy", "a tensor is passed to numpy (static predictor only)"
    NUMPY_ARRAY = "numpy-array", "work on a numpy array (static predictor only)"

    # -- torch state and modes
    AUTOCAST = "autocast", "capture under an enclosing autocast region, or reading autocast state"
    AUTOGRAD = "autograd", "a Tensor method that drives autograd (backward, hooks, retain_grad)"
    COLLECTIVE = (
        "collective",
        "a torch.distributed call the graph cannot hold (async work handle, process-group method)",
    )
    INFERENCE_MODE = "inference-mode", "an inference_mode region the trace cannot keep"
    TORCH_DISPATCH_MODE = "torch-dispatch-mode", "capture under a TorchDispatchMode"
    TORCH_FUNCTION_MODE = "torch-function-mode", "capture under a TorchFunctionMode"
    TORCH_GLOBAL_EFFECT = (
        "torch-global-effect",
        "a torch function that changes global state (seed, defaults, I/O)",
    )
    TORCH_ERROR = "torch-error", "the torch operation raises (on fake tensors, or would at run time)"
    FAKE_TENSOR = "fake-tensor", "an input that cannot be turned into a fake tensor"
    TENSOR_SUBCLASS = "tensor-subclass", "an input tensor of an unsupported subclass"
    TENSOR_WITHOUT_SOURCE = "tensor-without-source", "a tensor the compiled code could not fetch again"
    TENSOR_ATTRIBUTE_WRITE = "tensor-attribute-write", "setting an attribute of a tensor"
    UNSUPPORTED_TENSOR_ATTRIBUTE = (
        "unsupported-tensor-attribute",
        "reading a tensor attribute bcfront does not model",
    )
    UNSUPPORTED_TENSOR_METHOD = "unsupported-tensor-method", "a Tensor method with effects outside the graph"
    UNSUPPORTED_TORCH_CALL = (
        "unsupported-torch-call",
        "a torch call without tensor arguments that is not a known factory",
    )
    UNSUPPORTED_ARGUMENT = "unsupported-argument", "a torch call received an argument it cannot trace"

    # -- modules and classes
    MODULE_CONSTRUCTION = "module-construction", "creating an nn.Module inside captured code"
    MODULE_HOOKS = "module-hooks", "an nn.Module with hooks registered"
    MODULE_MUTATION = "module-mutation", "registering a new parameter, buffer or submodule"
    PARAMETER_CONSTRUCTION = "parameter-construction", "creating an nn.Parameter inside captured code"
    CLASS_MUTATION = "class-mutation", "setting or deleting an attribute of a class"

    # -- calls and functions
    CALL_TO_C_FUNCTION = "call-to-c-function", "a C function bcfront cannot see into runs natively"
    CALLEE_BREAK = "callee-break", "a called function breaks the graph; it is called, not inlined"
    RECURSION_LIMIT = "recursion-limit", "inlined calls nest too deep"
    NESTING_DEPTH = "nesting-depth", "a value nested too deep for bcfront's own recursion: it runs natively"
    COMPILER_DISABLED = "compiler-disabled", "a function under torch.compiler.disable runs natively, as asked"
    UNSUPPORTED_CALL = "unsupported-call", "calling something the interpreter does not model"
    UNSUPPORTED_CLOSURE = "unsupported-closure", "a closure variable or cell the interpreter cannot follow"
    UNSUPPORTED_FUNCTION = (
        "unsupported-function",
        "making a function (MAKE_FUNCTION) the interpreter cannot build",
    )
    UNSUPPORTED_SIGNATURE = "unsupported-signature", "a signature the generated code cannot bind"
    UNSUPPORTED_SUPER = "unsupported-super", "a form of super() the interpreter does not model"
    FRAME_INTROSPECTION = "frame-introspection", "reading frames, tracebacks or sys.exc_info()"
    IMPORT = "import", "an import that would run module code"

    # -- Python objects and operators
    UNSUPPORTED_ATTRIBUTE = "unsupported-attribute", "an attribute access the interpreter does not model"
    UNSUPPORTED_DICT = "unsupported-dict", "building a dict from keys or mappings the interpreter cannot see"
    UNSUPPORTED_EXCEPTION = "unsupported-exception", "an except clause whose class is not a known class"
    UNSUPPORTED_FORMAT = "unsupported-format", "formatting a value that is not a constant"
    UNSUPPORTED_HASH = "unsupported-hash", "hashing a value that is not a constant"
    UNSUPPORTED_ID = "unsupported-id", "id() of a value without a real object"
    UNSUPPORTED_IDENTITY = "unsupported-identity", "`is` between values whose identity is unknown"
    UNSUPPORTED_ISINSTANCE = (
        "unsupported-isinstance",
        "isinstance() with a class argument that is not constant",
    )
    UNSUPPORTED_LEN = "unsupported-len", "__len__ returned something that is not an int"
    UNSUPPORTED_MATCH = "unsupported-match", "a match pattern the interpreter does not model"
    UNSUPPORTED_OPERATOR = "unsupported-operator", "an operator on operands the interpreter does not model"
    UNSUPPORTED_SLICE = "unsupported-slice", "a slice with bounds that are not constants"
    UNSUPPORTED_SORT = "unsupported-sort", "sorting values that are not constants"
    UNSUPPORTED_SUBSCRIPT = "unsupported-subscript", "indexing an object the interpreter does not model"
    UNSUPPORTED_TRUTH = "unsupported-truth", "the truth value of an object the interpreter does not model"
    LARGE_CONTAINER = "large-container", "an input container too large to trace item by item"
    UNREAD_ITEMS = (
        "unread-items",
        "reading a list's items after a C call changed them unread (a list whose length varies)",
    )

    # -- iteration and generators
    UNBOUNDED_ITERATION = "unbounded-iteration", "iterating over too many items"
    UNSUPPORTED_ITERATOR = "unsupported-iterator", "an iterator the interpreter does not model"
    UNSUPPORTED_GENERATOR = "unsupported-generator", "a generator operation the interpreter does not model"
    GENERATOR_CLEANUP = (
        "generator-cleanup",
        "dropping a generator suspended inside try/with (its cleanup would run)",
    )
    ASYNC = "async", "a coroutine or async generator"

    # -- the trace itself
    UNSUPPORTED_OPCODE = "unsupported-opcode", "an instruction the interpreter has no handler for"
    MALFORMED_BYTECODE = "malformed-bytecode", "bytecode no CPython compiler writes"
    STEP_LIMIT = "step-limit", "the trace ran too many instructions"
    NO_CONTINUATION = "no-continuation", "the break instruction cannot be run natively and resumed"
    UNRECONSTRUCTABLE = "unreconstructable", "a value the generated code cannot rebuild at the break"
    WRITE_BEFORE_ERROR = (
        "write-before-error",
        "an operation that may raise after a write the region already made",
    )
    WRITE_AFTER_LOGGING = (
        "write-after-logging",
        "a write to what a logging call, made at the region's end, reads",
    )
