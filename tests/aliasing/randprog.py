"""Random straight-line programs of views, in-place writes and pure ops on tensors.

`generate(seed)` draws statements one at a time from the templates below and
keeps those that run in eager PyTorch on the evolving example values (so
shapes always fit and no write goes through an expanded view); the result is
Python source compiled into a function.  The arguments are two or three
tensors; with some seeds the third is a view of the first (inputs sharing
storage).  Programs are small and bounded (no exp, clamps here and there) so
results stay finite.  With ``extra=True`` the generator also draws `EXTRA`
writes no pure graph can express (``t_``, writes through ``unfold``,
``_foreach_*``...), which change layouts or write overlapping windows.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch")

# (template, minimum rank); {a} and {b} are variables, {i} {j} {k} small ints
VIEWS = [
    ("{a}[1:]", 1),
    ("{a}[:, {i}:{j}]", 2),
    ("{a}[{i}]", 2),
    ("{a}.t()", 2),
    ("{a}.transpose(0, 1)", 2),
    ("{a}.view(-1)", 1),
    ("{a}.reshape(-1)", 1),
    ("{a}.unsqueeze(0)", 1),
    ("{a}[None]", 1),
    ("{a}.diagonal()", 2),
    ("{a}.narrow(0, 0, 1)", 1),
    ("{a}.split(2)[{k}]", 1),
    ("{a}.unbind(0)[0]", 2),
    ("{a}.chunk(2, -1)[1]", 1),
    ("{a}.detach()", 1),
    ("{a}.expand(2, *{a}.shape)", 1),
    ("{a}.permute(1, 0)", 2),
    ("{a}.flatten()", 1),
    ("{a}[..., ::2]", 1),
    ("{a}.squeeze()", 1),
]
WRITES = [
    ("{a}.add_(1.5)", 1),
    ("{a}.mul_({b})", 1),
    ("{a}.clamp_(-2, 2)", 1),
    ("{a}.copy_({b})", 1),
    ("{a}.fill_(0.25)", 1),
    ("{a}.zero_()", 1),
    ("{a}[0] = 2.0", 1),
    ("{a}[..., 0] = {b}[..., 1]", 2),
    ("{a}[0] *= 3", 1),
    ("{a} += {b}", 1),
    ("{a}.masked_fill_({a} > 0.5, -2.0)", 1),
    ("{a}.sub_({b}, alpha=0.5)", 1),
    ("torch.add({b}, 1, out={a})", 1),
    ("{a}[{i}:{j}] = 0.0", 1),
    ("{a}.div_(2)", 1),
]
EXTRA = [
    ("{a}.t_()", 2),
    ("{a}.unsqueeze_(0)", 1),
    ("{a}.squeeze_()", 1),
    ("{a}.unfold(-1, 2, 1).mul_(1.5)", 1),
    ("torch._foreach_add_([{a}, {b}], 1.0)", 1),
    ("{a}.index_fill_(-1, torch.tensor([0]), 3.0)", 1),
    ("{a}.as_strided((2,), (1,)).add_(1)", 1),
    ("{a}.diagonal().as_strided((2,), (1,), 1).mul_(-1)", 2),
]
PURE = [
    ("{a} * 2 + 1", 1),
    ("{a}.tanh()", 1),
    ("{a}.softmax(-1)", 1),
    ("{a}.sum(0)", 2),
    ("{a} + {b}", 1),
    ("{a}.clone()", 1),
    ("({a} @ {a}.t()).clamp(-3, 3)", 2),
]


@dataclass(frozen=True)
class Program:
    seed: int
    params: tuple
    body: tuple
    view_input: str | None  # the third argument as a view expression of the first

    @property
    def source(self) -> str:
        lines = [f"def prog({', '.join(self.params)}):", f'    """Random program #{self.seed}."""']
        return "\n".join(lines + [f"    {s}" for s in self.body]) + "\n"

    def function(self):
        scope = {"torch": torch}
        exec(compile(self.source, f"<randprog {self.seed}>", "exec"), scope)
        return scope["prog"]

    def inputs(self, k: int) -> list:
        g = torch.Generator().manual_seed(self.seed * 100 + k)
        x = torch.randn(4, 6, generator=g)
        y = torch.randn(4, 6, generator=g)
        if self.view_input is None:
            return [x, y]
        return [x, y, eval(self.view_input, {"x": x})]


def generate(seed: int, n_statements: int = 12, extra: bool = False) -> Program:
    rng = random.Random(seed)
    view_input = rng.choice([None, None, "x[1:3]", "x.t()", "x[:, ::2]"])
    params = ("x", "y") if view_input is None else ("x", "y", "z")
    body = []
    for _ in range(200):
        if len(body) >= n_statements:
            break
        stmt, a, b = _draw(rng, params, body, extra)
        if _acceptable(
            seed,
            params,
            view_input,
            body,
            stmt,
            a,
            b,
            metadata=any(stmt == t.format(a=a, b=b) for t, _ in EXTRA),
        ):
            body.append(stmt)
    names = _tensor_names(seed, params, view_input, body)
    outs = rng.sample(names, min(3, len(names)))
    body.append(f"return {', '.join(outs)},")
    return Program(seed, params, tuple(body), view_input)


def _draw(rng, params, body, extra=False):
    env = _env(body, params)
    if extra:
        kind = rng.choices(("view", "write", "pure", "extra"), (4, 4, 2, 2))[0]
    else:
        kind = rng.choices(("view", "write", "pure"), (4, 4, 2))[0]
    table = {"view": VIEWS, "write": WRITES, "pure": PURE, "extra": EXTRA}[kind]
    template, _ = rng.choice(table)
    a, b = rng.choice(env), rng.choice(env)
    i = rng.randint(0, 2)
    text = template.format(a=a, b=b, i=i, j=i + rng.randint(1, 3), k=rng.randint(0, 1))
    if kind in ("write", "extra"):
        return text, a, (b if "{b}" in template else None)
    return f"v{len(body)} = {text}", None, None


def _env(body, params) -> list:
    names = list(params)
    for s in body:
        head = s.split(" = ", 1)[0]
        if head.startswith("v") and head[1:].isdigit():
            names.append(head)
    return names


def _execute(seed, params, view_input, body):
    args = Program(seed, params, (), view_input).inputs(0)
    env = dict(zip(params, args))
    env["torch"] = torch
    exec("\n".join(body) or "pass", env)
    return env


def _acceptable(seed, params, view_input, body, stmt, a, b, metadata=False) -> bool:
    """The statement runs, leaves every value finite and keeps every existing tensor's layout
    (unless it is a `metadata` write); a write reads no operand that partially overlaps its
    target (eager's result would then depend on its loop order: torch does not promise one)
    and its target has no two elements on one memory cell."""
    import warnings

    try:
        before = _execute(seed, params, view_input, body)
        if b is not None and _partial_overlap(before[a], before[b]):
            return False
        if metadata and b is not None and b != a and _same_storage(before[a], before[b]):
            return False  # (_foreach_add_ of two views of one storage: order-dependent)
        if a is not None and torch._debug_has_internal_overlap(before[a]) != 0:
            return False  # a fill through an expanded view: stays eager (tested apart)
        layouts = {k: _layout(v) for k, v in before.items() if isinstance(v, torch.Tensor)}
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # e.g. an out= tensor resized
            after = _execute(seed, params, view_input, body + [stmt])
    except Exception:  # noqa: BLE001 - any failure (warnings included) rejects the statement
        return False
    if not metadata and any(_layout(after[k]) != lay for k, lay in layouts.items()):
        return False  # an out= resize: a metadata write
    return all(torch.isfinite(v).all() for v in after.values() if isinstance(v, torch.Tensor))


def _layout(t):
    return (tuple(t.shape), t.stride(), t.storage_offset())


def _same_storage(t, u) -> bool:
    return t.untyped_storage().data_ptr() == u.untyped_storage().data_ptr()


def _partial_overlap(t, u) -> bool:
    return _same_storage(t, u) and _layout(t) != _layout(u)


def _tensor_names(seed, params, view_input, body) -> list:
    env = _execute(seed, params, view_input, body)
    return [n for n in _env(body, params) if isinstance(env.get(n), torch.Tensor)]
