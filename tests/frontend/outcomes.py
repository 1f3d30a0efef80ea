"""What a call did, stdout included, and its comparison with the plain call's (the oracle).

`quiet_outcome(fn, *args)` is ``(("ok", value) | ("raise", type, message), stdout)``;
`assert_same_outcome` compares two of them: the same printed text, the same kind, tensors
exactly equal (``assert_close`` with no tolerance), anything else by ``==``.
"""

from __future__ import annotations

import contextlib
import io
import sys


def quiet_outcome(fn, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            result = ("ok", fn(*args))
        except Exception as e:  # noqa: BLE001 - compared with the oracle's exception
            result = ("raise", type(e), str(e))
    return result, buf.getvalue()


def assert_same_outcome(got, want) -> None:
    (rg, og), (rw, ow) = got, want
    assert og == ow
    assert rg[0] == rw[0], (rg, rw)
    torch = sys.modules.get("torch")
    if rg[0] == "ok" and torch is not None and _holds_tensor(rw[1], torch.Tensor):
        torch.testing.assert_close(rg[1], rw[1], rtol=0, atol=0)  # nested containers too
    else:
        assert rg == rw


def _holds_tensor(value, tensor_type) -> bool:
    if isinstance(value, tensor_type):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_tensor(v, tensor_type) for v in value)
    if isinstance(value, dict):
        return any(_holds_tensor(v, tensor_type) for v in value.values())
    return False
