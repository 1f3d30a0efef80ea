"""An optimizer step compiled with the joint graph's compiler (``joint_graph=True``, Inductor).

``opt.step()`` in a captured step is one barrier node that runs torch's own step eagerly
(`frontend/semantics/optim_models.py`).  For a compiling backend that is where the time
goes on a small model: AdamW's single-tensor loop is ~15 small ops per parameter, which
``torch.compile`` fuses.  `CompiledStep` stands in for that node when the compiler is
Inductor's ``compile_fx``: the update of one parameter group, written as tensor code over
``(lr, params, grads, state...)`` (`UPDATES`), traced with ``make_fx`` and handed to the
compiler, which fuses it and writes the parameters and the state back in place.

What it relies on, checked on every call (else it runs torch's own step, as before):

* the optimizer is ``SGD``, ``Adam`` or ``AdamW`` (exactly), every group in the plain
  configuration (`_plain`: no ``amsgrad``, ``maximize``, ``capturable``,
  ``differentiable``, ``fused``; ``nesterov`` and ``weight_decay`` as given);
* every parameter has a grad and its state exists: the first step (which creates the
  state) and any step where a grad is missing run torch's step;
* the learning rate is an input (a 0-d tensor made per call), so an LR schedule causes no
  recompile; the other hyperparameters, the number of parameters and their layouts key a
  small cache of compiled updates.

The arithmetic follows torch's single-tensor functions, with the step count kept as a
tensor (torch's ``capturable`` formulas); Inductor's fused kernels round differently from
eager's, as ``torch.compile``'s do.  No frontend imports.
"""

from __future__ import annotations

import torch

_PLAIN = {"amsgrad": False, "maximize": False, "capturable": False, "differentiable": False}


def _plain(group: dict) -> bool:
    return all(group.get(k, v) == v for k, v in _PLAIN.items()) and not group.get("fused")


def _adam(decoupled: bool):
    def update(lr, params, grads, exp_avgs, exp_avg_sqs, steps, *, beta1, beta2, eps, weight_decay):
        for p, g, m, v, s in zip(params, grads, exp_avgs, exp_avg_sqs, steps):
            s.add_(1)
            if weight_decay != 0:
                if decoupled:
                    p.mul_(1 - lr * weight_decay)
                else:
                    g = g.add(p, alpha=weight_decay)
            m.lerp_(g, 1 - beta1)
            v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
            bias1 = 1 - beta1**s
            bias2 = 1 - beta2**s
            denom = (v.sqrt() / bias2.sqrt()).add_(eps)
            p.sub_((lr / bias1) * m / denom)

    return update


def _sgd(lr, params, grads, bufs, *, momentum, dampening, nesterov, weight_decay):
    for p, g, b in zip(params, grads, bufs):
        if weight_decay != 0:
            g = g.add(p, alpha=weight_decay)
        if momentum != 0:
            b.mul_(momentum).add_(g, alpha=1 - dampening)
            g = g.add(b, alpha=momentum) if nesterov else b
        p.sub_(lr * g)


# optimizer class -> (update, state keys in order, hyperparameters read from the group)
UPDATES = {
    torch.optim.Adam: (_adam(False), ("exp_avg", "exp_avg_sq", "step"), ("eps", "weight_decay")),
    torch.optim.AdamW: (_adam(True), ("exp_avg", "exp_avg_sq", "step"), ("eps", "weight_decay")),
    torch.optim.SGD: (_sgd, ("momentum_buffer",), ("momentum", "dampening", "nesterov", "weight_decay")),
}


def _hyper(opt, group: dict) -> dict:
    _, _, names = UPDATES[type(opt)]
    out = {n: group[n] for n in names}
    if "betas" in group:
        out["beta1"], out["beta2"] = group["betas"]
    if type(opt) is torch.optim.Adam and group.get("decoupled_weight_decay"):
        return {}  # Adam(decoupled_weight_decay=True) is AdamW's update: not keyed apart here
    return out


def _layout(t) -> tuple:
    return (tuple(t.shape), t.stride(), t.dtype, t.device)


class CompiledStep:
    """Stands in for an ``OptimizerStep`` node (`step`): the compiled update when it applies,
    else the node itself (torch's step)."""

    def __init__(self, step, compiler) -> None:
        self.step, self.compiler = step, compiler
        self.cache: dict = {}  # key -> compiled flat update
        self.__name__ = self.__qualname__ = f"{step.__name__} (compiled)"
        self.compiled_calls = 0

    def __repr__(self) -> str:
        return f"<{self.__name__}>"

    def __call__(self, params: tuple) -> None:
        opt = self.step.ref() if hasattr(self.step, "ref") else None
        if opt is None or type(opt) not in UPDATES or (params and _is_fake(params[0])):
            return self.step(params)
        plan = self._plan(opt)
        if plan is None:
            return self.step(params)
        key, flat, hypers = plan
        tensors = [t for t in flat if t is not None]
        fn = next((f for check, f in self.cache.get(key, ()) if check(*tensors)), None)
        if fn is None:
            if sum(map(len, self.cache.values())) >= 8 or not _compilable(tensors):
                return self.step(params)  # layouts keep changing, or not plain dense tensors
            fn = self._compile(type(opt), hypers, flat)
            self.cache.setdefault(key, []).append((_checker(tensors), fn))
        lrs = iter(lrs_of(opt))
        with torch.no_grad():
            fn(*[t if t is not None else next(lrs) for t in flat])
        self.compiled_calls += 1
        if getattr(opt.step, "_wrapped_by_lr_sched", False):
            opt._opt_called = True  # what the LR scheduler's wrapper of ``step`` records
        return None

    def _plan(self, opt):
        """(cache key, flat inputs with None for each group's lr, hyperparameters per group),
        or None: torch's step.  Layouts are checked against each compiled update's checker."""
        _, keys, _ = UPDATES[type(opt)]
        flat: list = []
        hypers, key = [], [type(opt)]
        state = opt.state
        for group in opt.param_groups:
            if not _plain(group):
                return None
            h = _hyper(opt, group)
            if not h or not all(type(v) in (int, float, bool) for v in h.values()):
                return None  # Adam(decoupled_weight_decay=True), a tensor hyperparameter
            ps = group["params"]
            grads = [p.grad for p in ps]
            states = [state.get(p) for p in ps]
            # `is None` each: `None in grads` would call Tensor.__eq__ (~15 us a tensor)
            if any(g is None for g in grads) or not all(
                s and all(s.get(k) is not None for k in keys) for s in states
            ):
                return None  # the first step (it makes the state), or a parameter without a grad
            # the parameters detached (same storage): written in the compiled kernels, where
            # an input that requires grad would be written back by a copy_ after them
            flat += [None, *(p.detach() for p in ps), *grads, *(s[k] for k in keys for s in states)]
            hypers.append((len(ps), h))
            key.append((len(ps), tuple(sorted(h.items()))))
        return tuple(key), flat, hypers

    def _compile(self, cls, hypers, flat):
        from torch.fx.experimental.proxy_tensor import make_fx

        update, keys, _ = UPDATES[cls]
        width = 2 + len(keys)

        def flat_update(*args):
            i = 0
            for n, h in hypers:
                lr = args[i]
                cols = [list(args[i + 1 + j * n : i + 1 + (j + 1) * n]) for j in range(width)]
                update(lr, *cols, **h)
                i += 1 + width * n

        example = [t if t is not None else torch.tensor(0.0, dtype=torch.float64) for t in flat]
        with torch.no_grad():
            gm = make_fx(flat_update, tracing_mode="fake")(*example)
        return self.compiler(gm, example)


def lrs_of(opt) -> list:
    """Each group's learning rate as a 0-d float64 tensor: an input, not a constant."""
    return [torch.tensor(float(g["lr"]), dtype=torch.float64) for g in opt.param_groups]


def _compilable(tensors: list) -> bool:
    dense = (torch.Tensor, torch.nn.Parameter)
    return all(type(t) in dense and t.is_floating_point() and not t.is_sparse for t in tensors)


def _checker(tensors: list):
    """A check that tensors have the layouts of `tensors` (type, dtype, device, sizes,
    strides, requires_grad): torch's C++ TensorGuards, else the same in Python."""
    try:
        from torch._C._dynamo.guards import TensorGuards

        return TensorGuards(
            *tensors,
            dynamic_dims_sizes=[list(t.shape) for t in tensors],  # type: ignore[misc]
            dynamic_dims_strides=[list(t.stride()) for t in tensors],  # type: ignore[misc]
        ).check
    except Exception:  # noqa: BLE001 - a torch without it: compare in Python
        want = [(type(t), *_layout(t), t.requires_grad) for t in tensors]
        return lambda *ts: [(type(t), *_layout(t), t.requires_grad) for t in ts] == want


def _is_fake(t) -> bool:
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(t, FakeTensor)
