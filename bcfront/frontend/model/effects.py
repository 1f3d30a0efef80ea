"""The effect log: every write a captured region makes to the world outside it.

During the trace each write to an outside object — a list, dict or set that
came in (or is reachable from an input or a global), an attribute of an
object or ``nn.Module`` (buffers included), a global, a closure cell — goes
through `Tracer.mark_mutated`, which calls `note` here.  `note` appends an
`LoggedEffect` (kind, target as a source expression, source line, position in the
graph) to ``tx.effect_log`` through the journal, so an inlined call that is
rolled back takes its effects with it.  Each attribute or global write keeps the value
written, each write to an outside dict, list or set the `ItemChange`s it made, so that
`regions.region_errors.placed_writes` can make them at their place among the graph's
statements when a run-time error could see them.

The region replays the writes after the graph (`write_replay.WriteReplay.replay`:
the final contents of each written object, objects in first-write order,
which is what program order leaves behind).  `records` turns the log, plus
the graph's writes to input tensors (from the alias analysis), into the
`report.SideEffect` entries `bcfront.explain` lists, in program order.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from ... import report
from .values import DELETED, CellV, Const, DictV, ListV, ObjectV, SetV, is_unread

LOG = "effect_log"
DEFERRED_CALL = "deferred-call"  # the kind of a call made after the region, not a write


@dataclass(frozen=True, slots=True)
class LoggedEffect:
    kind: str  # setattr, delattr, buffer, global, del-global, nonlocal, list.append, ...
    target: str  # a source expression: L['self'].count, G['cache'], L['xs']
    filename: str | None
    lineno: int | None
    position: int  # graph nodes recorded before it (orders it among tensor writes)
    # an attribute or global write: (the ObjectV written, the name, the Value written or
    # DELETED), the write as of this point (`regions.region_errors.placed_writes`); a write
    # to an outside dict, list or set: (the container, None, its `ItemChange`s), or None
    # where no changes can say what it did (an order change alone); only while the trace
    # lives (the values hold the real objects)
    write: tuple | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ItemChange:
    """One change a write made to an outside container, as of that write: ``setitem``
    (dict: key, value), ``delitem`` (dict: key), ``slice`` (list: ``items[start:stop] =
    values``), ``add`` / ``discard`` (set: key).  Made again in that order, they take the
    container from its state before the write to its state after it."""

    op: str
    args: tuple


# -- recording ------------------------------------------------------------------------------------

_INSTRUCTION_KINDS = {
    "STORE_SUBSCR": "setitem",
    "DELETE_SUBSCR": "delitem",
    "BINARY_OP": "inplace-op",
    "STORE_SLICE": "setitem",
    "DELETE_SLICE": "delitem",
}


def note(tx, value) -> None:
    """Log the write that just changed `value` (called by `Tracer.mark_mutated`)."""
    loc = tx.loc()
    filename, lineno = (loc.filename, loc.lineno) if loc is not None else (None, None)
    pos = len(tx.graph.body)
    new = [
        LoggedEffect(kind, target, filename, lineno, pos, *write)
        for kind, target, *write in _describe(tx, value)
    ]
    if new:
        if not hasattr(tx, LOG):
            setattr(tx, LOG, ())
        tx.set(tx, LOG, getattr(tx, LOG) + tuple(new))


def _describe(tx, value) -> list[tuple]:
    described = getattr(value, "describe_effect", None)
    if described is not None:  # a value that logs itself (`deferred_calls.CallLogV`), or
        effect = described()  # None: the trace's own bookkeeping, no write to the world
        return [effect] if effect is not None else []
    if isinstance(value, CellV):
        return [("nonlocal", f"C[{value.name!r}]")]
    if isinstance(value, ObjectV):
        return _attribute_writes(tx, value)
    if isinstance(value, (ListV, DictV, SetV)):
        target = value.source.readable() if value.source is not None else "?"
        changes = _item_changes(tx, value) if value.source is not None else None
        write = [(value, None, changes)] if changes is not None else []
        return [(_container_kind(tx, value), target, *write)]
    return [("mutation", value.source.readable() if value.source is not None else "?")]


def _attribute_writes(tx, v: ObjectV) -> list[tuple]:
    """The attributes (or globals) whose overlay entry changed since the last note:
    (kind, target, (v, name, value))."""
    seen = _snapshots(tx).get(id(v), {})
    changed = [(k, x) for k, x in v.overlay.items() if seen.get(k, _MISSING) is not x]
    _snapshots(tx)[id(v)] = dict(v.overlay)
    if tx.globals_values.get(id(v.obj)) is v:
        return [("del-global" if x is DELETED else "global", f"G[{k!r}]", (v, k, x)) for k, x in changed]
    target = v.source.readable() if v.source is not None else f"<{type(v.obj).__name__}>"
    buffers = getattr(v.obj, "__dict__", {}).get("_buffers", {})
    out = []
    for k, x in changed:
        kind = "delattr" if x is DELETED else ("buffer" if k in buffers else "setattr")
        out.append((kind, f"{target}.{k}", (v, k, x)))
    return out


_MISSING = object()
_UNKNOWN = object()


@dataclass(frozen=True, slots=True)
class WritesNoted:
    """A dict read key by key's snapshot: how many of its logged writes (`DictV.writes`)
    the notes so far hold -- its state is not known, only what the trace wrote."""

    count: int


MAX_DIFFED = 1024  # items of a container whose writes are diffed (`_item_changes`)


def _item_changes(tx, v) -> tuple | None:
    """What this write changed in outside container `v` since the last note (or since the
    trace first saw it): `ItemChange`s, each value as the trace holds it; None where they
    cannot say (a list whose items are unread, an order change alone, a container of more
    than `MAX_DIFFED` items).  The state before
    is the one the last note kept (journaled: a rolled-back call takes its state with it),
    or, at the first, the one the journal's first write of `v` replaced."""
    snaps = tx.__dict__.setdefault("_item_snapshots", None) or {}  # (the journal restores None)
    if isinstance(v, DictV) and v.unread is not None:  # read key by key: its logged writes
        snap = snaps.get(id(v), (None, None))[1]
        done = snap.count if type(snap) is WritesNoted else 0
        tx.set(tx, "_item_snapshots", {**snaps, id(v): (v, WritesNoted(len(v.writes)))})
        return tuple(
            ItemChange("delitem", (k,)) if x is DELETED else ItemChange("setitem", (k, x))
            for _, k, x in v.writes[done:]
        )
    size = len(v._items) if isinstance(v, ListV) else len(v.entries)
    if (isinstance(v, ListV) and v.unread is not None) or size > MAX_DIFFED:
        # (items unread: no state known now; a large one: not copied at each write)
        tx.set(tx, "_item_snapshots", {**snaps, id(v): (v, _UNKNOWN)})
        return None
    now = list(v._items) if isinstance(v, ListV) else dict(v.entries)
    before = snaps.get(id(v), (None, _MISSING))[1]
    if type(before) is WritesNoted:  # its writes logged while unread, then read whole: as at a first note
        before = _MISSING
    tx.set(tx, "_item_snapshots", {**snaps, id(v): (v, now)})  # (v: kept alive, ids unique)
    if before is _UNKNOWN:
        return None
    if before is _MISSING:
        # (every write notes: no note yet, so the first store of the items replaced the
        # state it had when the trace read it -- a list's read of its items comes before)
        attr = "items" if isinstance(v, ListV) else "entries"
        before = next((old for obj, a, old in tx.journal.log if obj is v and a == attr), _MISSING)
        if before is _MISSING:
            return None
    if isinstance(v, ListV):
        return _list_changes(list(before), list(now))
    return _keyed_changes(v, before, now)  # type: ignore[arg-type]


def _keyed_changes(v, before: dict, now: dict) -> tuple | None:
    """`_item_changes` of a dict or set: entries by hashable key."""
    if isinstance(v, SetV):
        gone = [ItemChange("discard", (k,)) for h, k in before.items() if h not in now]
        return tuple(gone + [ItemChange("add", (k,)) for h, k in now.items() if h not in before])
    kept = [h for h in before if h in now]
    if kept != [h for h in now if h in before]:
        return None  # an order change (move_to_end): no item changes make it
    out = [ItemChange("delitem", (before[h][0],)) for h in before if h not in now]
    for h, (k, x) in now.items():
        if h not in before or before[h][1] is not x:
            out.append(ItemChange("setitem", (k, x)))
    return tuple(out)


def _list_changes(before: list, now: list) -> tuple:
    """The one slice assignment that takes `before` to `now` (items compared by identity)."""
    start = 0
    while start < min(len(before), len(now)) and before[start] is now[start]:
        start += 1
    end = 0
    while end < min(len(before), len(now)) - start and before[-1 - end] is now[-1 - end]:
        end += 1
    if start == len(before) == len(now):
        return ()
    return (ItemChange("slice", (start, len(before) - end, tuple(now[start : len(now) - end]))),)


def _instance_dict(obj) -> dict:
    try:
        d = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return {}
    return d if type(d) is dict else {}


def unchanged_targets(tx) -> set[str]:
    """The effect-log targets of attributes whose value after the trace is the one the real
    object has now (set and reset within the trace: replaying them changes nothing)."""
    out = set()
    for v in tx.mutated:
        if not isinstance(v, ObjectV) or tx.globals_values.get(id(v.obj)) is v:
            continue
        target = v.source.readable() if v.source is not None else f"<{type(v.obj).__name__}>"
        for k, x in v.overlay.items():
            now = _instance_dict(v.obj).get(k, _MISSING)  # never a property's code
            if x is DELETED:
                same = now is _MISSING
            elif is_unread(x):  # (a value known at run time only: reading it would guard it)
                same = False
            else:
                same = isinstance(x, Const) and type(x.value) is type(now) and x.value == now
                same = same or (isinstance(x, ObjectV) and x.obj is now)
            if same:
                out.add(f"{target}.{k}")
    return out


def _snapshots(tx) -> dict:
    # Overlay snapshots only serve to name the attribute a write changed; they are not
    # journaled (a rolled-back write just makes the next diff a little larger).
    snaps = tx.__dict__.get("_effect_snapshots")
    if snaps is None:
        snaps = tx.__dict__["_effect_snapshots"] = {}
    return snaps


def _container_kind(tx, value) -> str:
    """``list.append`` when a method model made the write, else from the instruction."""
    kind = _calling_model()
    if kind is not None:
        return kind
    f = tx.frames[-1] if tx.frames else None
    op = f.cur.opname if f is not None and f.cur is not None else ""
    base = type(value).__name__.replace("V", "").lower()
    return f"{base}.{_INSTRUCTION_KINDS[op]}" if op in _INSTRUCTION_KINDS else f"{base}-mutation"


def _calling_model(limit: int = 8) -> str | None:
    # The container models (``containers._append`` for ``list.append``...) are plain
    # functions registered in `registry.MODELS`; the nearest one on the Python stack is
    # the method the user called.  Looking it up here keeps every model unaware of the log.
    codes = _model_codes()
    f = sys._getframe(2)
    for _ in range(limit):
        if f is None:
            return None
        name = codes.get(f.f_code)
        if name is not None:
            return name
        f = f.f_back
    return None


_CODES: dict = {}
# The semantics' model table (`semantics.registry.MODELS`), handed here when that
# module is imported: this layer is below the semantics and does not import them.
_MODELS: dict = {}


def use_models(table: dict) -> None:
    global _MODELS
    _MODELS = table


def _model_codes() -> dict:
    if not _CODES:
        for fn, m in _MODELS.items():
            code = getattr(m, "__code__", None)
            owner = getattr(fn, "__objclass__", None)
            if code is not None and owner in (list, dict, set):
                _CODES.setdefault(code, f"{owner.__name__}.{fn.__name__}")
    return _CODES


# -- reporting --------------------------------------------------------------------------------------


def records(tx, graph=None, compiled=None, example_inputs=None) -> list[report.SideEffect]:
    """Every side effect of the region, in program order, as report entries."""
    rows = [
        (e.position, 0, i, report.SideEffect(e.kind, e.target, e.filename, e.lineno))
        for i, e in enumerate(getattr(tx, LOG, ()))
    ]
    rows.extend(_tensor_writes(tx, graph, compiled, example_inputs))
    rows.sort(key=lambda r: r[:3])
    out = []
    for *_, s in rows:
        if s not in out:
            out.append(s)
    return out


def _tensor_writes(tx, graph, compiled, example_inputs) -> list:
    """Input tensors the graph writes (through any view), at their first write."""
    plan = getattr(compiled, "plan", None)
    if graph is None or not graph.body:
        return []
    try:
        obs = getattr(compiled, "observation", None) or (plan.observation if plan is not None else None)
        if obs is None:
            from ...ir.alias_facts import may_write, observe

            if not may_write(graph):  # spare the eager backend a second fake run
                return []
            obs = observe(graph, example_inputs)
        analysis = obs.analysis
    except Exception as e:  # noqa: BLE001 - the report degrades; the region itself is unaffected
        tx.notes.append(f"alias analysis for the effect log failed: {type(e).__name__}: {e}")
        return []
    by_name = {n.name: n for n in graph.nodes}
    out = []
    for c in analysis.written:
        first = by_name[c.written_by[0]]
        for name in c.inputs:
            src = by_name[name].target
            loc = first.loc
            out.append(
                (
                    graph.body.index(first),
                    1,
                    len(out),
                    report.SideEffect(
                        "input-mutation",
                        src.readable(),
                        loc.filename if loc else None,
                        loc.lineno if loc else None,
                    ),
                )
            )
    return out
