"""Which CPython compiled a code object: the opcode tables of 3.11, 3.12 and 3.13.

`decode` reads the running interpreter's own tables from `dis`; the copies in
`TABLES` exist so that a code object compiled by *another* supported CPython
can be recognized and named in the error (`guess_version`), whatever version
is running.  Each entry is ``version: (HAVE_ARGUMENT, {opname: (opcode,
inline cache entries)})``, listing the real opcodes (< 256) that can appear in
``co_code``; specialized, instrumented and pseudo instructions are left out.

Regenerate a row with the interpreter of that version::

    PYENV_VERSION=3.12.1 python -m bcfront.analysis.versions
"""

from __future__ import annotations

import dis
import sys
import types

from .cpython import dis_table

PY = sys.version_info[:2]
# What may precede RESUME in a prologue (cells, free variables, generator setup).
PROLOGUE = frozenset({"MAKE_CELL", "COPY_FREE_VARS", "RETURN_GENERATOR", "POP_TOP", "NOP"})

TABLES: dict[tuple[int, int], tuple[int, dict[str, tuple[int, int]]]] = {
    (3, 11): (
        90,
        {
            "CACHE": (0, 0),
            "POP_TOP": (1, 0),
            "PUSH_NULL": (2, 0),
            "NOP": (9, 0),
            "UNARY_POSITIVE": (10, 0),
            "UNARY_NEGATIVE": (11, 0),
            "UNARY_NOT": (12, 0),
            "UNARY_INVERT": (15, 0),
            "BINARY_SUBSCR": (25, 4),
            "GET_LEN": (30, 0),
            "MATCH_MAPPING": (31, 0),
            "MATCH_SEQUENCE": (32, 0),
            "MATCH_KEYS": (33, 0),
            "PUSH_EXC_INFO": (35, 0),
            "CHECK_EXC_MATCH": (36, 0),
            "CHECK_EG_MATCH": (37, 0),
            "WITH_EXCEPT_START": (49, 0),
            "GET_AITER": (50, 0),
            "GET_ANEXT": (51, 0),
            "BEFORE_ASYNC_WITH": (52, 0),
            "BEFORE_WITH": (53, 0),
            "END_ASYNC_FOR": (54, 0),
            "STORE_SUBSCR": (60, 1),
            "DELETE_SUBSCR": (61, 0),
            "GET_ITER": (68, 0),
            "GET_YIELD_FROM_ITER": (69, 0),
            "PRINT_EXPR": (70, 0),
            "LOAD_BUILD_CLASS": (71, 0),
            "LOAD_ASSERTION_ERROR": (74, 0),
            "RETURN_GENERATOR": (75, 0),
            "LIST_TO_TUPLE": (82, 0),
            "RETURN_VALUE": (83, 0),
            "IMPORT_STAR": (84, 0),
            "SETUP_ANNOTATIONS": (85, 0),
            "YIELD_VALUE": (86, 0),
            "ASYNC_GEN_WRAP": (87, 0),
            "PREP_RERAISE_STAR": (88, 0),
            "POP_EXCEPT": (89, 0),
            "STORE_NAME": (90, 0),
            "DELETE_NAME": (91, 0),
            "UNPACK_SEQUENCE": (92, 1),
            "FOR_ITER": (93, 0),
            "UNPACK_EX": (94, 0),
            "STORE_ATTR": (95, 4),
            "DELETE_ATTR": (96, 0),
            "STORE_GLOBAL": (97, 0),
            "DELETE_GLOBAL": (98, 0),
            "SWAP": (99, 0),
            "LOAD_CONST": (100, 0),
            "LOAD_NAME": (101, 0),
            "BUILD_TUPLE": (102, 0),
            "BUILD_LIST": (103, 0),
            "BUILD_SET": (104, 0),
            "BUILD_MAP": (105, 0),
            "LOAD_ATTR": (106, 4),
            "COMPARE_OP": (107, 2),
            "IMPORT_NAME": (108, 0),
            "IMPORT_FROM": (109, 0),
            "JUMP_FORWARD": (110, 0),
            "JUMP_IF_FALSE_OR_POP": (111, 0),
            "JUMP_IF_TRUE_OR_POP": (112, 0),
            "POP_JUMP_FORWARD_IF_FALSE": (114, 0),
            "POP_JUMP_FORWARD_IF_TRUE": (115, 0),
            "LOAD_GLOBAL": (116, 5),
            "IS_OP": (117, 0),
            "CONTAINS_OP": (118, 0),
            "RERAISE": (119, 0),
            "COPY": (120, 0),
            "BINARY_OP": (122, 1),
            "SEND": (123, 0),
            "LOAD_FAST": (124, 0),
            "STORE_FAST": (125, 0),
            "DELETE_FAST": (126, 0),
            "POP_JUMP_FORWARD_IF_NOT_NONE": (128, 0),
            "POP_JUMP_FORWARD_IF_NONE": (129, 0),
            "RAISE_VARARGS": (130, 0),
            "GET_AWAITABLE": (131, 0),
            "MAKE_FUNCTION": (132, 0),
            "BUILD_SLICE": (133, 0),
            "JUMP_BACKWARD_NO_INTERRUPT": (134, 0),
            "MAKE_CELL": (135, 0),
            "LOAD_CLOSURE": (136, 0),
            "LOAD_DEREF": (137, 0),
            "STORE_DEREF": (138, 0),
            "DELETE_DEREF": (139, 0),
            "JUMP_BACKWARD": (140, 0),
            "CALL_FUNCTION_EX": (142, 0),
            "EXTENDED_ARG": (144, 0),
            "LIST_APPEND": (145, 0),
            "SET_ADD": (146, 0),
            "MAP_ADD": (147, 0),
            "LOAD_CLASSDEREF": (148, 0),
            "COPY_FREE_VARS": (149, 0),
            "RESUME": (151, 0),
            "MATCH_CLASS": (152, 0),
            "FORMAT_VALUE": (155, 0),
            "BUILD_CONST_KEY_MAP": (156, 0),
            "BUILD_STRING": (157, 0),
            "LOAD_METHOD": (160, 10),
            "LIST_EXTEND": (162, 0),
            "SET_UPDATE": (163, 0),
            "DICT_MERGE": (164, 0),
            "DICT_UPDATE": (165, 0),
            "PRECALL": (166, 1),
            "CALL": (171, 4),
            "KW_NAMES": (172, 0),
            "POP_JUMP_BACKWARD_IF_NOT_NONE": (173, 0),
            "POP_JUMP_BACKWARD_IF_NONE": (174, 0),
            "POP_JUMP_BACKWARD_IF_FALSE": (175, 0),
            "POP_JUMP_BACKWARD_IF_TRUE": (176, 0),
        },
    ),
    (3, 12): (
        90,
        {
            "CACHE": (0, 0),
            "POP_TOP": (1, 0),
            "PUSH_NULL": (2, 0),
            "INTERPRETER_EXIT": (3, 0),
            "END_FOR": (4, 0),
            "END_SEND": (5, 0),
            "NOP": (9, 0),
            "UNARY_NEGATIVE": (11, 0),
            "UNARY_NOT": (12, 0),
            "UNARY_INVERT": (15, 0),
            "RESERVED": (17, 0),
            "BINARY_SUBSCR": (25, 1),
            "BINARY_SLICE": (26, 0),
            "STORE_SLICE": (27, 0),
            "GET_LEN": (30, 0),
            "MATCH_MAPPING": (31, 0),
            "MATCH_SEQUENCE": (32, 0),
            "MATCH_KEYS": (33, 0),
            "PUSH_EXC_INFO": (35, 0),
            "CHECK_EXC_MATCH": (36, 0),
            "CHECK_EG_MATCH": (37, 0),
            "WITH_EXCEPT_START": (49, 0),
            "GET_AITER": (50, 0),
            "GET_ANEXT": (51, 0),
            "BEFORE_ASYNC_WITH": (52, 0),
            "BEFORE_WITH": (53, 0),
            "END_ASYNC_FOR": (54, 0),
            "CLEANUP_THROW": (55, 0),
            "STORE_SUBSCR": (60, 1),
            "DELETE_SUBSCR": (61, 0),
            "GET_ITER": (68, 0),
            "GET_YIELD_FROM_ITER": (69, 0),
            "LOAD_BUILD_CLASS": (71, 0),
            "LOAD_ASSERTION_ERROR": (74, 0),
            "RETURN_GENERATOR": (75, 0),
            "RETURN_VALUE": (83, 0),
            "SETUP_ANNOTATIONS": (85, 0),
            "LOAD_LOCALS": (87, 0),
            "POP_EXCEPT": (89, 0),
            "STORE_NAME": (90, 0),
            "DELETE_NAME": (91, 0),
            "UNPACK_SEQUENCE": (92, 1),
            "FOR_ITER": (93, 1),
            "UNPACK_EX": (94, 0),
            "STORE_ATTR": (95, 4),
            "DELETE_ATTR": (96, 0),
            "STORE_GLOBAL": (97, 0),
            "DELETE_GLOBAL": (98, 0),
            "SWAP": (99, 0),
            "LOAD_CONST": (100, 0),
            "LOAD_NAME": (101, 0),
            "BUILD_TUPLE": (102, 0),
            "BUILD_LIST": (103, 0),
            "BUILD_SET": (104, 0),
            "BUILD_MAP": (105, 0),
            "LOAD_ATTR": (106, 9),
            "COMPARE_OP": (107, 1),
            "IMPORT_NAME": (108, 0),
            "IMPORT_FROM": (109, 0),
            "JUMP_FORWARD": (110, 0),
            "POP_JUMP_IF_FALSE": (114, 0),
            "POP_JUMP_IF_TRUE": (115, 0),
            "LOAD_GLOBAL": (116, 4),
            "IS_OP": (117, 0),
            "CONTAINS_OP": (118, 0),
            "RERAISE": (119, 0),
            "COPY": (120, 0),
            "RETURN_CONST": (121, 0),
            "BINARY_OP": (122, 1),
            "SEND": (123, 1),
            "LOAD_FAST": (124, 0),
            "STORE_FAST": (125, 0),
            "DELETE_FAST": (126, 0),
            "LOAD_FAST_CHECK": (127, 0),
            "POP_JUMP_IF_NOT_NONE": (128, 0),
            "POP_JUMP_IF_NONE": (129, 0),
            "RAISE_VARARGS": (130, 0),
            "GET_AWAITABLE": (131, 0),
            "MAKE_FUNCTION": (132, 0),
            "BUILD_SLICE": (133, 0),
            "JUMP_BACKWARD_NO_INTERRUPT": (134, 0),
            "MAKE_CELL": (135, 0),
            "LOAD_CLOSURE": (136, 0),
            "LOAD_DEREF": (137, 0),
            "STORE_DEREF": (138, 0),
            "DELETE_DEREF": (139, 0),
            "JUMP_BACKWARD": (140, 0),
            "LOAD_SUPER_ATTR": (141, 1),
            "CALL_FUNCTION_EX": (142, 0),
            "LOAD_FAST_AND_CLEAR": (143, 0),
            "EXTENDED_ARG": (144, 0),
            "LIST_APPEND": (145, 0),
            "SET_ADD": (146, 0),
            "MAP_ADD": (147, 0),
            "COPY_FREE_VARS": (149, 0),
            "YIELD_VALUE": (150, 0),
            "RESUME": (151, 0),
            "MATCH_CLASS": (152, 0),
            "FORMAT_VALUE": (155, 0),
            "BUILD_CONST_KEY_MAP": (156, 0),
            "BUILD_STRING": (157, 0),
            "LIST_EXTEND": (162, 0),
            "SET_UPDATE": (163, 0),
            "DICT_MERGE": (164, 0),
            "DICT_UPDATE": (165, 0),
            "CALL": (171, 3),
            "KW_NAMES": (172, 0),
            "CALL_INTRINSIC_1": (173, 0),
            "CALL_INTRINSIC_2": (174, 0),
            "LOAD_FROM_DICT_OR_GLOBALS": (175, 0),
            "LOAD_FROM_DICT_OR_DEREF": (176, 0),
        },
    ),
    (3, 13): (
        44,
        {
            "CACHE": (0, 0),
            "BEFORE_ASYNC_WITH": (1, 0),
            "BEFORE_WITH": (2, 0),
            "BINARY_SLICE": (4, 0),
            "BINARY_SUBSCR": (5, 1),
            "CHECK_EG_MATCH": (6, 0),
            "CHECK_EXC_MATCH": (7, 0),
            "CLEANUP_THROW": (8, 0),
            "DELETE_SUBSCR": (9, 0),
            "END_ASYNC_FOR": (10, 0),
            "END_FOR": (11, 0),
            "END_SEND": (12, 0),
            "EXIT_INIT_CHECK": (13, 0),
            "FORMAT_SIMPLE": (14, 0),
            "FORMAT_WITH_SPEC": (15, 0),
            "GET_AITER": (16, 0),
            "RESERVED": (17, 0),
            "GET_ANEXT": (18, 0),
            "GET_ITER": (19, 0),
            "GET_LEN": (20, 0),
            "GET_YIELD_FROM_ITER": (21, 0),
            "INTERPRETER_EXIT": (22, 0),
            "LOAD_ASSERTION_ERROR": (23, 0),
            "LOAD_BUILD_CLASS": (24, 0),
            "LOAD_LOCALS": (25, 0),
            "MAKE_FUNCTION": (26, 0),
            "MATCH_KEYS": (27, 0),
            "MATCH_MAPPING": (28, 0),
            "MATCH_SEQUENCE": (29, 0),
            "NOP": (30, 0),
            "POP_EXCEPT": (31, 0),
            "POP_TOP": (32, 0),
            "PUSH_EXC_INFO": (33, 0),
            "PUSH_NULL": (34, 0),
            "RETURN_GENERATOR": (35, 0),
            "RETURN_VALUE": (36, 0),
            "SETUP_ANNOTATIONS": (37, 0),
            "STORE_SLICE": (38, 0),
            "STORE_SUBSCR": (39, 1),
            "TO_BOOL": (40, 3),
            "UNARY_INVERT": (41, 0),
            "UNARY_NEGATIVE": (42, 0),
            "UNARY_NOT": (43, 0),
            "WITH_EXCEPT_START": (44, 0),
            "BINARY_OP": (45, 1),
            "BUILD_CONST_KEY_MAP": (46, 0),
            "BUILD_LIST": (47, 0),
            "BUILD_MAP": (48, 0),
            "BUILD_SET": (49, 0),
            "BUILD_SLICE": (50, 0),
            "BUILD_STRING": (51, 0),
            "BUILD_TUPLE": (52, 0),
            "CALL": (53, 3),
            "CALL_FUNCTION_EX": (54, 0),
            "CALL_INTRINSIC_1": (55, 0),
            "CALL_INTRINSIC_2": (56, 0),
            "CALL_KW": (57, 0),
            "COMPARE_OP": (58, 1),
            "CONTAINS_OP": (59, 1),
            "CONVERT_VALUE": (60, 0),
            "COPY": (61, 0),
            "COPY_FREE_VARS": (62, 0),
            "DELETE_ATTR": (63, 0),
            "DELETE_DEREF": (64, 0),
            "DELETE_FAST": (65, 0),
            "DELETE_GLOBAL": (66, 0),
            "DELETE_NAME": (67, 0),
            "DICT_MERGE": (68, 0),
            "DICT_UPDATE": (69, 0),
            "ENTER_EXECUTOR": (70, 0),
            "EXTENDED_ARG": (71, 0),
            "FOR_ITER": (72, 1),
            "GET_AWAITABLE": (73, 0),
            "IMPORT_FROM": (74, 0),
            "IMPORT_NAME": (75, 0),
            "IS_OP": (76, 0),
            "JUMP_BACKWARD": (77, 1),
            "JUMP_BACKWARD_NO_INTERRUPT": (78, 0),
            "JUMP_FORWARD": (79, 0),
            "LIST_APPEND": (80, 0),
            "LIST_EXTEND": (81, 0),
            "LOAD_ATTR": (82, 9),
            "LOAD_CONST": (83, 0),
            "LOAD_DEREF": (84, 0),
            "LOAD_FAST": (85, 0),
            "LOAD_FAST_AND_CLEAR": (86, 0),
            "LOAD_FAST_CHECK": (87, 0),
            "LOAD_FAST_LOAD_FAST": (88, 0),
            "LOAD_FROM_DICT_OR_DEREF": (89, 0),
            "LOAD_FROM_DICT_OR_GLOBALS": (90, 0),
            "LOAD_GLOBAL": (91, 4),
            "LOAD_NAME": (92, 0),
            "LOAD_SUPER_ATTR": (93, 1),
            "MAKE_CELL": (94, 0),
            "MAP_ADD": (95, 0),
            "MATCH_CLASS": (96, 0),
            "POP_JUMP_IF_FALSE": (97, 1),
            "POP_JUMP_IF_NONE": (98, 1),
            "POP_JUMP_IF_NOT_NONE": (99, 1),
            "POP_JUMP_IF_TRUE": (100, 1),
            "RAISE_VARARGS": (101, 0),
            "RERAISE": (102, 0),
            "RETURN_CONST": (103, 0),
            "SEND": (104, 1),
            "SET_ADD": (105, 0),
            "SET_FUNCTION_ATTRIBUTE": (106, 0),
            "SET_UPDATE": (107, 0),
            "STORE_ATTR": (108, 4),
            "STORE_DEREF": (109, 0),
            "STORE_FAST": (110, 0),
            "STORE_FAST_LOAD_FAST": (111, 0),
            "STORE_FAST_STORE_FAST": (112, 0),
            "STORE_GLOBAL": (113, 0),
            "STORE_NAME": (114, 0),
            "SWAP": (115, 0),
            "UNPACK_EX": (116, 0),
            "UNPACK_SEQUENCE": (117, 1),
            "YIELD_VALUE": (118, 0),
            "RESUME": (149, 0),
        },
    ),
}


def _host_base() -> list[int]:
    """Opcode byte -> its base opcode on this interpreter (0 where it has none)."""
    base = [0] * 256
    for code in dis.opmap.values():
        if code < 256:
            base[code] = code
    all_opmap: dict[str, int] = dis_table("_all_opmap")
    for name, specs in dis_table("_specializations").items():
        for s in specs:
            if all_opmap.get(s, 256) < 256:
                base[all_opmap[s]] = dis.opmap[name]
    return base


def _original_units(code: types.CodeType) -> list[int | None]:
    """The opcode byte of each code unit as compiled, or None where it is unknown.

    ``co_code`` is not what was compiled: CPython rewrites it through this
    interpreter's tables (specialized opcodes deoptimized, what it takes for
    inline caches zeroed).  ``_co_code_adaptive`` keeps the original bytes,
    except that 3.12+ quickens new code objects: a warm-up counter goes into
    the first cache unit of each instruction that has caches *by this
    interpreter's reading*, and 3.12 fuses LOAD_FAST pairs into
    ``LOAD_FAST__LOAD_FAST``-style superinstructions.  Those units are undone
    or marked unknown here, walking the bytes as the quickener did.
    """
    units: list[int | None] = list(getattr(code, "_co_code_adaptive", code.co_code)[0::2])
    if PY < (3, 12):
        return units  # 3.11 quickens only after warm-up calls; foreign code never runs
    base, allnames = _host_base(), dis_table("_all_opname")
    caches = [0] * 256
    for op, n in TABLES[PY][1].values():
        caches[op] = n
    k = 0
    while k < len(units):
        a = units[k]
        assert a is not None  # (the walk steps over caches: k is an instruction)
        b = base[a]
        if a != b and "__" in allnames[a]:
            units[k] = b
        c = caches[b]
        if c and k + 1 < len(units):
            units[k + 1] = None
        k += 1 + c
    return units


def _mismatches(units: list[int | None], version: tuple[int, int]) -> tuple[int, int]:
    """(definite problems, confirmed opcodes) when reading `units` with `version`'s table."""
    have_arg, table = TABLES[version]
    by_code = {c: (name, n) for name, (c, n) in table.items()}
    bad = good = 0
    seen_resume = False
    k = 0
    while k < len(units):
        u = units[k]
        if u is None:  # unknown, and so is its cache count: resync past zero units,
            k += 1  # which are caches (the compiler zeroes them; 0 is no opcode)
            seen_resume = True  # it may have been the RESUME
            while k < len(units) and units[k] == 0:
                k += 1
            continue
        entry = by_code.get(u)
        if entry is None or entry[0] in ("CACHE", "RESERVED", "ENTER_EXECUTOR"):
            bad += 1
            k += 1
            continue
        name, n = entry
        good += 1
        if not seen_resume and name not in PROLOGUE:
            seen_resume = True
            if name != "RESUME":
                bad += 5  # the strongest single signal: every code object starts so
        for c in units[k + 1 : k + 1 + n]:
            bad += bool(c)  # the compiler leaves caches zero; None (unknown) is fine
        k += 1 + n
    if k > len(units):
        bad += 1
    return bad, good


def guess_version(code: types.CodeType) -> list[str]:
    """CPython versions (e.g. ``["3.12"]``) whose opcode tables best explain `code`.

    Versions other than the running one are scored by how many opcodes are
    invalid for them and whether RESUME sits after the prologue; the best
    scores win.  Empty when none of them reads the bytecode cleanly enough.
    """
    units = _original_units(code)
    scores = {v: _mismatches(units, v) for v in TABLES if v != PY}
    best = min(scores.values())
    if best[0] > max(2, best[1] // 10):
        return []
    top = [v for v, s in scores.items() if s[0] == best[0]]
    return [f"{v[0]}.{v[1]}" for v in sorted(top)]


def _emit() -> str:
    """This interpreter's row of `TABLES`, as source text."""
    caches = dis_table("_inline_cache_entries")  # a list before 3.13, a dict keyed by name after
    ops = sorted(
        (code, name)
        for name, code in dis.opmap.items()
        if code < 256 and not name.startswith("INSTRUMENTED_")
    )
    lines = [f"    {sys.version_info[:2]}: (", f"        {dis.HAVE_ARGUMENT},", "        {"]
    line = "           "
    for code, name in ops:
        n = caches.get(name, 0) if isinstance(caches, dict) else caches[code]
        item = f" {name!r}: ({code}, {n}),"
        if len(line) + len(item) > 99:
            lines.append(line)
            line = "           "
        line += item
    lines += [line, "        },", "    ),"]
    return "\n".join(lines)


if __name__ == "__main__":
    print(_emit())
