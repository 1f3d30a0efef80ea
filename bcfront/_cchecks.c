/* Checked links: an exact link's guard evaluated in C (part of `bcfront._cfast`).
 *
 * A `CheckedLink` stands for one exact link function (`frontend/regions/links.py`) in the
 * chain the cached call runs (`bcfront.fast_call`).  It holds the link's checks as a small
 * stack program (`frontend/regions/check_program.py` compiles it from the very statements
 * the Python link runs, and refuses what it cannot translate exactly), the region's code as
 * a Python function with the link's own parameters (`body`), the Python link itself and the
 * next callable of the chain.  Called with positional arguments that bind to the link's
 * parameters as positional ones, it runs the program on them: where it passes, it returns
 * `body(*args)` -- or what the region's code makes, where a recipe of it is (`_crecipes.c`:
 * the value it returns, made of constants; the exception it only makes and raises); where a
 * check fails, or raises an Exception (the Python link's `except Exception: break`), it goes
 * on to `next` -- in a loop while the next is a CheckedLink too, without growing the C stack.
 * Anything else (keywords, a count of arguments the link would bind otherwise) calls the
 * Python link, which does what it always did.  The Python link is the reference: each op
 * below does what the Python expression it stands for does, in the same order, calling the
 * same functions -- `x == k` is `PyObject_RichCompare` then truth, not
 * `PyObject_RichCompareBool` (which says a NaN equals itself).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <stdint.h>

#include "_cdict.h" /* dict_tag */

int cfast_read_tags(PyObject *const *dicts, Py_ssize_t n, uint64_t *tags); /* _cfast.c */

/* labels as values (`run` below), where the compiler has them; -DCCHECKS_SWITCH: the switch */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(CCHECKS_SWITCH)
#define CCHECKS_COMPUTED_GOTO 1
#endif

/* the ops; check_program.py's OPS names them in this order (the test compares) */
enum {
    OP_END,           /* the checks passed */
    OP_MISS,          /* a check failed */
    OP_PARAM,         /* push positional parameter `arg`: the argument, or its default */
    OP_STAR_ITEM,     /* push item `arg` of the *args parameter (IndexError past its end) */
    OP_STAR_LEN,      /* push len of the *args parameter */
    OP_STAR,          /* push the *args parameter (a new tuple) */
    OP_DSTAR,         /* push the **kwargs parameter (a new empty dict: no keywords here) */
    OP_KWONLY,        /* push keyword-only parameter consts[arg]: the link's __kwdefaults__[name] */
    OP_CONST,         /* push consts[arg] */
    OP_LOCAL,         /* push local `arg` (UnboundLocalError if unset) */
    OP_STORE,         /* pop into local `arg` */
    OP_DUP,           /* push the top again */
    OP_POP,           /* drop the top */
    OP_ATTR,          /* x = pop; push getattr(x, consts[arg]) */
    OP_ITEM,          /* x = pop; push x[consts[arg]] */
    OP_SUBSCR,        /* k = pop, x = pop; push x[k] */
    OP_STORE_SUBSCR,  /* k = pop, x = pop, v = pop; x[k] = v */
    OP_CALL,          /* `arg` arguments over the callable; push callable(*arguments) */
    OP_TYPE,          /* x = pop; push type(x) */
    OP_LEN,           /* x = pop; push len(x) */
    OP_COMPARE,       /* b = pop, a = pop; push `a <op> b`, op = arg: Py_LT..Py_GE, then is, is not, in, not in */
    OP_NOT,           /* x = pop; push not x */
    OP_NEG,           /* x = pop; push -x */
    OP_BUILD_TUPLE,   /* `arg` items; push them as a tuple */
    OP_JUMP,          /* go to `arg` */
    OP_JUMP_IF_FALSE_OR_POP, /* `and`: the top is false: go to `arg`, keeping it; else pop */
    OP_JUMP_IF_TRUE_OR_POP,  /* `or` */
    OP_POP_JUMP_IF_FALSE,
    OP_POP_JUMP_IF_TRUE,
    /* a conjunct of `if not (a and b ...): miss`: pop x; a miss unless ... */
    OP_ASSERT_TRUE,   /* x is true */
    OP_ASSERT_TYPE,   /* type(x) is consts[arg] */
    OP_ASSERT_IS,     /* x is consts[arg] */
    OP_ASSERT_IS_NOT, /* x is not consts[arg] */
    OP_ASSERT_EQ,     /* x == consts[arg], true */
    OP_ASSERT_LEN,    /* len(x) == arg */
    OP_ASSERT_IN,     /* consts[arg] in x */
    OP_ASSERT_NOT_IN, /* consts[arg] not in x */
    OP_MODULE_ATTR,   /* ATTR of a name no attribute of ModuleType has: an exact module's dict first */
    OP_CELL_CONTENTS, /* x = pop; push x.cell_contents (an exact cell's read directly) */
    OP_BINARY,        /* y = pop, x = pop; push `x <op> y`, op `arg` of BINARY_* below */
    OP_ASSERT_ITEMS,  /* items_are(x, *consts[arg]) (a list's items by value: `guard_batches`);
                       * indices None: 0, 1, ... in order */
    OP_ASSERT_ITEMS_TYPE, /* items_of_type(x, consts[arg]) */
    /* fused ops (`check_fusion.py`): two or three of the ops above in one, with the same
     * effects in the same order and nothing pushed between them; `arg` holds their
     * arguments, FIELD_BITS each (A: the first op's, B: the second's, C: the third's) */
    OP_PARAM_TYPE,    /* PARAM A; ASSERT_TYPE B */
    OP_PARAM_IS,      /* PARAM A; ASSERT_IS B */
    OP_PARAM_EQ,      /* PARAM A; ASSERT_EQ B */
    OP_PARAM_LEN,     /* PARAM A; ASSERT_LEN B */
    OP_ITEM_TYPE,     /* ITEM A; ASSERT_TYPE B */
    OP_ITEM_IS,       /* ITEM A; ASSERT_IS B */
    OP_ITEM_EQ,       /* ITEM A; ASSERT_EQ B */
    OP_MODULE_ATTR_IS, /* MODULE_ATTR A; ASSERT_IS B */
    OP_CONST_ITEM,    /* CONST A; ITEM B */
    OP_LOCAL_ITEM,    /* LOCAL A; ITEM B */
    OP_CONST_NOT_IN,  /* CONST A; ASSERT_NOT_IN B */
    OP_CONST_ITEM_IS, /* CONST A; ITEM B; ASSERT_IS C */
    OP_LOCAL_ITEM_IS, /* LOCAL A; ITEM B; ASSERT_IS C */
    OP_CONST_ITEM_TYPE, /* CONST A; ITEM B; ASSERT_TYPE C */
    OP_CONST_ITEM_EQ, /* CONST A; ITEM B; ASSERT_EQ C */
    OP_LOCAL_ITEM_TYPE, /* LOCAL A; ITEM B; ASSERT_TYPE C */
    OP_LOCAL_ITEM_EQ, /* LOCAL A; ITEM B; ASSERT_EQ C */
    OP_CONST_ATTR,    /* CONST A; ATTR B */
    OP_PARAM_TYPE_EQ, /* PARAM A; ASSERT_TYPE B; PARAM A; ASSERT_EQ C (a scalar argument's value) */
    OP_PARAM_ITEM,    /* PARAM A; ITEM B */
    OP_KEEP,          /* DUP; STORE A: the top kept in local A, and left on the stack */
    OP_LOCAL_TYPE,    /* LOCAL A; ASSERT_TYPE B */
    OP_LOCAL_LEN,     /* LOCAL A; ASSERT_LEN B */
    OP_PARAM_ITEMS,   /* PARAM A; ASSERT_ITEMS B */
    OP_PARAM_ITEMS_TYPE, /* PARAM A; ASSERT_ITEMS_TYPE B */
    OP_CONST_MODULE_ATTR_IS, /* CONST A; MODULE_ATTR B; ASSERT_IS C (``___module.f is ___f``) */
    OP_STAR_LEN_EQ,   /* STAR_LEN A; ASSERT_EQ B (``len(args) == 1``) */
    OP_STAR_ITEM_TYPE, /* STAR_ITEM A; ASSERT_TYPE B */
    OP_STAR_ITEM_IS,  /* STAR_ITEM A; ASSERT_IS B */
    OP_STAR_ITEM_EQ,  /* STAR_ITEM A; ASSERT_EQ B */
    OP_STAR_ITEM_TYPE_EQ, /* STAR_ITEM A; ASSERT_TYPE B; STAR_ITEM A; ASSERT_EQ C */
    /* the guard memo (`guard_memo._c_memo`): ``if not ___dicts_unchanged(cell, d1, ... dA):
     * <checks>; cell[0] = cell[1]`` without the cell -- its tags kept in the op */
    OP_DICTS_SAME,    /* pop A dicts; where each one's tag is the one it had on the last call
                       * whose checks up to DICTS_PASSED passed, jump to B; else keep the tags */
    OP_DICTS_PASSED,  /* the checks since the last DICTS_SAME passed: its tags are valid */
    OP_ASSERT_CODES,  /* codes_are(*consts[arg]): each function of the first tuple still has
                       * the code object at its place in the second (nothing popped) */
    OP_COUNT,
    /* internal ops: made by `superops` from the program's own ops when the link is made,
     * never in a program passed in (check_program.py does not know them) */
    OP_PARAM_LEN_ITEMS_SAME = OP_COUNT, /* PARAM_LEN A,B where the next op is a PARAM_ITEMS of
                           * the same parameter whose items are B values compared by identity
                           * (`found`: its values tuple): where the argument is an exact list
                           * or tuple of B items, each that very value, both pass (no code
                           * runs in either) and are skipped; else PARAM_LEN runs as itself */
    OP_CONST_SIGN_IS,   /* CONST A, the next four ops `CONST 1.0; PARAM p; CALL 2; ASSERT_EQ
                           * K` with A math.copysign and K 1.0 or -1.0 (a float guard's sign
                           * test, ``copysign(1.0, x) == 1.0``: -0.0 == 0.0): where parameter
                           * p (`aux`) is an exact float, its sign bit decides them all, no
                           * call made (`found`: K) ; else CONST A runs as itself */
    OP_PARAM_TYPE_SAME, /* PARAM_TYPE_EQ A,B,C whose type B is exact int, str or bytes (equal
                           * where identical, comparing runs no code): the very object C passes
                           * with no comparison made; another one of type B is compared */
    OP_ALL_COUNT
};

/* a fused op's arguments (`check_fusion.FIELD_BITS`: the pass fuses only where they fit) */
#define FIELD_BITS 20
#define FIELD_A(arg) ((arg) & ((1 << FIELD_BITS) - 1))
#define FIELD_B(arg) (((arg) >> FIELD_BITS) & ((1 << FIELD_BITS) - 1))
#define FIELD_C(arg) ((arg) >> (2 * FIELD_BITS))

/* OP_BINARY's argument: Python's binary operators (`check_program.BINARY` in this order) */
enum { BINARY_ADD, BINARY_SUB, BINARY_MUL, BINARY_FLOORDIV, BINARY_MOD, BINARY_TRUEDIV,
       BINARY_POW, BINARY_LSHIFT, BINARY_RSHIFT, BINARY_AND, BINARY_OR, BINARY_XOR, BINARY_COUNT };

static PyObject *
binary(PyObject *x, PyObject *y, Py_ssize_t op)
{
    switch (op) {
    case BINARY_ADD: return PyNumber_Add(x, y);
    case BINARY_SUB: return PyNumber_Subtract(x, y);
    case BINARY_MUL: return PyNumber_Multiply(x, y);
    case BINARY_FLOORDIV: return PyNumber_FloorDivide(x, y);
    case BINARY_MOD: return PyNumber_Remainder(x, y);
    case BINARY_TRUEDIV: return PyNumber_TrueDivide(x, y);
    case BINARY_POW: return PyNumber_Power(x, y, Py_None);
    case BINARY_LSHIFT: return PyNumber_Lshift(x, y);
    case BINARY_RSHIFT: return PyNumber_Rshift(x, y);
    case BINARY_AND: return PyNumber_And(x, y);
    case BINARY_OR: return PyNumber_Or(x, y);
    case BINARY_XOR: return PyNumber_Xor(x, y);
    default:
        PyErr_Format(PyExc_SystemError, "CheckedLink: binary operator %zd", op);
        return NULL;
    }
}

#define COMPARE_IS 6
#define COMPARE_IS_NOT 7
#define COMPARE_IN 8
#define COMPARE_NOT_IN 9

/* what an ATTR or MODULE_ATTR op's last read found, reused while the types it depends on
 * keep their version tags (CPython's own specializing interpreter relies on the same tags:
 * a change to a class's dict, or to a base's, or to its bases, gives it a new tag) */
enum { CACHE_NONE, CACHE_CLASS, CACHE_MEMBER, CACHE_DICT, CACHE_INSTANCE };

typedef struct {
    int op;
    long long arg;       /* a fused op's: its fields (FIELD_A ...) */
    int kind;            /* CACHE_CLASS: `found` is the attribute of the class `type` itself;
                          * CACHE_MEMBER: `found` is the member or getset descriptor (a slot,
                          * a C attribute: data descriptors of builtin types) instances of
                          * `type` read;
                          * CACHE_INSTANCE: no class of `type`'s MRO has the name: an
                          * instance's own dict holds it, if anything does */
    unsigned int tag;    /* `type`'s version tag then */
    unsigned int meta_tag; /* CACHE_CLASS: its metatype's */
    PyTypeObject *type;  /* borrowed: compared by address, its tag tells a new type apart */
    PyTypeObject *meta;
    PyObject *found;     /* borrowed: held by `type`'s dicts while its tag is unchanged --
                          * CACHE_DICT: the value at the op's key in `dict`, held by it */
    PyObject *dict;      /* CACHE_DICT: the exact dict read (an ITEM's, a module's); borrowed */
    uint64_t *tags;      /* DICTS_SAME: its dicts' tags (`ntags`; owned), valid where `kind` is
                          * CACHE_DICT */
    Py_ssize_t ntags;
    uint64_t version;    /* its version tag then: any change to it gives a new one, and so
                          * does a new dict made at the same address */
    Py_ssize_t aux;      /* an internal op's own argument (OP_CONST_SIGN_IS: the parameter) */
    Py_ssize_t served;   /* ATTR reads served by the cache, checks an internal op decided by
                          * its shortcut (`CheckedLink.cache_hits`: tests) */
} Instr;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Instr *code;
    Py_ssize_t ncode;
    PyObject *consts;   /* tuple */
    Py_ssize_t nlocals; /* locals the checks assign (module views, memo cells' reads) */
    Py_ssize_t depth;   /* most values on the stack */
    Py_ssize_t npos;    /* the link's positional parameters */
    int star;           /* it takes *args */
    int guarded;        /* the checks are in `try: ... except Exception: <miss>` */
    PyObject *body;     /* body(*args): the region's code, where the checks pass */
    PyObject *link;     /* the Python link: called where this does not bind the call itself */
    PyObject *next;     /* called where a check fails */
    PyObject *result;   /* a recipe of what the region does (`_crecipes.c`), or NULL: call `body` */
    Py_ssize_t kept;    /* >= 0: the region returns what the checks left in this local */
    Py_ssize_t hits;    /* calls whose checks passed here (for tests and explain) */
} CheckedLink;

static PyTypeObject CheckedLinkType;

/* where `args` bind to the link's parameters positionally: no more than it takes, and no
 * fewer than its positional parameters without a default (the defaults read now: the C call
 * checks the root still has the link's) */
static int
binds_positionally(CheckedLink *c, Py_ssize_t n)
{
    if (!c->star && n > c->npos) {
        return 0;
    }
    PyObject *defaults = PyFunction_GET_DEFAULTS(c->link);
    Py_ssize_t nd = defaults != NULL ? PyTuple_GET_SIZE(defaults) : 0;
    return n >= c->npos - nd;
}

static PyObject *
param(CheckedLink *c, PyObject *const *args, Py_ssize_t n, Py_ssize_t i)
{
    if (i < n) {
        return Py_NewRef(args[i]);
    }
    PyObject *defaults = PyFunction_GET_DEFAULTS(c->link);
    Py_ssize_t nd = defaults != NULL ? PyTuple_GET_SIZE(defaults) : 0;
    Py_ssize_t d = i - (c->npos - nd);
    if (defaults == NULL || d < 0 || d >= nd) {
        PyErr_SetString(PyExc_SystemError, "CheckedLink: a parameter without an argument");
        return NULL;
    }
    return Py_NewRef(PyTuple_GET_ITEM(defaults, d));
}

static PyObject *
star_tuple(CheckedLink *c, PyObject *const *args, Py_ssize_t n)
{
    Py_ssize_t from = n < c->npos ? n : c->npos;
    PyObject *t = PyTuple_New(n - from);
    if (t == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = from; i < n; i++) {
        PyTuple_SET_ITEM(t, i - from, Py_NewRef(args[i]));
    }
    return t;
}

int cfast_equal(PyObject *x, PyObject *k); /* _cfast.c: `x == k` is true */
int cfast_codes_are(PyObject *pair); /* _cfast.c: its `codes_are(*pair)`, as 1, 0 or -1 */
/* _cfast.c: its `items_are` and `items_of_type`, as 1, 0 or -1 (an error) */
int cfast_items_are(PyObject *seq, PyObject *indices, PyObject *types, PyObject *values);
int cfast_items_shape(PyObject *indices, PyObject *types, PyObject *values);
int cfast_items_match(PyObject *seq, PyObject *indices, PyObject *types, PyObject *values);
int cfast_items_of_type(PyObject *seq, PyObject *t);
int cfast_identity_equality(PyObject *t); /* _cfast.c: an exact int, str or bytes type */

static PyObject *
compare(PyObject *a, PyObject *b, Py_ssize_t op)
{
    int r;
    switch (op) {
    case COMPARE_IS:
        return Py_NewRef(a == b ? Py_True : Py_False);
    case COMPARE_IS_NOT:
        return Py_NewRef(a != b ? Py_True : Py_False);
    case COMPARE_IN:
    case COMPARE_NOT_IN:
        r = PySequence_Contains(b, a);
        if (r < 0) {
            return NULL;
        }
        return Py_NewRef((r == (op == COMPARE_IN)) ? Py_True : Py_False);
    default:
        return PyObject_RichCompare(a, b, (int)op);
    }
}

/* `t`'s version tag stands for its present attributes: 3.13 keeps only the tag (0 once it
 * is modified) and no longer sets Py_TPFLAGS_VALID_VERSION_TAG, which 3.11 and 3.12 clear
 * with it */
static int
tag_valid(PyTypeObject *t)
{
#if PY_VERSION_HEX >= 0x030D0000
    return t->tp_version_tag != 0;
#else
    return (t->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) && t->tp_version_tag != 0;
#endif
}

#ifndef Py_AUDIT_READ
#define Py_AUDIT_READ PY_AUDIT_READ
#endif

/* where `t`'s attribute `name` is a slot's member descriptor or a C getset descriptor (data
 * descriptors: an instance's generic read, and a class's read through type_getattro, call
 * them before any dict): remember it, for reads of instances of exactly `t` while its tag
 * holds -- a class's ``__mro__`` or ``__name__`` is its metatype's getset */
static void
remember_member(Instr *ip, PyTypeObject *t, PyObject *name)
{
    PyObject *d = _PyType_Lookup(t, name);
    int member = d != NULL && Py_IS_TYPE(d, &PyMemberDescr_Type)
        && !(((PyMemberDescrObject *)d)->d_member->flags & Py_AUDIT_READ);
    int getset = d != NULL && Py_IS_TYPE(d, &PyGetSetDescr_Type) && ((PyGetSetDescrObject *)d)->d_getset->get != NULL;
    if ((member || getset) && tag_valid(t)) {
        ip->kind = CACHE_MEMBER;
        ip->type = t;
        ip->tag = t->tp_version_tag;
        ip->found = d;
    }
}

/* after `getattr(x, name)` gave `y`: remember what made it, where a later read with the same
 * version tags must give the same -- a class attribute without __get__ (or a plain function,
 * whose __get__ on a class gives itself) and no attribute of that name on the metatype; or
 * a slot's member descriptor or a C getset descriptor (data descriptors: they come before an
 * instance dict) on an instance whose type reads attributes generically */
static void
remember(Instr *ip, PyObject *x, PyObject *name, PyObject *y)
{
    PyTypeObject *t = Py_TYPE(x);
    ip->kind = CACHE_NONE;
    if (PyType_Check(x) && t->tp_getattro == PyType_Type.tp_getattro) {
        PyObject *a = _PyType_Lookup((PyTypeObject *)x, name);
        if (a == y && (Py_TYPE(a)->tp_descr_get == NULL || PyFunction_Check(a))
            && _PyType_Lookup(t, name) == NULL && !PyErr_Occurred()
            && tag_valid((PyTypeObject *)x) && tag_valid(t)) {
            ip->kind = CACHE_CLASS;
            ip->type = (PyTypeObject *)x;
            ip->tag = ((PyTypeObject *)x)->tp_version_tag;
            ip->meta = t;
            ip->meta_tag = t->tp_version_tag;
            ip->found = a;
        }
        else {
            remember_member(ip, t, name); /* the class's metatype's member, as an instance's */
        }
    }
    else if (t->tp_getattro == PyObject_GenericGetAttr) {
        remember_member(ip, t, name);
#if PY_VERSION_HEX >= 0x030D0000
        if (ip->kind == CACHE_NONE && _PyType_Lookup(t, name) == NULL && !PyErr_Occurred() && tag_valid(t)) {
            ip->kind = CACHE_INSTANCE;
            ip->type = t;
            ip->tag = t->tp_version_tag;
        }
#endif
    }
    PyErr_Clear(); /* (a lookup's error: nothing cached) */
}

/* what an op read in the exact dict `d`: `y`, while `d`'s version tag stays */
static void
remember_found(Instr *ip, PyObject *d, PyObject *y)
{
    ip->kind = CACHE_DICT;
    ip->dict = d;
    ip->version = dict_tag(d);
    ip->found = y;
}

/* `d[key]` of an exact dict `d`, by what the op's last read of it found while its version
 * tag is unchanged (a new reference; NULL on an error, KeyError where absent) */
static PyObject *
dict_item(Instr *ip, PyObject *d, PyObject *key)
{
    if (ip->kind == CACHE_DICT && ip->dict == d && ip->version == dict_tag(d)) {
        return Py_NewRef(ip->found);
    }
    PyObject *y = PyObject_GetItem(d, key);
    if (y != NULL) {
        remember_found(ip, d, y);
    }
    return y;
}

/* `seq[i]` of an exact list or tuple and an exact int, as list_subscript and
 * tuple_subscript read it (the index past the end: their IndexError) */
static PyObject *
sequence_item(PyObject *seq, PyObject *index)
{
    Py_ssize_t i = PyLong_AsSsize_t(index);
    if (i == -1 && PyErr_Occurred()) { /* too large for an index: the generic path's error */
        PyErr_Clear();
        return PyObject_GetItem(seq, index);
    }
    int list = PyList_CheckExact(seq);
    Py_ssize_t n = list ? PyList_GET_SIZE(seq) : PyTuple_GET_SIZE(seq);
    if (i < 0) {
        i += n;
    }
    if (i < 0 || i >= n) {
        PyErr_SetString(PyExc_IndexError, list ? "list index out of range" : "tuple index out of range");
        return NULL;
    }
    return Py_NewRef(list ? PyList_GET_ITEM(seq, i) : PyTuple_GET_ITEM(seq, i));
}

/* getattr(x, name), by what the op's last read found where the tags say it still holds */
static PyObject *
attribute(Instr *ip, PyObject *x, PyObject *name)
{
    PyTypeObject *t = Py_TYPE(x);
    if (ip->kind == CACHE_CLASS && (PyObject *)ip->type == x && tag_valid(ip->type)
        && ip->type->tp_version_tag == ip->tag && t == ip->meta && tag_valid(t) && t->tp_version_tag == ip->meta_tag) {
        ip->served++;
        return Py_NewRef(ip->found);
    }
    if (ip->kind == CACHE_MEMBER && t == ip->type && tag_valid(t) && t->tp_version_tag == ip->tag) {
        ip->served++;
        PyObject *d = ip->found;
        if (Py_IS_TYPE(d, &PyMemberDescr_Type)) {
            return PyMember_GetOne((const char *)x, ((PyMemberDescrObject *)d)->d_member);
        }
        PyGetSetDef *g = ((PyGetSetDescrObject *)d)->d_getset; /* what getset_get calls */
        return g->get(x, g->closure);
    }
#if PY_VERSION_HEX >= 0x030D0000
    /* no descriptor to call: the generic read is the instance dict's entry.  3.13 only,
     * where asking for the dict leaves the values inline (3.11 and 3.12 would move them
     * into it, and the object's own attribute reads would lose their fast path) */
    if (ip->kind == CACHE_INSTANCE && t == ip->type && tag_valid(t) && t->tp_version_tag == ip->tag) {
        PyObject *d = PyObject_GenericGetDict(x, NULL);
        if (d != NULL) {
            PyObject *y = Py_XNewRef(PyDict_GetItemWithError(d, name));
            Py_DECREF(d);
            if (y != NULL || PyErr_Occurred()) {
                ip->served++;
                return y;
            }
        }
        PyErr_Clear(); /* no dict, or no entry: the generic read says what it raises */
    }
#endif
    PyObject *y = PyObject_GetAttr(x, name);
    if (y != NULL) {
        remember(ip, x, name, y);
    }
    return y;
}

/* `x[name]` as an ITEM op reads it: an exact dict by the op's cache (a new reference) */
static PyObject *
item_of(Instr *ip, PyObject *x, PyObject *name)
{
    if (PyDict_CheckExact(x)) {
        return dict_item(ip, x, name);
    }
    if ((PyList_CheckExact(x) || PyTuple_CheckExact(x)) && PyLong_CheckExact(name)) {
        return sequence_item(x, name);
    }
    return PyObject_GetItem(x, name);
}

/* `getattr(x, name)` as a MODULE_ATTR op reads it (a new reference) */
static PyObject *
module_attr(Instr *ip, PyObject *x, PyObject *name)
{
    if (Py_IS_TYPE(x, &PyModule_Type)) {
        /* generic attribute lookup finds no descriptor on the type for this name
         * (check_program.py asks): the instance dict decides, else __getattr__ */
        PyObject *d = PyModule_GetDict(x);
        if (ip->kind == CACHE_DICT && ip->dict == d && ip->version == dict_tag(d)) {
            return Py_NewRef(ip->found);
        }
        PyObject *y = PyDict_GetItemWithError(d, name);
        if (y != NULL) {
            remember_found(ip, d, y);
        }
        if (y != NULL || PyErr_Occurred()) {
            return Py_XNewRef(y);
        }
    }
    return attribute(ip, x, name);
}

/* an op taking one value `x` and giving one (a new reference, NULL on an error) */
static PyObject *
unary(CheckedLink *c, Instr *ip, PyObject *x)
{
    const int op = ip->op;
    PyObject *name = op == OP_ATTR || op == OP_MODULE_ATTR || op == OP_ITEM
        ? PyTuple_GET_ITEM(c->consts, ip->arg) : NULL;
    Py_ssize_t len;
    int t;
    switch (op) {
    case OP_MODULE_ATTR:
        return module_attr(ip, x, name);
    case OP_ATTR:
        return attribute(ip, x, name);
    case OP_CELL_CONTENTS:
        if (!Py_IS_TYPE(x, &PyCell_Type)) {
            return PyObject_GetAttrString(x, "cell_contents");
        }
        if (PyCell_GET(x) == NULL) {
            PyErr_SetString(PyExc_ValueError, "Cell is empty"); /* the getter's error */
        }
        return Py_XNewRef(PyCell_GET(x));
    case OP_ITEM:
        return item_of(ip, x, name);
    case OP_TYPE:
        return Py_NewRef((PyObject *)Py_TYPE(x));
    case OP_LEN:
        len = PyObject_Length(x);
        return len < 0 ? NULL : PyLong_FromSsize_t(len);
    case OP_NOT:
        t = PyObject_IsTrue(x);
        return t < 0 ? NULL : Py_NewRef(t ? Py_False : Py_True);
    case OP_NEG:
        return PyNumber_Negative(x);
    default:
        PyErr_Format(PyExc_SystemError, "CheckedLink: op %d is not unary", op);
        return NULL;
    }
}

/* ASSERT op `op` on `x`, with its constant `k` (ASSERT_LEN: its length `n`): 1 it holds,
 * 0 not (a miss), -1 an error; inlined where `op` is a constant (the fused ops) */
static inline int
check_holds(int op, PyObject *x, PyObject *k, long long n)
{
    Py_ssize_t len;
    int t;
    switch (op) {
    case OP_ASSERT_TRUE:
        return PyObject_IsTrue(x);
    case OP_ASSERT_TYPE:
        return (PyObject *)Py_TYPE(x) == k;
    case OP_ASSERT_IS:
        return x == k;
    case OP_ASSERT_IS_NOT:
        return x != k;
    case OP_ASSERT_EQ:
        return cfast_equal(x, k);
    case OP_ASSERT_LEN: /* (an exact list's or tuple's: its size, as their sq_length says) */
        len = PyList_CheckExact(x) || PyTuple_CheckExact(x) ? Py_SIZE(x) : PyObject_Length(x);
        return len < 0 ? -1 : len == n;
    case OP_ASSERT_IN:
    case OP_ASSERT_NOT_IN:
        t = PySequence_Contains(x, k);
        return t < 0 ? -1 : t == (op == OP_ASSERT_IN);
    case OP_ASSERT_ITEMS: /* (its constant's shape: checked when the link is made, `items_const`) */
        return cfast_items_match(x, PyTuple_GET_ITEM(k, 0) == Py_None ? NULL : PyTuple_GET_ITEM(k, 0),
                                 PyTuple_GET_ITEM(k, 1), PyTuple_GET_ITEM(k, 2));
    case OP_ASSERT_ITEMS_TYPE:
        return cfast_items_of_type(x, k);
    default:
        PyErr_Format(PyExc_SystemError, "CheckedLink: op %d is no check", op);
        return -1;
    }
}

/* an ASSERT op on `x`: 1 it holds, 0 not (a miss), -1 an error */
static int
holds(CheckedLink *c, const Instr *ip, PyObject *x)
{
    const int op = ip->op;
    PyObject *k = op == OP_ASSERT_TRUE || op == OP_ASSERT_LEN ? NULL : PyTuple_GET_ITEM(c->consts, ip->arg);
    return check_holds(op, x, k, ip->arg);
}

/* DICTS_SAME's test of the `k` dicts: 1 each one's tag is the one `ip` keeps, valid; 0 not
 * (the tags now kept, not valid until DICTS_PASSED); -1 an error -- one is not an exact
 * dict (``dicts_unchanged``'s TypeError) or no memory */
static int
dicts_same(Instr *ip, PyObject *const *dicts, Py_ssize_t k)
{
    if (ip->tags == NULL || ip->ntags != k) {
        PyMem_Free(ip->tags);
        ip->kind = CACHE_NONE;
        ip->ntags = k;
        ip->tags = PyMem_Calloc(k ? k : 1, sizeof(uint64_t));
        if (ip->tags == NULL) {
            ip->ntags = 0;
            PyErr_NoMemory();
            return -1;
        }
    }
    int same = ip->kind == CACHE_DICT;
    ip->kind = CACHE_NONE; /* (valid again where they are the same, or at DICTS_PASSED) */
    uint64_t small[8];
    uint64_t *now = k <= 8 ? small : PyMem_Malloc(k * sizeof(uint64_t));
    if (now == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int read = cfast_read_tags(dicts, k, now);
    if (read == 0) {
        same = same && memcmp(now, ip->tags, k * sizeof(uint64_t)) == 0;
        if (same) {
            ip->kind = CACHE_DICT;
        }
        else { /* a dict's tag never comes back: the old ones are of no use */
            memcpy(ip->tags, now, k * sizeof(uint64_t));
        }
    }
    if (now != small) {
        PyMem_Free(now);
    }
    return read < 0 ? -1 : same;
}

/* 1: the checks pass; 0: one fails (or raises an Exception, where guarded); -1: an error.
 * `kept` (not NULL): where they pass, the local `c->kept` (a new reference, NULL if unset) */
static int
run(CheckedLink *c, PyObject *const *args, Py_ssize_t n, PyObject **kept)
{
    /* (locals: the reads a program keeps, `check_program.REUSE_READS`, as well as its own) */
    PyObject *small_stack[16], *small_locals[32];
    PyObject **stack = c->depth <= 16 ? small_stack : PyMem_Calloc(c->depth, sizeof(PyObject *));
    PyObject **locals = c->nlocals <= 32 ? small_locals : PyMem_Calloc(c->nlocals, sizeof(PyObject *));
    if (stack == NULL || locals == NULL) {
        if (stack != NULL && stack != small_stack) {
            PyMem_Free(stack);
        }
        if (locals != NULL && locals != small_locals) {
            PyMem_Free(locals);
        }
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < c->nlocals; i++) {
        locals[i] = NULL;
    }
    Py_ssize_t sp = 0;
    int outcome = -1;
    /* the next op, and the constants, in locals: an op's dispatch is a load and a jump */
    Instr *const code = c->code, *next = code;
    PyObject *const *consts = &PyTuple_GET_ITEM(c->consts, 0);
    Instr *memo = NULL; /* the DICTS_SAME whose checks run now */
    PyObject *x, *y, *z;
    int t;
#define PUSH(v) do { if (sp >= c->depth) goto overflow; stack[sp++] = (v); } while (0)
#define POP() (stack[--sp])
#define NEED(k) do { if (sp < (k)) goto underflow; } while (0)
#define CONST(i) (consts[(i)])
#define CHECKED(v) do { PyObject *_v = (v); if (_v == NULL) goto error; PUSH(_v); } while (0)
/* v = local i (borrowed), UnboundLocalError where it is unset */
#define LOCAL_SET(v, i) do { \
        if (((v) = locals[(i)]) == NULL) { \
            PyErr_SetString(PyExc_UnboundLocalError, "a check's local read before it is set"); \
            goto error; \
        } \
    } while (0)
/* a check's verdict `t` (check_holds'): on, a miss, or an error */
#define ASSERTED(t) do { if ((t) < 0) goto error; if ((t) == 0) { outcome = 0; goto done; } } while (0)
/* PARAM A; ASSERT_<KIND> B */
/* v = parameter i (a new reference): the argument, or its default */
#define PARAM_GET(v, i) do { \
        Py_ssize_t _i = (Py_ssize_t)(i); \
        if (((v) = _i < n ? Py_NewRef(args[_i]) : param(c, args, n, _i)) == NULL) goto error; \
    } while (0)
/* (an argument is read borrowed: the caller holds it for the call, whatever code the
 * check runs; a default is a new reference, as the function's defaults may change) */
#define PARAM_CHECK(KIND) do { \
        Py_ssize_t _a = (Py_ssize_t)FIELD_A(arg); \
        PyObject *_k = (KIND) == OP_ASSERT_LEN ? NULL : CONST(FIELD_B(arg)); \
        if (_a < n) { \
            t = check_holds(KIND, args[_a], _k, FIELD_B(arg)); \
        } \
        else { \
            PARAM_GET(x, _a); \
            t = check_holds(KIND, x, _k, FIELD_B(arg)); \
            Py_DECREF(x); \
        } \
        ASSERTED(t); \
    } while (0)
/* v = *args item i (borrowed: the caller holds it), STAR_ITEM's IndexError past the end */
#define STAR_GET(v, i) do { \
        if (c->npos + (Py_ssize_t)(i) >= n) { \
            PyErr_SetString(PyExc_IndexError, "tuple index out of range"); \
            goto error; \
        } \
        (v) = args[c->npos + (Py_ssize_t)(i)]; \
    } while (0)
/* STAR_ITEM A; ASSERT_<KIND> B */
#define STAR_CHECK(KIND) do { \
        STAR_GET(x, FIELD_A(arg)); \
        Py_INCREF(x); /* (as the op pushes it: an __eq__ may drop every other reference) */ \
        t = check_holds(KIND, x, CONST(FIELD_B(arg)), 0); \
        Py_DECREF(x); \
        ASSERTED(t); \
    } while (0)
/* y = <read>; ASSERT_<KIND> consts[K] on it */
#define READ_CHECK(read, KIND, K) do { \
        y = (read); \
        if (y == NULL) goto error; \
        t = check_holds(KIND, y, CONST(K), 0); \
        Py_DECREF(y); \
        ASSERTED(t); \
    } while (0)
/* CONST A; ITEM B; ASSERT_<KIND> C -- and LOCAL A; ITEM B; ASSERT_<KIND> C */
#define CONST_ITEM_CHECK(KIND) READ_CHECK(item_of(ip, CONST(FIELD_A(arg)), CONST(FIELD_B(arg))), KIND, FIELD_C(arg))
#define LOCAL_ITEM_CHECK(KIND) do { \
        LOCAL_SET(x, FIELD_A(arg)); \
        READ_CHECK(item_of(ip, x, CONST(FIELD_B(arg))), KIND, FIELD_C(arg)); \
    } while (0)
/* x = pop; ITEM A (or MODULE_ATTR A); ASSERT_<KIND> B */
#define POPPED_CHECK(reader, KIND) do { \
        NEED(1); \
        x = POP(); \
        y = reader(ip, x, CONST(FIELD_A(arg))); \
        Py_DECREF(x); \
        if (y == NULL) goto error; \
        t = check_holds(KIND, y, CONST(FIELD_B(arg)), 0); \
        Py_DECREF(y); \
        ASSERTED(t); \
    } while (0)
#ifdef CCHECKS_COMPUTED_GOTO
    /* each op jumps to the next one's code itself: one indirect jump per op, which the CPU
     * predicts per op (as CPython's own loop does); the switch is the same code, portably */
    static void *const targets[OP_ALL_COUNT] = {
        [OP_END] = &&T_OP_END,
        [OP_MISS] = &&T_OP_MISS,
        [OP_PARAM] = &&T_OP_PARAM,
        [OP_STAR_ITEM] = &&T_OP_STAR_ITEM,
        [OP_STAR_LEN] = &&T_OP_STAR_LEN,
        [OP_STAR] = &&T_OP_STAR,
        [OP_DSTAR] = &&T_OP_DSTAR,
        [OP_KWONLY] = &&T_OP_KWONLY,
        [OP_CONST] = &&T_OP_CONST,
        [OP_LOCAL] = &&T_OP_LOCAL,
        [OP_STORE] = &&T_OP_STORE,
        [OP_DUP] = &&T_OP_DUP,
        [OP_POP] = &&T_OP_POP,
        [OP_ATTR] = &&T_OP_ATTR,
        [OP_ITEM] = &&T_OP_ITEM,
        [OP_SUBSCR] = &&T_OP_SUBSCR,
        [OP_STORE_SUBSCR] = &&T_OP_STORE_SUBSCR,
        [OP_CALL] = &&T_OP_CALL,
        [OP_TYPE] = &&T_OP_TYPE,
        [OP_LEN] = &&T_OP_LEN,
        [OP_COMPARE] = &&T_OP_COMPARE,
        [OP_NOT] = &&T_OP_NOT,
        [OP_NEG] = &&T_OP_NEG,
        [OP_BUILD_TUPLE] = &&T_OP_BUILD_TUPLE,
        [OP_JUMP] = &&T_OP_JUMP,
        [OP_JUMP_IF_FALSE_OR_POP] = &&T_OP_JUMP_IF_FALSE_OR_POP,
        [OP_JUMP_IF_TRUE_OR_POP] = &&T_OP_JUMP_IF_TRUE_OR_POP,
        [OP_POP_JUMP_IF_FALSE] = &&T_OP_POP_JUMP_IF_FALSE,
        [OP_POP_JUMP_IF_TRUE] = &&T_OP_POP_JUMP_IF_TRUE,
        [OP_ASSERT_TRUE] = &&T_OP_ASSERT_TRUE,
        [OP_ASSERT_TYPE] = &&T_OP_ASSERT_TYPE,
        [OP_ASSERT_IS] = &&T_OP_ASSERT_IS,
        [OP_ASSERT_IS_NOT] = &&T_OP_ASSERT_IS_NOT,
        [OP_ASSERT_EQ] = &&T_OP_ASSERT_EQ,
        [OP_ASSERT_LEN] = &&T_OP_ASSERT_LEN,
        [OP_ASSERT_IN] = &&T_OP_ASSERT_IN,
        [OP_ASSERT_NOT_IN] = &&T_OP_ASSERT_NOT_IN,
        [OP_MODULE_ATTR] = &&T_OP_MODULE_ATTR,
        [OP_CELL_CONTENTS] = &&T_OP_CELL_CONTENTS,
        [OP_BINARY] = &&T_OP_BINARY,
        [OP_ASSERT_ITEMS] = &&T_OP_ASSERT_ITEMS,
        [OP_ASSERT_ITEMS_TYPE] = &&T_OP_ASSERT_ITEMS_TYPE,
        [OP_PARAM_TYPE] = &&T_OP_PARAM_TYPE,
        [OP_PARAM_IS] = &&T_OP_PARAM_IS,
        [OP_PARAM_EQ] = &&T_OP_PARAM_EQ,
        [OP_PARAM_LEN] = &&T_OP_PARAM_LEN,
        [OP_ITEM_TYPE] = &&T_OP_ITEM_TYPE,
        [OP_ITEM_IS] = &&T_OP_ITEM_IS,
        [OP_ITEM_EQ] = &&T_OP_ITEM_EQ,
        [OP_MODULE_ATTR_IS] = &&T_OP_MODULE_ATTR_IS,
        [OP_CONST_ITEM] = &&T_OP_CONST_ITEM,
        [OP_LOCAL_ITEM] = &&T_OP_LOCAL_ITEM,
        [OP_CONST_NOT_IN] = &&T_OP_CONST_NOT_IN,
        [OP_CONST_ITEM_IS] = &&T_OP_CONST_ITEM_IS,
        [OP_LOCAL_ITEM_IS] = &&T_OP_LOCAL_ITEM_IS,
        [OP_CONST_ITEM_TYPE] = &&T_OP_CONST_ITEM_TYPE,
        [OP_CONST_ITEM_EQ] = &&T_OP_CONST_ITEM_EQ,
        [OP_LOCAL_ITEM_TYPE] = &&T_OP_LOCAL_ITEM_TYPE,
        [OP_LOCAL_ITEM_EQ] = &&T_OP_LOCAL_ITEM_EQ,
        [OP_CONST_ATTR] = &&T_OP_CONST_ATTR,
        [OP_PARAM_TYPE_EQ] = &&T_OP_PARAM_TYPE_EQ,
        [OP_PARAM_ITEM] = &&T_OP_PARAM_ITEM,
        [OP_KEEP] = &&T_OP_KEEP,
        [OP_LOCAL_TYPE] = &&T_OP_LOCAL_TYPE,
        [OP_LOCAL_LEN] = &&T_OP_LOCAL_LEN,
        [OP_PARAM_ITEMS] = &&T_OP_PARAM_ITEMS,
        [OP_PARAM_ITEMS_TYPE] = &&T_OP_PARAM_ITEMS_TYPE,
        [OP_CONST_MODULE_ATTR_IS] = &&T_OP_CONST_MODULE_ATTR_IS,
        [OP_STAR_LEN_EQ] = &&T_OP_STAR_LEN_EQ,
        [OP_STAR_ITEM_TYPE] = &&T_OP_STAR_ITEM_TYPE,
        [OP_STAR_ITEM_IS] = &&T_OP_STAR_ITEM_IS,
        [OP_STAR_ITEM_EQ] = &&T_OP_STAR_ITEM_EQ,
        [OP_STAR_ITEM_TYPE_EQ] = &&T_OP_STAR_ITEM_TYPE_EQ,
        [OP_DICTS_SAME] = &&T_OP_DICTS_SAME,
        [OP_DICTS_PASSED] = &&T_OP_DICTS_PASSED,
        [OP_ASSERT_CODES] = &&T_OP_ASSERT_CODES,
        [OP_PARAM_LEN_ITEMS_SAME] = &&T_OP_PARAM_LEN_ITEMS_SAME,
        [OP_CONST_SIGN_IS] = &&T_OP_CONST_SIGN_IS,
        [OP_PARAM_TYPE_SAME] = &&T_OP_PARAM_TYPE_SAME,
    };
#define TARGET(name) case name: T_##name:
#define DISPATCH() do { ip = next++; op = ip->op; arg = ip->arg; goto *targets[op]; } while (0)
#else
#define TARGET(name) case name:
#define DISPATCH() break
#endif
    Instr *ip;
    int op;
    long long arg;
    for (;;) {
        ip = next++;
        op = ip->op;
        arg = ip->arg;
        switch (op) {
        TARGET(OP_END)
            outcome = 1;
            goto done;
        TARGET(OP_MISS)
            outcome = 0;
            goto done;
        TARGET(OP_PARAM)
            CHECKED(param(c, args, n, arg));
            DISPATCH();
        TARGET(OP_STAR_ITEM)
            if (c->npos + arg >= n) {
                PyErr_SetString(PyExc_IndexError, "tuple index out of range");
                goto error;
            }
            PUSH(Py_NewRef(args[c->npos + arg]));
            DISPATCH();
        TARGET(OP_STAR_LEN)
            CHECKED(PyLong_FromSsize_t(n > c->npos ? n - c->npos : 0));
            DISPATCH();
        TARGET(OP_STAR)
            CHECKED(star_tuple(c, args, n));
            DISPATCH();
        TARGET(OP_DSTAR)
            CHECKED(PyDict_New());
            DISPATCH();
        TARGET(OP_KWONLY) {
            PyObject *kwdefaults = PyFunction_GET_KW_DEFAULTS(c->link);
            x = kwdefaults != NULL ? PyDict_GetItemWithError(kwdefaults, CONST(arg)) : NULL;
            if (x == NULL) {
                if (!PyErr_Occurred()) {
                    PyErr_SetString(PyExc_SystemError, "CheckedLink: a keyword-only parameter without a default");
                }
                goto error;
            }
            PUSH(Py_NewRef(x));
            DISPATCH();
        }
        TARGET(OP_CONST_SIGN_IS)
            if (ip->aux < n && PyFloat_CheckExact(args[ip->aux])) {
                /* copysign(1.0, x) is -1.0 where x's sign bit is set (a NaN's too), else 1.0 */
                int negative = signbit(PyFloat_AS_DOUBLE(args[ip->aux])) != 0;
                ip->served++;
                if (negative != (PyFloat_AS_DOUBLE(ip->found) < 0)) {
                    outcome = 0;
                    goto done;
                }
                next += 4; /* CONST 1.0; PARAM; CALL 2; ASSERT_EQ: decided */
                DISPATCH();
            }
            PUSH(Py_NewRef(CONST(arg)));
            DISPATCH();
        TARGET(OP_CONST)
            PUSH(Py_NewRef(CONST(arg)));
            DISPATCH();
        TARGET(OP_LOCAL)
            if (locals[arg] == NULL) {
                PyErr_SetString(PyExc_UnboundLocalError, "a check's local read before it is set");
                goto error;
            }
            PUSH(Py_NewRef(locals[arg]));
            DISPATCH();
        TARGET(OP_STORE)
            NEED(1);
            x = POP();
            Py_XSETREF(locals[arg], x);
            DISPATCH();
        TARGET(OP_DUP)
            NEED(1);
            x = Py_NewRef(stack[sp - 1]);
            PUSH(x);
            DISPATCH();
        TARGET(OP_POP)
            NEED(1);
            x = POP();
            Py_DECREF(x);
            DISPATCH();
        TARGET(OP_ATTR)
        TARGET(OP_MODULE_ATTR)
        TARGET(OP_CELL_CONTENTS)
        TARGET(OP_ITEM)
        TARGET(OP_TYPE)
        TARGET(OP_LEN)
        TARGET(OP_NOT)
        TARGET(OP_NEG)
            NEED(1);
            x = POP();
            y = unary(c, ip, x);
            Py_DECREF(x);
            CHECKED(y);
            DISPATCH();
        TARGET(OP_BINARY)
            NEED(2);
            y = POP();
            x = POP();
            z = binary(x, y, arg);
            Py_DECREF(x);
            Py_DECREF(y);
            CHECKED(z);
            DISPATCH();
        TARGET(OP_SUBSCR)
        TARGET(OP_COMPARE)
            NEED(2);
            y = POP();
            x = POP();
            z = op == OP_SUBSCR ? PyObject_GetItem(x, y) : compare(x, y, arg);
            Py_DECREF(x);
            Py_DECREF(y);
            CHECKED(z);
            DISPATCH();
        TARGET(OP_STORE_SUBSCR)
            NEED(3);
            y = POP();  /* key */
            x = POP();  /* object */
            z = POP();  /* value */
            t = PyObject_SetItem(x, y, z);
            Py_DECREF(x);
            Py_DECREF(y);
            Py_DECREF(z);
            if (t < 0) {
                goto error;
            }
            DISPATCH();
        TARGET(OP_CALL) {
            NEED(arg + 1);
            PyObject **base = &stack[sp - arg - 1];
            x = PyObject_Vectorcall(base[0], base + 1, arg, NULL);
            for (Py_ssize_t i = 0; i <= arg; i++) {
                Py_DECREF(base[i]);
            }
            sp -= arg + 1;
            CHECKED(x);
            DISPATCH();
        }
        TARGET(OP_BUILD_TUPLE) {
            NEED(arg);
            x = PyTuple_New(arg);
            if (x == NULL) {
                goto error;
            }
            for (Py_ssize_t i = arg - 1; i >= 0; i--) {
                PyTuple_SET_ITEM(x, i, POP());
            }
            PUSH(x);
            DISPATCH();
        }
        TARGET(OP_JUMP)
            next = code + arg;
            DISPATCH();
        TARGET(OP_JUMP_IF_FALSE_OR_POP)
        TARGET(OP_JUMP_IF_TRUE_OR_POP)
            NEED(1);
            t = PyObject_IsTrue(stack[sp - 1]);
            if (t < 0) {
                goto error;
            }
            if (t == (op == OP_JUMP_IF_TRUE_OR_POP)) {
                next = code + arg;
            }
            else {
                x = POP();
                Py_DECREF(x);
            }
            DISPATCH();
        TARGET(OP_POP_JUMP_IF_FALSE)
        TARGET(OP_POP_JUMP_IF_TRUE)
            NEED(1);
            x = POP();
            t = PyObject_IsTrue(x);
            Py_DECREF(x);
            if (t < 0) {
                goto error;
            }
            if (t == (op == OP_POP_JUMP_IF_TRUE)) {
                next = code + arg;
            }
            DISPATCH();
        TARGET(OP_ASSERT_TRUE)
        TARGET(OP_ASSERT_TYPE)
        TARGET(OP_ASSERT_IS)
        TARGET(OP_ASSERT_IS_NOT)
        TARGET(OP_ASSERT_EQ)
        TARGET(OP_ASSERT_LEN)
        TARGET(OP_ASSERT_IN)
        TARGET(OP_ASSERT_NOT_IN)
        TARGET(OP_ASSERT_ITEMS)
        TARGET(OP_ASSERT_ITEMS_TYPE)
            NEED(1);
            x = POP();
            t = holds(c, ip, x);
            Py_DECREF(x);
            if (t < 0) {
                goto error;
            }
            if (t == 0) {
                outcome = 0;
                goto done;
            }
            DISPATCH();
        TARGET(OP_PARAM_TYPE)
            PARAM_CHECK(OP_ASSERT_TYPE);
            DISPATCH();
        TARGET(OP_PARAM_IS)
            PARAM_CHECK(OP_ASSERT_IS);
            DISPATCH();
        TARGET(OP_PARAM_EQ)
            PARAM_CHECK(OP_ASSERT_EQ);
            DISPATCH();
        TARGET(OP_PARAM_LEN_ITEMS_SAME)
            if (FIELD_A(arg) < n) {
                x = args[FIELD_A(arg)];
                if ((PyList_CheckExact(x) || PyTuple_CheckExact(x)) && Py_SIZE(x) == (Py_ssize_t)FIELD_B(arg)) {
                    PyObject **items = PyList_CheckExact(x) ? ((PyListObject *)x)->ob_item : ((PyTupleObject *)x)->ob_item;
                    PyObject **want = ((PyTupleObject *)ip->found)->ob_item;
                    Py_ssize_t j = 0, m = Py_SIZE(x);
                    while (j < m && items[j] == want[j]) {
                        j++;
                    }
                    if (j == m) {
                        ip->served++;
                        next++; /* the PARAM_ITEMS: passes */
                        DISPATCH();
                    }
                }
            }
            PARAM_CHECK(OP_ASSERT_LEN);
            DISPATCH();
        TARGET(OP_PARAM_LEN)
            PARAM_CHECK(OP_ASSERT_LEN);
            DISPATCH();
        TARGET(OP_ITEM_TYPE)
            POPPED_CHECK(item_of, OP_ASSERT_TYPE);
            DISPATCH();
        TARGET(OP_ITEM_IS)
            POPPED_CHECK(item_of, OP_ASSERT_IS);
            DISPATCH();
        TARGET(OP_ITEM_EQ)
            POPPED_CHECK(item_of, OP_ASSERT_EQ);
            DISPATCH();
        TARGET(OP_MODULE_ATTR_IS)
            POPPED_CHECK(module_attr, OP_ASSERT_IS);
            DISPATCH();
        TARGET(OP_CONST_ITEM)
            CHECKED(item_of(ip, CONST(FIELD_A(arg)), CONST(FIELD_B(arg))));
            DISPATCH();
        TARGET(OP_LOCAL_ITEM)
            LOCAL_SET(x, FIELD_A(arg));
            CHECKED(item_of(ip, x, CONST(FIELD_B(arg))));
            DISPATCH();
        TARGET(OP_CONST_NOT_IN)
            t = check_holds(OP_ASSERT_NOT_IN, CONST(FIELD_A(arg)), CONST(FIELD_B(arg)), 0);
            ASSERTED(t);
            DISPATCH();
        TARGET(OP_CONST_ITEM_IS)
            /* a global's check (``___dict['heapq'] is ___module``): while the dict's tag is
             * the one of the op's last read, that read's value decides, without a read */
            x = CONST(FIELD_A(arg));
            if (ip->kind == CACHE_DICT && ip->dict == x && ip->version == dict_tag(x)) {
                if (ip->found != CONST(FIELD_C(arg))) {
                    outcome = 0;
                    goto done;
                }
                DISPATCH();
            }
            CONST_ITEM_CHECK(OP_ASSERT_IS);
            DISPATCH();
        TARGET(OP_CONST_ITEM_TYPE)
            CONST_ITEM_CHECK(OP_ASSERT_TYPE);
            DISPATCH();
        TARGET(OP_CONST_ITEM_EQ)
            CONST_ITEM_CHECK(OP_ASSERT_EQ);
            DISPATCH();
        TARGET(OP_LOCAL_ITEM_IS)
            LOCAL_ITEM_CHECK(OP_ASSERT_IS);
            DISPATCH();
        TARGET(OP_LOCAL_ITEM_TYPE)
            LOCAL_ITEM_CHECK(OP_ASSERT_TYPE);
            DISPATCH();
        TARGET(OP_LOCAL_ITEM_EQ)
            LOCAL_ITEM_CHECK(OP_ASSERT_EQ);
            DISPATCH();
        TARGET(OP_CONST_ATTR)
            CHECKED(attribute(ip, CONST(FIELD_A(arg)), CONST(FIELD_B(arg))));
            DISPATCH();
        TARGET(OP_PARAM_TYPE_SAME)
            if (FIELD_A(arg) < n && args[FIELD_A(arg)] == CONST(FIELD_C(arg))) {
                ip->served++;
                DISPATCH();
            }
            /* fall through: PARAM_TYPE_EQ as itself */
        TARGET(OP_PARAM_TYPE_EQ)
            if (FIELD_A(arg) < n) { /* borrowed, as PARAM_CHECK's */
                x = args[FIELD_A(arg)];
                t = (PyObject *)Py_TYPE(x) == CONST(FIELD_B(arg)) ? cfast_equal(x, CONST(FIELD_C(arg))) : 0;
            }
            else {
                PARAM_GET(x, FIELD_A(arg));
                t = (PyObject *)Py_TYPE(x) == CONST(FIELD_B(arg)) ? cfast_equal(x, CONST(FIELD_C(arg))) : 0;
                Py_DECREF(x);
            }
            ASSERTED(t);
            DISPATCH();
        TARGET(OP_PARAM_ITEM)
            PARAM_GET(x, FIELD_A(arg));
            y = item_of(ip, x, CONST(FIELD_B(arg)));
            Py_DECREF(x);
            CHECKED(y);
            DISPATCH();
        TARGET(OP_KEEP)
            NEED(1);
            Py_XSETREF(locals[FIELD_A(arg)], Py_NewRef(stack[sp - 1]));
            DISPATCH();
        TARGET(OP_LOCAL_TYPE)
            LOCAL_SET(x, FIELD_A(arg));
            t = check_holds(OP_ASSERT_TYPE, x, CONST(FIELD_B(arg)), 0);
            ASSERTED(t);
            DISPATCH();
        TARGET(OP_LOCAL_LEN)
            LOCAL_SET(x, FIELD_A(arg));
            t = check_holds(OP_ASSERT_LEN, x, NULL, FIELD_B(arg));
            ASSERTED(t);
            DISPATCH();
        TARGET(OP_PARAM_ITEMS)
            PARAM_CHECK(OP_ASSERT_ITEMS);
            DISPATCH();
        TARGET(OP_PARAM_ITEMS_TYPE)
            PARAM_CHECK(OP_ASSERT_ITEMS_TYPE);
            DISPATCH();
        TARGET(OP_CONST_MODULE_ATTR_IS)
            /* as CONST_ITEM_IS: `ip->dict` is the constant module's own dict (module_attr
             * remembers no other), which lives as long as the module does */
            x = CONST(FIELD_A(arg));
            if (ip->kind == CACHE_DICT && Py_IS_TYPE(x, &PyModule_Type) && ip->version == dict_tag(ip->dict)) {
                if (ip->found != CONST(FIELD_C(arg))) {
                    outcome = 0;
                    goto done;
                }
                DISPATCH();
            }
            READ_CHECK(module_attr(ip, CONST(FIELD_A(arg)), CONST(FIELD_B(arg))), OP_ASSERT_IS, FIELD_C(arg));
            DISPATCH();
        TARGET(OP_STAR_LEN_EQ)
            x = PyLong_FromSsize_t(n > c->npos ? n - c->npos : 0);
            if (x == NULL) {
                goto error;
            }
            t = check_holds(OP_ASSERT_EQ, x, CONST(FIELD_B(arg)), 0);
            Py_DECREF(x);
            ASSERTED(t);
            DISPATCH();
        TARGET(OP_STAR_ITEM_TYPE)
            STAR_CHECK(OP_ASSERT_TYPE);
            DISPATCH();
        TARGET(OP_STAR_ITEM_IS)
            STAR_CHECK(OP_ASSERT_IS);
            DISPATCH();
        TARGET(OP_STAR_ITEM_EQ)
            STAR_CHECK(OP_ASSERT_EQ);
            DISPATCH();
        TARGET(OP_STAR_ITEM_TYPE_EQ)
            STAR_GET(x, FIELD_A(arg));
            Py_INCREF(x);
            t = (PyObject *)Py_TYPE(x) == CONST(FIELD_B(arg)) ? cfast_equal(x, CONST(FIELD_C(arg))) : 0;
            Py_DECREF(x);
            ASSERTED(t);
            DISPATCH();
        TARGET(OP_DICTS_SAME)
            NEED(FIELD_A(arg));
            t = dicts_same(ip, &stack[sp - FIELD_A(arg)], FIELD_A(arg));
            for (long long k = FIELD_A(arg); k > 0; k--) {
                x = POP();
                Py_DECREF(x);
            }
            if (t < 0) {
                goto error;
            }
            if (t) {
                next = code + FIELD_B(arg);
            }
            else {
                memo = ip;
            }
            DISPATCH();
        TARGET(OP_DICTS_PASSED)
            if (memo == NULL) {
                PyErr_SetString(PyExc_SystemError, "CheckedLink: DICTS_PASSED without a DICTS_SAME");
                goto error;
            }
            memo->kind = CACHE_DICT;
            memo = NULL;
            DISPATCH();
        TARGET(OP_ASSERT_CODES)
            t = cfast_codes_are(CONST(arg));
            ASSERTED(t);
            DISPATCH();
        default:
            PyErr_Format(PyExc_SystemError, "CheckedLink: unknown op %d", op);
            goto error;
        }
    }
overflow:
    PyErr_SetString(PyExc_SystemError, "CheckedLink: the program overflows its stack");
    goto error;
underflow:
    PyErr_SetString(PyExc_SystemError, "CheckedLink: the program pops an empty stack");
error:
    /* `except Exception: <miss>` in the link: an Exception is a miss, anything else goes up */
    outcome = c->guarded && PyErr_ExceptionMatches(PyExc_Exception) ? 0 : -1;
    if (outcome == 0) {
        PyErr_Clear();
    }
done:
    while (sp > 0) {
        Py_DECREF(stack[--sp]);
    }
    if (kept != NULL && outcome == 1 && c->kept >= 0) {
        *kept = locals[c->kept]; /* the reference moves out */
        locals[c->kept] = NULL;
    }
    for (Py_ssize_t i = 0; i < c->nlocals; i++) {
        Py_XDECREF(locals[i]);
    }
    if (stack != small_stack) {
        PyMem_Free(stack);
    }
    if (locals != small_locals) {
        PyMem_Free(locals);
    }
    return outcome;
#undef PUSH
#undef POP
#undef NEED
#undef CONST
#undef CHECKED
#undef ASSERTED
#undef LOCAL_SET
#undef PARAM_CHECK
#undef READ_CHECK
#undef POPPED_CHECK
#undef PARAM_GET
#undef CONST_ITEM_CHECK
#undef LOCAL_ITEM_CHECK
#undef TARGET
#undef DISPATCH
}

/* _crecipes.c: what a Recipe makes (given the parameters it reads); whether an object is one */
PyObject *recipe_make(PyObject *recipe, PyObject *const *params);
Py_ssize_t recipe_params(PyObject *recipe);
int recipe_check(PyObject *op);

/* what the region's recipe makes, given the call's arguments */
static PyObject *
recipe_of_call(CheckedLink *c, PyObject *const *args, Py_ssize_t n)
{
    Py_ssize_t np = recipe_params(c->result);
    if (np <= n) { /* the parameters it reads are arguments */
        return recipe_make(c->result, args);
    }
    if (np > c->npos) { /* an item of *args the call did not pass: the region says what */
        return PyObject_Vectorcall(c->body, args, n, NULL);
    }
    PyObject *params[16];
    Py_ssize_t i;
    PyObject *res = NULL;
    for (i = 0; i < np; i++) {
        if ((params[i] = param(c, args, n, i)) == NULL) {
            goto done;
        }
    }
    res = recipe_make(c->result, params);
done:
    while (i-- > 0) {
        Py_DECREF(params[i]);
    }
    return res;
}

static PyObject *
checked_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    /* `callable` is held by our caller for the call (the vectorcall protocol's rule); each
     * next link by us: a check may re-arm the chain and drop it */
    PyObject *cur = callable;
    int owned = 0;
#define LET_GO(cur) do { if (owned) Py_DECREF(cur); } while (0)
    while (Py_IS_TYPE(cur, &CheckedLinkType)) {
        CheckedLink *c = (CheckedLink *)cur;
        PyObject *res;
        if ((kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) || !binds_positionally(c, n)) {
            res = PyObject_Vectorcall(c->link, args, nargsf, kwnames);
            LET_GO(cur);
            return res;
        }
        PyObject *kept = NULL;
        int passed = run(c, args, n, &kept);
        if (passed != 0) {
            if (passed < 0) {
                res = NULL;
            }
            else if (kept != NULL) { /* the region's result, which the checks made */
                c->hits++;
                res = kept;
            }
            else {
                c->hits++;
                res = c->result != NULL ? recipe_of_call(c, args, n) : PyObject_Vectorcall(c->body, args, nargsf, NULL);
            }
            LET_GO(cur);
            return res;
        }
        PyObject *next = c->next;
        if (next == NULL) {
            LET_GO(cur);
            PyErr_SetString(PyExc_RuntimeError, "CheckedLink: not chained (no next)");
            return NULL;
        }
        next = Py_NewRef(next);
        LET_GO(cur);
        cur = next;
        owned = 1;
    }
    PyObject *res = PyObject_Vectorcall(cur, args, nargsf, kwnames);
    LET_GO(cur);
    return res;
#undef LET_GO
}

static const int takes_const[OP_COUNT] = {
    [OP_KWONLY] = 1, [OP_CONST] = 1, [OP_ATTR] = 1, [OP_ITEM] = 1, [OP_ASSERT_TYPE] = 1,
    [OP_ASSERT_IS] = 1, [OP_ASSERT_IS_NOT] = 1, [OP_ASSERT_EQ] = 1, [OP_ASSERT_IN] = 1,
    [OP_ASSERT_NOT_IN] = 1, [OP_MODULE_ATTR] = 1, [OP_ASSERT_ITEMS] = 1, [OP_ASSERT_ITEMS_TYPE] = 1,
    [OP_ASSERT_CODES] = 1,
};

/* what each field of a fused op's argument indexes (validate checks it is in range) */
enum { F_NONE, F_CONST, F_PARAM, F_LOCAL, F_ANY, F_TARGET };
static const unsigned char fused_fields[OP_COUNT][3] = {
    [OP_PARAM_TYPE] = {F_PARAM, F_CONST}, [OP_PARAM_IS] = {F_PARAM, F_CONST},
    [OP_PARAM_EQ] = {F_PARAM, F_CONST}, [OP_PARAM_LEN] = {F_PARAM, F_ANY},
    [OP_ITEM_TYPE] = {F_CONST, F_CONST}, [OP_ITEM_IS] = {F_CONST, F_CONST},
    [OP_ITEM_EQ] = {F_CONST, F_CONST}, [OP_MODULE_ATTR_IS] = {F_CONST, F_CONST},
    [OP_CONST_ITEM] = {F_CONST, F_CONST}, [OP_LOCAL_ITEM] = {F_LOCAL, F_CONST},
    [OP_CONST_NOT_IN] = {F_CONST, F_CONST}, [OP_CONST_ITEM_IS] = {F_CONST, F_CONST, F_CONST},
    [OP_LOCAL_ITEM_IS] = {F_LOCAL, F_CONST, F_CONST}, [OP_CONST_ITEM_TYPE] = {F_CONST, F_CONST, F_CONST},
    [OP_CONST_ITEM_EQ] = {F_CONST, F_CONST, F_CONST}, [OP_LOCAL_ITEM_TYPE] = {F_LOCAL, F_CONST, F_CONST},
    [OP_LOCAL_ITEM_EQ] = {F_LOCAL, F_CONST, F_CONST}, [OP_CONST_ATTR] = {F_CONST, F_CONST},
    [OP_PARAM_TYPE_EQ] = {F_PARAM, F_CONST, F_CONST}, [OP_PARAM_ITEM] = {F_PARAM, F_CONST},
    [OP_KEEP] = {F_LOCAL}, [OP_LOCAL_TYPE] = {F_LOCAL, F_CONST}, [OP_LOCAL_LEN] = {F_LOCAL, F_ANY},
    [OP_PARAM_ITEMS] = {F_PARAM, F_CONST}, [OP_PARAM_ITEMS_TYPE] = {F_PARAM, F_CONST},
    [OP_CONST_MODULE_ATTR_IS] = {F_CONST, F_CONST, F_CONST},
    [OP_STAR_LEN_EQ] = {F_NONE, F_CONST}, [OP_STAR_ITEM_TYPE] = {F_ANY, F_CONST},
    [OP_STAR_ITEM_IS] = {F_ANY, F_CONST}, [OP_STAR_ITEM_EQ] = {F_ANY, F_CONST},
    [OP_STAR_ITEM_TYPE_EQ] = {F_ANY, F_CONST, F_CONST},
    [OP_DICTS_SAME] = {F_ANY, F_TARGET}, [OP_DICTS_PASSED] = {F_NONE},
};

/* a fused op's fields each in range, and none set beyond its last */
static const char *
fused_wrong(CheckedLink *c, const Instr *in)
{
    const unsigned char *kinds = fused_fields[in->op];
    long long fields[3] = {FIELD_A(in->arg), FIELD_B(in->arg), FIELD_C(in->arg)};
    for (int f = 0; f < 3; f++) {
        long long v = fields[f];
        switch (kinds[f]) {
        case F_NONE:
            if (v != 0) {
                return "a fused op's unused field set";
            }
            break;
        case F_CONST:
            if (v >= PyTuple_GET_SIZE(c->consts)) {
                return "a constant out of range";
            }
            break;
        case F_PARAM:
            if (v >= c->npos) {
                return "a parameter out of range";
            }
            break;
        case F_LOCAL:
            if (v >= c->nlocals) {
                return "a local out of range";
            }
            break;
        case F_TARGET:
            if (v >= c->ncode) {
                return "a jump out of the program";
            }
            break;
        }
    }
    return NULL;
}

static const int takes_target[OP_COUNT] = {
    [OP_JUMP] = 1, [OP_JUMP_IF_FALSE_OR_POP] = 1, [OP_JUMP_IF_TRUE_OR_POP] = 1,
    [OP_POP_JUMP_IF_FALSE] = 1, [OP_POP_JUMP_IF_TRUE] = 1,
};

/* an ASSERT_ITEMS constant is (indices or None, types, values) as `items_are` takes them
 * (None: the first ones in order, 0, 1, ...) */
static int
items_const(PyObject *k)
{
    return PyTuple_CheckExact(k) && PyTuple_GET_SIZE(k) == 3
        && cfast_items_shape(PyTuple_GET_ITEM(k, 0) == Py_None ? NULL : PyTuple_GET_ITEM(k, 0), PyTuple_GET_ITEM(k, 1),
                             PyTuple_GET_ITEM(k, 2));
}

/* an ASSERT_ITEMS constant (valid: `items_const`) of the first `len` items in order, each
 * value of a type whose identity is equality (exact int, str, bytes) and of its type: an item
 * that is the value itself passes without code */
static int
items_by_identity(PyObject *k, long long len)
{
    PyObject *types = PyTuple_GET_ITEM(k, 1), *values = PyTuple_GET_ITEM(k, 2);
    if (PyTuple_GET_ITEM(k, 0) != Py_None || PyTuple_GET_SIZE(values) != len) {
        return 0;
    }
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(values); j++) {
        PyObject *v = PyTuple_GET_ITEM(values, j);
        PyObject *t = (PyObject *)Py_TYPE(v);
        if (t != PyTuple_GET_ITEM(types, j) || !cfast_identity_equality(t)) {
            return 0;
        }
    }
    return 1;
}

/* an exact float equal to `value` */
static int
float_is(PyObject *x, double value)
{
    return PyFloat_CheckExact(x) && PyFloat_AS_DOUBLE(x) == value;
}

/* `in` and the four ops after it are ``copysign(1.0, x) == K`` of a parameter, with the very
 * math.copysign, 1.0 and K 1.0 or -1.0: CONST, CONST, PARAM, CALL 2, ASSERT_EQ */
static int
sign_test(CheckedLink *c, const Instr *in)
{
    if (in[0].op != OP_CONST || in[1].op != OP_CONST || in[2].op != OP_PARAM || in[3].op != OP_CALL
        || in[3].arg != 2 || in[4].op != OP_ASSERT_EQ || in[2].arg >= c->npos) {
        return 0;
    }
    PyObject *k = PyTuple_GET_ITEM(c->consts, in[4].arg);
    if (!float_is(PyTuple_GET_ITEM(c->consts, in[1].arg), 1.0) || !(float_is(k, 1.0) || float_is(k, -1.0))) {
        return 0;
    }
    PyObject *math = PyImport_ImportModule("math"), *copysign = NULL;
    if (math != NULL) {
        copysign = PyObject_GetAttrString(math, "copysign");
        Py_DECREF(math);
    }
    if (copysign == NULL) {
        PyErr_Clear(); /* no shortcut, the plain ops */
        return 0;
    }
    int same = copysign == PyTuple_GET_ITEM(c->consts, in[0].arg);
    Py_DECREF(copysign);
    return same;
}

/* the internal ops (after OP_COUNT) put in place of the program's own where they do the same
 * faster; the ops they stand for stay where they are (a jump may reach them) */
static void
superops(CheckedLink *c)
{
    for (Py_ssize_t i = 0; i + 1 < c->ncode; i++) {
        Instr *in = &c->code[i], *after = in + 1;
        if (in->op == OP_PARAM_LEN && after->op == OP_PARAM_ITEMS && FIELD_A(after->arg) == FIELD_A(in->arg)
            && FIELD_A(in->arg) < c->npos
            && items_by_identity(PyTuple_GET_ITEM(c->consts, FIELD_B(after->arg)), FIELD_B(in->arg))) {
            in->op = OP_PARAM_LEN_ITEMS_SAME;
            in->found = PyTuple_GET_ITEM(PyTuple_GET_ITEM(c->consts, FIELD_B(after->arg)), 2); /* borrowed */
        }
        else if (in->op == OP_PARAM_TYPE_EQ && cfast_identity_equality(PyTuple_GET_ITEM(c->consts, FIELD_B(in->arg)))
                 && Py_IS_TYPE(PyTuple_GET_ITEM(c->consts, FIELD_C(in->arg)),
                               (PyTypeObject *)PyTuple_GET_ITEM(c->consts, FIELD_B(in->arg)))) {
            in->op = OP_PARAM_TYPE_SAME;
        }
        else if (i + 4 < c->ncode && sign_test(c, in)) {
            in->op = OP_CONST_SIGN_IS;
            in->aux = (Py_ssize_t)in[2].arg;
            in->found = PyTuple_GET_ITEM(c->consts, in[4].arg); /* borrowed */
        }
    }
}

/* a program that cannot read out of bounds: known ops, indices in range, jumps inside,
 * the last op an END or a MISS, nothing negative, ASSERT_ITEMS constants of their shape */
static int
validate(CheckedLink *c)
{
    Py_ssize_t nconsts = PyTuple_GET_SIZE(c->consts);
    for (Py_ssize_t i = 0; i < c->ncode; i++) {
        Instr in = c->code[i];
        const char *wrong = NULL;
        if (in.op < 0 || in.op >= OP_COUNT) {
            wrong = "an unknown op";
        }
        else if (in.arg < 0) {
            wrong = "a negative argument";
        }
        else if (takes_const[in.op] && in.arg >= nconsts) {
            wrong = "a constant out of range";
        }
        else if (takes_target[in.op] && in.arg >= c->ncode) {
            wrong = "a jump out of the program";
        }
        else if ((in.op == OP_LOCAL || in.op == OP_STORE) && in.arg >= c->nlocals) {
            wrong = "a local out of range";
        }
        else if (in.op == OP_PARAM && in.arg >= c->npos) {
            wrong = "a parameter out of range";
        }
        else if ((in.op == OP_STAR_ITEM || in.op == OP_STAR_LEN || in.op == OP_STAR
                  || (in.op >= OP_STAR_LEN_EQ && in.op <= OP_STAR_ITEM_TYPE_EQ)) && !c->star) {
            wrong = "*args of a link without them";
        }
        else if (in.op == OP_COMPARE && in.arg > COMPARE_NOT_IN) {
            wrong = "an unknown comparison";
        }
        else if (in.op >= OP_PARAM_TYPE && in.op <= OP_DICTS_PASSED) { /* (their arguments: fields) */
            wrong = fused_wrong(c, &in);
        }
        if (wrong == NULL && ((in.op == OP_ASSERT_ITEMS && !items_const(PyTuple_GET_ITEM(c->consts, in.arg)))
                              || (in.op == OP_PARAM_ITEMS && !items_const(PyTuple_GET_ITEM(c->consts, FIELD_B(in.arg)))))) {
            wrong = "an ASSERT_ITEMS constant not (indices, types, values) of one length";
        }
        if (wrong != NULL) {
            PyErr_Format(PyExc_ValueError, "CheckedLink: %s at %zd", wrong, i);
            return -1;
        }
    }
    if (c->ncode == 0 || (c->code[c->ncode - 1].op != OP_END && c->code[c->ncode - 1].op != OP_MISS)) {
        PyErr_SetString(PyExc_ValueError, "CheckedLink: a program ends with END or MISS");
        return -1;
    }
    return 0;
}

static PyObject *
checked_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"code", "consts", "nlocals", "depth", "npos", "star", "guarded",
                            "body", "link", "result", "kept", NULL};
    PyObject *code, *consts, *body, *link, *result;
    Py_ssize_t nlocals, depth, npos, kept = -1;
    int star, guarded;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!nnnppOOO!|n:CheckedLink", names, &PyTuple_Type, &code,
                                     &PyTuple_Type, &consts, &nlocals, &depth, &npos, &star, &guarded, &body,
                                     &link, &PyTuple_Type, &result, &kept)) {
        return NULL;
    }
    if (kept < -1 || kept >= nlocals || (kept >= 0 && PyTuple_GET_SIZE(result) != 0)) {
        PyErr_SetString(PyExc_ValueError, "CheckedLink: kept is -1 or a local, and then result is ()");
        return NULL;
    }
    if (!PyFunction_Check(link) || !PyCallable_Check(body) || PyTuple_GET_SIZE(result) > 1
        || (PyTuple_GET_SIZE(result) == 1
            && (!recipe_check(PyTuple_GET_ITEM(result, 0))
                || (recipe_params(PyTuple_GET_ITEM(result, 0)) > npos && !star)))
        || PyTuple_GET_SIZE(code) % 2 || nlocals < 0 || depth < 0 || npos < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "CheckedLink: code is (op, arg) pairs; link a function, body callable, "
                        "result () or (Recipe,), counts >= 0");
        return NULL;
    }
    CheckedLink *c = PyObject_GC_New(CheckedLink, type);
    if (c == NULL) {
        return NULL;
    }
    c->vectorcall = checked_vectorcall;
    c->ncode = PyTuple_GET_SIZE(code) / 2;
    c->code = PyMem_Malloc((c->ncode ? c->ncode : 1) * sizeof(Instr));
    c->consts = Py_NewRef(consts);
    c->nlocals = nlocals;
    c->depth = depth;
    c->npos = npos;
    c->star = star;
    c->guarded = guarded;
    c->body = Py_NewRef(body);
    c->link = Py_NewRef(link);
    c->next = NULL;
    c->result = PyTuple_GET_SIZE(result) ? Py_NewRef(PyTuple_GET_ITEM(result, 0)) : NULL;
    c->kept = kept;
    c->hits = 0;
    PyObject_GC_Track(c);
    if (c->code == NULL) {
        Py_DECREF(c);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < c->ncode; i++) {
        long op = PyLong_AsLong(PyTuple_GET_ITEM(code, 2 * i));
        c->code[i].op = op < 0 || op >= OP_COUNT ? -1 : (int)op;
        c->code[i].arg = PyLong_AsLongLong(PyTuple_GET_ITEM(code, 2 * i + 1));
        c->code[i].kind = CACHE_NONE;
        c->code[i].served = 0;
        c->code[i].aux = 0;
        c->code[i].tags = NULL;
        c->code[i].ntags = 0;
    }
    if (PyErr_Occurred() || validate(c) < 0) {
        Py_DECREF(c);
        return NULL;
    }
    superops(c);
    return (PyObject *)c;
}

static int
checked_traverse(CheckedLink *c, visitproc visit, void *arg)
{
    Py_VISIT(c->consts);
    Py_VISIT(c->body);
    Py_VISIT(c->link);
    Py_VISIT(c->next);
    Py_VISIT(c->result);
    return 0;
}

static int
checked_clear(CheckedLink *c)
{
    Py_CLEAR(c->consts);
    Py_CLEAR(c->body);
    Py_CLEAR(c->link);
    Py_CLEAR(c->next);
    Py_CLEAR(c->result);
    return 0;
}

static void
checked_dealloc(CheckedLink *c)
{
    PyObject_GC_UnTrack(c);
    checked_clear(c);
    for (Py_ssize_t i = 0; c->code != NULL && i < c->ncode; i++) {
        PyMem_Free(c->code[i].tags);
    }
    PyMem_Free(c->code);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *
checked_passes(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    CheckedLink *c = (CheckedLink *)op;
    if (!binds_positionally(c, nargs)) {
        PyErr_SetString(PyExc_TypeError, "passes: the arguments do not bind positionally");
        return NULL;
    }
    int r = run(c, args, nargs, NULL);
    return r < 0 ? NULL : PyBool_FromLong(r);
}

static PyMethodDef checked_methods[] = {
    {"passes", (PyCFunction)(void (*)(void))checked_passes, METH_FASTCALL,
     "passes(*args): whether the checks pass on these positional arguments (the Python\n"
     "link's test, without its region or the chain); raises what the link would let out."},
    {NULL, NULL, 0, NULL},
};

static PyObject *
checked_cache_hits(PyObject *op, void *closure)
{
    CheckedLink *c = (CheckedLink *)op;
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < c->ncode; i++) {
        n += c->code[i].served;
    }
    return PyLong_FromSsize_t(n);
}

static PyGetSetDef checked_getset[] = {
    {"cache_hits", checked_cache_hits, NULL,
     "attribute reads its ops took from what an earlier read found, by type version tags\n"
     "(`attribute` in _cchecks.c), not by a full getattr; and checks an internal op decided\n"
     "by its shortcut (`superops`: a list's known items compared by identity)", NULL},
    {NULL},
};

static PyMemberDef checked_members[] = {
    {"next", T_OBJECT, offsetof(CheckedLink, next), 0, "called where a check fails"},
    {"link", T_OBJECT, offsetof(CheckedLink, link), READONLY, "the Python link this stands for"},
    {"body", T_OBJECT, offsetof(CheckedLink, body), READONLY, "the region's code"},
    {"hits", T_PYSSIZET, offsetof(CheckedLink, hits), READONLY, "calls whose checks passed here"},
    {NULL},
};

static PyTypeObject CheckedLinkType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bcfront._cfast.CheckedLink",
    .tp_doc = PyDoc_STR(
        "CheckedLink(code, consts, nlocals, depth, npos, star, guarded, body, link, result[, kept]):\n"
        "an exact link whose checks run in C (bcfront/_cchecks.c); kept >= 0: where they pass,\n"
        "the call returns what they left in that local (the region's result), not body's."),
    .tp_basicsize = sizeof(CheckedLink),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = checked_new,
    .tp_dealloc = (destructor)checked_dealloc,
    .tp_traverse = (traverseproc)checked_traverse,
    .tp_clear = (inquiry)checked_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(CheckedLink, vectorcall),
    .tp_methods = checked_methods,
    .tp_members = checked_members,
    .tp_getset = checked_getset,
};

/* a CheckedLink's Python link (borrowed), else `o` itself */
PyObject *
cchecks_link_of(PyObject *o)
{
    return Py_IS_TYPE(o, &CheckedLinkType) ? ((CheckedLink *)o)->link : o;
}

/* `first(*args)` for the dispatcher (`_cfast.c`): a CheckedLink's checks run straight
 * away, without the vectorcall protocol's indirect call; anything else is called */
PyObject *
cchecks_call(PyObject *first, PyObject *const *args, Py_ssize_t n)
{
    return Py_IS_TYPE(first, &CheckedLinkType) ? checked_vectorcall(first, args, (size_t)n, NULL)
                                               : PyObject_Vectorcall(first, args, (size_t)n, NULL);
}

/* adds CheckedLink and OP_COUNT (as CHECK_OPS) to the module; called by PyInit__cfast */
int
cchecks_add(PyObject *module)
{
    if (PyType_Ready(&CheckedLinkType) < 0) {
        return -1;
    }
    if (PyModule_AddObjectRef(module, "CheckedLink", (PyObject *)&CheckedLinkType) < 0) {
        return -1;
    }
    return PyModule_AddIntConstant(module, "CHECK_OPS", OP_COUNT);
}
