"""The JSON schema of ``Report.to_json()`` and a small validator for it.

`SCHEMA` is written by hand from docs/explain-schema.md (a test keeps the two
identical), not derived from the dataclasses, so a change to `bcfront.report`
that breaks the documented format is caught rather than silently documented.
The validator implements the subset of JSON Schema the schema uses (type,
properties, required, additionalProperties, items, minimum, const, enum) —
enough to check reports without depending on the `jsonschema` package.
"""

from __future__ import annotations

from bcfront.report import NODE_KINDS, SCHEMA_VERSION, FallbackKind

_STR = {"type": "string"}
_OPT_STR = {"type": ["string", "null"]}
_OPT_LINE = {"type": ["integer", "null"], "minimum": 0}
_SECONDS = {"type": "number", "minimum": 0}


def _obj(required: dict, optional: dict | None = None) -> dict:
    props = dict(required, **(optional or {}))
    return {
        "type": "object",
        "properties": props,
        "required": sorted(required),
        "additionalProperties": False,
    }


def _list(item: dict) -> dict:
    return {"type": "array", "items": item}


FRAME = _obj({"function": _STR, "filename": _STR, "lineno": _OPT_LINE, "source_line": _STR})
_OPT_FRAME = {
    "type": ["object", "null"],
    "properties": FRAME["properties"],
    "required": FRAME["required"],
    "additionalProperties": False,
}
KERNEL = _obj({"name": _STR, "ops": _list(_STR), "source": _STR})
NODE = _obj(
    {
        "name": _STR,
        "kind": {"type": "string", "enum": list(NODE_KINDS)},
        "target": _STR,
        "inputs": _list(_STR),
        "meta": _STR,
        "output": {"type": "boolean"},
        "expr": _STR,
        "filename": _OPT_STR,
        "lineno": _OPT_LINE,
        "function": _STR,
    }
)
GRAPH = _obj(
    {
        "function": _STR,
        "backend": _STR,
        "op_count": {"type": "integer", "minimum": 0},
        "code": _STR,
        "kernels": _list(KERNEL),
        "fallback_ops": _list(_STR),
    },
    {"nodes": _list(NODE)},  # added in version 2 (compatible): absent from older reports
)
GRAPH_BREAK = _obj(
    {
        "reason": _STR,
        "message": _STR,
        "filename": _OPT_STR,
        "lineno": _OPT_LINE,
        "source_line": _STR,
        "instruction": _STR,
        "user_stack": _list(FRAME),
        "count": {"type": "integer", "minimum": 1},
    }
)
GUARD = _obj({"source": _STR, "kind": _STR, "expr": _STR, "first_use": _OPT_FRAME})
RECOMPILE = _obj(
    {
        "function": _STR,
        "guard": _STR,
        "source": _STR,
        "expected": _STR,
        "actual": _STR,
        "reason": _STR,
        "first_use": _OPT_FRAME,
    },
    {"call": _OPT_LINE},  # added in version 2 (compatible)
)
NATIVE_FALLBACK = _obj(
    {
        "kind": {"type": "string", "enum": [k.value for k in FallbackKind]},
        "message": _STR,
        "filename": _OPT_STR,
        "lineno": _OPT_LINE,
        "function": _STR,
        "count": {"type": "integer", "minimum": 1},
    }
)
SIDE_EFFECT = _obj({"kind": _STR, "target": _STR, "filename": _OPT_STR, "lineno": _OPT_LINE})
FUNCTION = _obj(
    {
        "function": _STR,
        "filename": _OPT_STR,
        "lineno": _OPT_LINE,
        "graphs": _list(GRAPH),
        "graph_breaks": _list(GRAPH_BREAK),
        "guards": _list(GUARD),
        "recompiles": _list(RECOMPILE),
        "side_effects": _list(SIDE_EFFECT),
        "calls": {"type": "integer", "minimum": 0},
        "compiled_seconds": _SECONDS,
        "python_seconds": _SECONDS,
        "notes": _list(_STR),
        "warnings": _list(_STR),
        "timed_calls": {"type": "integer", "minimum": 0},
        "total_seconds": _SECONDS,
        "capture_seconds": _SECONDS,
    },
    {  # added in version 2 (compatible): absent from older reports
        "native_fallbacks": _list(NATIVE_FALLBACK),
        "ops_in_graphs": {"type": "integer", "minimum": 0},
        "ops_native": {"type": "integer", "minimum": 0},
    },
)
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "bcfront explain report",
    "type": "object",
    "properties": {"schema_version": {"const": SCHEMA_VERSION}, "functions": _list(FUNCTION)},
    "required": ["functions", "schema_version"],
    "additionalProperties": False,
}

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(instance, schema: dict = SCHEMA) -> list[str]:
    """Every violation of `schema` in `instance`, as ``"$.path: problem"`` strings."""
    errors: list[str] = []
    todo = [("$", instance, schema)]
    while todo:  # iterative: reports nest a few levels only, but stay safe
        path, value, sch = todo.pop()
        types_ = sch.get("type")
        if types_ is not None:
            allowed = [types_] if isinstance(types_, str) else types_
            if not any(_TYPES[t](value) for t in allowed):
                errors.append(f"{path}: expected {' or '.join(allowed)}, got {type(value).__name__}")
                continue
        if "const" in sch and value != sch["const"]:
            errors.append(f"{path}: expected {sch['const']!r}, got {value!r}")
        if "enum" in sch and value not in sch["enum"]:
            errors.append(f"{path}: {value!r} is not one of {sch['enum']!r}")
        if "minimum" in sch and isinstance(value, (int, float)) and value < sch["minimum"]:
            errors.append(f"{path}: {value!r} is below the minimum {sch['minimum']}")
        if isinstance(value, dict):
            props = sch.get("properties", {})
            errors.extend(
                f"{path}: missing required key {k!r}" for k in sch.get("required", ()) if k not in value
            )
            for k, v in value.items():
                if k in props:
                    todo.append((f"{path}.{k}", v, props[k]))
                elif sch.get("additionalProperties", True) is False:
                    errors.append(f"{path}: unexpected key {k!r}")
        elif isinstance(value, list) and "items" in sch:
            todo.extend((f"{path}[{i}]", v, sch["items"]) for i, v in enumerate(value))
    return sorted(errors)
