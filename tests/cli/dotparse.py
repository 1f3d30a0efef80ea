"""A strict parser for the subset of graphviz DOT that `bcfront-explain --dot` writes.

Written from the DOT grammar (graphviz.org/doc/info/lang.html), independently
of the code that writes DOT, so that tests can check the output's syntax and
read its structure back without pydot or graphviz installed.  Anything outside
the subset -- or malformed -- raises `DotError`.

    graph     : 'digraph' [ID] '{' stmt* '}'
    stmt      : ('node' | 'edge' | 'graph') attrs ';'?
              | ID '=' ID ';'?
              | 'subgraph' [ID] '{' stmt* '}'
              | ID ('->' ID)* [attrs] ';'?
    attrs     : '[' (ID '=' ID [',' | ';'])* ']'
    ID        : name | number | "quoted string with \\-escapes"
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|//[^\n]*)
  | (?P<arrow>->)
  | (?P<punct>[{}\[\];,=])
  | (?P<quoted>"(?:[^"\\]|\\.)*")
  | (?P<number>-?(?:\.\d+|\d+(?:\.\d*)?))
  | (?P<name>[A-Za-z_\x80-\uffff][A-Za-z_0-9\x80-\uffff]*)
""",
    re.X | re.S,
)

KEYWORDS = {"digraph", "graph", "subgraph", "node", "edge", "strict"}


class DotError(ValueError):
    pass


@dataclass
class Dot:
    name: str
    attrs: dict = field(default_factory=dict)  # graph attributes (top level)
    nodes: dict = field(default_factory=dict)  # node id -> attributes
    edges: list = field(default_factory=list)  # (src, dst, attributes)
    clusters: dict = field(default_factory=dict)  # subgraph name -> Cluster


@dataclass
class Cluster:
    name: str
    parent: str | None
    attrs: dict = field(default_factory=dict)
    nodes: list = field(default_factory=list)  # declared directly inside it


def _unquote(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: m.group(1) if m.group(1) in '"\\' else "\\" + m.group(1), s[1:-1])


def tokenize(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise DotError(f"unexpected character {text[pos]!r} at {pos}")
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            continue
        value = m.group()
        if kind == "quoted":
            out.append(("id", _unquote(value)))
        elif kind in ("number", "name"):
            out.append(("kw" if value in KEYWORDS else "id", value))
        else:
            out.append(("p", value))
    return out


def parse(text: str) -> Dot:
    toks = tokenize(text)
    i = 0

    def peek(k=0):
        return toks[i + k] if i + k < len(toks) else ("eof", "")

    def take(kind=None, value=None):
        nonlocal i
        tok = peek()
        if (kind and tok[0] != kind) or (value and tok[1] != value):
            raise DotError(f"expected {value or kind}, got {tok[1]!r} (token {i})")
        i += 1
        return tok[1]

    def attrs() -> dict:
        take("p", "[")
        out = {}
        while peek() != ("p", "]"):
            k = take("id")
            take("p", "=")
            out[k] = take("id")
            if peek() in (("p", ","), ("p", ";")):
                take()
        take("p", "]")
        return out

    take("kw", "digraph")
    dot = Dot(take("id") if peek()[0] == "id" else "")
    take("p", "{")
    stack: list[str | None] = [None]  # enclosing clusters (None: top level)
    anon = 0
    while stack:
        tok = peek()
        if tok == ("p", "}"):
            take()
            stack.pop()
            if peek() == ("p", ";"):
                take()
            continue
        if tok == ("eof", ""):
            raise DotError("unbalanced braces")
        if tok == ("kw", "subgraph"):
            take()
            if peek()[0] == "id":
                name = take()
            else:
                anon += 1
                name = f"<anonymous {anon}>"
            if name in dot.clusters:
                raise DotError(f"subgraph {name} declared twice")
            dot.clusters[name] = Cluster(name, stack[-1])
            take("p", "{")
            stack.append(name)
            continue
        if tok[0] == "kw" and tok[1] in ("node", "edge", "graph"):
            take()
            a = attrs()
            if tok[1] == "graph":
                _graph_attrs(dot, stack[-1]).update(a)
        elif tok[0] == "id" and peek(1) == ("p", "="):
            k = take()
            take()
            _graph_attrs(dot, stack[-1])[k] = take("id")
        else:
            chain = [take("id")]
            while peek() == ("p", "->"):
                take()
                chain.append(take("id"))
            a = attrs() if peek() == ("p", "[") else {}
            if len(chain) == 1:
                if chain[0] not in dot.nodes and stack[-1] is not None:
                    dot.clusters[stack[-1]].nodes.append(chain[0])
                dot.nodes.setdefault(chain[0], {}).update(a)
            else:
                for src, dst in zip(chain, chain[1:]):
                    dot.nodes.setdefault(src, {})
                    dot.nodes.setdefault(dst, {})
                    dot.edges.append((src, dst, a))
        if peek() == ("p", ";"):
            take()
    if i != len(toks):
        raise DotError(f"text after the graph: {peek()[1]!r}")
    return dot


def _graph_attrs(dot: Dot, cluster: str | None) -> dict:
    return dot.attrs if cluster is None else dot.clusters[cluster].attrs


def members(dot: Dot, cluster: str) -> set:
    """Nodes declared in `cluster` or in any cluster nested in it."""
    inside = {cluster}
    changed = True
    while changed:
        changed = False
        for c in dot.clusters.values():
            if c.parent in inside and c.name not in inside:
                inside.add(c.name)
                changed = True
    return {n for c in inside for n in dot.clusters[c].nodes}
