"""Readable Triton source for one fused kernel (`KernelPlan` -> `KernelSource`).

Kernel shapes:

* ``pointwise``: 1-D blocks over the flattened space (``xindex``);
* ``tiled``: 2-D ``[YBLOCK, XBLOCK]`` tiles when some input is contiguous along
  a different dimension than the output (a transposed add), so that both
  sides are read and written in coalesced runs;
* ``persistent``: a reduction whose whole row fits one block (``rindex`` spans
  the row): everything is computed once, in registers;
* ``looped``: a reduction looping over ``RBLOCK`` chunks of the row.  Work is
  split into phases: loop ``p`` accumulates the reductions whose inputs only
  need results of earlier loops, and writes the outputs that become
  computable; each loop recomputes what it needs from memory.

Index arithmetic is printed from canonical `index.Affine` expressions, with
each floor-div / modulo atom named once (``x0 = xindex % 64``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from . import index as ix
from .codegen_reduce import ReductionEmitter
from .fuse import KernelPlan
from .ir import Arena, compute_dtype, numel
from .symsize import SizeExpr, floor_pow2
from .triton_ops import TL_DTYPE, helper_source, helpers_used, literal, render, render_cast

INT32_LIMIT = 2**31 - 1
INDEX_ASSERT = "bcfront: index out of bounds"  # runtime turns it into an IndexError


@dataclass(frozen=True, slots=True)
class KernelSource:
    name: str
    source: str  # a module: imports, helpers, one @triton.jit kernel
    args: tuple  # buffer names in signature order
    kind: str  # pointwise | tiled | persistent | looped
    numels: tuple  # (xnumel,) | (ynumel, xnumel) | (xnumel, rnumel)
    ops: tuple
    rblock: int = 0  # the fixed RBLOCK of a persistent reduction
    columns: bool = False  # a reduction whose data is contiguous along x, not r
    checked: bool = False  # holds index-range asserts: launch with debug on (runtime)
    int_args: tuple = ()  # values of the size parameters ``ks0..`` (lifted sizes), after `args`


def next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


class _Writer(ReductionEmitter):
    """Emits the body of one kernel."""

    def __init__(
        self,
        plan: KernelPlan,
        arena: Arena,
        layouts: dict,
        persistent_max: int,
        looped_rblock: int | None,
        lift_ints: bool = False,
    ):
        self.plan, self.arena, self.layouts = plan, arena, layouts
        self.lift_ints = lift_ints
        self.int_params: dict[int, str] = {}  # lifted value -> its parameter name
        self.params: dict[str, str] = {}
        self.loads_order: list[str] = []
        self.store_order: list[str] = []
        self.lines: list[str] = []
        self.memo: dict[int, str] = {}
        self.dims: dict[int, frozenset] = {}
        self.atoms: dict = {}
        self.counter = 0
        space = plan.space
        self.xpos = [j for j, (_, red) in enumerate(space) if not red]
        self.rpos = [j for j, (_, red) in enumerate(space) if red]
        self.xsizes = [space[j][0] for j in self.xpos]
        self.rsizes = [space[j][0] for j in self.rpos]
        self.xnumel, self.rnumel = numel(self.xsizes), numel(self.rsizes)
        self.persistent_max, self.looped_rblock = persistent_max, looped_rblock
        self.columns = False
        if plan.is_reduction:
            self.kind = "reduction"  # persistent or looped: decided in iteration_vars
        else:
            self.kind = "pointwise"
        self.ysizes: list = []
        self.resolved: dict[str, int] = {}
        self.red_body: dict[str, int] = {}
        self.checked = False

    # ---------------------------------------------------------------- setup
    def resolve(self):
        """Replace loads of in-kernel buffers by the producing values."""
        ar = self.arena
        for m in self.plan.members:

            def leaf(_, n, _res=self.resolved):
                if n.op == "load" and n.attr[0] in _res:
                    return _res[n.attr[0]]
                return None

            body = ar.rewrite([m.body], leaf)[0]
            if m.node.scan:
                self.red_body[m.node.name] = self.resolved[m.node.name] = body
            elif m.node.reduced:
                self.red_body[m.node.name] = body
                self.resolved[m.node.name] = ar.add("redval", (), m.node.layout.dtype, m.node.name)
            else:
                self.resolved[m.node.name] = body

    def iteration_vars(self):
        """Map kernel variables k_j onto xindex / rindex (/ yindex when tiled)."""
        space = self.plan.space
        mapping = {}
        if self.kind == "pointwise":
            split = self._tile_split()
            if split:
                self.kind = "tiled"
                ypos, xpos = list(range(split)), list(range(split, len(space)))
                self.ysizes = [space[j][0] for j in ypos]
                self.xsizes = [space[j][0] for j in xpos]
                self.xpos = xpos
                self.xnumel = numel(self.xsizes)
                self.ynumel = numel(self.ysizes)
                rng = {"yindex": self.ynumel, "xindex": self.xnumel}
                for j, e in zip(ypos, ix.unravel(ix.var("yindex"), self.ysizes, rng)):
                    mapping[f"k{j}"] = e
            else:
                rng = {"xindex": self.xnumel}
        else:
            rng = {"xindex": self.xnumel, "rindex": self.rnumel}
        for j, e in zip(self.xpos, ix.unravel(ix.var("xindex"), self.xsizes, rng)):
            mapping[f"k{j}"] = e
        for j, e in zip(self.rpos, ix.unravel(ix.var("rindex"), self.rsizes, rng)):
            mapping[f"k{j}"] = e
        self.rng = rng
        names = list(self.resolved)
        roots = [self.resolved[n] for n in names] + [self.red_body[n] for n in self.red_body]
        new = self.arena.substitute(roots, mapping, rng)
        self.resolved = dict(zip(names, new[: len(names)]))
        self.red_body = dict(zip(self.red_body, new[len(names) :]))
        self.stores = {m.node.name: ix.substitute(m.store, mapping, rng) for m in self.plan.members}
        if self.kind == "reduction":
            # Rows contiguous along x (a column reduction) are strided along r: keep
            # them in registers only when short, so blocks can span many columns.
            self.columns = self._x_contiguous()
            limit = min(self.persistent_max, 256) if self.columns else self.persistent_max
            # next_pow2(rnumel) <= limit, said as a bound on rnumel (one guard when symbolic)
            persistent = self.rnumel <= floor_pow2(limit) and self.looped_rblock is None
            self.kind = "persistent" if persistent else "looped"

    def _x_contiguous(self) -> bool:
        """Does most of the data read vary fastest along x rather than along r?"""
        score = 0
        for n in self.arena.loads(list(self.resolved.values()) + list(self.red_body.values())):
            for atom, c in n.attr[1].terms:
                if c == 1 and isinstance(atom, ix.Var):
                    score += 1 if atom.name == "xindex" else -1 if atom.name == "rindex" else 0
        return score > 0

    def _tile_split(self) -> int:
        """Split point for 2-D tiling, or 0 when 1-D blocks read everything contiguously."""
        space = self.plan.space
        if len(space) < 2:
            return 0
        offsets = [m.store for m in self.plan.members if m.node.name in self.plan.stored]
        offsets += [n.attr[1] for n in self.arena.loads(self.resolved.values())]
        last = len(space) - 1
        split = 0
        for off in offsets:
            for atom, c in off.terms:
                if c == 1 and isinstance(atom, ix.Var) and atom.name.startswith("k"):
                    j = int(atom.name[1:])
                    if j != last:
                        split = max(split, j + 1)
        if (
            split == 0
            or numel([s for s, _ in space[:split]]) < 16
            or numel([s for s, _ in space[split:]]) < 16
        ):
            return 0
        return split

    # ---------------------------------------------------------------- naming
    def param(self, buf: str, store: bool) -> str:
        if buf not in self.params:
            if store:
                self.params[buf] = f"out_ptr{len(self.store_order)}"
                self.store_order.append(buf)
            else:
                self.params[buf] = f"in_ptr{len(self.loads_order)}"
                self.loads_order.append(buf)
        return self.params[buf]

    def tmp(self) -> str:
        self.counter += 1
        return f"tmp{self.counter - 1}"

    def emit(self, line: str, scope: str = "x"):
        if scope == "r" and self.kind == "looped":
            self.body.append("        " + line)
        else:
            self.pre.append("    " + line)

    # ---------------------------------------------------------------- index printing
    def num(self, v: int) -> str:
        """An integer of the index arithmetic (a size, stride, offset or numel): a literal,
        or with `lift_ints` a kernel parameter ``ks<k>`` passed at launch, so that the
        same source serves every size (see `generate`)."""
        if isinstance(v, SizeExpr):
            key = v  # symbolic (hashed by its expression): lifted whatever its value
        elif not self.lift_ints or -2 < v < 2:
            return str(v)
        else:
            key = v
        name = self.int_params.get(key)
        if name is None:
            name = self.int_params[key] = f"ks{len(self.int_params)}"
        return name

    def affine(self, e: ix.Affine) -> str:
        parts = []
        for atom, c in e.terms:
            name = self.atom(atom)
            parts.append(name if c == 1 else f"{self.num(c)} * {name}")
        if e.const or not parts:
            parts.append(self.num(e.const))
        return " + ".join(parts).replace("+ -", "- ")

    def atom(self, atom) -> str:
        if isinstance(atom, ix.Var):
            return atom.name
        if atom in self.atoms:
            return self.atoms[atom]
        names = ix.free_vars(ix.lift(atom))
        prefix = "r" if "rindex" in names else ("y" if "yindex" in names else "x")
        inner = self.affine(atom.arg)
        inner = inner if " " not in inner else f"({inner})"
        self.atom_count[prefix] = self.atom_count.get(prefix, -1) + 1
        name = f"{prefix}{self.atom_count[prefix]}"
        op = "//" if isinstance(atom, ix.Div) else "%"
        self.emit(f"{name} = {inner} {op} {self.num(atom.den)}", "r" if prefix == "r" else "x")
        self.atoms[atom] = name
        if prefix == "r":
            self.r_scoped.add(("atom", atom))
        return name

    @staticmethod
    def var_dims(names) -> frozenset:
        return frozenset(n[0] for n in names)  # 'x', 'r', 'y'

    # ---------------------------------------------------------------- values
    def node_dims(self, n) -> frozenset:
        if n.op == "const":
            return frozenset()
        if n.op == "redval":
            return frozenset("x")
        if n.op == "index":
            return self.var_dims(ix.free_vars(n.attr))
        if n.op == "load":
            v = ix.free_vars(n.attr[1])
            if not v:
                return frozenset()
            d = self.var_dims(v)
            return d | self.dims[n.args[0]] if n.args else d
        if n.op == "gather":
            return self.var_dims(ix.free_vars(n.attr[1])).union(*(self.dims[a] for a in n.args))
        return frozenset().union(*(self.dims[a] for a in n.args))

    def value(self, root: int) -> str:
        """Emit `root` (and what it needs) in the right scope; return its name."""
        ar = self.arena
        for i in ar.postorder([root]):
            if i in self.memo:
                continue
            n = ar[i]
            dims = self.dims[i] = self.node_dims(n)
            scope = "r" if "r" in dims else "x"
            args = [self.memo[a] for a in n.args]
            if n.op == "const":
                expr = None
                self.memo[i] = literal(n.attr, n.dtype)
            elif n.op == "redval":
                expr = None
                self.memo[i] = self.red_names[n.attr]
            elif n.op == "load":
                expr = self.load_expr(n, args)
            elif n.op == "gather":
                expr = self.gather_expr(n, args, dims)
            elif n.op == "checkidx":
                expr = self.checkidx_expr(n, args, dims, scope)
            elif n.op == "index":
                expr = self.affine(n.attr)
            elif n.op == "cast":
                expr = render_cast(args[0], ar[n.args[0]].dtype, n.dtype)
                if expr == args[0]:
                    self.memo[i], expr = args[0], None
            else:
                consts = {k for k, a in enumerate(n.args) if ar[a].op == "const"}
                expr = render(n.op, args, [ar[a].dtype for a in n.args], n.dtype, consts)
            if expr is not None:
                name = self.tmp()
                self.emit(f"{name} = {expr}", scope)
                self.memo[i] = name
            if scope == "r":
                self.r_scoped.add(i)
        return self.memo[root]

    @staticmethod
    def lane_mask(dims, extra: str | None = None) -> str:
        """The lanes of a value with `dims` that hold valid elements ('' when all do)."""
        masks = [f"{d}mask" for d in "yxr" if d in dims]
        if extra is not None:
            masks.append(extra)
        return " & ".join(masks)

    def load_expr(self, n, args) -> str:
        buf, off = n.attr
        v = ix.free_vars(off)
        # a single element (no variables) is always valid to read: no mask needed
        masks = self.lane_mask(self.var_dims(v), args[0] if n.args else None) if v else ""
        return self._load(buf, self.affine(off), masks)

    def _load(self, buf: str, off: str, masks: str) -> str:
        ptr = self.param(buf, store=False)
        if masks:
            expr = f"tl.load({ptr} + ({off}), {masks}, other=0)"
        else:
            expr = f"tl.load({ptr} + {off})"
        if self.layouts[buf].dtype in ("float16", "bfloat16"):
            expr += ".to(tl.float32)"
        return expr

    def gather_expr(self, n, args, dims) -> str:
        """A load at ``base + dyn``; `dyn` comes from `checkidx` values, in range."""
        buf, base = n.attr
        off = args[0] if base == ix.ZERO else f"{self.affine(base)} + {args[0]}"
        return self._load(buf, off, self.lane_mask(dims, args[1] if len(args) > 1 else None))

    def checkidx_expr(self, n, args, dims, scope: str) -> str:
        """Wrap a negative index (when asked), assert it is in range on every valid
        lane, and clamp it so that a kernel built without asserts still never
        reads outside the buffer."""
        size, wrap = n.attr
        size = self.num(size)
        v = args[0]
        if wrap:
            w = self.tmp()
            self.emit(f"{w} = tl.where({v} < 0, {v} + {size}, {v})", scope)
            v = w
        ok = self.tmp()
        self.emit(f"{ok} = (0 <= {v}) & ({v} < {size})", scope)
        valid = self.lane_mask(dims, args[1] if len(args) > 1 else None)
        cond = f"{ok} | ~({valid})" if valid else ok
        self.emit(f'tl.device_assert({cond}, "{INDEX_ASSERT}")', scope)
        self.checked = True
        return f"tl.where({ok}, {v}, 0)"

    def shape_of(self, dims) -> str:
        if self.kind == "pointwise":
            return "[XBLOCK]"
        if self.kind == "tiled":
            return "[YBLOCK, XBLOCK]"
        return "[XBLOCK, RBLOCK]" if "r" in dims else "[XBLOCK, 1]"

    def broadcast(self, root: int, value: str, want: frozenset, dtype: str) -> str:
        have = self.dims.get(root, frozenset())
        if have >= want:
            return value
        shape = self.shape_of(want)
        if self.arena[root].op == "const":
            return f"tl.full({shape}, {value}, {TL_DTYPE[compute_dtype(dtype)]})"
        return f"tl.broadcast_to({value}, {shape})"

    def store_dims(self, off) -> frozenset:
        if self.kind == "pointwise":
            return frozenset("x")
        if self.kind == "tiled":
            return frozenset("yx")
        return frozenset("xr") if "rindex" in ix.free_vars(off) else frozenset("x")

    def store(self, name: str, root: int):
        lay = self.layouts[name]
        dims = self.store_dims(self.stores[name])
        n = self.arena[root]
        if n.op == "cast" and n.dtype == lay.dtype and lay.dtype in ("float16", "bfloat16"):
            root = n.args[0]  # the store rounds anyway: skip the explicit round trip
        self.store_value(name, self.broadcast(root, self.value(root), dims, lay.dtype))

    def store_value(self, name: str, val: str):
        """Store the named value `val` (already of the stored block shape)."""
        lay = self.layouts[name]
        off = self.stores[name]
        dims = self.store_dims(off)
        scope = "r" if "r" in dims else "x"
        if lay.dtype in ("float16", "bfloat16"):
            val = f"{val}.to({TL_DTYPE[lay.dtype]})"
        off_s = self.affine(off)
        missing = [d for d in dims if d not in self.var_dims(ix.free_vars(off))]
        for d in sorted(missing):
            # make the pointer a block of the stored shape (e.g. a 0-d output)
            off_s += f" + 0 * {d}index"
        masks = " & ".join(f"{d}mask" for d in "yxr" if d in dims)
        ptr = self.param(name, store=True)
        self.emit(f"tl.store({ptr} + ({off_s}), {val}, {masks})", scope)

    # ---------------------------------------------------------------- bodies
    def write(self) -> list[str]:
        self.pre: list[str] = []
        self.body: list[str] = []
        self.red_names: dict[str, str] = {}
        self.accs: dict[str, str] = {}
        self.r_scoped: set = set()
        self.atom_count: dict[str, int] = {}
        self.online: dict[str, str] = {}
        self.header()
        stored = self.plan.stored
        members = self.plan.members
        if members[0].node.scan:
            return self.write_scan(members[0])  # a scan is its kernel's only member
        if self.kind in ("pointwise", "tiled", "persistent"):
            for m in members:
                if m.node.reduced:
                    self.reduce_persistent(m)
                if m.node.name in stored:
                    self.store(m.node.name, self.resolved[m.node.name])
            return self.pre
        self.online = self.find_online_pairs()
        partner = {mx: next(m for m in members if m.node.name == sm) for sm, mx in self.online.items()}
        phase = self.phases()
        # loops run the reductions and the row stores; kept-dim stores follow the last
        nloops = 1 + max(
            [
                phase[m.node.name]
                for m in members
                if m.node.reduced or "rindex" in ix.free_vars(self.stores[m.node.name])
            ],
            default=0,
        )
        lines: list[str] = []
        for p in range(nloops):
            self.begin_loop()
            for m, name in self._in_phase(members, phase, p):
                if name in partner:
                    self.online_loop_start(m, partner[name])
                    self.online_loop_step(m, partner[name])
                elif m.node.reduced:
                    self.reduce_loop_start(m)
                    self.reduce_loop_step(m)
                elif name in stored and "rindex" in ix.free_vars(self.stores[name]):
                    self.store(name, self.resolved[name])
            lines += self.pre + self.loop_header() + self.body
            self.pre, self.body = [], []
            for m, name in self._in_phase(members, phase, p):
                if name in partner:
                    self.online_loop_end(m, partner[name])
                elif m.node.reduced:
                    self.reduce_loop_end(m)
        for m in members:
            name = m.node.name
            if name in stored and (m.node.reduced or "rindex" not in ix.free_vars(self.stores[name])):
                self.store(name, self.resolved[name])
        return lines + self.pre

    def loop_header(self) -> list[str]:
        return [
            f"    for roffset in range(0, {self.num(self.rnumel)}, RBLOCK):",
            "        rindex = roffset + rbase",
            f"        rmask = rindex < {self.num(self.rnumel)}",
        ]

    def _in_phase(self, members, phase, p):
        """Members that loop `p` handles (an online sum goes with its max)."""
        for m in members:
            name = m.node.name
            if phase[name] == p and name not in self.online:
                yield m, name

    def begin_loop(self):
        for item in self.r_scoped:
            if isinstance(item, tuple):
                self.atoms.pop(item[1], None)
            else:
                self.memo.pop(item, None)
        self.r_scoped = set()
        self.atom_count["r"] = -1

    def header(self):
        need64 = self.needs_int64()
        pid = "tl.program_id(0).to(tl.int64)" if need64 else "tl.program_id(0)"
        if self.kind == "pointwise":
            self.emit(f"xoffset = {pid} * XBLOCK")
            self.emit("xindex = xoffset + tl.arange(0, XBLOCK)")
            self.emit(f"xmask = xindex < {self.num(self.xnumel)}")
        elif self.kind == "tiled":
            self.emit(f"pid = {pid}")
            self.emit(f"xtiles = ({self.num(self.xnumel)} + XBLOCK - 1) // XBLOCK")
            self.emit("yoffset = (pid // xtiles) * YBLOCK")
            self.emit("xoffset = (pid % xtiles) * XBLOCK")
            self.emit("yindex = yoffset + tl.arange(0, YBLOCK)[:, None]")
            self.emit("xindex = xoffset + tl.arange(0, XBLOCK)[None, :]")
            self.emit(f"ymask = yindex < {self.num(self.ynumel)}")
            self.emit(f"xmask = xindex < {self.num(self.xnumel)}")
        else:
            self.emit(f"xoffset = {pid} * XBLOCK")
            self.emit("xindex = xoffset + tl.arange(0, XBLOCK)[:, None]")
            self.emit(f"xmask = xindex < {self.num(self.xnumel)}")
            self.emit("rbase = tl.arange(0, RBLOCK)[None, :]")
            if self.kind == "persistent":
                self.emit("rindex = rbase")
                self.emit(f"rmask = rindex < {self.num(self.rnumel)}")

    def needs_int64(self) -> bool:
        total = self.xnumel * max(self.rnumel, 1) * max(getattr(self, "ynumel", 1), 1)
        if total > INT32_LIMIT:
            return True
        for buf in self.params:
            lay = self.layouts[buf]
            span = sum((s - 1) * abs(st) for s, st in zip(lay.shape, lay.stride) if s > 0)
            if span > INT32_LIMIT:
                return True
        for m in self.plan.members:
            lay = m.node.layout
            if sum((s - 1) * abs(st) for s, st in zip(lay.shape, lay.stride) if s > 0) > INT32_LIMIT:
                return True
        for n in self.arena.loads(list(self.resolved.values()) + list(self.red_body.values())):
            lay = self.layouts[n.attr[0]]
            if sum((s - 1) * abs(st) for s, st in zip(lay.shape, lay.stride) if s > 0) > INT32_LIMIT:
                return True
        return False


_KIND_TAG = {"pointwise": "poi", "tiled": "tile", "persistent": "per", "looped": "red"}


def _short_ops(ops) -> str:
    names = [re.sub(r"\W", "", o.split(".")[-1].strip("_")) for o in ops]
    names = [n for n in dict.fromkeys(names) if n][:4]
    return "_".join(names) or "copy"


def generate(
    plan: KernelPlan,
    arena: Arena,
    layouts: dict,
    *,
    interpret: bool,
    persistent_max: int = 4096,
    looped_rblock: int | None = None,
    lift_ints: bool = False,
) -> KernelSource:
    """Triton source for `plan`.

    With `lift_ints` (graphs with dynamic sizes) every integer of the index
    arithmetic except 0, 1 and -1 (sizes, strides, offsets, numels) is a kernel
    parameter whose value the launch passes (`KernelSource.int_args`): kernels
    for other sizes of the same graph then have the same source, hence share one
    compiled kernel (Triton is told not to specialize on those values)."""
    w = _Writer(plan, arena, layouts, persistent_max, looped_rblock, lift_ints)
    w.resolve()
    w.iteration_vars()
    body = w.write()
    args = tuple(w.loads_order) + tuple(w.store_order)
    params = [w.params[a] for a in args]
    int_names = list(w.int_params.values())
    consts = {"pointwise": ["XBLOCK"], "tiled": ["YBLOCK", "XBLOCK"]}.get(w.kind, ["XBLOCK", "RBLOCK"])
    sig = ", ".join(params + int_names + [f"{c}: tl.constexpr" for c in consts])
    body_text = "\n".join(body)
    digest = hashlib.sha256(f"{sig}\n{body_text}".encode()).hexdigest()[:10]
    name = f"bcf_{_KIND_TAG[w.kind]}_{_short_ops(plan.ops)}_{digest}"
    comment = f"# fused: {', '.join(plan.ops)}" if plan.ops else "# copy"
    jit = f"@triton.jit(do_not_specialize={int_names!r})" if int_names else "@triton.jit"
    kernel = f"{jit}\ndef {name}({sig}):\n    {comment}\n{body_text}\n"
    helpers = [helper_source(h, interpret) for h in helpers_used(kernel)]
    head = "import triton\nimport triton.language as tl\n"
    if not interpret and any("libdevice." in h for h in helpers):
        head += "from triton.language.extra import libdevice\n"
    source = head + "\n\n" + "".join(h + "\n\n" for h in helpers) + kernel
    if w.kind == "pointwise":
        numels = (w.xnumel,)
    elif w.kind == "tiled":
        numels = (w.ynumel, w.xnumel)
    else:
        numels = (w.xnumel, w.rnumel)
    if w.kind == "persistent":
        # a symbolic row: 0, and the launch takes next_pow2 of the row it is given
        rblock = 0 if isinstance(w.rnumel, SizeExpr) else next_pow2(w.rnumel)
    else:
        rblock = looped_rblock or 0
    return KernelSource(
        name, source, args, w.kind, numels, plan.ops, rblock, w.columns, w.checked, tuple(w.int_params)
    )
