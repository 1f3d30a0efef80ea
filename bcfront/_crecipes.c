/* Recipes: what a checked link's region does, made by C without the region's frame (part of
 * `bcfront._cfast`; `_cchecks.c`'s `CheckedLink` follows them).
 *
 * A recipe is a tuple `(kind, what)` that `frontend/regions/result_recipes.py` (values) or
 * `frontend/regions/raise_recipes.py` (raises) reads out of the region's own code, where
 * that code does nothing else.  `Recipe(recipe)` checks it and compiles it once, when the
 * link is made; calling the Recipe follows it.  The region's code is the reference: each
 * step below does what the statement it stands for does, in the same order, through the
 * same calls (``x.a = v`` is `PyObject_SetAttr`, ``C(*args)`` is `PyObject_Call` with the
 * very tuple, ``except TypeError`` a match of the raised exception against TypeError).
 * Where a call's target is one CPython's own call would reach through a generic wrapper (a
 * built-in ``__new__``, a slot wrapper ``__init__``, the ``__traceback__`` descriptor), the
 * wrapper's work is done here, its checks included -- but for the tuple of arguments the
 * wrapper slices off the call's, which the callee gets as the very tuple the code passes
 * with ``*`` (an exception's ``args`` is then that tuple, equal to the sliced one).
 *
 *  - (MADE_OBJECT, v): v itself (a constant of the code);
 *  - (MADE_TUPLE, parts), (MADE_LIST, parts): a new tuple or list of what each part makes
 *    (a display of the code, made anew by each call);
 *  - (MADE_SLOT, i): the value of local `i` of the steps below (only inside them);
 *  - (MADE_PARAM, i): the link's positional parameter `i` (the call's argument, or its
 *    default), which the checked link passes;
 *  - (MADE_DICT, (k0, v0, k1, v1, ...)): a new dict of what the parts make, stored in order
 *    (a dict display);
 *  - (MADE_STEPS, (nslots, steps)): the steps, run in order on `nslots` locals, the last a
 *    STEP_RAISE (a region that makes an exception and ends ``return raised(exc, chain)``):
 *      (STEP_SET, i, value)                    slot i = value
 *      (STEP_NEW, i, cls, a)                   slot i = cls.__new__(cls, *slot a)
 *      (STEP_CALL, i, cls, a, fallback)        try: slot i = cls(*slot a)
 *                                              except TypeError: slot i = fallback(cls, slot a)
 *      (STEP_INIT, base, e, a)                 try: base.__init__(slot e, *slot a)
 *                                              except TypeError: pass
 *      (STEP_SETATTR, e, name, value)          slot e.<name> = value
 *      (STEP_TRACEBACK, e, tbtype, frame, lasti, lineno)
 *                                              slot e.__traceback__ = tbtype(
 *                                                  slot e.__traceback__, frame, lasti, lineno)
 *      (STEP_HANDLED, h, fn, e, name)          if (slot h := fn()) is not None:
 *                                                  slot e.<name> = slot h
 *      (STEP_RAISE, value, chain)              return raised(value, chain): raised here, as
 *                                              the C call raises what `raised` wraps
 *      (STEP_SETITEM, target, key, value)      target[key] = value (the values made in
 *                                              Python's order: value, target, key)
 *      (STEP_APPLY, i, fn, parts)              slot i = fn(*what the parts make, in order)
 *                                              (`fn` a built-in function or a built-in
 *                                              type's method: no frame reads it; i = -1:
 *                                              the result let go at once, as a call
 *                                              statement's POP_TOP lets it go)
 *      (STEP_RETURN, value)                    return value (a region that returns a result
 *                                              after its stores and calls: `step_recipes.py`)
 *    the last step, and only the last, a STEP_RAISE or a STEP_RETURN.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <structmember.h>

enum { MADE_OBJECT, MADE_TUPLE, MADE_LIST, MADE_SLOT, MADE_STEPS, MADE_PARAM, MADE_DICT, MADE_COUNT };
enum { STEP_SET, STEP_NEW, STEP_CALL, STEP_INIT, STEP_SETATTR, STEP_TRACEBACK, STEP_HANDLED, STEP_RAISE,
       STEP_SETITEM, STEP_APPLY, STEP_RETURN, STEP_COUNT };

#define MAX_SLOTS 64 /* most locals a recipe's steps use */
#define MAX_ARGS 16  /* most arguments a step passes on the C stack (more: a tuple) */
#define MAX_PARAMS 16 /* a parameter a recipe reads is one of the link's first 16 */

int cfast_raise(PyObject *exc, int chain); /* _cfast.c: raise `exc` as `raised(exc, chain)` says */

static PyObject *str_new, *str_init, *str_traceback; /* interned "__new__", ... */
static PyCFunction new_wrapper; /* what every built-in type's __new__ calls (object.__new__'s) */
static PyObject *traceback_descr; /* BaseException.__dict__['__traceback__'] */

/* -- the compiled form: every object borrowed from the recipe the Recipe holds ---------- */

typedef struct {
    int kind;        /* MADE_OBJECT, MADE_SLOT, MADE_PARAM, or a display (`obj` the recipe) */
    Py_ssize_t slot; /* MADE_SLOT's, MADE_PARAM's index */
    PyObject *obj;
} Value;

typedef struct {
    int kind;
    Py_ssize_t dst, e, a; /* slots (dst: set; e: the exception; a: the arguments tuple) */
    PyObject *obj;        /* cls, base, tbtype, fn */
    PyObject *fallback;   /* STEP_CALL's; STEP_TRACEBACK's frame */
    PyObject *name;       /* STEP_SETATTR's, STEP_HANDLED's; STEP_TRACEBACK's lasti */
    PyObject *lineno;     /* STEP_TRACEBACK's */
    Py_ssize_t more;      /* STEP_TRACEBACK: how many of the steps after it are ones on `e` too */
    int fast;             /* STEP_TRACEBACK: tbtype is TracebackType, frame a frame, lasti and lineno ints;
                           * STEP_SETITEM: the key is [:] and the value a list display (list_replace) */
    int lasti, line;      /* ... then those ints */
    Value v;              /* STEP_SET's, STEP_SETATTR's, STEP_RAISE's, STEP_SETITEM's, STEP_RETURN's */
    int chain;            /* STEP_RAISE's */
    Value target, key;    /* STEP_SETITEM's */
    Py_ssize_t index;     /* STEP_SETITEM: the key's value, where it is a constant int >= 0; else -1 */
    Value *parts;         /* STEP_APPLY's arguments (`nparts`; owned, freed with the steps) */
    Py_ssize_t nparts;
    PyCFunction cfunc;    /* STEP_APPLY: fn's C function where `direct` says how to call it, else NULL */
    PyTypeObject *ctype;  /* ... and a method descriptor's type (its first argument's), else NULL */
    int direct;           /* DIRECT_O, DIRECT_NOARGS, DIRECT_FAST: the calling convention */
    int plain;            /* STEP_APPLY, STEP_SETITEM: no part is a display (each read borrowed,
                           * none made: `value_plain`) */
} Step;

/* STEP_APPLY of a C function or method descriptor called as its own convention says, as
 * CPython's specialized CALL_*_METHOD_DESCRIPTOR_* / CALL_BUILTIN_* do: skips the vectorcall
 * layers (about 80 instructions of an `xs.append(x)`); `apply_direct` is the reference path
 * beside it, PyObject_Vectorcall, which a test compares */
enum { DIRECT_NONE, DIRECT_O, DIRECT_NOARGS, DIRECT_FAST, DIRECT_LIST_APPEND };

/* list.append's C function (`recipes_add`): DIRECT_LIST_APPEND calls PyList_Append with no
 * recursion check, as CPython's CALL_LIST_APPEND does for `xs.append(x)` -- it runs no
 * Python code, so it cannot recurse */
static PyCFunction list_append_meth;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *recipe; /* the tuple */
    Py_ssize_t nslots, nsteps;
    Step *steps;        /* NULL: a value recipe, `top` */
    Value top;          /* a value recipe, compiled (its objects borrowed from `recipe`) */
    Py_ssize_t nparams; /* how many of the link's first positional parameters it reads */
} Recipe;

/* what the steps read: their locals, the link's parameters */
typedef struct {
    PyObject **slots;
    PyObject *const *params;
} Locals;

static PyTypeObject RecipeType;

static long
kind_of(PyObject *t)
{
    return PyLong_AsLong(PyTuple_GET_ITEM(t, 0));
}

/* what a value recipe (the tuple) makes; `slots` the steps' locals (NULL outside them) */
static PyObject *slot(PyObject **slots, Py_ssize_t i);

static PyObject *
made(PyObject *recipe, const Locals *l)
{
    long kind = kind_of(recipe);
    PyObject *what = PyTuple_GET_ITEM(recipe, 1);
    if (kind == MADE_OBJECT) {
        return Py_NewRef(what);
    }
    if (kind == MADE_SLOT) {
        return Py_XNewRef(slot(l->slots, PyLong_AsSsize_t(what)));
    }
    if (kind == MADE_PARAM) {
        return Py_NewRef(l->params[PyLong_AsSsize_t(what)]);
    }
    Py_ssize_t n = PyTuple_GET_SIZE(what);
    if (kind == MADE_DICT) { /* as BUILD_MAP: the parts made in order, then stored in order */
        PyObject *parts[2 * 32];
        PyObject *d = NULL;
        Py_ssize_t i;
        for (i = 0; i < n; i++) {
            if ((parts[i] = made(PyTuple_GET_ITEM(what, i), l)) == NULL) {
                goto dict_done;
            }
        }
        if ((d = PyDict_New()) != NULL) {
            for (Py_ssize_t j = 0; j < n; j += 2) {
                if (PyDict_SetItem(d, parts[j], parts[j + 1]) < 0) {
                    Py_CLEAR(d);
                    break;
                }
            }
        }
    dict_done:
        while (i-- > 0) {
            Py_DECREF(parts[i]);
        }
        return d;
    }
    PyObject *out = kind == MADE_TUPLE ? PyTuple_New(n) : PyList_New(n);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *part = made(PyTuple_GET_ITEM(what, i), l);
        if (part == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        if (kind == MADE_TUPLE) {
            PyTuple_SET_ITEM(out, i, part);
        }
        else {
            PyList_SET_ITEM(out, i, part);
        }
    }
    return out;
}

/* local `i`, borrowed; an error where it is unset */
static PyObject *
slot(PyObject **slots, Py_ssize_t i)
{
    PyObject *v = slots[i];
    if (v == NULL) {
        PyErr_SetString(PyExc_UnboundLocalError, "a recipe's local read before it was set");
    }
    return v;
}

/* `value`, borrowed where something else holds it for the step (the recipe its constant, the
 * caller its argument, the steps their local: none of them changes while a step runs);
 * `*owned` says where it is a new object, the caller's to drop.  (Inlined where the steps
 * read their values: a call each was ~10% of a step recipe.) */
static Py_ALWAYS_INLINE inline PyObject *
value_borrowed(const Value *v, const Locals *l, int *owned)
{
    /* (tests, not a switch: its table's indirect jump cost more than these few compares) */
    *owned = 0;
    if (v->kind == MADE_PARAM) {
        return l->params[v->slot];
    }
    if (v->kind == MADE_OBJECT) {
        return v->obj;
    }
    if (v->kind == MADE_SLOT) {
        return slot(l->slots, v->slot);
    }
    *owned = 1;
    return made(v->obj, l);
}

/* `value_borrowed` of a value that is no display (`Step.plain`): never a new object */
static Py_ALWAYS_INLINE inline PyObject *
value_plain(const Value *v, const Locals *l)
{
    return v->kind == MADE_PARAM ? l->params[v->slot] : v->kind == MADE_OBJECT ? v->obj : slot(l->slots, v->slot);
}

/* what a value recipe makes, a new reference (NULL with an error set) */
static Py_ALWAYS_INLINE inline PyObject *
value(const Value *v, const Locals *l)
{
    int owned;
    PyObject *x = value_borrowed(v, l, &owned);
    return owned ? x : Py_XNewRef(x);
}

/* `fn(first, *args)` (`args` a tuple): the call ``fn(first, *args)`` makes */
static PyObject *
call_with_first(PyObject *fn, PyObject *first, PyObject *args)
{
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n + 1 > MAX_ARGS) {
        PyObject *head = PyTuple_Pack(1, first);
        PyObject *all = head == NULL ? NULL : PySequence_Concat(head, args);
        Py_XDECREF(head);
        PyObject *res = all == NULL ? NULL : PyObject_Call(fn, all, NULL);
        Py_XDECREF(all);
        return res;
    }
    PyObject *stack[MAX_ARGS];
    stack[0] = first;
    for (Py_ssize_t i = 0; i < n; i++) {
        stack[i + 1] = PyTuple_GET_ITEM(args, i);
    }
    return PyObject_Vectorcall(fn, stack, n + 1, NULL);
}

/* ``cls.<name>`` (a new reference): where `cls`'s metaclass is `type` itself, what
 * type.__getattribute__ finds -- `type`'s own attribute of that name is no data descriptor
 * for ``__new__`` and ``__init__`` -- the class's attribute, bound to nothing; else the read */
static PyObject *
class_attribute(PyObject *cls, PyObject *name)
{
    if (Py_IS_TYPE(cls, &PyType_Type)) {
        PyObject *attr = _PyType_Lookup((PyTypeObject *)cls, name);
        if (attr != NULL && (Py_TYPE(attr)->tp_descr_get == NULL || Py_IS_TYPE(attr, &PyWrapperDescr_Type))) {
            return Py_NewRef(attr); /* a slot wrapper's __get__(None, cls) is itself */
        }
    }
    return PyObject_GetAttr(cls, name);
}

/* `fn(cls, *args)`, `fn` what ``cls.__new__`` read: where that is a built-in type T's
 * ``__new__`` and `cls` makes its instances with T's tp_new, what T's ``__new__`` then does
 * (its checks pass: `cls` a subtype of T whose most derived built-in constructor is T's) */
static PyObject *
call_new(PyObject *fn, PyObject *cls, PyObject *args)
{
    if (PyCFunction_Check(fn) && PyCFunction_GET_FUNCTION(fn) == new_wrapper && PyType_Check(cls)) {
        PyObject *t = PyCFunction_GET_SELF(fn);
        if (t != NULL && PyType_Check(t) && !(((PyTypeObject *)t)->tp_flags & Py_TPFLAGS_HEAPTYPE)
            && ((PyTypeObject *)t)->tp_new != NULL && ((PyTypeObject *)cls)->tp_new == ((PyTypeObject *)t)->tp_new
            && PyType_IsSubtype((PyTypeObject *)cls, (PyTypeObject *)t)) {
            return ((PyTypeObject *)t)->tp_new((PyTypeObject *)cls, args, NULL);
        }
    }
    return call_with_first(fn, cls, args);
}

/* `fn(self, *args)`, `fn` what ``base.__init__`` read: where that is a slot wrapper (a
 * built-in type's ``__init__``) and `self` its type's instance, what the wrapper's call does */
static PyObject *
call_init(PyObject *fn, PyObject *self, PyObject *args)
{
    if (Py_IS_TYPE(fn, &PyWrapperDescr_Type) && PyType_IsSubtype(Py_TYPE(self), PyDescr_TYPE(fn))) {
        struct wrapperbase *base = ((PyWrapperDescrObject *)fn)->d_base;
        void *wrapped = ((PyWrapperDescrObject *)fn)->d_wrapped;
        if (base->flags & PyWrapperFlag_KEYWORDS) {
            return ((wrapperfunc_kwds)(void (*)(void))base->wrapper)(self, args, wrapped, NULL);
        }
        return base->wrapper(self, args, wrapped);
    }
    return call_with_first(fn, self, args);
}

/* `x.<name> = v`, taking the reference to v */
static int
store_attr(PyObject *x, PyObject *name, PyObject *v)
{
    if (v == NULL) {
        return -1;
    }
    int r = PyObject_SetAttr(x, name, v);
    Py_DECREF(v);
    return r;
}

/* the raised exception is a TypeError, which an ``except TypeError:`` catches (0), else
 * -1, as is.  With `handled`, the caught exception (normalized, its traceback on it) is put
 * there, for the handler to run with it as the exception being handled, as Python's does */
static int
catch_type_error(PyObject **handled)
{
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
        return -1;
    }
    if (handled == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *type, *val, *tb;
    PyErr_Fetch(&type, &val, &tb);
    PyErr_NormalizeException(&type, &val, &tb);
    if (tb != NULL && val != NULL) {
        PyException_SetTraceback(val, tb);
    }
    Py_XDECREF(type);
    Py_XDECREF(tb);
    *handled = val;
    return 0;
}

/* `tbtype(next, frame, lasti, lineno)`: made here where the step is `fast` (TracebackType,
 * a frame, ints) and `next` a traceback or None -- what TracebackType's __new__ checks --
 * as its __new__ makes it; else the call */
static PyObject *
traceback_over(const Step *s, PyObject *next)
{
    if (s->fast && (next == Py_None || PyTraceBack_Check(next))) {
        PyTracebackObject *tb = PyObject_GC_New(PyTracebackObject, &PyTraceBack_Type);
        if (tb == NULL) {
            return NULL;
        }
        tb->tb_next = next == Py_None ? NULL : (PyTracebackObject *)Py_NewRef(next);
        tb->tb_frame = (PyFrameObject *)Py_NewRef(s->fallback);
        tb->tb_lasti = s->lasti;
        tb->tb_lineno = s->line;
        PyObject_GC_Track(tb);
        return (PyObject *)tb;
    }
    PyObject *argv[4] = {next, s->fallback, s->name, s->lineno};
    return PyObject_Vectorcall(s->obj, argv, 4, NULL);
}

/* the traceback steps from `s` on (1 + s->more of them, on one exception `e`): where
 * ``e.__traceback__`` is BaseException's own (no class of e's overrides it, nor reading or
 * writing attributes), read once and written once -- what reading it back after each write
 * would give; else each step's read and write */
static int
tracebacks(const Step *s, PyObject *e)
{
    PyTypeObject *t = Py_TYPE(e);
    Py_ssize_t n = 1 + s->more;
    if (t->tp_getattro == PyObject_GenericGetAttr && t->tp_setattro == PyObject_GenericSetAttr
        && PyExceptionInstance_Check(e) && _PyType_Lookup(t, str_traceback) == traceback_descr) {
        PyObject *tb = PyException_GetTraceback(e);
        if (tb == NULL) {
            tb = Py_NewRef(Py_None);
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_SETREF(tb, traceback_over(s + i, tb));
            if (tb == NULL) {
                return -1;
            }
        }
        int r = PyException_SetTraceback(e, tb);
        Py_DECREF(tb);
        return r;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *next = PyObject_GetAttr(e, str_traceback);
        if (next == NULL) {
            return -1;
        }
        PyObject *tb = traceback_over(s + i, next);
        Py_DECREF(next);
        if (store_attr(e, str_traceback, tb) < 0) {
            return -1;
        }
    }
    return 0;
}

/* `t[:] = [parts...]` for an exact list `t` of at most MAX_ARGS items and a list display
 * `display` of at most MAX_ARGS parts: what list_ass_slice does with the new list the display
 * makes, without making that list -- the parts made in order, `t` resized (placeholders of
 * None, which nothing sees: no code runs until the new items are in), the new items put in,
 * then the old ones released last to first, as list_ass_slice releases them; 0, or -1 with
 * the list as it was (but where undoing a failed growth fails too: memory exhausted twice) */
static int
list_replace(PyObject *t, PyObject *display, const Locals *l)
{
    PyObject *parts = PyTuple_GET_ITEM(display, 1);
    Py_ssize_t m = PyTuple_GET_SIZE(parts), n = PyList_GET_SIZE(t), i;
    PyObject *new_items[MAX_ARGS], *old[MAX_ARGS];
    for (i = 0; i < m; i++) {
        if ((new_items[i] = made(PyTuple_GET_ITEM(parts, i), l)) == NULL) {
            goto fail;
        }
    }
    n = PyList_GET_SIZE(t);
    if (n > MAX_ARGS) { /* grown by code a part's making ran (a key's __hash__): the plain store */
        PyObject *v = PyList_New(m);
        if (v == NULL) {
            goto fail;
        }
        for (Py_ssize_t j = 0; j < m; j++) {
            PyList_SET_ITEM(v, j, new_items[j]);
        }
        int r = PyList_SetSlice(t, 0, PY_SSIZE_T_MAX, v);
        Py_DECREF(v);
        return r;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        old[j] = PyList_GET_ITEM(t, j); /* their references, taken over */
    }
    if (m > n) {
        for (Py_ssize_t j = n; j < m; j++) {
            if (PyList_Append(t, Py_None) < 0) {
                PyObject *type, *val, *tb;
                PyErr_Fetch(&type, &val, &tb);
                (void)PyList_SetSlice(t, n, PY_SSIZE_T_MAX, NULL);
                PyErr_Restore(type, val, tb);
                goto fail;
            }
        }
    }
    else if (m < n) {
        for (Py_ssize_t j = m; j < n; j++) {
            PyList_SET_ITEM(t, j, Py_NewRef(Py_None));
        }
        if (PyList_SetSlice(t, m, n, NULL) < 0) { /* unchanged where it fails: the old items back */
            for (Py_ssize_t j = m; j < n; j++) {
                Py_DECREF(PyList_GET_ITEM(t, j));
                PyList_SET_ITEM(t, j, old[j]);
            }
            goto fail;
        }
    }
    for (Py_ssize_t j = 0; j < m; j++) {
        if (j >= n) {
            Py_DECREF(PyList_GET_ITEM(t, j)); /* a placeholder */
        }
        PyList_SET_ITEM(t, j, new_items[j]);
    }
    for (Py_ssize_t j = n - 1; j >= 0; j--) {
        Py_DECREF(old[j]);
    }
    return 0;
fail:
    while (i-- > 0) {
        Py_DECREF(new_items[i]);
    }
    return -1;
}

/* one step: 0, or -1 with an error set */
/* `t[k] = v` where `t` is an exact list and `k` an exact int in its range: made as
 * list_ass_item makes it (the old item let go after the new one is in place), without the
 * generic path's index conversion; 0 where it does not apply (PyObject_SetItem then: its
 * errors for an index out of range or too large) */
static Py_ALWAYS_INLINE inline int
list_item_store(PyObject *t, PyObject *k, Py_ssize_t known, PyObject *v)
{
    if (!PyList_CheckExact(t) || !PyLong_CheckExact(k)) {
        return 0;
    }
    /* `known`: k's value, read when the recipe was made (a constant key), or -1 */
    Py_ssize_t i = known >= 0 ? known : PyLong_AsSsize_t(k), n = PyList_GET_SIZE(t);
    if (i == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (i < 0) {
        i += n;
    }
    if (i < 0 || i >= n) {
        return 0;
    }
    PyObject *old = PyList_GET_ITEM(t, i);
    PyList_SET_ITEM(t, i, Py_NewRef(v));
    Py_DECREF(old);
    return 1;
}

/* 0: every STEP_APPLY through PyObject_Vectorcall (`_cfast._direct_calls`: the reference) */
int recipes_direct_calls = 1;

/* how `fn` can be called directly: sets s->cfunc, s->ctype and s->direct where its calling
 * convention is a plain one (no METH_KEYWORDS, METH_METHOD, METH_CLASS or METH_STATIC) that
 * takes `s->nparts` arguments; else leaves s->cfunc NULL */
static void
direct_compiled(Step *s)
{
    const int conventions = METH_VARARGS | METH_KEYWORDS | METH_NOARGS | METH_O | METH_FASTCALL
                            | METH_METHOD | METH_CLASS | METH_STATIC;
    PyMethodDef *ml;
    PyTypeObject *ctype = NULL;
    if (Py_IS_TYPE(s->obj, &PyMethodDescr_Type)) {
        ml = ((PyMethodDescrObject *)s->obj)->d_method;
        ctype = PyDescr_TYPE(s->obj);
        if (s->nparts < 1) {
            return; /* no self: PyObject_Vectorcall raises the TypeError */
        }
    }
    else if (PyCFunction_CheckExact(s->obj)) {
        ml = ((PyCFunctionObject *)s->obj)->m_ml;
    }
    else {
        return;
    }
    const Py_ssize_t args = s->nparts - (ctype != NULL); /* after a method's self */
    const int flags = ml->ml_flags & conventions;
    int direct = flags == METH_O && args == 1        ? DIRECT_O
                 : flags == METH_NOARGS && args == 0 ? DIRECT_NOARGS
                 : flags == METH_FASTCALL            ? DIRECT_FAST
                                                     : DIRECT_NONE;
    if (direct == DIRECT_O && ctype == &PyList_Type && ml->ml_meth == list_append_meth) {
        direct = DIRECT_LIST_APPEND;
    }
    if (direct != DIRECT_NONE) {
        s->cfunc = ml->ml_meth;
        s->ctype = ctype;
        s->direct = direct;
    }
}

/* fn(*argv) for a step `direct_compiled` chose: what the descriptor's or builtin's vectorcall
 * does, less its checks of the convention; a method's self of another type goes that way */
static Py_ALWAYS_INLINE inline PyObject *
apply_direct(const Step *s, PyObject *const *argv)
{
    PyObject *self;
    PyObject *const *rest = argv;
    Py_ssize_t nrest = s->nparts;
    if (s->ctype != NULL) {
        if (!Py_IS_TYPE(argv[0], s->ctype) && !PyObject_TypeCheck(argv[0], s->ctype)) {
            return PyObject_Vectorcall(s->obj, argv, s->nparts, NULL); /* its TypeError */
        }
        self = argv[0];
        rest = argv + 1;
        nrest--;
    }
    else {
        self = PyCFunction_GET_SELF(s->obj);
    }
    if (s->direct == DIRECT_LIST_APPEND) { /* (self: a list, checked above) */
        return PyList_Append(self, rest[0]) < 0 ? NULL : Py_NewRef(Py_None);
    }
    if (Py_EnterRecursiveCall(" while calling a Python object")) {
        return NULL;
    }
    PyObject *v;
    switch (s->direct) {
    case DIRECT_O:
        v = s->cfunc(self, rest[0]);
        break;
    case DIRECT_NOARGS:
        v = s->cfunc(self, NULL);
        break;
    default:
        v = ((_PyCFunctionFast)(void (*)(void))s->cfunc)(self, rest, nrest);
        break;
    }
    Py_LeaveRecursiveCall();
    return v;
}

/* a STEP_APPLY's result `v` (NULL: its error) into its slot, or let go (a discarded one's):
 * 0, or -1 with the error set */
static Py_ALWAYS_INLINE inline int
result_stored(const Step *s, PyObject **slots, PyObject *v)
{
    if (v == NULL) {
        return -1;
    }
    if (s->dst < 0) {
        Py_DECREF(v);
        return 0;
    }
    Py_XSETREF(slots[s->dst], v);
    return 0;
}

static int
step_run(const Step *s, const Locals *l)
{
    PyObject **slots = l->slots;
    PyObject *a, *e, *v, *fn;
    switch (s->kind) {
    case STEP_SET:
        v = value(&s->v, l);
        if (v == NULL) {
            return -1;
        }
        Py_XSETREF(slots[s->dst], v);
        return 0;
    case STEP_NEW:
        if ((a = slot(slots, s->a)) == NULL || (fn = class_attribute(s->obj, str_new)) == NULL) {
            return -1;
        }
        v = PyTuple_CheckExact(a) ? call_new(fn, s->obj, a) : NULL;
        Py_DECREF(fn);
        if (v == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_TypeError, "a recipe's arguments are not a tuple");
            }
            return -1;
        }
        Py_XSETREF(slots[s->dst], v);
        return 0;
    case STEP_CALL:
        if ((a = slot(slots, s->a)) == NULL) {
            return -1;
        }
        if (!PyTuple_CheckExact(a)) { /* made one by the recipe: never so */
            PyErr_SetString(PyExc_TypeError, "a recipe's arguments are not a tuple");
            return -1;
        }
        v = PyObject_Call(s->obj, a, NULL);
        if (v == NULL) {
            PyObject *caught;
            if (catch_type_error(&caught) < 0) {
                return -1;
            }
            /* the handler runs with the TypeError as the exception being handled */
            PyObject *outer = PyErr_GetHandledException();
            PyErr_SetHandledException(caught);
            PyObject *argv[2] = {s->obj, a};
            v = PyObject_Vectorcall(s->fallback, argv, 2, NULL);
            PyErr_SetHandledException(outer);
            Py_XDECREF(outer);
            Py_XDECREF(caught);
            if (v == NULL) {
                return -1;
            }
        }
        Py_XSETREF(slots[s->dst], v);
        return 0;
    case STEP_INIT:
        if ((fn = class_attribute(s->obj, str_init)) == NULL) {
            return -1;
        }
        if ((e = slot(slots, s->e)) == NULL || (a = slot(slots, s->a)) == NULL || !PyTuple_CheckExact(a)) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_TypeError, "a recipe's arguments are not a tuple");
            }
            Py_DECREF(fn);
            return -1;
        }
        v = call_init(fn, e, a);
        Py_DECREF(fn);
        if (v == NULL) {
            return catch_type_error(NULL);
        }
        Py_DECREF(v);
        return 0;
    case STEP_SETATTR:
        v = value(&s->v, l);
        if (v == NULL || (e = slot(slots, s->e)) == NULL) {
            Py_XDECREF(v);
            return -1;
        }
        return store_attr(e, s->name, v);
    case STEP_TRACEBACK:
        if ((e = slot(slots, s->e)) == NULL) {
            return -1;
        }
        return tracebacks(s, e);
    case STEP_HANDLED:
        v = PyObject_CallNoArgs(s->obj);
        if (v == NULL) {
            return -1;
        }
        Py_XSETREF(slots[s->dst], v);
        if (v == Py_None) {
            return 0;
        }
        if ((e = slot(slots, s->e)) == NULL) {
            return -1;
        }
        return store_attr(e, s->name, Py_NewRef(v));
    case STEP_RAISE:
        v = value(&s->v, l);
        if (v == NULL) {
            return -1;
        }
        if (!PyExceptionInstance_Check(v)) { /* as `raised` says it */
            PyErr_Format(PyExc_TypeError, "raised: expected an exception, got %.100s", Py_TYPE(v)->tp_name);
            Py_DECREF(v);
            return -1;
        }
        cfast_raise(v, s->chain);
        return -1;
    case STEP_SETITEM: { /* STORE_SUBSCR's order: the value, then the object, then the key */
        PyObject *t = NULL, *k = NULL;
        int r = -1;
        if (s->fast) { /* `x[:] = [a, b, ...]`: where x is an exact list, list_replace */
            if ((t = value(&s->target, l)) == NULL) {
                return -1;
            }
            if (PyList_CheckExact(t) && PyList_GET_SIZE(t) <= MAX_ARGS) {
                r = list_replace(t, s->v.obj, l);
                Py_DECREF(t);
                return r;
            }
            Py_CLEAR(t);
        }
        if (s->plain) { /* borrowed, none to drop after */
            if ((v = value_plain(&s->v, l)) == NULL || (t = value_plain(&s->target, l)) == NULL
                || (k = value_plain(&s->key, l)) == NULL) {
                return -1;
            }
            return list_item_store(t, k, s->index, v) ? 0 : PyObject_SetItem(t, k, v);
        }
        int own_v = 0, own_t = 0, own_k = 0;
        if ((v = value_borrowed(&s->v, l, &own_v)) != NULL && (t = value_borrowed(&s->target, l, &own_t)) != NULL
            && (k = value_borrowed(&s->key, l, &own_k)) != NULL) {
            r = list_item_store(t, k, s->index, v) ? 0 : PyObject_SetItem(t, k, v);
        }
        if (own_v) {
            Py_XDECREF(v);
        }
        if (own_t) {
            Py_XDECREF(t);
        }
        if (own_k) {
            Py_XDECREF(k);
        }
        return r;
    }
    case STEP_APPLY: {
        PyObject *argv[MAX_ARGS];
        int owned[MAX_ARGS];
        Py_ssize_t i;
        v = NULL;
        if (s->plain) { /* borrowed, none to drop after */
            for (i = 0; i < s->nparts; i++) {
                if ((argv[i] = value_plain(&s->parts[i], l)) == NULL) {
                    return -1;
                }
            }
            v = s->cfunc != NULL && recipes_direct_calls ? apply_direct(s, argv) : PyObject_Vectorcall(s->obj, argv, s->nparts, NULL);
            return result_stored(s, slots, v);
        }
        for (i = 0; i < s->nparts; i++) {
            if ((argv[i] = value_borrowed(&s->parts[i], l, &owned[i])) == NULL) {
                goto apply_done;
            }
        }
        v = s->cfunc != NULL && recipes_direct_calls ? apply_direct(s, argv) : PyObject_Vectorcall(s->obj, argv, s->nparts, NULL);
    apply_done:
        while (i-- > 0) {
            if (owned[i]) {
                Py_DECREF(argv[i]);
            }
        }
        return result_stored(s, slots, v);
    }
    case STEP_RETURN: /* steps_run makes the value */
        return 0;
    }
    PyErr_SetString(PyExc_SystemError, "a recipe's step of no known kind");
    return -1;
}

static PyObject *
steps_run(Recipe *r, PyObject *const *params)
{
    PyObject *slots[MAX_SLOTS];
    for (Py_ssize_t i = 0; i < r->nslots; i++) { /* (a few: memset's call costs more) */
        slots[i] = NULL;
    }
    Locals l = {slots, params};
    PyObject *res = NULL;
    /* (no count of the steps: the last one, a STEP_RAISE or a STEP_RETURN, ends them) */
    for (const Step *s = r->steps;; s++) {
        if (s->kind == STEP_RETURN) {
            res = value(&s->v, &l);
            break;
        }
        if (step_run(s, &l) < 0) {
            break;
        }
        if (s->kind == STEP_TRACEBACK) {
            s += s->more;
        }
    }
    for (Py_ssize_t i = 0; i < r->nslots; i++) {
        Py_XDECREF(slots[i]);
    }
    return res;
}

/* what a Recipe makes, as the region's code would (its result, or NULL and the exception
 * a raising region's code raises -- what its link's `raised(...)` has the C call raise);
 * `params`: the link's first `recipe_params` positional parameters */
PyObject *
recipe_make(PyObject *op, PyObject *const *params)
{
    Recipe *r = (Recipe *)op;
    if (r->recipe == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Recipe: cleared");
        return NULL;
    }
    if (r->steps == NULL) {
        Locals l = {NULL, params};
        return value(&r->top, &l);
    }
    return steps_run(r, params);
}

/* how many of the link's first positional parameters a Recipe reads */
Py_ssize_t
recipe_params(PyObject *op)
{
    return ((Recipe *)op)->nparams;
}

/* `recipe(*params)`: for tests, with the parameters it reads */
static PyObject *
recipe_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != ((Recipe *)op)->nparams || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_Format(PyExc_TypeError, "this Recipe takes %zd positional arguments", ((Recipe *)op)->nparams);
        return NULL;
    }
    return recipe_make(op, args);
}

/* -- checks and compiling: once, when the link is made ---------------------------------- */

static int
is_index(PyObject *o, Py_ssize_t below)
{
    if (!PyLong_CheckExact(o)) {
        return 0;
    }
    Py_ssize_t i = PyLong_AsSsize_t(o);
    if (i == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return i >= 0 && i < below;
}

static int
fits_int(PyObject *o)
{
    if (!PyLong_CheckExact(o)) {
        return 0;
    }
    int overflow;
    long v = PyLong_AsLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return !overflow && v >= INT_MIN && v <= INT_MAX;
}

/* a tuple of `size` items whose first is an int below `below` */
static int
is_kind(PyObject *t, Py_ssize_t size, long below)
{
    if (!PyTuple_CheckExact(t) || PyTuple_GET_SIZE(t) != size || !is_index(PyTuple_GET_ITEM(t, 0), below)) {
        return 0;
    }
    return 1;
}

/* a value recipe; `nslots` the locals it may read (0: none); the parameters it reads
 * counted into `*nparams` */
static int
value_valid(PyObject *recipe, Py_ssize_t nslots, Py_ssize_t *nparams, int depth)
{
    if (depth > 32 || !is_kind(recipe, 2, MADE_COUNT)) {
        return 0;
    }
    long kind = kind_of(recipe);
    PyObject *what = PyTuple_GET_ITEM(recipe, 1);
    if (kind == MADE_OBJECT) {
        return 1;
    }
    if (kind == MADE_SLOT) {
        return is_index(what, nslots);
    }
    if (kind == MADE_PARAM) {
        if (!is_index(what, MAX_PARAMS)) {
            return 0;
        }
        Py_ssize_t i = PyLong_AsSsize_t(what);
        *nparams = i + 1 > *nparams ? i + 1 : *nparams;
        return 1;
    }
    if (kind == MADE_STEPS) {
        return 0;
    }
    if (!PyTuple_CheckExact(what)
        || (kind == MADE_DICT && (PyTuple_GET_SIZE(what) % 2 || PyTuple_GET_SIZE(what) > 2 * 32))) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(what); i++) {
        if (!value_valid(PyTuple_GET_ITEM(what, i), nslots, nparams, depth + 1)) {
            return 0;
        }
    }
    return 1;
}

/* a compiled value no display: read, never made (`value_plain`) */
static int
value_is_plain(const Value *v)
{
    return v->kind == MADE_PARAM || v->kind == MADE_OBJECT || v->kind == MADE_SLOT;
}

static Value
value_of(PyObject *recipe)
{
    Value v = {(int)kind_of(recipe), 0, PyTuple_GET_ITEM(recipe, 1)};
    if (v.kind == MADE_SLOT || v.kind == MADE_PARAM) {
        v.slot = PyLong_AsSsize_t(v.obj);
    }
    else if (v.kind != MADE_OBJECT) {
        v.obj = recipe;
    }
    return v;
}

static const Py_ssize_t step_sizes[STEP_COUNT] = {
    [STEP_SET] = 3, [STEP_NEW] = 4, [STEP_CALL] = 5, [STEP_INIT] = 4,
    [STEP_SETATTR] = 4, [STEP_TRACEBACK] = 6, [STEP_HANDLED] = 5, [STEP_RAISE] = 3,
    [STEP_SETITEM] = 4, [STEP_APPLY] = 4, [STEP_RETURN] = 2,
};

/* value recipe `t` valid, compiled into `*v` */
static int
value_compiled(PyObject *t, Py_ssize_t nslots, Py_ssize_t *nparams, Value *v)
{
    if (!value_valid(t, nslots, nparams, 0)) {
        return 0;
    }
    *v = value_of(t);
    return 1;
}

/* a STEP_APPLY's slot -1: the result discarded */
static int
discarded(PyObject *i)
{
    int overflow;
    return PyLong_CheckExact(i) && PyLong_AsLongAndOverflow(i, &overflow) == -1 && !overflow;
}

/* step tuple `t` compiled into `s`; 0 where it is no step (the last, and only the last, a
 * STEP_RAISE or a STEP_RETURN) */
static int
step_compile(PyObject *t, Py_ssize_t nslots, Py_ssize_t *nparams, int last, Step *s)
{
    if (!PyTuple_CheckExact(t) || PyTuple_GET_SIZE(t) < 1 || !is_index(PyTuple_GET_ITEM(t, 0), STEP_COUNT)) {
        return 0;
    }
    memset(s, 0, sizeof(Step));
    s->kind = (int)kind_of(t);
    if (PyTuple_GET_SIZE(t) != step_sizes[s->kind] || (s->kind == STEP_RAISE || s->kind == STEP_RETURN) != last) {
        return 0;
    }
#define ITEM(i) PyTuple_GET_ITEM(t, i)
#define SLOT(i, field) (is_index(ITEM(i), nslots) && ((s->field = PyLong_AsSsize_t(ITEM(i))), 1))
    switch (s->kind) {
    case STEP_SET:
        return SLOT(1, dst) && value_valid(ITEM(2), nslots, nparams, 0) && (s->v = value_of(ITEM(2)), 1);
    case STEP_NEW:
        s->obj = ITEM(2);
        return SLOT(1, dst) && SLOT(3, a);
    case STEP_CALL:
        s->obj = ITEM(2);
        s->fallback = ITEM(4);
        return SLOT(1, dst) && SLOT(3, a);
    case STEP_INIT:
        s->obj = ITEM(1);
        return SLOT(2, e) && SLOT(3, a);
    case STEP_SETATTR:
        s->name = ITEM(2);
        return SLOT(1, e) && PyUnicode_CheckExact(s->name) && value_valid(ITEM(3), nslots, nparams, 0)
            && (s->v = value_of(ITEM(3)), 1);
    case STEP_TRACEBACK:
        s->obj = ITEM(2);
        s->fallback = ITEM(3);
        s->name = ITEM(4);
        s->lineno = ITEM(5);
        s->fast = s->obj == (PyObject *)&PyTraceBack_Type && PyFrame_Check(s->fallback) && fits_int(s->name)
            && fits_int(s->lineno);
        if (s->fast) {
            s->lasti = (int)PyLong_AsLong(s->name);
            s->line = (int)PyLong_AsLong(s->lineno);
        }
        return SLOT(1, e);
    case STEP_HANDLED:
        s->obj = ITEM(2);
        s->name = ITEM(4);
        return SLOT(1, dst) && SLOT(3, e) && PyUnicode_CheckExact(s->name);
    case STEP_RAISE:
        if (!value_valid(ITEM(1), nslots, nparams, 0) || !PyBool_Check(ITEM(2))) {
            return 0;
        }
        s->v = value_of(ITEM(1));
        s->chain = ITEM(2) == Py_True;
        return 1;
    case STEP_SETITEM:
        if (!(value_compiled(ITEM(1), nslots, nparams, &s->target) && value_compiled(ITEM(2), nslots, nparams, &s->key)
              && value_compiled(ITEM(3), nslots, nparams, &s->v))) {
            return 0;
        }
        /* `x[:] = [a, b, ...]`: list_replace where x is an exact list */
        s->fast = s->key.kind == MADE_OBJECT && PySlice_Check(s->key.obj)
            && ((PySliceObject *)s->key.obj)->start == Py_None && ((PySliceObject *)s->key.obj)->stop == Py_None
            && ((PySliceObject *)s->key.obj)->step == Py_None && s->v.kind == MADE_LIST
            && PyTuple_GET_SIZE(PyTuple_GET_ITEM(s->v.obj, 1)) <= MAX_ARGS;
        s->index = -1;
        if (s->key.kind == MADE_OBJECT && PyLong_CheckExact(s->key.obj)) {
            s->index = PyLong_AsSsize_t(s->key.obj); /* (-1 where negative or too large) */
            if (s->index < 0) {
                PyErr_Clear();
                s->index = -1;
            }
        }
        s->plain = value_is_plain(&s->v) && value_is_plain(&s->target) && value_is_plain(&s->key);
        return 1;
    case STEP_APPLY: {
        PyObject *parts = ITEM(3);
        s->obj = ITEM(2);
        if (!(discarded(ITEM(1)) ? (s->dst = -1, 1) : SLOT(1, dst))
            || !(PyCFunction_Check(s->obj) || Py_IS_TYPE(s->obj, &PyMethodDescr_Type))
            || !PyTuple_CheckExact(parts)
            || PyTuple_GET_SIZE(parts) > MAX_ARGS) {
            return 0;
        }
        s->nparts = PyTuple_GET_SIZE(parts);
        s->parts = PyMem_Calloc(s->nparts ? s->nparts : 1, sizeof(Value));
        if (s->parts == NULL) {
            return 0;
        }
        for (Py_ssize_t i = 0; i < s->nparts; i++) {
            if (!value_compiled(PyTuple_GET_ITEM(parts, i), nslots, nparams, &s->parts[i])) {
                return 0;
            }
        }
        s->plain = 1;
        for (Py_ssize_t i = 0; i < s->nparts; i++) {
            s->plain &= value_is_plain(&s->parts[i]);
        }
        direct_compiled(s);
        return 1;
    }
    case STEP_RETURN:
        return value_compiled(ITEM(1), nslots, nparams, &s->v);
    }
#undef SLOT
#undef ITEM
    return 0;
}

/* the compiled steps (their arguments' arrays too) */
static void
steps_free(Step *steps, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; steps != NULL && i < n; i++) {
        PyMem_Free(steps[i].parts);
    }
    PyMem_Free(steps);
}

static PyObject *
recipe_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *recipe;
    if (!PyArg_ParseTuple(args, "O:Recipe", &recipe) || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "Recipe(recipe) takes no keywords");
        }
        return NULL;
    }
    const char *wrong = "Recipe: not a recipe";
    Py_ssize_t nslots = 0, nsteps = 0, nparams = 0;
    Step *steps = NULL;
    if (!is_kind(recipe, 2, MADE_COUNT) || kind_of(recipe) == MADE_SLOT) {
        goto fail;
    }
    if (kind_of(recipe) != MADE_STEPS) {
        if (!value_valid(recipe, 0, &nparams, 0)) {
            goto fail;
        }
    }
    else {
        PyObject *what = PyTuple_GET_ITEM(recipe, 1);
        if (!PyTuple_CheckExact(what) || PyTuple_GET_SIZE(what) != 2
            || !is_index(PyTuple_GET_ITEM(what, 0), MAX_SLOTS + 1) || !PyTuple_CheckExact(PyTuple_GET_ITEM(what, 1))
            || PyTuple_GET_SIZE(PyTuple_GET_ITEM(what, 1)) == 0) {
            goto fail;
        }
        nslots = PyLong_AsSsize_t(PyTuple_GET_ITEM(what, 0));
        PyObject *items = PyTuple_GET_ITEM(what, 1);
        nsteps = PyTuple_GET_SIZE(items);
        steps = PyMem_Calloc(nsteps, sizeof(Step));
        if (steps == NULL) {
            return PyErr_NoMemory();
        }
        for (Py_ssize_t i = 0; i < nsteps; i++) {
            if (!step_compile(PyTuple_GET_ITEM(items, i), nslots, &nparams, i == nsteps - 1, &steps[i])) {
                goto fail;
            }
        }
        for (Py_ssize_t i = nsteps - 1; i > 0; i--) { /* runs of traceback steps on one exception */
            if (steps[i].kind == STEP_TRACEBACK && steps[i - 1].kind == STEP_TRACEBACK && steps[i].e == steps[i - 1].e) {
                steps[i - 1].more = steps[i].more + 1;
            }
        }
    }
    Recipe *r = PyObject_GC_New(Recipe, type);
    if (r == NULL) {
        steps_free(steps, nsteps);
        return NULL;
    }
    r->vectorcall = recipe_vectorcall;
    r->recipe = Py_NewRef(recipe);
    r->nslots = nslots;
    r->nsteps = nsteps;
    r->steps = steps;
    r->nparams = nparams;
    r->top = value_of(recipe); /* (read only where steps is NULL) */
    PyObject_GC_Track(r);
    return (PyObject *)r;
fail:
    steps_free(steps, nsteps);
    PyErr_SetString(PyExc_ValueError, wrong);
    return NULL;
}

static int
recipe_traverse(Recipe *r, visitproc visit, void *arg)
{
    Py_VISIT(r->recipe);
    return 0;
}

/* the compiled steps borrow from the tuple: dropped with it */
static int
recipe_clear(Recipe *r)
{
    steps_free(r->steps, r->nsteps);
    r->steps = NULL;
    r->nsteps = 0;
    Py_CLEAR(r->recipe);
    return 0;
}

static void
recipe_dealloc(Recipe *r)
{
    PyObject_GC_UnTrack(r);
    recipe_clear(r);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static PyMemberDef recipe_members[] = {
    {"recipe", T_OBJECT, offsetof(Recipe, recipe), READONLY, "the recipe this follows"},
    {NULL},
};

static PyTypeObject RecipeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bcfront._cfast.Recipe",
    .tp_doc = PyDoc_STR("Recipe(recipe): a checked link's recipe, checked and compiled; calling it\n"
                        "makes what the region's code makes (bcfront/_crecipes.c)."),
    .tp_basicsize = sizeof(Recipe),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = recipe_new,
    .tp_dealloc = (destructor)recipe_dealloc,
    .tp_traverse = (traverseproc)recipe_traverse,
    .tp_clear = (inquiry)recipe_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Recipe, vectorcall),
    .tp_members = recipe_members,
};

/* a Recipe: `recipe_make` may follow it */
int
recipe_check(PyObject *op)
{
    return Py_IS_TYPE(op, &RecipeType) && ((Recipe *)op)->recipe != NULL;
}

/* adds Recipe to the module, makes the interned names; called by PyInit__cfast */
int
recipes_add(PyObject *module)
{
    str_new = PyUnicode_InternFromString("__new__");
    str_init = PyUnicode_InternFromString("__init__");
    str_traceback = PyUnicode_InternFromString("__traceback__");
    if (!str_new || !str_init || !str_traceback || PyType_Ready(&RecipeType) < 0
        || PyModule_AddObjectRef(module, "Recipe", (PyObject *)&RecipeType) < 0) {
        return -1;
    }
    PyObject *object_new = PyObject_GetAttr((PyObject *)&PyBaseObject_Type, str_new);
    if (object_new == NULL) {
        return -1;
    }
    if (PyCFunction_Check(object_new)) {
        new_wrapper = PyCFunction_GET_FUNCTION(object_new);
    }
    Py_DECREF(object_new);
    PyObject *name = PyUnicode_InternFromString("append");
    PyObject *append = name == NULL ? NULL : _PyType_Lookup(&PyList_Type, name); /* borrowed */
    Py_XDECREF(name);
    if (append != NULL && Py_IS_TYPE(append, &PyMethodDescr_Type)) {
        list_append_meth = ((PyMethodDescrObject *)append)->d_method->ml_meth;
    }
    traceback_descr = _PyType_Lookup((PyTypeObject *)PyExc_BaseException, str_traceback); /* borrowed: lives with it */
    return traceback_descr == NULL ? -1 : 0;
}
