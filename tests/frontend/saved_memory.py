"""The bytes autograd saves for backward during a call (`saved_bytes`): how the
activation-checkpointing tests (tests/frontend/test_activation_checkpoint.py,
tests/backends/test_triton_joint.py) measure recomputation.  Not a test module."""

from __future__ import annotations


def saved_bytes(fn, x, params, backward=False):
    """The result of ``fn(x)`` and the bytes of floating-point tensors autograd saved for
    backward during it: the activations, the parameters aside (a reference to one costs no
    memory), and the random states AOT autograd saves to redraw dropout's masks too (eager's
    checkpoint keeps its own outside autograd)."""
    import torch  # (this folder's torch-free tests never import this module)

    own = {p.untyped_storage().data_ptr() for p in params}
    total = [0]

    def pack(t):
        if t.is_floating_point() and t.untyped_storage().data_ptr() not in own:
            total[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(x)
        if backward:
            out.backward()
            out = out.detach()
    return out, total[0]
