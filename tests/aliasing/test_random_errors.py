"""Random view/in-place programs with an error fake tensors cannot foresee, inside a try.

Each program of `randprog` (some with the `EXTRA` writes no pure graph can
express: ``t_``, writes through ``unfold``, ``_foreach_add_``...) gets an
index that is out of range only at run time, placed at a random statement
inside a ``try``, with an ``except`` or a ``finally`` handler (sometimes a
``print`` in the try as well, a graph break).  Oracle: the plain function in
eager PyTorch on identical inputs, calls alternating good and bad indices:
the result or the exception (type and message), the printed text, and every
argument afterwards (values, shapes, strides) -- the state the handler saw.
"""

from __future__ import annotations

import contextlib
import io
import random
from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch")

import bcfront  # noqa: E402

from .harness import assert_same  # noqa: E402
from .randprog import Program, generate  # noqa: E402

FAILING = (
    "_e = x.reshape(-1)[idx]",
    "_e = y.reshape(-1)[idx].sum()",
    "_e = torch.nn.functional.embedding(idx, x.reshape(-1, 2))",
)
HANDLERS = ("except", "finally", "except_print")


@dataclass(frozen=True)
class ErrorProgram:
    prog: Program
    fail_at: int  # the failing statement goes before body[fail_at]
    fail: str
    handler: str

    @property
    def source(self) -> str:
        params = self.prog.params
        body = list(self.prog.body)
        body.insert(self.fail_at, self.fail)
        if self.handler == "except_print":
            body.insert(random.Random(self.prog.seed).randint(0, len(body) - 1), "print('mid')")
        lines = [f"def prog({', '.join(params)}, idx):", "    try:"]
        lines += [f"        {s}" for s in body]
        if self.handler == "finally":
            lines += [
                "    finally:",
                f"        print('finally', {', '.join(f'{p}.sum().item()' for p in params)})",
            ]
        else:
            lines += [
                "    except IndexError as e:",
                "        print('caught', e)",
                f"        return 'caught', {', '.join(params)}",
            ]
        return "\n".join(lines) + "\n"

    def function(self):
        scope = {"torch": torch}
        exec(compile(self.source, f"<randerr {self.prog.seed}>", "exec"), scope)
        return scope["prog"]

    def inputs(self, k: int, bad: bool) -> list:
        return self.prog.inputs(k) + [torch.tensor([1, 30 if bad else 2])]


def error_program(seed: int) -> ErrorProgram:
    prog = generate(seed, extra=seed % 2 == 1)
    rng = random.Random(seed * 7 + 1)
    return ErrorProgram(prog, rng.randint(0, len(prog.body) - 1), rng.choice(FAILING), rng.choice(HANDLERS))


def _call(fn, args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            outcome = ("return", fn(*args))
        except Exception as e:  # noqa: BLE001 - compared by type and message
            outcome = ("raise", type(e), str(e))
    return outcome, buf.getvalue()


def check(ep: ErrorProgram, backend: str) -> None:
    fn = ep.function()
    cf = bcfront.capture(fn, backend=backend)
    for k, bad in enumerate((False, True, False, True)):
        where = f"seed {ep.prog.seed}, call {k} ({'bad' if bad else 'good'} index)\n{ep.source}"
        args_e, args_c = ep.inputs(k, bad), ep.inputs(k, bad)
        (out_e, printed_e), (out_c, printed_c) = _call(fn, args_e), _call(cf, args_c)
        assert out_c[0] == out_e[0], f"{where}: {out_c} vs {out_e}"
        if out_e[0] == "raise":
            assert out_c[1:] == out_e[1:], where
        else:
            assert_same(out_c[1], out_e[1], f"{where}: result")
        assert printed_c == printed_e, where
        assert_same(args_c, args_e, f"{where}: arguments")


@pytest.mark.parametrize("seed", range(40))
def test_random_error_program_matches_eager(seed):
    check(error_program(seed), "eager")


@pytest.mark.parametrize("seed", range(12))
def test_random_error_program_matches_eager_fx(seed):
    check(error_program(seed), "fx")
