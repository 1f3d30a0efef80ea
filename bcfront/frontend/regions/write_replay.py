"""The writes a region replays on the user's objects after its graph (`Rebuilder.replay`).

The trace changes outside objects symbolically; the region makes the same changes on the
real ones once its graph has run (attributes, globals, a list's or dict's or set's items, a
cell's contents, where an iterator stands), each new value read first (`Rebuilder.pinned`):
a write never sees another's result.  Writes whose values are constants may run among the
graph's statements instead (`const_writes`, `region_errors.placed_writes`).  A mixin of
`codegen.Rebuilder`, whose expressions (`expr`, `pinned_value`, `expr_source`) it spells
the values with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import UnsupportedError
from ...ir.graph import is_identifier
from ...reasons import BreakReason
from ..model.hash_iters import step_to
from ..model.namespace import Namespace
from ..model.sources import item_source
from ..model.values import (
    DELETED,
    CellV,
    DictV,
    HashIterV,
    ListV,
    ObjectV,
    RangeIterV,
    SeqIterV,
    SetV,
    Value,
)
from ..semantics.classes import dict_base, fill_dict_object

HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement (or type())


_FEW_ENDS = 4  # the most items added or taken at a list's end one call at a time


class WriteReplay:
    """`codegen.Rebuilder`'s statements replaying the trace's writes."""

    # what `codegen.Rebuilder` has, which these use
    ns: Namespace
    globals_values: dict
    positions: list[str]
    # a list's ends may change by list.append / list.pop calls: not where the graph's
    # statements may have made the same item changes already (`region_errors.placed_writes`),
    # after which the replay must leave the list as it is (a slice store does, an append not)
    ends_by_calls = False

    if TYPE_CHECKING:

        def emit(self, line: str) -> None: ...

        def pinned(self, text: str) -> str: ...

        def pinned_value(self, v: Value) -> str: ...

        def expr_source(self, v: ObjectV) -> str: ...

    def _appended(self, target: str, parts: list[str]) -> list[str]:
        """The values `parts` (spelled) appended to the exact list `target` (its type
        guarded): a few by ``list.append``, more by ``list.extend`` -- calls of built-in
        methods, which a step recipe makes without the region's frame (``target.extend``
        is an attribute read, which none makes)."""
        if len(parts) <= _FEW_ENDS:
            return [f"{self.ns.const(list.append)}({target}, {p})" for p in parts]
        return [f"{self.ns.const(list.extend)}({target}, [{', '.join(parts)}])"]

    def replay(self, mutated) -> list[str]:
        """Statements applying every outside mutation.

        Every object and value they name is read first, into a temporary: a replayed write
        (``o.a = 1``) must not change what a later one reads through a source path
        (``o.b = x`` with ``x`` read from ``o.a`` before the write)."""
        ns = self.ns
        pin, val = self.pinned, self.pinned_value
        # an iterator the trace ran out: run out before the writes (natively it let go of
        # its container when it stopped, so a later size change is no error -- and an earlier
        # one would have raised in the trace)
        pending: list[str] = []
        positions: list[str] = []
        run_outs: list[str] = []
        for v in mutated:
            if (
                isinstance(v, ObjectV)
                and id(v.obj) in self.globals_values
                and self.globals_values[id(v.obj)] is v
            ):
                g = ns.const(v.obj, "globals")
                for name, x in v.overlay.items():
                    if x is DELETED:
                        pending.append(f"{g}.pop({name!r}, None)")
                    else:
                        pending.append(f"{g}[{name!r}] = {val(x)}")
            elif isinstance(v, ObjectV):
                target = pin(self.expr_source(v))
                for name, x in v.overlay.items():
                    if x is DELETED:
                        pending.append(f"{ns.helper('delattr')}({target}, {name!r})")
                    elif is_identifier(name):
                        pending.append(f"{target}.{name} = {val(x)}")
                    else:
                        pending.append(f"{ns.helper('setattr')}({target}, {name!r}, {val(x)})")
            elif isinstance(v, ListV) and v.unread is not None:  # items unread: appended to
                target = pin(v.source.expr(ns))
                for before, fn, args, keywords, made in v.calls:  # C calls on them (`whole_lists`)
                    if made is not None:  # made first, by the region's early reads
                        continue
                    pending += self._appended(target, [val(x) for x in before])
                    spelled = "".join(f", {val(x)}" for x in args)
                    spelled += "".join(f", {k}={w!r}" for k, w in keywords)
                    pending.append(f"{ns.const(fn)}({target}{spelled})")
                pending += self._appended(target, [val(x) for x in v._items])
            elif isinstance(v, ListV):
                pending += self._list_writes(v)
            elif isinstance(v, DictV) and v.unread is not None:  # read key by key: its writes
                target = pin(v.source.expr(ns))
                for _, key, x in v.writes:
                    if x is DELETED:
                        pending.append(f"{ns.const(dict.__delitem__)}({target}, {val(key)})")
                    else:
                        pending.append(f"{ns.const(dict.__setitem__)}({target}, {val(key)}, {val(x)})")
            elif isinstance(v, DictV):
                body = ", ".join(f"({val(k)}, {val(x)})" for k, x in v.entries.values())
                tmp = ns.fresh("items")
                self.emit(f"{tmp} = [{body}]")
                target = pin(v.source.expr(ns))
                if dict_base(v.cls) is not None:  # not through the subclass's own methods
                    pending.append(f"{ns.const(fill_dict_object)}({target}, {tmp}, True)")
                else:
                    pending.append(f"{target}.clear(); {target}.update({tmp})")
            elif isinstance(v, SetV):
                items = ", ".join(val(x) for x in v.entries.values())
                tmp = ns.fresh("items")
                self.emit(f"{tmp} = [{items}]")
                target = pin(v.source.expr(ns))
                pending.append(f"{target}.clear(); {target}.update({tmp})")
            elif isinstance(v, CellV):
                cell = v.source.expr(ns) if v.source is not None else ns.const(v.real)
                pending.append(f"{cell}.cell_contents = {val(v.contents)}")
            elif isinstance(v, SeqIterV) and isinstance(v.seq, ListV) and v.seq.source is None:
                positions.append(f"{ns.const(_run_out, 'run_out')}({pin(v.source.expr(ns))})")  # exhausted
            elif isinstance(v, (SeqIterV, RangeIterV)):
                positions.append(f"{pin(v.source.expr(ns))}.__setstate__({v.index})")
            elif isinstance(v, HashIterV):
                (positions if v.container is not None else run_outs).append(
                    self._hash_position(v, pin(v.source.expr(ns)))
                )
            elif hasattr(v, "replay_ops"):  # writes emitted in order by the value itself
                v.replay_ops(self)
            else:
                raise UnsupportedError(
                    BreakReason.UNRECONSTRUCTABLE, f"cannot replay writes to {v.describe()}"
                )
        return run_outs + pending + positions + self.positions

    def _list_writes(self, v: ListV) -> list[str]:
        """Statements leaving the outside list `v` with its new items.  Where its length when
        read is known, only what changed is stored: an item still at its place stays the
        very object (natively ``xs.append(v)`` moves none), and a cached call stores a few
        items, not all of them (``xs[1] = 2; xs[3:] = [5]`` for a heappush)."""
        items, before = v.items, v.read_length
        parts = [self.pinned_value(x) for x in items]  # read before any replayed write
        target = self.pinned(v.source.expr(self.ns))
        if before is None:
            return [f"{target}[:] = [{', '.join(parts)}]"]
        out = [
            f"{target}[{i}] = {parts[i]}"
            for i in range(min(before, len(items)))
            if items[i].source != item_source(v.source, i)
        ]
        grown = len(items) - before
        if grown and self.ends_by_calls and v.python_type() is list and abs(grown) <= _FEW_ENDS:
            # a few items added or taken at the end: list.append / list.pop, as the C code the
            # trace stands for does it (a heappush, a heappop), not a new list stored in a slice
            if grown > 0:
                out += self._appended(target, parts[before:])
            else:
                out += [f"{self.ns.const(list.pop)}({target})"] * -grown
        elif grown:  # the new tail, or none past the new length
            out.append(f"{target}[{min(before, len(items))}:] = [{', '.join(parts[before:])}]")
        return out

    def const_writes(self, writes: list[tuple]) -> list[str]:
        """Statements making writes whose values are constants (`region_errors.placed_writes`),
        to run among the graph's statements: ``(ObjectV, name, Const)`` stores an attribute or
        a global, ``(container, None, changes)`` makes an outside dict's, list's or set's item
        changes (`effects.ItemChange`) on the container itself (a dict subclass's own methods
        are not called).  They emit nothing else, every target read through its own source."""
        ns, out = self.ns, []
        for holder, name, value in writes:
            if name is None:
                out.extend(self._item_changes(holder, value))
                continue
            text = repr(value.value) if _literal(value.value) else ns.const(value.value)
            target = holder.obj
            if self.globals_values.get(id(target)) is holder:
                out.append(f"{ns.const(target, 'globals')}[{name!r}] = {text}")
            else:
                out.append(f"{ns.helper('setattr')}({self.expr_source(holder)}, {name!r}, {text})")
        return out

    def _item_changes(self, v, changes) -> list[str]:
        ns = self.ns

        def text(x) -> str:
            return repr(x.value) if _literal(x.value) else ns.const(x.value)

        target = v.source.expr(ns)
        # the C type storing the items: the container's own methods, never a subclass's
        base = next(c for c in v.python_type().__mro__ if not c.__flags__ & HEAP_TYPE)
        out = []
        for c in changes:
            method = {"setitem": "__setitem__", "delitem": "pop", "slice": "__setitem__"}.get(c.op, c.op)
            call = f"{ns.const(getattr(base, method))}({target}, "
            if c.op == "slice":
                start, stop, items = c.args
                out.append(f"{call}{ns.helper('slice')}({start}, {stop}), [{', '.join(map(text, items))}])")
            elif c.op == "delitem":
                out.append(f"{call}{text(c.args[0])}, None)")
            else:
                out.append(f"{call}{', '.join(map(text, c.args))})")
        return out

    def _hash_position(self, v: HashIterV, target: str) -> str:
        """Step an outside `HashIterator` to where the trace left it; only over a container
        whose writes are not replayed (rebuilding it would move the real iterator's place)."""
        c = v.container
        if c is None:
            return f"{self.ns.const(_run_out, 'run_out')}({target})"
        if changed(c):
            raise UnsupportedError(
                BreakReason.UNRECONSTRUCTABLE, "an iterator over a dict or set written meanwhile"
            )
        return f"{self.ns.const(step_to, 'step_to')}({target}, {v.index})"


def _literal(x) -> bool:
    """A value whose repr is itself, of an exact builtin type."""
    finite = type(x) is float and x == x and abs(x) != float("inf")
    return x is None or type(x) in (bool, int, str) or finite


def _run_out(it) -> None:
    for _ in it:
        pass


def changed(v) -> bool:
    """`v` (a container or object value) was written by the trace."""
    return bool(getattr(v, "mutated", False))
