"""Import torchvision beside the CPU build of torch.

PyPI's torchvision wheels link the CUDA build of torch (``libtorch_cuda.so``), so
beside the local CPU torch 2.13.0 build their compiled ops (``nms``, ``roi_align``,
``deform_conv2d``, ...) cannot load, and ``import torchvision`` then fails in
``torchvision/_meta_registrations.py``, which registers a fake kernel for
``torchvision::nms`` whether or not the ops loaded ("operator torchvision::nms
does not exist").

`import_torchvision` declares the two op schemas that torchvision registers
fake kernels for unconditionally (``nms``, ``qnms``) when the compiled ops did
not load, then imports torchvision. The models, layers and transforms are pure
Python and work; calling one of the compiled ops raises torch's clear
"Could not run 'torchvision::nms' with arguments from the 'CPU' backend" error.
None of the models in the zoo uses them. With a torchvision that matches the
installed torch (a CUDA torch, or a CPU torchvision built from source) nothing
is declared and torchvision loads as usual.
"""

from __future__ import annotations

import importlib.util
import os

import torch

# The schemas as torchvision's own C++ (torchvision/csrc/ops/nms.cpp, qnms.cpp) declares them.
_SCHEMAS = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}
_library = None  # keeps the declaring Library alive for the process


def _compiled_ops_load() -> bool:
    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return False
    for folder in spec.submodule_search_locations:
        for name in os.listdir(folder):
            if name.startswith("_C.") and name.endswith((".so", ".pyd")):
                try:
                    torch.ops.load_library(os.path.join(folder, name))
                    return True
                except (OSError, RuntimeError):
                    return False
    return False


def import_torchvision():
    """Return the torchvision module, importable beside a CPU-only torch build."""
    global _library
    if not _compiled_ops_load() and _library is None:
        _library = torch.library.Library("torchvision", "FRAGMENT")
        for name, schema in _SCHEMAS.items():
            if not hasattr(torch.ops.torchvision, name):
                _library.define(schema)
    import torchvision

    return torchvision
