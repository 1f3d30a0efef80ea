"""Reduction code for the kernel writer (a mixin of `codegen._Writer`).

Persistent reductions mask the row and reduce once.  Looped reductions keep a
``[XBLOCK, RBLOCK]`` accumulator per reduction (so the cross-lane reduction
happens once, after the loop) and run in phases (`phases`).  A sum of
``exp(x - max(x))`` over the same row is computed *online* in the max's loop
(running per-lane max and rescaled sum), so softmax, log_softmax and
logsumexp read a long row twice instead of three times.  A scan (cumsum)
is `tl.cumsum` over the row block; looped, it carries the running total of
the chunks before.
"""

from __future__ import annotations

from .ir import compute_dtype, identity, is_float
from .triton_ops import TL_DTYPE, literal


class ReductionEmitter:
    """Reduction emission; expects the `_Writer` attributes (arena, emit, value, ...)."""

    def reduce_final(self, kind: str, acc: str, dtype: str, idx: str | None = None) -> str:
        """Reduce `acc` ([XBLOCK, RBLOCK]) along the row; returns the [XBLOCK, 1] name.

        Only tl.sum / tl.max / tl.min are used (not tl.reduce with a combine
        function): they are what the interpreter runs fast, and nan propagation
        and first-index tie breaking are made explicit instead."""
        out = self.tmp()
        cd = compute_dtype(dtype)
        if kind == "sum":
            self.emit(f"{out} = tl.sum({acc}, 1)[:, None]")
        elif kind == "prod":
            self.emit(f"{out} = tl.reduce({acc}, 1, _prod)[:, None]")
        elif kind in ("max", "min"):
            if is_float(cd):
                self.emit(f"{out}_m = tl.{kind}({acc}, 1)[:, None]")
                self.emit(f"{out}_n = tl.max(({acc} != {acc}).to(tl.int8), 1)[:, None]")
                self.emit(f'{out} = tl.where({out}_n != 0, float("nan"), {out}_m)')
            else:
                self.emit(f"{out} = tl.{kind}({acc}, 1)[:, None]")
        elif kind in ("any", "all"):
            fn = "max" if kind == "any" else "min"
            self.emit(f"{out} = tl.{fn}({acc}.to(tl.int8), 1)[:, None] != 0")
        else:
            best = self.reduce_final(kind[3:], acc, dtype)
            hit = f"({acc} == {best})"
            if is_float(cd):
                hit = f"({hit} | (({acc} != {acc}) & ({best} != {best})))"
            self.emit(f"{out} = tl.min(tl.where({hit}, {idx}, 2147483647), 1)[:, None].to(tl.int64)")
        return out

    def masked_input(self, member, scope_value: str, body: int) -> str:
        kind = member.node.reduction
        dtype = self.arena[body].dtype
        v = self.broadcast(body, scope_value, frozenset("xr"), dtype)
        ident = literal(identity(kind, dtype), dtype)
        return f"tl.where(rmask, {v}, {ident})"

    def reduce_persistent(self, member):
        name = member.node.name
        body = self.red_body[name]
        masked = self.masked_input(member, self.value(body), body)
        tmp = self.tmp()
        self.emit(f"{tmp} = {masked}")
        idx = None
        if member.node.reduction in ("argmax", "argmin"):
            idx = self.tmp()
            self.emit(f"{idx} = tl.broadcast_to(rindex, [XBLOCK, RBLOCK])")
        self.red_names[name] = self.reduce_final(member.node.reduction, tmp, self.arena[body].dtype, idx)

    def reduce_loop_start(self, member) -> tuple:
        name = member.node.name
        kind = member.node.reduction
        dtype = self.arena[self.red_body[name]].dtype
        cd = compute_dtype(dtype)
        acc = f"acc{len(self.red_names) + len(self.accs)}"
        ident = literal(identity(kind, dtype), dtype)
        self.emit(f"{acc} = tl.full([XBLOCK, RBLOCK], {ident}, {TL_DTYPE[cd]})")
        if kind in ("argmax", "argmin"):
            self.emit(f"{acc}_i = tl.full([XBLOCK, RBLOCK], 2147483647, tl.int32)")
        self.accs[name] = acc
        return acc

    def reduce_loop_step(self, member):
        name = member.node.name
        kind = member.node.reduction
        body = self.red_body[name]
        acc = self.accs[name]
        masked = self.masked_input(member, self.value(body), body)
        cd = compute_dtype(self.arena[body].dtype)
        if kind == "sum":
            line = f"{acc} = {acc} + {masked}"
        elif kind == "prod":
            line = f"{acc} = {acc} * {masked}"
        elif kind in ("max", "min"):
            line = (
                f"{acc} = _{kind}_nan({acc}, {masked})"
                if is_float(cd)
                else f"{acc} = tl.{kind}imum({acc}, {masked})"
            )  # elementwise: no tl.reduce
        elif kind in ("any", "all"):
            line = f"{acc} = {acc} {'|' if kind == 'any' else '&'} {masked}"
        else:
            line = f"{acc}, {acc}_i = _{kind}({acc}, {acc}_i, {masked}, rindex)"
        self.emit(line, "r")

    def reduce_loop_end(self, member):
        name = member.node.name
        acc = self.accs.pop(name)
        dtype = self.arena[self.red_body[name]].dtype
        idx = f"{acc}_i" if member.node.reduction in ("argmax", "argmin") else None
        self.red_names[name] = self.reduce_final(member.node.reduction, acc, dtype, idx)

    # ---------------------------------------------------------------- online softmax
    def find_online_pairs(self) -> dict:
        """sum reductions whose body is exp(a - max(a)) for a max reduction of the
        same kernel over the same `a`: {sum name: max name}."""
        ar = self.arena
        maxes = {
            m.node.name: self.red_body[m.node.name]
            for m in self.plan.members
            if m.node.reduction == "max" and is_float(ar[self.red_body[m.node.name]].dtype)
        }
        pairs = {}
        for m in self.plan.members:
            if m.node.reduction != "sum":
                continue
            e = ar[self.red_body[m.node.name]]
            if e.op != "exp" or ar[e.args[0]].op != "sub":
                continue
            a, r = ar[e.args[0]].args
            rn = ar[r]
            if rn.op == "redval" and maxes.get(rn.attr) == a and ar[a].dtype == e.dtype:
                pairs[m.node.name] = rn.attr
        return pairs

    def online_loop_start(self, mx, sm):
        dtype = self.arena[self.red_body[mx.node.name]].dtype
        acc = f"acc{len(self.red_names) + len(self.accs)}"
        tl_t = TL_DTYPE[compute_dtype(dtype)]
        self.emit(f'{acc}_m = tl.full([XBLOCK, RBLOCK], float("-inf"), {tl_t})')
        self.emit(f"{acc}_s = tl.full([XBLOCK, RBLOCK], 0.0, {tl_t})")
        self.accs[mx.node.name] = acc

    def online_loop_step(self, mx, sm):
        acc = self.accs[mx.node.name]
        body = self.red_body[mx.node.name]
        v = self.masked_input(mx, self.value(body), body)  # masked lanes: -inf
        t = self.tmp()
        self.emit(f"{t}_v = {v}", "r")
        self.emit(f"{t}_m = _max_nan({acc}_m, {t}_v)", "r")
        # rescale the running sum to the new max; -inf values add nothing (no inf - inf)
        self.emit(f"{t}_c = tl.where({acc}_m == {t}_m, 1.0, tl.exp({acc}_m - {t}_m))", "r")
        self.emit(f'{t}_e = tl.where({t}_v == float("-inf"), 0.0, tl.exp({t}_v - {t}_m))', "r")
        self.emit(f"{acc}_s = {acc}_s * {t}_c + {t}_e", "r")
        self.emit(f"{acc}_m = {t}_m", "r")

    def online_loop_end(self, mx, sm):
        acc = self.accs.pop(mx.node.name)
        dtype = self.arena[self.red_body[mx.node.name]].dtype
        m = self.reduce_final("max", f"{acc}_m", dtype)
        out = self.tmp()
        self.emit(f'{out}_w = tl.where({acc}_m == float("-inf"), 0.0, tl.exp({acc}_m - {m}))')
        self.emit(f"{out}_s = tl.sum({acc}_s * {out}_w, 1)[:, None]")
        # a row of -inf only: sum(exp(x - max)) is exp(nan) summed, nan (as in eager)
        self.emit(f'{out} = tl.where({m} == float("-inf"), float("nan"), {out}_s)')
        self.red_names[mx.node.name] = m
        self.red_names[sm.node.name] = out

    def phases(self) -> dict:
        """Loop index of every member: a reduction runs in the first loop after
        the reductions it depends on; a stored row value likewise."""
        ar = self.arena
        ready: dict[int, int] = {}
        phase: dict[str, int] = {}

        def readiness(root):
            for i in ar.postorder([root]):
                if i in ready:
                    continue
                n = ar[i]
                if n.op == "redval":
                    ready[i] = phase[n.attr] + 1
                else:
                    ready[i] = max((ready[a] for a in n.args), default=0)
            return ready[root]

        for m in self.plan.members:
            name = m.node.name
            if name in self.online:
                phase[name] = phase[self.online[name]]  # computed with its max
            elif m.node.reduced:
                phase[name] = readiness(self.red_body[name])
            else:
                phase[name] = readiness(self.resolved[name])
        return phase

    def write_scan(self, member) -> list:
        """Lines of a kernel whose only member is an inclusive cumulative sum."""
        name = member.node.name
        body = self.red_body[name]
        dtype = self.arena[body].dtype
        xr = frozenset("xr")
        if self.kind == "persistent":
            out = self.tmp()
            v = self.broadcast(body, self.value(body), xr, dtype)
            self.emit(f"{out} = tl.cumsum(tl.where(rmask, {v}, 0), 1)")
            self.store_value(name, out)
            return self.pre
        carry = self.tmp()
        self.emit(f"{carry} = tl.zeros([XBLOCK, 1], {TL_DTYPE[compute_dtype(dtype)]})")
        v = self.broadcast(body, self.value(body), xr, dtype)
        chunk, out = self.tmp(), self.tmp()
        self.emit(f"{chunk} = tl.where(rmask, {v}, 0)", "r")
        self.emit(f"{out} = {carry} + tl.cumsum({chunk}, 1)", "r")
        self.store_value(name, out)
        self.emit(f"{carry} = {carry} + tl.sum({chunk}, 1)[:, None]", "r")
        return self.pre + self.loop_header() + self.body
