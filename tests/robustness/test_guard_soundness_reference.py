"""The guard-soundness cases through ``torch.compile(backend="eager")`` in place of bcfront:
the reference the suite is checked against (issue 25), slow-marked.  Every case table of the
``test_guard_soundness_*`` files runs under its own protocol (change-then-call, or a
sequence of states); a case where torch.compile itself is stale is a torch finding, listed
in `TORCH_FINDINGS` (strict xfail) with what it shows, not a bcfront bug.  The pure-Python
base cases run in `test_guard_soundness_more.test_reference_torch_compile_agrees`."""

from __future__ import annotations

import importlib

import pytest

from .helpers import HAS_TORCH

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not HAS_TORCH, reason="needs torch")]

# change-then-call protocol (`test_guard_soundness.Case`): module -> its case tables
CHANGE_TABLES = {
    "test_guard_soundness": ("TORCH_CASES",),
    "test_guard_soundness_more": ("TORCH_CASES",),
    "test_guard_soundness_classes": ("CASES", "TORCH_CASES"),
    "test_guard_soundness_isinstance": ("CASES",),
    "test_guard_soundness_values": ("PY_CASES",),
}
# sequence-of-states protocol (`state_sequences.Case`)
SEQUENCE_TABLES = (
    "test_guard_soundness_argument_identity",
    "test_guard_soundness_closures_globals",
    "test_guard_soundness_late_exceptions",
    "test_guard_soundness_module_state",
    "test_guard_soundness_symbolic_sizes",
    "test_guard_soundness_torch_state",
)
# What torch.compile(backend="eager") gets wrong on these cases (torch 2.13.0, measured
# 2026-12-04); bcfront passes every one of them.
HOOKS = "stale after a module hook is added, removed or replaced (Dynamo skips hook guards)"
WRAPPED = "raises TorchRuntimeError where eager raises RuntimeError/TypeError"
MODULE_ATTRS = "stale after an nn.Module class or instance attribute changes"
PROPERTY = "isinstance through a class property answers differently on the first call"
SYMBOL_MESSAGE = "the error message names a symbol (select(): index s77 ...)"
NEG_ZERO = "a float argument -0.0 gives the result of 0.0 (wrong sign)"
TORCH_FINDINGS: dict[str, str] = {  # "module:table:case" -> what torch.compile gets wrong
    "test_guard_soundness:TORCH_CASES:module_hook_added": HOOKS,
    "test_guard_soundness:TORCH_CASES:tensor_stride": WRAPPED,
    "test_guard_soundness:TORCH_CASES:tree_child_hook": HOOKS,
    "test_guard_soundness:TORCH_CASES:tree_child_hooks_dict_replaced": HOOKS,
    "test_guard_soundness:TORCH_CASES:tree_child_shadowed_in_instance_dict": MODULE_ATTRS,
    "test_guard_soundness:TORCH_CASES:tree_class_attribute_shadows_child": MODULE_ATTRS,
    "test_guard_soundness:TORCH_CASES:tree_class_forward_replaced": MODULE_ATTRS,
    "test_guard_soundness:TORCH_CASES:tree_global_hook": HOOKS,
    "test_guard_soundness_classes:TORCH_CASES:root_call_replaced": MODULE_ATTRS,
    "test_guard_soundness_isinstance:CASES:class_property_changes": PROPERTY,
    "test_guard_soundness_isinstance:CASES:class_property_to_self": PROPERTY,
    "test_guard_soundness_late_exceptions:CASES:exception_attribute_none_later": WRAPPED,
    "test_guard_soundness_late_exceptions:CASES:exception_shape_mismatch_later": WRAPPED,
    "test_guard_soundness_late_exceptions:CASES:exception_tensor_index_out_of_range": SYMBOL_MESSAGE,
    "test_guard_soundness_module_state:CASES:module_hook_always_call_added": HOOKS,
    "test_guard_soundness_module_state:CASES:module_hook_child_forward_added": HOOKS,
    "test_guard_soundness_module_state:CASES:module_hook_child_pre_added": HOOKS,
    "test_guard_soundness_module_state:CASES:module_hook_forward_added": HOOKS,
    "test_guard_soundness_module_state:CASES:module_hook_forward_removed": HOOKS,
    "test_guard_soundness_module_state:CASES:module_hook_on_module_called_by_function": HOOKS,
    "test_guard_soundness_module_state:CASES:module_hook_pre_added": HOOKS,
    "test_guard_soundness_module_state:CASES:module_hook_pre_in_place_returns_none": HOOKS,
    "test_guard_soundness_module_state:CASES:module_hook_pre_removed": HOOKS,
    "test_guard_soundness_module_state:CASES:module_hook_pre_with_kwargs_added": HOOKS,
    "test_guard_soundness_module_state:CASES:module_hook_that_raises_added": HOOKS,
    "test_guard_soundness_module_state:CASES:module_hook_with_side_effect_added": HOOKS,
    "test_guard_soundness_symbolic_sizes:CASES:dynamic_float_arg_sign_and_zero": NEG_ZERO,
    "test_guard_soundness_symbolic_sizes:CASES:dynamic_growing_buffer_view_needs_contiguity": WRAPPED,
    "test_guard_soundness_symbolic_sizes:CASES:dynamic_int_arg_view_then_invalid": WRAPPED,
    "test_guard_soundness_symbolic_sizes:CASES:dynamic_size_of_other_tensor_broadcast": WRAPPED,
}


def _module(name):
    return importlib.import_module(f"{__package__}.{name}")


def _params(pairs):
    out = []
    for key in pairs:
        marks = (pytest.mark.xfail(strict=True, reason=TORCH_FINDINGS[key]),) if key in TORCH_FINDINGS else ()
        out.append(pytest.param(key, marks=marks, id=key))
    return out


def _change_keys():
    return [
        f"{mod}:{table}:{case}"
        for mod, tables in CHANGE_TABLES.items()
        for table in tables
        for case in sorted(getattr(_module(mod), table, {}))
    ]


def _sequence_keys():
    return [f"{mod}:CASES:{case}" for mod in SEQUENCE_TABLES for case in sorted(_module(mod).CASES)]


def _aliasing_keys():
    mod = _module("test_guard_soundness_aliasing")
    return [
        f"test_guard_soundness_aliasing:CASES:{case}:{seq}"
        for case in sorted(mod.CASES)
        for seq in sorted(mod.SEQUENCES)
    ]


def _reference(fn):
    import torch

    torch._dynamo.reset()
    return torch.compile(fn, backend="eager")


@pytest.mark.parametrize("key", _params(_change_keys()) if HAS_TORCH else [])
def test_change_cases_agree_under_torch_compile(key):
    from .test_guard_soundness import _run_case

    mod, table, name = key.split(":")
    entry = getattr(_module(mod), table)[name]
    case = entry[0](*entry[1:]) if isinstance(entry, tuple) else entry()  # (maker, *args)
    _run_case(case, key, compile_fn=_reference)


@pytest.mark.parametrize("key", _params(_aliasing_keys()) if HAS_TORCH else [])
def test_aliasing_cases_agree_under_torch_compile(key):
    from .test_guard_soundness_aliasing import run_aliasing

    name, seq = key.split(":")[2:]
    run_aliasing(name, seq, compile_fn=_reference)


@pytest.mark.parametrize("key", _params(_sequence_keys()) if HAS_TORCH else [])
def test_sequence_cases_agree_under_torch_compile(key):
    from .state_sequences import run_case

    mod, _, name = key.split(":")
    run_case(key, _module(mod).CASES[name](), compile_fn=_reference)
