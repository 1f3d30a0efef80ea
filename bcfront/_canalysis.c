/* The analyzer's C kernels (`bcfront.analysis.ckernels` loads this module; where it is not
 * built, or BCFRONT_PURE_PYTHON is set, the pure-Python references serve, and
 * tests/analysis/test_ckernels.py compares each kernel with its reference):
 *
 *  - `rename_inline(ctx, effs, i, hi, d, nv, b, tracking)`: the SSA walk's inline renaming
 *    of a run of instructions; reference `bcfront.analysis.ssa_inline.rename_inline`;
 *  - `block_depths(effs, lo, hi, d, depth)`: the stack depth before each instruction of
 *    one block; reference `bcfront.analysis.stack.block_depths`;
 *  - `block_rpo(blocks, root, first, forward)`: the blocks in reverse post-order of a
 *    depth-first search; reference `bcfront.analysis.cfg.block_rpo`;
 *  - `make_blocks(bc, cuts, starts, ...)`: a CFG's blocks and edges, given where the blocks
 *    begin; reference `bcfront.analysis.cfg.make_blocks` (`set_cfg(Block, edge_kinds)`,
 *    called once by `cfg` on import, gives the class whose slots it sets and the kinds'
 *    tuples).
 *
 * They are methods of a `Kernels` object, one per copy of the analyzer (`ckernels` makes it;
 * tools/ab_analysis.py loads two copies in one process, each with its own classes):
 * `Kernels(Effect, LOAD_LOCAL, STORE_LOCAL, LOAD_LOCAL_PAIR, STORE_LOCAL_PAIR)` gives the
 * class (whose fields `simple`, `pops`, `news` and `net` are read from its slots) and the
 * marks the renaming tells apart by identity.  Nothing here depends on the Python version:
 * the effects column (one `Effect` per instruction) says what each instruction does.  A value of an unexpected type or an index out of
 * range raises (TypeError, IndexError) as the reference would fail; lists that Python code
 * can change are re-read (never cached) across every call that can run Python code.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#ifndef Py_T_OBJECT_EX
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

/* `cfg.Block`'s slots that make_blocks sets */
enum { S_START, S_HANDLER, S_SUCCS, S_PREDS, S_INDEX, S_FIRST, S_STOP, S_BYTECODE, S_N };
static const char *block_slot_names[S_N] = {"start", "handler", "succs", "preds",
                                            "index", "first", "stop", "_bytecode"};

/* One set of kernels: what they read, for one copy of the analyzer (a process may load two,
 * as tools/ab_analysis.py does, each with its own classes): the Effect class, the slot
 * offsets of its fields and the marks the renaming tells apart by identity; the Block class
 * (`set_cfg`), the offsets of its slots and the edge kinds' tuples. */
typedef struct {
    PyObject_HEAD
    PyTypeObject *effect_type;
    PyObject *load_local, *store_local, *load_pair, *store_pair;
    Py_ssize_t off_simple, off_pops, off_news, off_net;
    PyTypeObject *block_type; /* NULL until set_cfg */
    PyObject *edge_kinds;
    Py_ssize_t block_slots[S_N];
} Kernels;

static PyObject *str_store = NULL; /* "store", a record's kind */

static Py_ssize_t
slot_offset(PyObject *type, const char *name)
{
    PyObject *descr = PyObject_GetAttrString(type, name);
    if (descr == NULL) {
        return -1;
    }
    Py_ssize_t off = -1;
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
        if (m->type == Py_T_OBJECT_EX) {
            off = m->offset;
        }
    }
    Py_DECREF(descr);
    if (off < 0) {
        PyErr_Format(PyExc_TypeError, "bcfront._canalysis: Effect.%s is not an object slot", name);
    }
    return off;
}

static PyObject *
Kernels_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *cls, *marks[4];
    if (kwds != NULL && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "Kernels() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "Kernels", 5, 5, &cls, &marks[0], &marks[1], &marks[2], &marks[3])) {
        return NULL;
    }
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "Kernels(Effect, LOAD_LOCAL, STORE_LOCAL, LOAD_LOCAL_PAIR, STORE_LOCAL_PAIR)");
        return NULL;
    }
    for (int k = 0; k < 4; k++) {
        if (!Py_IS_TYPE(marks[k], (PyTypeObject *)cls)) {
            PyErr_SetString(PyExc_TypeError, "Kernels: the marks must be Effect instances");
            return NULL;
        }
    }
    Py_ssize_t s = slot_offset(cls, "simple"), p = slot_offset(cls, "pops");
    Py_ssize_t n = slot_offset(cls, "news"), t = slot_offset(cls, "net");
    if (s < 0 || p < 0 || n < 0 || t < 0) {
        return NULL;
    }
    Kernels *K = (Kernels *)type->tp_alloc(type, 0);
    if (K == NULL) {
        return NULL;
    }
    K->off_simple = s, K->off_pops = p, K->off_news = n, K->off_net = t;
    K->effect_type = (PyTypeObject *)Py_NewRef(cls);
    K->load_local = Py_NewRef(marks[0]);
    K->store_local = Py_NewRef(marks[1]);
    K->load_pair = Py_NewRef(marks[2]);
    K->store_pair = Py_NewRef(marks[3]);
    return (PyObject *)K;
}

static int
Kernels_traverse(Kernels *K, visitproc visit, void *arg)
{
    Py_VISIT(K->effect_type);
    Py_VISIT(K->load_local);
    Py_VISIT(K->store_local);
    Py_VISIT(K->load_pair);
    Py_VISIT(K->store_pair);
    Py_VISIT(K->block_type);
    Py_VISIT(K->edge_kinds);
    return 0;
}

static int
Kernels_clear(Kernels *K)
{
    Py_CLEAR(K->effect_type);
    Py_CLEAR(K->load_local);
    Py_CLEAR(K->store_local);
    Py_CLEAR(K->load_pair);
    Py_CLEAR(K->store_pair);
    Py_CLEAR(K->block_type);
    Py_CLEAR(K->edge_kinds);
    return 0;
}

static void
Kernels_dealloc(Kernels *K)
{
    PyObject_GC_UnTrack(K);
    Kernels_clear(K);
    Py_TYPE(K)->tp_free((PyObject *)K);
}

/* An Effect's int field at `off` (borrowed slot, an exact int), or -1 with an exception. */
static Py_ssize_t
field_int(PyObject *eff, Py_ssize_t off)
{
    PyObject *v = *(PyObject **)((char *)eff + off);
    if (v == NULL || !PyLong_CheckExact(v)) {
        PyErr_SetString(PyExc_TypeError, "bcfront._canalysis: an Effect field is not an int");
        return -1;
    }
    Py_ssize_t x = PyLong_AsSsize_t(v);
    if (x < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "bcfront._canalysis: a negative Effect count");
        }
        return -1;
    }
    return x;
}

/* effs[i], checked to be an Effect (borrowed), or NULL with an exception. */
static PyObject *
effect_at(Kernels *K, PyObject *effs, Py_ssize_t i)
{
    if (K->effect_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "bcfront._canalysis: the kernels were cleared");
        return NULL;
    }
    if (i < 0 || i >= PyList_GET_SIZE(effs)) {
        PyErr_SetString(PyExc_IndexError, "effects index out of range");
        return NULL;
    }
    PyObject *eff = PyList_GET_ITEM(effs, i);
    if (!Py_IS_TYPE(eff, K->effect_type)) {
        PyErr_SetString(PyExc_TypeError, "bcfront._canalysis: the effects column holds a non-Effect");
        return NULL;
    }
    return eff;
}

static int
bad_index(void)
{
    PyErr_SetString(PyExc_IndexError, "list index out of range");
    return -1;
}

/* list[k] (borrowed), or NULL with IndexError. */
static PyObject *
item(PyObject *list, Py_ssize_t k)
{
    if (k < 0 || k >= PyList_GET_SIZE(list)) {
        bad_index();
        return NULL;
    }
    return PyList_GET_ITEM(list, k);
}

/* list[k] = v (v a new reference, stolen also on failure); -1 with an exception. */
static int
put(PyObject *list, Py_ssize_t k, PyObject *v)
{
    if (v == NULL) {
        return -1;
    }
    if (k < 0 || k >= PyList_GET_SIZE(list)) {
        Py_DECREF(v);
        return bad_index();
    }
    PyObject *old = PyList_GET_ITEM(list, k);
    PyList_SET_ITEM(list, k, v);
    Py_XDECREF(old);
    return 0;
}

/* list[k] as a C integer (an int item), or -1 with an exception; sets *ok. */
static Py_ssize_t
int_item(PyObject *list, Py_ssize_t k, int *ok)
{
    PyObject *v = item(list, k);
    *ok = 0;
    if (v == NULL) {
        return -1;
    }
    if (!PyLong_Check(v)) {
        PyErr_Format(PyExc_TypeError, "list indices must be integers, not %.200s", Py_TYPE(v)->tp_name);
        return -1;
    }
    Py_ssize_t x = PyLong_AsSsize_t(v);
    if (x == -1 && PyErr_Occurred()) {
        return -1;
    }
    *ok = 1;
    return x;
}

/* dict[k] = v for an int key k (v borrowed); -1 with an exception. */
static int
set_at(PyObject *dict, Py_ssize_t k, PyObject *v)
{
    PyObject *key = PyLong_FromSsize_t(k);
    if (key == NULL) {
        return -1;
    }
    int r = PyDict_SetItem(dict, key, v);
    Py_DECREF(key);
    return r;
}

/* recs.append(("store", names[var], b, offset, arg)); the new record's id -len(recs)
 * as a new reference, or NULL with an exception. */
static PyObject *
store_record(PyObject *recs, PyObject *names, Py_ssize_t var, PyObject *b, PyObject *offset, PyObject *arg)
{
    PyObject *name = PySequence_GetItem(names, var);
    if (name == NULL) {
        return NULL;
    }
    PyObject *rec = PyTuple_Pack(5, str_store, name, b, offset, arg);
    Py_DECREF(name);
    if (rec == NULL) {
        return NULL;
    }
    int r = PyList_Append(recs, rec);
    Py_DECREF(rec);
    if (r < 0) {
        return NULL;
    }
    return PyLong_FromSsize_t(-PyList_GET_SIZE(recs));
}

/* var_of[args[i]] (the SSA local of a local-variable opcode's arg), or -2 with an
 * exception (var_of holds -1 for a cell or free variable). */
static Py_ssize_t
local_of(PyObject *var_of, Py_ssize_t arg)
{
    int ok;
    Py_ssize_t v = int_item(var_of, arg, &ok);
    return ok ? v : -2;
}

enum { C_STK, C_LOC, C_FLAT, C_RECS, C_SPECIAL, C_STORES, C_ARGS, C_OFFSETS, C_VAR_OF, C_NAMES, C_N };

static PyObject *
rename_inline(PyObject *self, PyObject *const *argv, Py_ssize_t argc)
{
    Kernels *K = (Kernels *)self;
    if (argc != 8) {
        PyErr_SetString(PyExc_TypeError, "rename_inline(ctx, effs, i, hi, d, nv, b, tracking)");
        return NULL;
    }
    PyObject *ctx = argv[0], *effs = argv[1], *b = argv[6];
    if (!PyTuple_CheckExact(ctx) || PyTuple_GET_SIZE(ctx) != C_N || !PyList_CheckExact(effs)) {
        PyErr_SetString(PyExc_TypeError, "rename_inline: ctx must be a tuple of 10, effs a list");
        return NULL;
    }
    PyObject *stk = PyTuple_GET_ITEM(ctx, C_STK), *loc = PyTuple_GET_ITEM(ctx, C_LOC);
    PyObject *flat = PyTuple_GET_ITEM(ctx, C_FLAT), *recs = PyTuple_GET_ITEM(ctx, C_RECS);
    PyObject *special = PyTuple_GET_ITEM(ctx, C_SPECIAL), *stores = PyTuple_GET_ITEM(ctx, C_STORES);
    PyObject *args = PyTuple_GET_ITEM(ctx, C_ARGS), *offsets = PyTuple_GET_ITEM(ctx, C_OFFSETS);
    PyObject *var_of = PyTuple_GET_ITEM(ctx, C_VAR_OF), *names = PyTuple_GET_ITEM(ctx, C_NAMES);
    if (!PyList_CheckExact(stk) || !PyList_CheckExact(loc) || !PyList_CheckExact(flat) ||
        !PyList_CheckExact(recs) || !PyDict_CheckExact(special) || !PyDict_CheckExact(stores) ||
        !PyList_CheckExact(args) || !PyList_CheckExact(offsets) || !PyList_CheckExact(var_of)) {
        PyErr_SetString(PyExc_TypeError, "rename_inline: a context entry has the wrong type");
        return NULL;
    }
    Py_ssize_t i = PyLong_AsSsize_t(argv[2]), hi = PyLong_AsSsize_t(argv[3]);
    Py_ssize_t d = PyLong_AsSsize_t(argv[4]), nv = PyLong_AsSsize_t(argv[5]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    int tracking = PyObject_IsTrue(argv[7]);
    if (tracking < 0) {
        return NULL;
    }
    for (; i < hi; i++) {
        PyObject *eff = effect_at(K, effs, i);
        if (eff == NULL) {
            return NULL;
        }
        if (*(PyObject **)((char *)eff + K->off_simple) == Py_True) {
            Py_ssize_t p = field_int(eff, K->off_pops), n;
            if (p < 0 || (n = field_int(eff, K->off_news)) < 0) {
                return NULL;
            }
            d -= p;
            if (d < 0 || d + p > PyList_GET_SIZE(stk)) {
                bad_index();
                return NULL;
            }
            for (Py_ssize_t k = 0; k < p; k++) {
                if (PyList_Append(flat, PyList_GET_ITEM(stk, d + k)) < 0) {
                    return NULL;
                }
            }
            for (Py_ssize_t k = 0; k < n; k++) {
                if (put(stk, d + k, PyLong_FromSsize_t(nv + k)) < 0) {
                    return NULL;
                }
            }
            nv += n;
            d += n;
            continue;
        }
        if (eff == K->load_local || eff == K->store_local) {
            int ok;
            Py_ssize_t arg = int_item(args, i, &ok), var;
            if (!ok || (var = local_of(var_of, arg)) == -2) {
                return NULL;
            }
            if (eff == K->load_local) { /* pushes the local's value (a cell object: a new one) */
                if (var >= 0) {
                    PyObject *v = item(loc, var);
                    if (v == NULL || put(stk, d, Py_NewRef(v)) < 0 || set_at(special, i, v) < 0) {
                        return NULL;
                    }
                }
                else {
                    if (put(stk, d, PyLong_FromSsize_t(nv)) < 0) {
                        return NULL;
                    }
                    nv += 1;
                }
                d += 1;
                continue;
            }
            if (var < 0 || tracking) { /* a store to a cell, or tracked: `Builder.other` */
                break;
            }
            d -= 1;
            PyObject *top = item(stk, d), *off = top ? item(offsets, i) : NULL;
            if (off == NULL) {
                return NULL;
            }
            PyObject *r = store_record(recs, names, var, b, off, top);
            if (r == NULL) {
                return NULL;
            }
            if (set_at(stores, i, r) < 0) {
                Py_DECREF(r);
                return NULL;
            }
            if (put(loc, var, r) < 0) { /* (steals r) */
                return NULL;
            }
            continue;
        }
        if (eff == K->load_pair || eff == K->store_pair) { /* 3.13: two in one, arg: two nibbles */
            int ok;
            Py_ssize_t arg = int_item(args, i, &ok), first, second;
            if (!ok || (first = local_of(var_of, arg >> 4)) == -2 ||
                (second = local_of(var_of, arg & 15)) == -2) {
                return NULL;
            }
            if (first < 0 || second < 0 || (eff == K->store_pair && tracking)) {
                break;
            }
            if (eff == K->load_pair) {
                PyObject *x = item(loc, first), *y = x ? item(loc, second) : NULL;
                if (y == NULL) {
                    return NULL;
                }
                PyObject *pair = PyTuple_Pack(2, x, y);
                if (pair == NULL) {
                    return NULL;
                }
                PyObject *rec = Py_BuildValue("(O()O)", pair, pair); /* (pair, (), pair) */
                Py_DECREF(pair);
                if (rec == NULL) {
                    return NULL;
                }
                int fail = put(stk, d, Py_NewRef(x)) < 0 || put(stk, d + 1, Py_NewRef(y)) < 0 ||
                           set_at(special, i, rec) < 0;
                Py_DECREF(rec);
                if (fail) {
                    return NULL;
                }
                d += 2;
                continue;
            }
            d -= 2;
            PyObject *below = item(stk, d), *top = below ? item(stk, d + 1) : NULL;
            PyObject *off = top ? item(offsets, i) : NULL;
            if (off == NULL) {
                return NULL;
            }
            Py_INCREF(top);
            Py_INCREF(below); /* (the stores below replace nothing on the stack, but keep them) */
            PyObject *r1 = store_record(recs, names, first, b, off, top);
            if (r1 == NULL || put(loc, first, Py_NewRef(r1)) < 0) {
                Py_XDECREF(r1);
                Py_DECREF(top);
                Py_DECREF(below);
                return NULL;
            }
            PyObject *r2 = store_record(recs, names, second, b, off, below);
            if (r2 == NULL || put(loc, second, Py_NewRef(r2)) < 0) {
                Py_DECREF(r1);
                Py_XDECREF(r2);
                Py_DECREF(top);
                Py_DECREF(below);
                return NULL;
            }
            /* ((top, below), (r1, r2), ()) */
            PyObject *rec = Py_BuildValue("((OO)(OO)())", top, below, r1, r2);
            Py_DECREF(r1);
            Py_DECREF(r2);
            Py_DECREF(top);
            Py_DECREF(below);
            if (rec == NULL) {
                return NULL;
            }
            int fail = set_at(special, i, rec);
            Py_DECREF(rec);
            if (fail < 0) {
                return NULL;
            }
            continue;
        }
        break; /* another kind: `Builder.other` */
    }
    return Py_BuildValue("(nnn)", i, d, nv);
}

static PyObject *
block_depths(PyObject *self, PyObject *const *argv, Py_ssize_t argc)
{
    Kernels *K = (Kernels *)self;
    if (argc != 5 || !PyList_CheckExact(argv[0]) || !PyList_CheckExact(argv[4])) {
        PyErr_SetString(PyExc_TypeError, "block_depths(effs: list, lo, hi, d, depth: list)");
        return NULL;
    }
    PyObject *effs = argv[0], *depth = argv[4];
    Py_ssize_t lo = PyLong_AsSsize_t(argv[1]), hi = PyLong_AsSsize_t(argv[2]);
    Py_ssize_t d = PyLong_AsSsize_t(argv[3]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    /* (as the reference's slice: the bounds clipped to the column) */
    Py_ssize_t n = PyList_GET_SIZE(effs);
    lo = lo < 0 ? 0 : lo > n ? n : lo;
    hi = hi < lo ? lo : hi > n ? n : hi;
    Py_ssize_t low = d;
    for (Py_ssize_t i = lo; i < hi; i++) {
        PyObject *eff = effect_at(K, effs, i);
        Py_ssize_t pops, net;
        if (eff == NULL || (pops = field_int(eff, K->off_pops)) < 0) {
            return NULL;
        }
        PyObject *v = *(PyObject **)((char *)eff + K->off_net);
        if (v == NULL || !PyLong_CheckExact(v)) {
            PyErr_SetString(PyExc_TypeError, "bcfront._canalysis: Effect.net is not an int");
            return NULL;
        }
        if ((net = PyLong_AsSsize_t(v)) == -1 && PyErr_Occurred()) {
            return NULL;
        }
        Py_ssize_t base = d - pops;
        if (base < low) {
            if (base < 0) {
                Py_RETURN_NONE; /* a pop below the bottom */
            }
            low = base;
        }
        PyObject *x = PyLong_FromSsize_t(d);
        if (x == NULL) {
            return NULL;
        }
        int r = PyList_Append(depth, x);
        Py_DECREF(x);
        if (r < 0) {
            return NULL;
        }
        d += net;
    }
    return Py_BuildValue("(nn)", d, low);
}

/* one step of block_rpo's path: a block and its neighbours' list, from `pos` on */
typedef struct {
    PyObject *node;
    PyObject *list;
    Py_ssize_t pos;
} RpoFrame;

static PyObject *str_succs = NULL, *str_preds = NULL;

static PyObject *
block_rpo(PyObject *self, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 4 || !PyDict_Check(argv[0])) {
        PyErr_SetString(PyExc_TypeError, "block_rpo(blocks: dict, root, first, forward)");
        return NULL;
    }
    int forward = PyObject_IsTrue(argv[3]);
    if (forward < 0) {
        return NULL;
    }
    PyObject *first = PySequence_List(argv[2]); /* (a copy: iterated as the reference's iter) */
    if (first == NULL) {
        return NULL;
    }
    PyObject *todo = PyDict_Copy(argv[0]), *order = PyList_New(0);
    Py_ssize_t cap = 16, nf = 1;
    RpoFrame *frames = PyMem_Malloc(cap * sizeof(RpoFrame));
    if (todo == NULL || order == NULL || frames == NULL) {
        if (frames == NULL) {
            PyErr_NoMemory();
        }
        Py_DECREF(first);
        Py_XDECREF(todo);
        Py_XDECREF(order);
        PyMem_Free(frames);
        return NULL;
    }
    frames[0] = (RpoFrame){Py_NewRef(argv[1]), first, 0};
    /* the root is found already: todo.pop(root, None) */
    PyObject *found = PyDict_GetItemWithError(todo, argv[1]);
    if (found == NULL ? PyErr_Occurred() != NULL : PyDict_DelItem(todo, argv[1]) < 0) {
        goto error;
    }
    while (nf > 0) {
        RpoFrame *f = &frames[nf - 1];
        int pushed = 0;
        while (f->pos < PyList_GET_SIZE(f->list)) {
            PyObject *s = PyList_GET_ITEM(f->list, f->pos);
            f->pos++;
            PyObject *blk = PyDict_GetItemWithError(todo, s);
            if (blk == NULL) {
                if (PyErr_Occurred()) {
                    goto error;
                }
                continue; /* found before */
            }
            Py_INCREF(s);
            PyObject *out = PyObject_GetAttr(blk, forward ? str_succs : str_preds);
            if (out == NULL || PyDict_DelItem(todo, s) < 0) {
                Py_XDECREF(out);
                Py_DECREF(s);
                goto error;
            }
            if (!PyList_CheckExact(out)) {
                Py_SETREF(out, PySequence_List(out));
                if (out == NULL) {
                    Py_DECREF(s);
                    goto error;
                }
            }
            if (PyList_GET_SIZE(out) > 0) { /* on along its neighbours */
                if (nf == cap) {
                    RpoFrame *more = PyMem_Realloc(frames, 2 * cap * sizeof(RpoFrame));
                    if (more == NULL) {
                        PyErr_NoMemory();
                        Py_DECREF(out);
                        Py_DECREF(s);
                        goto error;
                    }
                    frames = more;
                    cap *= 2;
                }
                frames[nf++] = (RpoFrame){s, out, 0};
                pushed = 1;
                break;
            }
            Py_DECREF(out);
            int r = PyList_Append(order, s); /* no neighbours: finished when found */
            Py_DECREF(s);
            if (r < 0) {
                goto error;
            }
        }
        if (!pushed) { /* every neighbour seen: the node is finished */
            nf--;
            int r = PyList_Append(order, frames[nf].node);
            Py_DECREF(frames[nf].node);
            Py_DECREF(frames[nf].list);
            if (r < 0) {
                goto error;
            }
        }
    }
    PyMem_Free(frames);
    Py_DECREF(todo);
    if (PyList_Reverse(order) < 0) {
        Py_DECREF(order);
        return NULL;
    }
    return order;
error:
    while (nf > 0) {
        nf--;
        Py_DECREF(frames[nf].node);
        Py_DECREF(frames[nf].list);
    }
    PyMem_Free(frames);
    Py_DECREF(todo);
    Py_DECREF(order);
    return NULL;
}

/* `cfg._ENDS`' codes: how an instruction ends a block */
enum { END_FALLS, END_BRANCH, END_JUMP, END_RETURN };
enum { K_NONE, K_FALL, K_BRANCH, K_BRANCH_FALL, K_JUMP, K_WITH_EXCEPTION };

static PyObject *
set_cfg(PyObject *self, PyObject *const *argv, Py_ssize_t argc)
{
    Kernels *K = (Kernels *)self;
    if (argc != 2 || !PyType_Check(argv[0]) || !PyTuple_CheckExact(argv[1]) ||
        PyTuple_GET_SIZE(argv[1]) != 2 * K_WITH_EXCEPTION) {
        PyErr_SetString(PyExc_TypeError, "set_cfg(Block, edge_kinds: a tuple of 10)");
        return NULL;
    }
    Py_ssize_t offs[S_N];
    for (int k = 0; k < S_N; k++) {
        if ((offs[k] = slot_offset(argv[0], block_slot_names[k])) < 0) {
            return NULL;
        }
    }
    memcpy(K->block_slots, offs, sizeof offs);
    Py_XSETREF(K->block_type, (PyTypeObject *)Py_NewRef(argv[0]));
    Py_XSETREF(K->edge_kinds, Py_NewRef(argv[1]));
    Py_RETURN_NONE;
}

/* the int field `k` of exception-table entry `e` (a tuple), or -1 with an exception */
static Py_ssize_t
entry_field(PyObject *e, Py_ssize_t k)
{
    if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) <= k) {
        PyErr_SetString(PyExc_TypeError, "make_blocks: a table entry is not a tuple");
        return -1;
    }
    return PyLong_AsSsize_t(PyTuple_GET_ITEM(e, k));
}

/* preds[dst].append(start); -1 with an exception */
static int
add_pred(PyObject *preds, PyObject *dst, PyObject *start)
{
    PyObject *ps = PyDict_GetItemWithError(preds, dst);
    if (ps == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetObject(PyExc_KeyError, dst);
        }
        return -1;
    }
    return PyList_Append(ps, start);
}

/* ints[targets[i]] (borrowed), or NULL with an exception */
static PyObject *
target_of(PyObject *targets, PyObject *ints, Py_ssize_t i)
{
    int ok;
    Py_ssize_t t = int_item(targets, i, &ok);
    return ok ? item(ints, t) : NULL;
}

static PyObject *
make_blocks(PyObject *self, PyObject *const *argv, Py_ssize_t argc)
{
    Kernels *K = (Kernels *)self;
    if (K->block_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "bcfront._canalysis: set_cfg was not called");
        return NULL;
    }
    if (argc != 12) {
        PyErr_SetString(PyExc_TypeError, "make_blocks(bc, cuts, starts, plists, preds, ends, targets, "
                                         "ints, table, blocks, out_kinds, exit_preds)");
        return NULL;
    }
    PyObject *bc = argv[0], *cuts = argv[1], *starts = argv[2], *plists = argv[3], *preds = argv[4];
    PyObject *ends = argv[5], *targets = argv[6], *ints = argv[7], *table = argv[8];
    PyObject *blocks = argv[9], *out_kinds = argv[10], *exit_preds = argv[11];
    if (!PyList_CheckExact(cuts) || !PyList_CheckExact(starts) || !PyList_CheckExact(plists) ||
        !PyDict_CheckExact(preds) || !PyBytes_CheckExact(ends) || !PyList_CheckExact(targets) ||
        !PyList_CheckExact(ints) || !PyDict_CheckExact(blocks) || !PyDict_CheckExact(out_kinds) ||
        !PyList_CheckExact(exit_preds)) {
        PyErr_SetString(PyExc_TypeError, "make_blocks: an argument has the wrong type");
        return NULL;
    }
    PyObject *tab = PySequence_Fast(table, "make_blocks: the table is not a sequence");
    if (tab == NULL) {
        return NULL;
    }
    Py_ssize_t nb = PyList_GET_SIZE(starts), nt = PySequence_Fast_GET_SIZE(tab), k = 0;
    const unsigned char *how_of = (const unsigned char *)PyBytes_AS_STRING(ends);
    Py_ssize_t nends = PyBytes_GET_SIZE(ends);
    if (PyList_GET_SIZE(cuts) < nb + 1 || PyList_GET_SIZE(plists) < nb) {
        Py_DECREF(tab);
        bad_index();
        return NULL;
    }
    PyObject *h = Py_None;
    for (Py_ssize_t bi = 0; bi < nb; bi++) {
        PyObject *start = PyList_GET_ITEM(starts, bi), *ps = PyList_GET_ITEM(plists, bi);
        PyObject *nxt = bi + 1 < nb ? PyList_GET_ITEM(starts, bi + 1) : NULL;
        PyObject *nps = bi + 1 < nb ? PyList_GET_ITEM(plists, bi + 1) : NULL;
        PyObject *a = PyList_GET_ITEM(cuts, bi), *b = PyList_GET_ITEM(cuts, bi + 1);
        Py_ssize_t st = PyLong_AsSsize_t(start), bpos = PyLong_AsSsize_t(b), e;
        if (PyErr_Occurred()) {
            goto error;
        }
        if (nt) { /* the entry covering the block's first instruction, if any */
            while (k < nt && (e = entry_field(PySequence_Fast_GET_ITEM(tab, k), 1)) <= st) {
                if (e == -1 && PyErr_Occurred()) {
                    goto error;
                }
                k++;
            }
            if (k < nt && (e = entry_field(PySequence_Fast_GET_ITEM(tab, k), 0)) <= st) {
                if (e == -1 && PyErr_Occurred()) {
                    goto error;
                }
                h = PySequence_Fast_GET_ITEM(tab, k);
            }
            else {
                if (PyErr_Occurred()) {
                    goto error;
                }
                h = Py_None;
            }
        }
        if (bpos < 1 || bpos > nends || bpos > PyList_GET_SIZE(targets)) {
            bad_index();
            goto error;
        }
        int how = how_of[bpos - 1], kind;
        PyObject *out = PyList_New(0), *dst;
        if (out == NULL) {
            goto error;
        }
        if (how == END_FALLS) {
            if (nxt == NULL) { /* falls off the end: malformed, treat as leaving */
                kind = K_NONE;
                if (PyList_Append(exit_preds, start) < 0) {
                    goto error_out;
                }
            }
            else {
                kind = K_FALL;
                if (PyList_Append(out, nxt) < 0 || PyList_Append(nps, start) < 0) {
                    goto error_out;
                }
            }
        }
        else if (how == END_BRANCH || how == END_JUMP) {
            if ((dst = target_of(targets, ints, bpos - 1)) == NULL || add_pred(preds, dst, start) < 0 ||
                PyList_Append(out, dst) < 0) {
                goto error_out;
            }
            if (how == END_JUMP) {
                kind = K_JUMP;
            }
            else if (nxt == NULL) {
                kind = K_BRANCH;
                if (PyList_Append(exit_preds, start) < 0) {
                    goto error_out;
                }
            }
            else {
                kind = K_BRANCH_FALL;
                if (PyList_Append(out, nxt) < 0 || PyList_Append(nps, start) < 0) {
                    goto error_out;
                }
            }
        }
        else {
            kind = K_NONE;
            if ((how == END_RETURN || h == Py_None) && PyList_Append(exit_preds, start) < 0) {
                goto error_out;
            }
        }
        if (h != Py_None) {
            Py_ssize_t t = entry_field(h, 2);
            if ((t == -1 && PyErr_Occurred()) || (dst = item(ints, t)) == NULL || PyList_Append(out, dst) < 0 ||
                add_pred(preds, dst, start) < 0) {
                goto error_out;
            }
            kind += K_WITH_EXCEPTION;
        }
        if (PyDict_SetItem(out_kinds, start, PyTuple_GET_ITEM(K->edge_kinds, kind)) < 0) {
            goto error_out;
        }
        /* object.__new__(Block), its slots set one by one (`_instructions` left unset) */
        PyObject *blk = K->block_type->tp_alloc(K->block_type, 0);
        if (blk == NULL) {
            goto error_out;
        }
        PyObject *index = PyLong_FromSsize_t(bi);
        if (index == NULL) {
            Py_DECREF(blk);
            goto error_out;
        }
        PyObject *vals[S_N] = {start, h, out, ps, index, a, b, bc};
        for (int s = 0; s < S_N; s++) {
            *(PyObject **)((char *)blk + K->block_slots[s]) = Py_NewRef(vals[s]);
        }
        Py_DECREF(index);
        Py_DECREF(out);
        int r = PyDict_SetItem(blocks, start, blk);
        Py_DECREF(blk);
        if (r < 0) {
            goto error;
        }
        continue;
    error_out:
        Py_DECREF(out);
        goto error;
    }
    Py_DECREF(tab);
    Py_RETURN_NONE;
error:
    Py_DECREF(tab);
    return NULL;
}

static PyMethodDef Kernels_methods[] = {
    {"set_cfg", (PyCFunction)(void (*)(void))set_cfg, METH_FASTCALL,
     "set_cfg(Block, edge_kinds): the class whose slots make_blocks sets and the edge kinds' "
     "tuples."},
    {"rename_inline", (PyCFunction)(void (*)(void))rename_inline, METH_FASTCALL,
     "rename_inline(ctx, effs, i, hi, d, nv, b, tracking) -> (i, d, nv): see "
     "bcfront.analysis.ssa_inline.rename_inline, its reference."},
    {"block_depths", (PyCFunction)(void (*)(void))block_depths, METH_FASTCALL,
     "block_depths(effs, lo, hi, d, depth) -> (d, low) or None: see "
     "bcfront.analysis.stack.block_depths, its reference."},
    {"make_blocks", (PyCFunction)(void (*)(void))make_blocks, METH_FASTCALL,
     "make_blocks(bc, cuts, starts, plists, preds, ends, targets, ints, table, blocks, out_kinds, "
     "exit_preds): see bcfront.analysis.cfg.make_blocks, its reference."},
    {"block_rpo", (PyCFunction)(void (*)(void))block_rpo, METH_FASTCALL,
     "block_rpo(blocks, root, first, forward) -> list: see bcfront.analysis.cfg.block_rpo, its "
     "reference."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject Kernels_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bcfront._canalysis.Kernels",
    .tp_basicsize = sizeof(Kernels),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Kernels(Effect, LOAD_LOCAL, STORE_LOCAL, LOAD_LOCAL_PAIR, STORE_LOCAL_PAIR): the "
              "analyzer's kernels for one copy of it (its classes and marks).",
    .tp_new = Kernels_new,
    .tp_dealloc = (destructor)Kernels_dealloc,
    .tp_traverse = (traverseproc)Kernels_traverse,
    .tp_clear = (inquiry)Kernels_clear,
    .tp_methods = Kernels_methods,
};

static struct PyModuleDef canalysis_module = {
    PyModuleDef_HEAD_INIT, "bcfront._canalysis",
    "The analyzer's C kernels (see bcfront/analysis/ckernels.py).", -1, NULL,
};

PyMODINIT_FUNC
PyInit__canalysis(void)
{
    if ((str_store == NULL && (str_store = PyUnicode_InternFromString("store")) == NULL) ||
        (str_succs == NULL && (str_succs = PyUnicode_InternFromString("succs")) == NULL) ||
        (str_preds == NULL && (str_preds = PyUnicode_InternFromString("preds")) == NULL) ||
        PyType_Ready(&Kernels_type) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&canalysis_module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObject(m, "Kernels", Py_NewRef((PyObject *)&Kernels_type)) < 0) {
        Py_DECREF(&Kernels_type);
        Py_DECREF(m);
        return NULL;
    }
    /* what bcfront/cfast.py expects of this source: a stale build is not used */
    if (PyModule_AddIntConstant(m, "INTERFACE", 1) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
