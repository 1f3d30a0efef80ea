"""The eager backend: the graph becomes straight-line torch calls in the region function.

No FX and no interpreter on the fast path: each node is one Python statement
calling the function (or Tensor method) the user called, in the original order,
so results, aliasing and RNG consumption are exactly eager's.  Nodes recorded
under a different grad/autocast state than the entry's run inside a ``with``
block restoring it.

Two rewrites, invisible outside the graph and made only where nothing requires
grad (autograd could have saved what they change):

* an elementwise op whose first operand is a temporary the graph made and uses
  nowhere after runs in place on it (``t6 = t3.add_(t5)`` for ``t3 + t5``),
  saving an allocation, and for ``masked_fill`` a copy.  The in-place kernel is
  the one the out-of-place op runs on its fresh output, so the bits are the same
  (`reusable` states the conditions);
* a chain of views of a temporary (``split``, ``[i]``, ``view``, ``transpose``...)
  becomes one ``as_strided`` per view the rest of the graph uses, with the sizes,
  strides and offset fake tensors computed, when that saves calls (`view_plan`).
  They rest on the temporary's own layout, checked once per call: a temporary laid
  out otherwise runs the original chain.
"""

from __future__ import annotations

import operator
import re

from ..ir.graph import INFIX, format_arg, is_identifier, iter_nodes, node_expr
from .checkpoints import outlined
from .compiled import CompiledGraph

# out-of-place op -> its in-place method (infix operators and Tensor methods) ...
_INPLACE_METHOD = {
    operator.add: "add_",
    operator.sub: "sub_",
    operator.mul: "mul_",
    operator.truediv: "div_",
    "add": "add_",
    "sub": "sub_",
    "mul": "mul_",
    "div": "div_",
    "masked_fill": "masked_fill_",
    "relu": "relu_",
}
# ... or in-place function (looked up lazily: this module imports without torch)
_INPLACE_FUNCS = (("torch._C._nn.gelu", "torch._C._nn.gelu_"), ("torch.relu", "torch.relu_"))


def emit_graph(
    graph,
    ns,
    lines: list[str],
    indent: str = "    ",
    folded=None,
    inplace=None,
    views=None,
    free=False,
    outlined=(),
) -> None:
    """`outlined`: the checkpointed regions (`checkpoints.outlined`) run through
    ``torch.utils.checkpoint.checkpoint`` (see `_emit_checkpointed`)."""
    start = len(lines)
    _emit_body(graph, ns, lines, indent, folded, inplace, views, outlined, free)
    if free:
        hidden = {n.name for o in outlined for n in o.nodes} - {n.name for o in outlined for n in o.outputs}
        _free_dead(graph, lines, start, hidden)


def _free_dead(graph, lines: list[str], start: int, hidden=frozenset()) -> None:
    """``del`` each temporary after the statement that last names it, as eager drops a
    tensor nothing refers to any more: a forward's activations autograd does not save are
    freed (and their memory reused, still in cache) before the next op, not kept to the
    end of the region.  Graph outputs stay; a name is found by its spelling, so a later
    mention anywhere (a folded view, a layout check) only keeps it longer."""
    temps = {n.name for n in graph.body if hasattr(n.meta, "shape")} - {n.name for n in graph.outputs}
    temps -= hidden
    last: dict[int, list[str]] = {}
    seen: dict[str, int] = {}
    for i in range(start, len(lines)):
        for name in _NAME.findall(lines[i]):
            if name in temps:
                seen[name] = i
    for name, i in seen.items():
        last.setdefault(i, []).append(name)
    for i in sorted(last, reverse=True):
        line = lines[i]
        if line.rstrip().endswith(":"):
            continue  # a block header: its body follows (names there are later uses)
        indent = line[: len(line) - len(line.lstrip())]
        lines.insert(i + 1, f"{indent}del {', '.join(sorted(last[i]))}")


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _emit_body(graph, ns, lines: list[str], indent: str, folded, inplace, views, outlined=(), free=False):
    const = ns.const
    folded = folded or {}
    inplace = inplace or {}
    views = views or ViewPlan()
    names = {n: ns.const(v, f"const_{n.name}") for n, v in folded.items()}
    name_of = (lambda n: names.get(n, n.name)) if names else None
    if views.mode:
        name_of = _inline_dropped(views, const, name_of)
    spell = _layout_speller(views, ns, lines, indent)
    checks: dict = {}
    current = None
    inner = indent
    starts = {o.nodes[0]: o for o in outlined}
    hidden = {n for o in outlined for n in o.nodes}
    for n in graph.body:
        if n not in starts and (n in hidden or n in names or views.mode.get(n) == "drop"):
            continue
        # (a checkpoint call runs in the state it was called in; its nodes bring their own)
        state = starts[n].region.state if n in starts else n.state
        if state != current:
            current = state
            if current is None:
                inner = indent
            else:
                lines.append(f"{indent}with {_state_cm(current, ns)}:")
                inner = indent + "    "
        if n in starts:
            _emit_checkpointed(starts[n], ns, lines, inner, folded, free)
            continue
        if views.mode.get(n) == "fold":
            root, (size, stride, offset) = views.root[n], views.layout[n]
            code = (
                f"{root.name}.as_strided({spell(size)}, {spell(stride)}, {spell(offset)}) if {checks[root]} "
                f"else {_node_code(n, const, name_of)}"
            )
        elif n in inplace:
            code = (
                f"{_inplace_code(n, inplace[n], const, name_of)} "
                f"if {name_of(n.args[0]) if name_of else n.args[0].name}.is_contiguous() "
                f"else {_node_code(n, const, name_of)}"
            )
        else:
            code = _node_code(n, const, name_of)
        lines.append(f"{inner}{n.name} = {code}")
        if n in views.roots:
            checks[n] = ns.fresh(f"{n.name}_layout")
            stride = tuple(n.meta.stride())
            same = f"{n.name}.stride() == {spell(stride)} and {n.name}.storage_offset() == 0"
            lines.append(f"{inner}{checks[n]} = {same}")


def _emit_checkpointed(o, ns, lines: list[str], indent: str, folded, free) -> None:
    """``outs = checkpoint(partial(fn, *closed), *given, use_reentrant=False, ...)``:
    autograd saves none of the region's activations, the backward runs `fn` again.  As in
    eager, checkpoint is given the tensors the user gave it (it saves those and forks
    their devices' random states); `fn` has the region's other inputs bound.  `fn` is a
    function of the region's nodes compiled apart (a folded node inside is the same
    constant there), not a statement of the region code: that code's own rewrites (error
    guard, timing, the Python writes placed among its statements) must not run again in
    the recomputation."""
    from functools import partial

    from .checkpoints import checkpoint_function

    folded = folded or {}
    name = ns.fresh("checkpointed")
    sub = o.subgraph(name, skip=folded)
    closed = o.closed_over(skip=folded)
    params, given, seen = [n.name for n in closed], [], set(closed)
    for n in o.region.given:
        if n in folded:
            given.append(ns.const(folded[n], f"const_{n.name}"))
        else:
            given.append(n.name)
        params.append(n.name if n not in seen and n not in folded else ns.fresh("unused"))
        seen.add(n)
    code = [f"def {name}({', '.join(params)}):"]
    emit_graph(sub, ns, code, "    ", folded, free=free)
    code.append(f"    return {format_arg(tuple(sub.outputs), ns.const)}")
    source = "\n".join(code) + "\n"
    scope = dict(ns.globals)  # (its constants are there: emitting the body put them in)
    exec(compile(source, f"bcfront:checkpointed {o.region.where}", "exec"), scope)  # noqa: S102
    fn = scope[name]
    fn.__bcfront_source__ = source
    target = ns.const(fn, name)
    if closed:
        target = f"{ns.const(partial, 'partial')}({target}, {', '.join(n.name for n in closed)})"
    args = [target, *given]
    args += [f"{k}={format_arg(v, ns.const)}" for k, v in o.region.kwargs.items()]
    call = f"{ns.const(checkpoint_function(), 'checkpoint')}({', '.join(args)})"
    if not sub.outputs:
        lines.append(f"{indent}{call}")
        return
    outs = ", ".join(n.name for n in sub.outputs)
    lines.append(f"{indent}{outs}{',' if len(sub.outputs) == 1 else ''} = {call}")


def _state_cm(state, ns) -> str:
    """A context manager expression entering `state` (grad mode alone: torch.set_grad_enabled)."""
    if not state.autocast and not state.inference:
        import torch

        return f"{ns.const(torch.set_grad_enabled, 'set_grad_enabled_cm')}({state.grad!r})"
    return f"{ns.const(state, 'state')}.context()"


def _node_code(n, const, name_of=None) -> str:
    if n.op in ("method", "getattr") and not is_identifier(n.target):
        raise ValueError(f"tensor attribute name {n.target!r} is not an identifier")
    return node_expr(n, const, name_of)


def _inplace_code(n, how, const, name_of=None) -> str:
    fa = lambda a: format_arg(a, const, name_of)  # noqa: E731
    args = ", ".join([fa(a) for a in n.args[1:]] + [f"{k}={fa(v)}" for k, v in n.kwargs.items()])
    if isinstance(how, str):
        return f"{fa(n.args[0])}.{how}({args})"
    first = ", ".join([fa(a) for a in n.args] + [f"{k}={fa(v)}" for k, v in n.kwargs.items()])
    return f"{const(how, how.__name__ + 'inplace')}({first})"


def _inplace_funcs() -> dict:
    import torch

    out = {}
    for src, dst in _INPLACE_FUNCS:
        try:
            objs = []
            for path in (src, dst):
                obj = torch
                for part in path.split(".")[1:]:
                    obj = getattr(obj, part)
                objs.append(obj)
            out[objs[0]] = objs[1]
        except AttributeError:  # another torch version: that rewrite is just not made
            continue
    return out


def reusable(graph, folded=()) -> dict:
    """Nodes that may run in place on their first operand -> the in-place method name or
    function.  The operand `a` of node `n` qualifies when

    * `n` is one of the elementwise ops above, out of place, outside autocast;
    * `a` is a body node (not an input, not a folded constant, not a graph output), made
      under the same grad/inference state, that no node after `n` uses and `n` uses once;
    * no other node's value shares `a`'s storage (no input, view or alias sees the write);
    * `a` and `n`'s result are contiguous, with the same shape, dtype and device, and
      neither requires grad, nor does any result computed from `a` (autograd saved
      nothing the write could change: ``w * a`` saves `a` for ``w``'s grad);
    * no dimension has size 1 or 0: there a layout has more than one set of strides, and
      fake tensors do not always pick the one the real kernel picks (``v + 0.5`` on a
      (2, 1) tensor with strides (1, 2) keeps them; the fake says (1, 1)).

    At run time the region writes in place only when `a` really is contiguous (else it
    runs the op as written): then the fresh result eager makes is contiguous too (`a` is
    its first operand and decides its layout), and so is the in-place one.
    """
    if not graph.body:  # (a pure-Python function: no torch import)
        return {}
    import torch

    from ..ir.alias_facts import storage_key, tensors_in

    funcs = _inplace_funcs()
    last_use: dict = {}
    for i, n in enumerate(graph.body):
        for a in iter_nodes((n.args, n.kwargs)):
            last_use[a] = i
    for o in graph.outputs:
        last_use[o] = len(graph.body)
    owners: dict = {}
    saved: set = set()  # operands of ops that record autograd: it may have saved them
    for n in graph.nodes:
        for t in tensors_in(n.meta):
            owners.setdefault(storage_key(t), set()).add(n)
        if any(t.requires_grad for t in tensors_in(n.meta)):
            saved.update(iter_nodes((n.args, n.kwargs)))
    body = set(graph.body)
    out = {}
    for i, n in enumerate(graph.body):
        if n.mutates or (n.state is not None and (n.state.autocast or n.state.inference)):
            continue
        how = None
        if n.op == "method":
            how = _INPLACE_METHOD.get(n.target)
        elif n.op == "call" and _hashable(n.target):
            if n.target in INFIX:
                how = _INPLACE_METHOD.get(n.target) if len(n.args) == 2 and not n.kwargs else None
            else:
                how = funcs.get(n.target)
        if how is None or not n.args or not isinstance(n.args[0], type(n)):
            continue
        a = n.args[0]
        # same ambient state: an inference tensor made inside inference_mode cannot be
        # written outside it
        if (
            a not in body
            or a in saved
            or a.state != n.state
            or a in folded
            or last_use.get(a) != i
            or sum(1 for x in iter_nodes((n.args, n.kwargs)) if x is a) != 1
        ):
            continue
        ta, tn = a.meta, n.meta
        if not (isinstance(ta, torch.Tensor) and isinstance(tn, torch.Tensor)):
            continue
        if storage_key(ta) is None or owners.get(storage_key(ta)) != {a}:
            continue
        if (
            ta.requires_grad
            or tn.requires_grad
            or ta.dtype != tn.dtype
            or ta.device != tn.device
            or ta.shape != tn.shape
            or any(d < 2 for d in ta.shape)
            or not ta.is_contiguous()
            or not tn.is_contiguous()
        ):
            continue
        out[n] = how
    return out


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def compile_graph(graph) -> CompiledGraph:
    """Straight-line code; input-independent subgraphs are computed once (`fold_constants`)."""
    from ..ir.passes import fold_constants

    folded = fold_constants(graph) if graph.body else {}
    inplace = _safe(reusable, graph, folded, {})
    views = _safe(view_plan, graph, folded, ViewPlan())
    notes: list[str] = []
    regions = outlined(graph, notes)
    if regions:  # (no rewrite touches a checkpointed node: its recomputation reads the same)
        hidden = {n for o in regions for n in o.nodes}
        inplace = {n: h for n, h in inplace.items() if n not in hidden and n.args[0] not in hidden}
        views = ViewPlan()
    out = None

    def emit(g, ns, lines, indent="    "):
        # only for the graph analysed, whose outputs are all its uses outside the body; a
        # functionalization plan wrapping this emit (`plan`) uses node names of its own
        if g is graph and getattr(out, "plan", None) is None:
            emit_graph(g, ns, lines, indent, folded, inplace, views, free=True, outlined=regions)
        else:
            emit_graph(g, ns, lines, indent, folded, outlined=outlined(g))

    out = CompiledGraph("eager", emit)
    out.notes.extend(notes)
    if folded:
        out.notes.append(f"{len(folded)} input-independent op(s) computed once at capture")
    return out


def _safe(analysis, graph, folded, nothing):
    try:
        return analysis(graph, folded)
    except Exception:  # noqa: BLE001 - metadata a fake tensor cannot give (no storage): no rewrite
        return nothing


# -- view chains -------------------------------------------------------------------------------

_VIEW_METHODS = frozenset(
    (
        "view",
        "transpose",
        "permute",
        "unsqueeze",
        "squeeze",
        "t",
        "narrow",
        "expand",
        "split",
        "chunk",
        "unbind",
        "select",
    )
)


class ViewPlan:
    """`mode[n]`: "fold" (made by as_strided from `root[n]` with `layout[n]`), "drop" (only
    folded views use it: not emitted), absent (emitted as is).  `roots`: temporaries whose
    layout is checked right after they are made."""

    def __init__(self):
        self.mode: dict = {}
        self.root: dict = {}
        self.layout: dict = {}
        self.roots: set = set()
        self.symbols: dict[str, str] = {}  # symbol -> its reading from an input (`input_symbols`)
        self.symbols_at = 0  # where emit_graph puts the lines reading them


def _is_view_node(n) -> bool:
    import operator as op

    from ..ir.alias_facts import storage_key, tensors_in

    if not n.args or not isinstance(n.args[0], type(n)) or n.mutates or n.state is not None:
        return False
    if any(hasattr(a.meta, "shape") for a in iter_nodes((n.args[1:], n.kwargs))):
        return False  # (a size node as an argument is fine: the fold reads the meta's layout)
    parent = n.args[0]
    if n.op == "method":
        ok = n.target in _VIEW_METHODS
    else:
        ok = (
            n.op == "call"
            and n.target is op.getitem
            and isinstance(parent.meta, tuple)
            and type(n.args[1]) is int
        )
    if not ok:
        return False
    ts = tensors_in(n.meta)
    keys = {storage_key(t) for t in ts + tensors_in(parent.meta)}
    return bool(ts) and all(not t.requires_grad for t in ts) and len(keys) == 1 and None not in keys


def _layout_symbols(t) -> set | None:
    """The names of the symbols a tensor's sizes, strides and offset use (empty: a constant
    layout); None for something that is not a tensor."""
    shape = getattr(t, "shape", None)
    if shape is None:
        return None
    out: set = set()
    for d in (*shape, *t.stride(), t.storage_offset()):
        if type(d) is not int:
            out |= {s.name for s in d.node.expr.free_symbols}
    return out


def input_symbols(graph) -> dict[str, str]:
    """Symbol name -> how the graph's code reads it from an input: ``L_x.size(1)``,
    ``L_x.stride(0)``, or an int input's own name (for symbols that are a plain size)."""
    out: dict[str, str] = {}
    for n in graph.inputs:
        meta = n.meta
        if type(meta).__name__ == "SymInt":
            parts = [(meta, n.name)]
        elif hasattr(meta, "shape"):
            parts = [(d, f"{n.name}.size({i})") for i, d in enumerate(meta.shape)]
            parts += [(d, f"{n.name}.stride({i})") for i, d in enumerate(meta.stride())]
        else:
            continue
        for d, text in parts:
            expr = getattr(getattr(d, "node", None), "expr", None)
            if expr is not None and getattr(expr, "is_Symbol", False):
                out.setdefault(expr.name, text)
    return out


def _layout_speller(views, ns, lines: list[str], indent: str):
    """Spell a layout (sizes, strides or an offset) as Python: a constant's repr, or for a
    symbolic one an expression over locals that read each symbol from the inputs once."""
    local: dict[str, str] = {}

    def spell(value) -> str:
        if type(value) is int:
            return repr(value)
        if isinstance(value, tuple):
            items = [spell(v) for v in value]
            return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
        import sympy  # type: ignore[import-untyped]
        from torch.utils._sympy.printers import PythonPrinter

        expr = value.node.expr
        rename = {}
        for s in expr.free_symbols:
            if s.name not in local:
                local[s.name] = ns.fresh(f"sym_{s.name}")
                lines.insert(views.symbols_at, f"{indent}{local[s.name]} = {views.symbols[s.name]}")
                views.symbols_at += 1
            rename[s] = sympy.Symbol(local[s.name])
        return f"({PythonPrinter().doprint(expr.xreplace(rename))})"

    views.symbols_at = len(lines)
    return spell


def view_plan(graph, folded=()) -> ViewPlan:
    """Fold chains of views of one temporary (a body node, not itself such a view, in the
    entry state, requiring no grad) into one as_strided per view used outside the chain.
    A view that is a graph output, or that an emitted view needs, stays as it is."""
    plan = ViewPlan()
    if not graph.body:
        return plan
    import torch

    users: dict = {}
    for n in graph.body:
        for a in iter_nodes((n.args, n.kwargs)):
            users.setdefault(a, []).append(n)
    outputs = set(graph.outputs)
    body = set(graph.body)
    cand = {}
    plan.symbols = input_symbols(graph)
    known = set(plan.symbols)

    def spellable(t) -> bool:
        used = _layout_symbols(t)
        return used is None or used <= known

    for n in graph.body:
        if n in folded or not _is_view_node(n) or not spellable(n.meta):
            continue
        parent = n.args[0]
        root = cand.get(parent)
        if root is None:
            if (
                parent not in body
                or parent in folded
                or parent.state is not None
                or not isinstance(parent.meta, torch.Tensor)
                or parent.meta.requires_grad
                or not spellable(parent.meta)
            ):
                continue
            root = parent
        cand[n] = root
    for n in reversed([n for n in graph.body if n in cand]):
        outside = n in outputs or any(u not in cand for u in users.get(n, ()))
        keep = n in outputs or any(plan.mode.get(u) is None for u in users.get(n, ()) if u in cand)
        if keep or (outside and not isinstance(n.meta, torch.Tensor)):
            continue  # emitted as is
        if outside:
            t = n.meta
            plan.mode[n] = "fold"
            plan.root[n] = cand[n]
            plan.layout[n] = (tuple(t.shape), tuple(t.stride()), t.storage_offset())
            plan.roots.add(cand[n])
        else:
            plan.mode[n] = "drop"
    for root in list(plan.roots):  # worth it only when it saves view calls
        family = [n for n, r in cand.items() if r is root]
        calls = sum(1 for n in family if n.op == "method")
        if sum(1 for n in family if plan.mode.get(n) == "fold") >= calls:
            plan.roots.discard(root)
            for n in family:
                plan.mode.pop(n, None)
    return plan


def _inline_dropped(views, const, name_of):
    """Spell a dropped view as its own expression (for the fallback of a folded one)."""

    def spell(n):
        if views.mode.get(n) == "drop":
            return f"({_node_code(n, const, spell)})"
        return name_of(n) if name_of is not None else n.name

    return spell
