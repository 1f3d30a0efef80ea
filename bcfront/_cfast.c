/* bcfront's C fast paths, each with a pure-Python reference beside its use (`bcfront.cfast`
 * loads this module; where it is not built, or BCFRONT_PURE_PYTHON is set, the references
 * serve):
 *
 *  - `DispatchBase`: the cached call of a captured function (`bcfront.fast_call`);
 *  - `dict_version(d)`: a dict's version tag (`frontend.model.guard_memo`'s memo);
 *  - `dicts_unchanged(cell, *dicts)`: the memo's test in one call: the dicts' tags are the
 *    ones `cell[0]` holds (else they go to `cell[1]`, which the guard stores in `cell[0]`
 *    once the memoized checks pass);
 *  - `codes_are(functions, codes)`: each function's __code__ is the code at its index, for
 *    a guard's batch of checks that the functions a trace inlined are unchanged;
 *  - `items_are(seq, indices, types, values)`: each seq[i] has exactly its type and equals
 *    its value, for a guard's batch of checks of a list's or tuple's scalar items;
 *  - `members_are(s, member_types)`: the set `s` has the members of the dict `member_types`,
 *    each of exactly its type, for a guard's check of a set's value;
 *  - `items_of_type(seq, t)`: `seq` is an exact list whose every item has exactly type `t`,
 *    for a guard's check of a list whose items are not read (`semantics.whole_lists`);
 *  - `bound_to(method, descriptor)`: `method == descriptor.__get__(method.__self__,
 *    type(method.__self__))`, for a guard's check of a builtin method held somewhere;
 *  - `keys_are(d, keys, key_types)`: `list(d) == keys and list(map(type, d)) == key_types`,
 *    for a guard's check of a dict's keys;
 *  - `raised(exc, chain)`: what an exact link returns to have `DispatchBase`'s call raise
 *    `exc` in its stead (a cached raise: the link's frame is then not in the traceback, and its
 *    locals, which hold the exception, make no reference cycle with it);
 *  - `CheckedLink` (in `_cchecks.c`, built into this module): an exact link whose checks
 *    run in C, as a small program compiled from the link's own checks.
 *  - `Recipe` (in `_crecipes.c`, built into this module): what a checked link's region does
 *    -- returns a value made of constants, or makes an exception and raises it -- made by C.
 *
 * `DispatchBase` is the base class of `bcfront.CapturedFunction` where this module is built.
 * `fast_call` arms an instance (`_dispatch_set`) with the first of its entries' exact link
 * functions (guard and region in one Python function with the root's positional
 * parameters, each calling the next where its guard fails) and gives the instance's own
 * class this type's `__call__`.  A call then costs what Python cannot do cheaply itself:
 * the tests that say the call may take the fast way -- as many positional arguments as the
 * root takes and no keywords, nobody measuring (`bcfront.timing.ON`), the root's `__code__`
 * the traced one (the links leave that check to this) and its `__defaults__` and
 * `__kwdefaults__` the links' own -- and the call count; everything else goes to `slow`, the
 * plain loop (`CapturedFunction.__call__`), the reference this stands for.  A call with
 * keywords takes the fast way too where the links bind keywords as the root does (armed so:
 * the same parameters, names and kinds; `links.keywords_bind`) and the root's `__qualname__`
 * is still the first link's (Python's binding errors name it): then the first link gets the
 * keywords, and its binding -- a missing, unexpected or duplicate argument, too many
 * positional ones -- is the root's, error messages included.  Where the entries are
 * specialized on the values of the same arguments, a table keyed by those arguments' types
 * and values says which link to call first (`_dispatch_key`; "keyed dispatch" below).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#include "_cdict.h" /* dict_tag */

#if PY_VERSION_HEX >= 0x030D0000
uint64_t cdict_fresh_tags = 0; /* `_cdict.h`: a split dict's tags on 3.13 */
#endif

#define KEY_MAX 8 /* most positions a keyed table reads */
#define KEY_HASHES 8 /* most keys of a first position `keyed_pick` filters by hash */
#define KEY_COLD 64   /* a table missing this often, and ... */
#define KEY_COLD_RATIO 16 /* ... this many times as often as it hits, is cold: */
#define KEY_PROBE 64  /* one call in this many still looks */

typedef struct {
    PyObject_HEAD
    PyObject *first;    /* the first link, or NULL: not armed (every call goes to slow) */
    PyObject *root;     /* the root function */
    PyObject *code;     /* its __code__ the links were traced with */
    PyObject *defaults; /* its __defaults__ the links were made with (NULL: none) */
    PyObject *on;       /* bcfront.timing.ON: a list whose item 0 is true while measuring */
    PyObject *slow;     /* slow(self, *args, **kwargs): the plain call */
    PyObject *self_arg; /* the root's first argument (a bound method's self), or NULL */
    Py_ssize_t nargs;   /* least positional arguments a fast call passes (self_arg not counted) */
    Py_ssize_t most;    /* most of them (PY_SSIZE_T_MAX: the root takes *args) */
    Py_ssize_t calls;   /* calls that took the fast way */
    PyObject *kwdefaults; /* its __kwdefaults__ the links were made with (NULL: none) */
    /* keyed dispatch (`_dispatch_key`, `fast_call.keyed_table`): which link to call first */
    PyObject *key_table;  /* a dict per position, the last one's leaves links; NULL: call `first` */
    PyObject *key_missed; /* called where the table has no key: what the last link calls on a miss */
    PyObject *key_first;  /* the first link the table was made for: it serves while armed with it */
    int key_count;        /* how many positions the key reads (1 to KEY_MAX) */
    Py_ssize_t key_positions[KEY_MAX]; /* them: indices into the call's positional arguments */
    Py_ssize_t key_needs; /* a call with fewer positional arguments calls `first` */
    /* the last key picked and its pick (strong references; `key_seen` 0: none): exact scalars
     * are immutable, so the very same objects at every position pick the same link again
     * without the table's lookups (a caller passing one constant each call) */
    PyObject *key_seen_args[KEY_MAX];
    PyObject *key_seen_pick;
    int key_seen;
    /* the hashes of the first position's keys, where it has at most KEY_HASHES (-1: more):
     * an argument whose hash is none of them equals no key, a miss without the dict's
     * lookup (a caller passing new values each call: most calls miss) */
    Py_hash_t key_hashes[KEY_HASHES];
    int key_nhashes;
    Py_ssize_t key_hits, key_misses; /* the table's, since it was set: the filter serves
                                      * while misses are the more (a hit pays for it) */
    int key_general; /* `key_missed` is an entry's link that serves any key (an entry not
                      * specialized on the keyed arguments), not the slow way */
    int key_cold;   /* the table is cold: most calls go to `key_missed` without a look
                     * (`keyed_pick`; set where the counts above change) */
    size_t key_skips; /* calls of a cold table: one in KEY_PROBE looks */
    int keywords; /* a call with keywords may call `first` with them: it binds them as the root does */
    vectorcallfunc vectorcall; /* dispatch_vectorcall, where the class has the flag (`_vectorcall_class`) */
} DispatchBase;

#define SMALL_STACK 8

/* `raised(exc, chain)`: an exact link's way of saying "raise exc" (see dispatch_call) */
typedef struct {
    PyObject_HEAD
    PyObject *exc;
    int chain; /* set exc.__context__ to the caller's handled exception, as `raise` does */
} Raised;

static void
raised_dealloc(Raised *r)
{
    Py_XDECREF(r->exc);
    PyObject_Free(r);
}

/* not GC-tracked: it lives from the link's return to dispatch_call's test, and holds only
 * the exception */
static PyTypeObject RaisedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bcfront._cfast.Raised",
    .tp_doc = PyDoc_STR("An exception an exact link returns for the captured function's call to raise."),
    .tp_basicsize = sizeof(Raised),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)raised_dealloc,
};

static PyObject *
raised(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "raised(exc, chain) takes 2 arguments");
        return NULL;
    }
    if (!PyExceptionInstance_Check(args[0])) {
        PyErr_Format(PyExc_TypeError, "raised: expected an exception, got %.100s", Py_TYPE(args[0])->tp_name);
        return NULL;
    }
    int chain = PyObject_IsTrue(args[1]);
    if (chain < 0) {
        return NULL;
    }
    Raised *r = PyObject_New(Raised, &RaisedType);
    if (r == NULL) {
        return NULL;
    }
    r->exc = Py_NewRef(args[0]);
    r->chain = chain;
    return (PyObject *)r;
}

static PyObject *
call_slow(DispatchBase *d, PyObject *args, PyObject *kwargs)
{
    if (d->slow == NULL) {
        PyErr_SetString(PyExc_TypeError, "bcfront: a captured function's call is not set up");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *with_self = PyTuple_New(n + 1);
    if (with_self == NULL) {
        return NULL;
    }
    PyTuple_SET_ITEM(with_self, 0, Py_NewRef((PyObject *)d));
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTuple_SET_ITEM(with_self, i + 1, Py_NewRef(PyTuple_GET_ITEM(args, i)));
    }
    PyObject *slow = Py_NewRef(d->slow);
    PyObject *res = PyObject_Call(slow, with_self, kwargs);
    Py_DECREF(slow);
    Py_DECREF(with_self);
    return res;
}

/* -- keyed dispatch ----------------------------------------------------------------------- *
 * Where the entries' guards have exact-scalar CONSTANT_MATCHes on the same positional
 * arguments, `fast_call.keyed_table` gives the table of those arguments' keys -- each one's
 * exact type and value -- whose leaves are the first link (in chain order) of each key.
 * Exact (`fast_call`'s docstring): every link before the one picked has another key, so its
 * constant check fails on this call anyway, and the picked link goes on down the chain where
 * its guard fails.  A key of a type the table cannot have (not an exact scalar: nothing of
 * the user's is hashed or compared) or not in it: no entry's guard holds, so the call goes
 * where the last link's would (`key_missed`).
 *
 * The table, per position: a dict value -> either (type, next), where the entries' values
 * equal to that one are all of one type (a pointer compare), or a dict type -> next (1, 1.0
 * and True are equal keys; their types tell them apart); `next` is the next position's dict
 * or, after the last, the link. */

/* the exact scalar types a key is made of (`fast_call.KEY_TYPES`): their hash and == run no
 * user code */
static int
key_type(PyTypeObject *t)
{
    return t == &PyLong_Type || t == &PyUnicode_Type || t == &PyBytes_Type || t == &PyBool_Type
        || t == Py_TYPE(Py_None) || t == &PyFloat_Type;
}

/* `node`'s entry for `arg` of the exact scalar type `t` (see above; borrowed), or NULL: none
 * (with an exception set where the table is malformed) */
static PyObject *
key_step(PyObject *node, PyObject *arg, PyTypeObject *t)
{
    node = PyDict_GetItemWithError(node, arg);
    if (node == NULL) {
        return NULL;
    }
    if (PyTuple_CheckExact(node) && PyTuple_GET_SIZE(node) == 2) {
        return PyTuple_GET_ITEM(node, 0) == (PyObject *)t ? PyTuple_GET_ITEM(node, 1) : NULL;
    }
    return PyDict_GetItemWithError(node, (PyObject *)t);
}

static void
key_seen_clear(DispatchBase *d)
{
    if (d->key_seen) {
        d->key_seen = 0;
        for (int i = 0; i < d->key_count; i++) {
            Py_CLEAR(d->key_seen_args[i]);
        }
        Py_CLEAR(d->key_seen_pick);
    }
}

/* the link to call first for the positional arguments `args` (a new reference; the table's
 * pick, `first` where none is armed or too few arguments are passed, `key_missed` where the
 * key is not in it) */
static int key_filters = 1; /* 0: every key looked up in the table (`_key_filters`: the reference) */

static PyObject *keyed_lookup(DispatchBase *d, PyObject *const *args, Py_ssize_t n);

static Py_ALWAYS_INLINE inline PyObject *
keyed_pick(DispatchBase *d, PyObject *const *args, Py_ssize_t n)
{
    if (d->key_table == NULL || d->key_first != d->first || n < d->key_needs) {
        return Py_NewRef(d->first);
    }
    /* a cold table (a caller passing new values each call, an entry for any value behind
     * it): calls go straight to that entry, but one in KEY_PROBE looks, so a table whose keys
     * come back (its hits) warms up again.  Any entry whose guard holds is exact: the
     * general one serves a key the table has as well (`_key_filters(False)`: always looks) */
    if (d->key_cold && key_filters && (++d->key_skips & (KEY_PROBE - 1)) != 0) {
        return Py_NewRef(d->key_missed);
    }
    return keyed_lookup(d, args, n);
}

/* keyed_pick where the table is armed (out of line: the unkeyed call's path stays short) */
static PyObject *
keyed_lookup(DispatchBase *d, PyObject *const *args, Py_ssize_t n)
{
    if (d->key_seen) {
        int i = 0;
        while (i < d->key_count && args[d->key_positions[i]] == d->key_seen_args[i]) {
            i++;
        }
        if (i == d->key_count) {
            return Py_NewRef(d->key_seen_pick);
        }
    }
    PyObject *node = d->key_table; /* borrowed: nobody changes the table, and no code runs here */
    if (d->key_nhashes >= 0 && key_filters && d->key_misses > d->key_hits) {
        PyObject *arg = args[d->key_positions[0]];
        if (key_type(Py_TYPE(arg))) { /* (else a miss below: no scalar, no key) */
            Py_hash_t h = PyObject_Hash(arg); /* a scalar's: no code runs, no error */
            int i = 0;
            while (i < d->key_nhashes && d->key_hashes[i] != h) {
                i++;
            }
            if (i == d->key_nhashes) {
                node = NULL; /* equal objects hash alike: no key equals it */
            }
        }
    }
    for (int i = 0; i < d->key_count && node != NULL; i++) {
        PyObject *arg = args[d->key_positions[i]];
        node = key_type(Py_TYPE(arg)) ? key_step(node, arg, Py_TYPE(arg)) : NULL;
    }
    if (node == NULL && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *pick = node != NULL ? node : d->key_missed;
    if (node != NULL) {
        d->key_hits++;
    }
    else {
        d->key_misses++;
    }
    d->key_cold = d->key_general && d->key_misses >= KEY_COLD && d->key_hits * KEY_COLD_RATIO < d->key_misses;
    /* only a key the table has is remembered: scalars (immutable), each equal to one the
     * table holds already (a user's other objects are never kept) */
    if (node != NULL) {
        key_seen_clear(d);
        for (int i = 0; i < d->key_count; i++) {
            d->key_seen_args[i] = Py_NewRef(args[d->key_positions[i]]);
        }
        d->key_seen_pick = Py_NewRef(pick);
        d->key_seen = 1;
    }
    return Py_NewRef(pick);
}

PyDoc_STRVAR(dispatch_key_doc,
"_dispatch_key(positions, table, missed, first, general=False) or _dispatch_key(None)\n\n"
"Key the call armed with the link `first`: `positions` is a tuple of 1 to 8 indices into\n"
"a call's positional arguments (self_args not counted); `table` a dict per position,\n"
"each mapping a value to (type, next) or {type: next}, `next` the next position's dict\n"
"or, after the last, the link to call first for that key; `missed` is called where the\n"
"key is not in the table (`general`: an entry's link that serves any key, which a cold\n"
"table's calls go to without a look).  A call passing no more arguments than the largest position\n"
"calls `first`, and so does every call once the call is armed with another first link.\n"
"`_dispatch_key(None)`: no table.");

static PyObject *
dispatch_key(PyObject *op, PyObject *args)
{
    DispatchBase *d = (DispatchBase *)op;
    PyObject *positions, *table = NULL, *missed = NULL, *first = NULL;
    int general = 0;
    if (!PyArg_ParseTuple(args, "O|O!OOp:_dispatch_key", &positions, &PyDict_Type, &table, &missed, &first,
                          &general)) {
        return NULL;
    }
    if (positions == Py_None) {
        d->key_nhashes = -1;
        key_seen_clear(d);
        Py_CLEAR(d->key_table);
        Py_CLEAR(d->key_missed);
        Py_CLEAR(d->key_first);
        Py_RETURN_NONE;
    }
    if (!PyTuple_Check(positions) || first == NULL || !PyCallable_Check(missed) || !PyCallable_Check(first)) {
        PyErr_SetString(PyExc_TypeError, "_dispatch_key: a tuple of positions, a dict and two callables");
        return NULL;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(positions);
    if (count < 1 || count > KEY_MAX) {
        PyErr_SetString(PyExc_ValueError, "_dispatch_key: 1 to 8 positions");
        return NULL;
    }
    Py_ssize_t read[KEY_MAX], needs = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        read[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(positions, i));
        if (read[i] == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (read[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "_dispatch_key: positions are >= 0");
            return NULL;
        }
        needs = read[i] + 1 > needs ? read[i] + 1 : needs;
    }
    key_seen_clear(d); /* (before key_count changes: it says how many it holds) */
    Py_CLEAR(d->key_table); /* unkeyed while it changes */
    memcpy(d->key_positions, read, count * sizeof(Py_ssize_t));
    d->key_count = (int)count;
    d->key_needs = needs;
    Py_XSETREF(d->key_missed, Py_NewRef(missed));
    Py_XSETREF(d->key_first, Py_NewRef(first));
    d->key_nhashes = -1;
    d->key_hits = d->key_misses = 0;
    d->key_skips = 0;
    d->key_general = general;
    d->key_cold = 0;
    if (PyDict_GET_SIZE(table) <= KEY_HASHES) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        int k = 0;
        while (PyDict_Next(table, &pos, &key, &value)) {
            Py_hash_t h = PyObject_Hash(key); /* (in the dict: hashable) */
            if (h == -1) {
                return NULL;
            }
            d->key_hashes[k++] = h;
        }
        d->key_nhashes = k;
    }
    d->key_table = Py_NewRef(table);
    Py_RETURN_NONE;
}

static PyObject *
dispatch_pick(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    DispatchBase *d = (DispatchBase *)op;
    if (d->first == NULL) {
        Py_RETURN_NONE;
    }
    return keyed_pick(d, args, nargs);
}

/* a call with keywords may call the first link with them: armed so (the links bind keywords
 * as the root does), and the root's __qualname__, which Python's binding errors name, is the
 * first link's (the one it had when traced; a rename since goes the slow way).  The link's
 * binding then does the root's, and raises its errors: no count checks here (too few
 * positional arguments may be completed by keywords, too many fail as the root's call). */
PyObject *cchecks_link_of(PyObject *o); /* _cchecks.c: a CheckedLink's Python link, else o */
PyObject *cchecks_call(PyObject *first, PyObject *const *args, Py_ssize_t n); /* _cchecks.c: first(*args) */

static int
keywords_bind(DispatchBase *d)
{
    PyObject *first = cchecks_link_of(d->first); /* a CheckedLink passes keywords to its link */
    return d->keywords && PyFunction_Check(first)
        && ((PyFunctionObject *)first)->func_qualname == ((PyFunctionObject *)d->root)->func_qualname;
}

/* `exc` (the reference taken) raised as `raise exc` would in the link: chained to the
 * exception the caller handles where `chain` (PyErr_SetObject does it), with the traceback
 * the region made.  -1.  (`_crecipes.c` raises a raise recipe's exception so.) */
int
cfast_raise(PyObject *exc, int chain)
{
    if (chain) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
    else {  /* PyErr_Restore takes the three references */
        PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
    }
    return -1;
}

/* raised here as `raise exc` would in the link (implicit chaining where asked), with its
 * traceback as the region made it, where the link returned `raised(exc, chain)`; else `res` */
static PyObject *
unwrap_raised(PyObject *res)
{
    if (res == NULL || !Py_IS_TYPE(res, &RaisedType)) {
        return res;
    }
    PyObject *exc = Py_NewRef(((Raised *)res)->exc);
    int chain = ((Raised *)res)->chain;
    Py_DECREF(res);
    cfast_raise(exc, chain);
    return NULL;
}

/* the int 0 (CPython's one small int 0): timing's ON[0] while nothing measures calls */
static PyObject *small_zero = NULL;

/* the fast way of a call with the positional `args` (`n` of them) and `keywords` (a non-empty
 * dict, or NULL): `*taken` is 0 (and NULL returned, no error set) where it may not take it */
static Py_ALWAYS_INLINE inline PyObject *
dispatch_fast(DispatchBase *d, PyObject *const *args, Py_ssize_t n, PyObject *keywords, int *taken)
{
    *taken = 0;
    if (d->first == NULL || PyFunction_GET_CODE(d->root) != d->code
        || PyFunction_GET_DEFAULTS(d->root) != d->defaults
        || PyFunction_GET_KW_DEFAULTS(d->root) != d->kwdefaults
        || (keywords == NULL ? n < d->nargs || n > d->most : !keywords_bind(d))) {
        return NULL;
    }
    PyObject *on = PyList_GET_ITEM(d->on, 0);
    int measuring = on == small_zero || on == Py_False ? 0 : PyObject_IsTrue(on);
    if (measuring != 0) {
        *taken = measuring < 0;
        return NULL;
    }
    *taken = 1;
    d->calls++;
    /* held for the call: a miss inside it installs a new chain (and drops this one); the
     * keyed table reads positional arguments only: a keyword call starts at the first link */
    PyObject *first = keywords == NULL ? keyed_pick(d, args, n) : Py_NewRef(d->first);
    if (first == NULL) {
        return NULL;
    }
    PyObject *res;
    if (d->self_arg == NULL) {
        res = keywords == NULL ? cchecks_call(first, args, n)
                               : PyObject_VectorcallDict(first, args, n, keywords);
    }
    else {
        PyObject *small[SMALL_STACK];
        PyObject **stack = n + 1 <= SMALL_STACK ? small : PyMem_Malloc((n + 1) * sizeof(PyObject *));
        if (stack == NULL) {
            Py_DECREF(first);
            return PyErr_NoMemory();
        }
        PyObject *self_arg = Py_NewRef(d->self_arg);
        stack[0] = self_arg;
        for (Py_ssize_t i = 0; i < n; i++) {
            stack[i + 1] = args[i];
        }
        res = PyObject_VectorcallDict(first, stack, n + 1, keywords);
        Py_DECREF(self_arg);
        if (stack != small) {
            PyMem_Free(stack);
        }
    }
    Py_DECREF(first);
    return unwrap_raised(res);
}

/* -- the user's frames ------------------------------------------------------------------ *
 * An exception leaving a captured call must show the frames the native call shows: the
 * user's, never bcfront's (its modules, its generated regions and links, and the stand-ins
 * of the user's caller that `regions/caller_frames.py` makes for a native call).  Every call
 * of a captured function comes through here (`fast_call.install` gives every instance this
 * `__call__`, the first call's capture included), so this is where they are taken out:
 * `frame_hook` (`regions/hidden_frames.hide`) rewrites the exception's traceback, called
 * only where some entry's frame is one of those (`hidden_code`): a cached raise, whose
 * traceback the region made of the user's frames, pays a walk of it and nothing more. */
static PyObject *frame_hook = NULL;    /* hide(exc), or NULL: none set (tracebacks as they are) */
static PyObject *frame_prefixes = NULL; /* a tuple of str: bcfront's own files' prefixes */
static PyObject *frame_mark = NULL;     /* the first parameter's name of a caller's stand-in only */

/* the file names of the last user frames seen (strong references: str objects only), so
 * that a cached call raising again compares pointers, not prefixes */
#define USER_FILES 8
static PyObject *user_files[USER_FILES];
static int user_files_next = 0;

static int
hidden_file(PyObject *name)
{
    for (int i = 0; i < USER_FILES; i++) {
        if (user_files[i] == name) {
            return 0;
        }
    }
    Py_ssize_t n = PyTuple_GET_SIZE(frame_prefixes);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t hit = PyUnicode_Tailmatch(name, PyTuple_GET_ITEM(frame_prefixes, i), 0, PY_SSIZE_T_MAX, -1);
        if (hit != 0) {
            return (int)hit; /* 1, or -1 with an error set */
        }
    }
    Py_XSETREF(user_files[user_files_next], Py_NewRef(name));
    user_files_next = (user_files_next + 1) % USER_FILES;
    return 0;
}

static int
hidden_code(PyCodeObject *code)
{
    int hit = hidden_file(code->co_filename);
    if (hit != 0) {
        return hit;
    }
    /* a caller's stand-in: `frame_mark` is its first parameter, positional-only */
    PyObject *names = code->co_localsplusnames;
    if (code->co_posonlyargcount < 1 || names == NULL || PyTuple_GET_SIZE(names) < 1) {
        return 0;
    }
    PyObject *first = PyTuple_GET_ITEM(names, 0);
    return first == frame_mark || (PyUnicode_Check(first) && PyUnicode_Compare(first, frame_mark) == 0);
}

/* 1 where some entry of the traceback `tb` runs one of bcfront's frames, 0 if none, -1 */
static int
hidden_frames(PyObject *tb)
{
    int seen = 0;
    while (tb != NULL && tb != Py_None && PyTraceBack_Check(tb) && seen++ < 10000) {
        PyFrameObject *frame = ((PyTracebackObject *)tb)->tb_frame;
        PyCodeObject *code = PyFrame_GetCode(frame);
        int hit = hidden_code(code);
        Py_DECREF(code);
        if (hit != 0) {
            return hit;
        }
        tb = (PyObject *)((PyTracebackObject *)tb)->tb_next;
    }
    return 0;
}

/* `res`; where NULL (the call raised), the exception set with bcfront's frames taken out of
 * its traceback.  Where that fails, the exception as it was (a traceback is no result). */
static PyObject *
user_frames(PyObject *res)
{
    if (res != NULL || frame_hook == NULL) {
        return res;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value == NULL) {
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    int hit = hidden_frames(tb);
    if (hit < 0) {
        PyErr_Clear();
    }
    if (hit > 0 && PyException_SetTraceback(value, tb != NULL ? tb : Py_None) == 0) {
        PyObject *ok = PyObject_CallOneArg(frame_hook, value);
        if (ok == NULL) {
            PyErr_Clear();
        }
        Py_XDECREF(ok);
        Py_XSETREF(tb, PyException_GetTraceback(value));
    }
    else if (hit > 0) {
        PyErr_Clear();
    }
    PyErr_Restore(type, value, tb);
    return NULL;
}

static PyObject *
set_frame_hook(PyObject *module, PyObject *args)
{
    PyObject *hook, *prefixes = NULL, *mark = NULL;
    if (!PyArg_ParseTuple(args, "O|O!U:_set_frame_hook", &hook, &PyTuple_Type, &prefixes, &mark)) {
        return NULL;
    }
    if (hook == Py_None) {
        Py_CLEAR(frame_hook);
        Py_RETURN_NONE;
    }
    if (!PyCallable_Check(hook) || prefixes == NULL || mark == NULL) {
        PyErr_SetString(PyExc_TypeError, "_set_frame_hook(hook, prefixes, mark) or _set_frame_hook(None)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(prefixes); i++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(prefixes, i))) {
            PyErr_SetString(PyExc_TypeError, "_set_frame_hook: prefixes are str");
            return NULL;
        }
    }
    for (int i = 0; i < USER_FILES; i++) { /* seen against the prefixes of before */
        Py_CLEAR(user_files[i]);
    }
    Py_XSETREF(frame_prefixes, Py_NewRef(prefixes));
    Py_XSETREF(frame_mark, Py_NewRef(mark));
    Py_XSETREF(frame_hook, Py_NewRef(hook)); /* last: in use once all of it is set */
    Py_RETURN_NONE;
}

static PyObject *
dispatch_call(PyObject *op, PyObject *args, PyObject *kwargs)
{
    DispatchBase *d = (DispatchBase *)op;
    PyObject *keywords = kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0 ? kwargs : NULL; /* borrowed */
    int taken;
    PyObject *res = dispatch_fast(d, &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args), keywords, &taken);
    return user_frames(taken ? res : call_slow(d, args, kwargs));
}

/* `Py_TYPE(op)->tp_call(op, args, kwargs)` with a tuple and dict made of a vectorcall's
 * arguments: what Python does for a callable without vectorcall */
static PyObject *
through_tp_call(PyObject *op, PyObject *const *args, Py_ssize_t n, PyObject *kwnames)
{
    Py_ssize_t nk = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *tuple = PyTuple_New(n), *kwargs = nk ? PyDict_New() : NULL, *res = NULL;
    if (tuple == NULL || (nk && kwargs == NULL)) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    }
    for (Py_ssize_t i = 0; i < nk; i++) {
        if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0) {
            goto done;
        }
    }
    res = Py_TYPE(op)->tp_call(op, tuple, kwargs);
done:
    Py_XDECREF(tuple);
    Py_XDECREF(kwargs);
    return res;
}

/* the vectorcall of a captured function (no argument tuple made): a call without keywords
 * of an unbound one takes the fast way here; any other goes where tp_call would -- and so
 * does every call once the instance's class has another __call__ (`fast_call.install`
 * assigns one for its other ways: the flag this needs stays set in 3.11) */
static PyObject *
dispatch_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    DispatchBase *d = (DispatchBase *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (Py_TYPE(op)->tp_call == dispatch_call && (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0)) {
        int taken;
        PyObject *res = dispatch_fast(d, args, n, NULL, &taken);
        if (taken) {
            return user_frames(res);
        }
    }
    return through_tp_call(op, args, n, kwnames); /* (its tp_call, dispatch_call, hides them) */
}

static PyObject *
dispatch_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    DispatchBase *d = (DispatchBase *)PyType_GenericNew(type, args, kwargs);
    if (d != NULL) {
        d->vectorcall = dispatch_vectorcall;
    }
    return (PyObject *)d;
}

static int
dispatch_traverse(DispatchBase *d, visitproc visit, void *arg)
{
    Py_VISIT(d->first);
    Py_VISIT(d->root);
    Py_VISIT(d->code);
    Py_VISIT(d->defaults);
    Py_VISIT(d->on);
    Py_VISIT(d->slow);
    Py_VISIT(d->self_arg);
    Py_VISIT(d->kwdefaults);
    Py_VISIT(d->key_table);
    Py_VISIT(d->key_missed);
    Py_VISIT(d->key_first);
    Py_VISIT(d->key_seen_pick);
    return 0;
}

static int
dispatch_clear(DispatchBase *d)
{
    Py_CLEAR(d->first);
    Py_CLEAR(d->root);
    Py_CLEAR(d->code);
    Py_CLEAR(d->defaults);
    Py_CLEAR(d->on);
    Py_CLEAR(d->slow);
    Py_CLEAR(d->self_arg);
    Py_CLEAR(d->kwdefaults);
    Py_CLEAR(d->key_table);
    Py_CLEAR(d->key_missed);
    Py_CLEAR(d->key_first);
    key_seen_clear(d);
    return 0;
}

static void
dispatch_dealloc(DispatchBase *d)
{
    PyObject_GC_UnTrack(d);
    dispatch_clear(d);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

PyDoc_STRVAR(dispatch_set_doc,
"_dispatch_set(first, root, code, defaults, slow, on, self_args, nargs[, most[, kwdefaults\n"
"[, keywords]]]) or _dispatch_set(None)\n\n"
"Arm the fast call: `first(*self_args, *args)` for a call of `nargs` to `most` (default:\n"
"`nargs`) positional arguments and no keywords while `on[0]` is false, root's __code__\n"
"is `code` (the one the links were traced with), its __defaults__ is `defaults` and its\n"
"__kwdefaults__ is `kwdefaults` (default: None); with `keywords` true (default: false),\n"
"`first(*self_args, *args, **kwargs)` for a call with keywords too, of any number of\n"
"positional arguments, while those hold and root's __qualname__ is first's (a function\n"
"binding keywords as root does: its binding's errors are then root's);\n"
"`slow(self, *args, **kwargs)` for every other call.  `self_args`: () or (self,).\n"
"`_dispatch_set(None)` disarms it: every call goes to `slow`, and with none set, fails;\n"
"`_dispatch_set(None, slow)` disarms it and sets `slow`.");

static PyObject *
dispatch_set(PyObject *op, PyObject *args)
{
    DispatchBase *d = (DispatchBase *)op;
    PyObject *first, *root = NULL, *code = NULL, *defaults = NULL, *slow = NULL, *on = NULL;
    PyObject *self_args = NULL, *kwdefaults = Py_None;
    Py_ssize_t nargs = 0, most = -1;
    int keywords = 0;
    if (!PyArg_ParseTuple(args, "O|OOOOOO!nnOp:_dispatch_set", &first, &root, &code, &defaults, &slow,
                          &on, &PyTuple_Type, &self_args, &nargs, &most, &kwdefaults, &keywords)) {
        return NULL;
    }
    if (first == Py_None) {
        Py_CLEAR(d->first);
        if (root != NULL) { /* _dispatch_set(None, slow): every call goes to `slow` */
            if (!PyCallable_Check(root)) {
                PyErr_SetString(PyExc_TypeError, "_dispatch_set(None, slow): slow must be callable");
                return NULL;
            }
            Py_XSETREF(d->slow, Py_NewRef(root));
        }
        Py_RETURN_NONE;
    }
    if (self_args == NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "_dispatch_set: first, root, code, defaults, slow, on, self_args, nargs");
        return NULL;
    }
    if (!PyCallable_Check(first) || !PyCallable_Check(slow)) {
        PyErr_SetString(PyExc_TypeError, "_dispatch_set: first and slow must be callable");
        return NULL;
    }
    if (!PyFunction_Check(root)) {
        PyErr_Format(PyExc_TypeError, "_dispatch_set: root must be a function, not %.100s",
                     Py_TYPE(root)->tp_name);
        return NULL;
    }
    if (!PyList_Check(on) || PyList_GET_SIZE(on) < 1) {
        PyErr_SetString(PyExc_TypeError, "_dispatch_set: on must be a list of one item or more");
        return NULL;
    }
    if (most == -1) {
        most = nargs;
    }
    if (PyTuple_GET_SIZE(self_args) > 1 || nargs < 0 || most < nargs) {
        PyErr_SetString(PyExc_ValueError,
                        "_dispatch_set: self_args holds at most one item; 0 <= nargs <= most");
        return NULL;
    }
    if (defaults != Py_None && !PyTuple_Check(defaults)) {
        PyErr_SetString(PyExc_TypeError, "_dispatch_set: defaults must be a tuple or None");
        return NULL;
    }
    if (kwdefaults != Py_None && !PyDict_Check(kwdefaults)) {
        PyErr_SetString(PyExc_TypeError, "_dispatch_set: kwdefaults must be a dict or None");
        return NULL;
    }
    Py_XSETREF(d->root, Py_NewRef(root));  /* after the checks: a refused call changes nothing */
    Py_XSETREF(d->code, Py_NewRef(code));
    Py_XSETREF(d->defaults, defaults == Py_None ? NULL : Py_NewRef(defaults));
    Py_XSETREF(d->kwdefaults, kwdefaults == Py_None ? NULL : Py_NewRef(kwdefaults));
    Py_XSETREF(d->slow, Py_NewRef(slow));
    Py_XSETREF(d->on, Py_NewRef(on));
    Py_XSETREF(d->self_arg, PyTuple_GET_SIZE(self_args) ? Py_NewRef(PyTuple_GET_ITEM(self_args, 0)) : NULL);
    d->nargs = nargs;
    d->most = most;
    d->keywords = keywords;
    Py_XSETREF(d->first, Py_NewRef(first));  /* last: armed only once all of it is set */
    Py_RETURN_NONE;
}

static PyMethodDef dispatch_methods[] = {
    {"_dispatch_set", dispatch_set, METH_VARARGS, dispatch_set_doc},
    {"_dispatch_key", dispatch_key, METH_VARARGS, dispatch_key_doc},
    {"_dispatch_pick", (PyCFunction)(void (*)(void))dispatch_pick, METH_FASTCALL,
     "_dispatch_pick(*args): the link the call with these positional arguments calls first\n"
     "(the keyed table's pick, or the first link), where armed; else None."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef dispatch_members[] = {
    {"_dispatch_calls", T_PYSSIZET, offsetof(DispatchBase, calls), 0, "calls that took the fast way"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject DispatchBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "bcfront._cfast.DispatchBase",
    .tp_doc = PyDoc_STR("The C fast path of a captured function's cached call (bcfront.fast_call)."),
    .tp_basicsize = sizeof(DispatchBase),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(DispatchBase, vectorcall),
    .tp_new = dispatch_new,
    .tp_dealloc = (destructor)dispatch_dealloc,
    .tp_traverse = (traverseproc)dispatch_traverse,
    .tp_clear = (inquiry)dispatch_clear,
    .tp_call = dispatch_call,
    .tp_methods = dispatch_methods,
    .tp_members = dispatch_members,
};

/* -- guard helpers ------------------------------------------------------------------------ */

static PyObject *
dict_version(PyObject *module, PyObject *d)
{
    if (!PyDict_CheckExact(d)) {
        PyErr_Format(PyExc_TypeError, "dict_version: expected a dict, got %.100s", Py_TYPE(d)->tp_name);
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(dict_tag(d));
}

/* the tags of `n` dicts into `tags`; -1 with TypeError where one is not an exact dict (the
 * guard memo's read: ``dicts_unchanged`` and the check programs' DICTS_SAME) */
int
cfast_read_tags(PyObject *const *dicts, Py_ssize_t n, uint64_t *tags)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyDict_CheckExact(dicts[i])) {
            PyErr_Format(PyExc_TypeError, "dicts_unchanged: expected a dict, got %.100s", Py_TYPE(dicts[i])->tp_name);
            return -1;
        }
        tags[i] = dict_tag(dicts[i]);
    }
    return 0;
}

static PyObject *
dicts_unchanged(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || !PyList_CheckExact(args[0]) || PyList_GET_SIZE(args[0]) != 2) {
        PyErr_SetString(PyExc_TypeError, "dicts_unchanged(cell, *dicts): cell must be a list of two items");
        return NULL;
    }
    PyObject *cell = args[0];
    Py_ssize_t n = nargs - 1;
    uint64_t small[SMALL_STACK];
    uint64_t *tags = n <= SMALL_STACK ? small : PyMem_Malloc(n * sizeof(uint64_t));
    if (tags == NULL) {
        return PyErr_NoMemory();
    }
    PyObject *res = NULL;
    if (cfast_read_tags(args + 1, n, tags) == 0) {
        Py_ssize_t size = n * (Py_ssize_t)sizeof(uint64_t);
        PyObject *passed = PyList_GET_ITEM(cell, 0);
        if (PyBytes_CheckExact(passed) && PyBytes_GET_SIZE(passed) == size
            && memcmp(PyBytes_AS_STRING(passed), tags, size) == 0) {
            res = Py_NewRef(Py_True);
        }
        else {
            PyObject *now = PyBytes_FromStringAndSize((const char *)tags, size);
            if (now != NULL) {
                PyList_SetItem(cell, 1, now);  /* steals `now` */
                res = Py_NewRef(Py_False);
            }
        }
    }
    if (tags != small) {
        PyMem_Free(tags);
    }
    return res;
}

/* codes_are(functions, codes) as 1 or 0, -1 with TypeError where they are not two tuples
 * of one length (the check program's ASSERT_CODES, `_cchecks.c`, calls it too) */
static int
codes_hold(PyObject *functions, PyObject *codes)
{
    if (!PyTuple_CheckExact(functions) || !PyTuple_CheckExact(codes)
        || PyTuple_GET_SIZE(functions) != PyTuple_GET_SIZE(codes)) {
        PyErr_SetString(PyExc_TypeError, "codes_are(functions, codes): two tuples of one length");
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(functions);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *f = PyTuple_GET_ITEM(functions, i);
        if (!PyFunction_Check(f) || PyFunction_GET_CODE(f) != PyTuple_GET_ITEM(codes, i)) {
            return 0;
        }
    }
    return 1;
}

/* ASSERT_CODES' test: `pair` is (functions, codes) */
int
cfast_codes_are(PyObject *pair)
{
    if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) {
        PyErr_SetString(PyExc_TypeError, "CheckedLink: ASSERT_CODES' constant is (functions, codes)");
        return -1;
    }
    return codes_hold(PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
}

static PyObject *
codes_are(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "codes_are(functions, codes): two tuples of one length");
        return NULL;
    }
    int r = codes_hold(args[0], args[1]);
    return r < 0 ? NULL : PyBool_FromLong(r);
}

/* seq[index] for an exact list or tuple; a new reference, NULL with IndexError set */
static PyObject *
item_of(PyObject *seq, PyObject *index)
{
    Py_ssize_t i = PyLong_AsSsize_t(index);
    if (i == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t n = PyList_CheckExact(seq) ? PyList_GET_SIZE(seq) : PyTuple_GET_SIZE(seq);
    if (i < 0) {
        i += n;
    }
    if (i < 0 || i >= n) {
        PyErr_SetString(PyExc_IndexError, "items_are: index out of range");
        return NULL;
    }
    return Py_NewRef(PyList_CheckExact(seq) ? PyList_GET_ITEM(seq, i) : PyTuple_GET_ITEM(seq, i));
}

/* `x == k` is true, as Python's `x == k` then its truth says (1, 0, or -1 on an error); an
 * exact int, str or bytes is equal to itself without a comparison (one that runs no code
 * and says True: the identity shortcut is exact for them -- not for a float, NaN), and two
 * exact floats compare as doubles, as float's own comparison does */
int
cfast_equal(PyObject *x, PyObject *k)
{
    if (x == k && (PyLong_CheckExact(x) || PyUnicode_CheckExact(x) || PyBytes_CheckExact(x))) {
        return 1;
    }
    if (PyFloat_CheckExact(x) && PyFloat_CheckExact(k)) { /* what float_richcompare does (a NaN: 0) */
        return PyFloat_AS_DOUBLE(x) == PyFloat_AS_DOUBLE(k);
    }
    PyObject *eq = PyObject_RichCompare(x, k, Py_EQ);
    if (eq == NULL) {
        return -1;
    }
    int truth = eq == Py_True ? 1 : eq == Py_False ? 0 : PyObject_IsTrue(eq);
    Py_DECREF(eq);
    return truth;
}

/* an exact int, str or bytes: two of them that are one object are equal, and comparing
 * them runs no code (`_cchecks.c`'s superops ask it too) */
int
cfast_identity_equality(PyObject *t)
{
    return t == (PyObject *)&PyLong_Type || t == (PyObject *)&PyUnicode_Type || t == (PyObject *)&PyBytes_Type;
}

int cfast_items_shape(PyObject *indices, PyObject *types, PyObject *values);
int cfast_items_match(PyObject *seq, PyObject *indices, PyObject *types, PyObject *values);

/* `items_are`'s test, for it and for the checks' ASSERT_ITEMS (`_cchecks.c`): 1 it holds,
 * 0 not, -1 an error.  `indices` NULL: (0, 1, ..., n - 1), read without an int's conversion */
int
cfast_items_are(PyObject *seq, PyObject *indices, PyObject *types, PyObject *values)
{
    if (!cfast_items_shape(indices, types, values)) {
        PyErr_SetString(PyExc_TypeError, "items_are(seq, indices, types, values): three tuples of one length");
        return -1;
    }
    return cfast_items_match(seq, indices, types, values);
}

/* `items_are`'s arguments after `seq` are what it takes: three tuples of one length
 * (`indices` NULL: the first ones in order) */
int
cfast_items_shape(PyObject *indices, PyObject *types, PyObject *values)
{
    return (indices == NULL || PyTuple_CheckExact(indices)) && PyTuple_CheckExact(types) && PyTuple_CheckExact(values)
        && PyTuple_GET_SIZE(types) == PyTuple_GET_SIZE(values)
        && (indices == NULL || PyTuple_GET_SIZE(indices) == PyTuple_GET_SIZE(types));
}

/* `cfast_items_are` of arguments `cfast_items_shape` accepted (a check program's constant,
 * checked once when its CheckedLink is made) */
int
cfast_items_match(PyObject *seq, PyObject *indices, PyObject *types, PyObject *values)
{
    if (!PyList_CheckExact(seq) && !PyTuple_CheckExact(seq)) {
        return 0;  /* the guard checks its type too: never true then */
    }
    Py_ssize_t n = PyTuple_GET_SIZE(types), j = 0;
    if (indices == NULL) {
        /* the leading items that are their values themselves, of a type whose identity is
         * equality (`cfast_equal`'s first test): read borrowed, no code runs */
        int list = PyList_CheckExact(seq);
        PyObject **items = list ? ((PyListObject *)seq)->ob_item : ((PyTupleObject *)seq)->ob_item;
        Py_ssize_t size = list ? PyList_GET_SIZE(seq) : PyTuple_GET_SIZE(seq);
        PyObject **want = ((PyTupleObject *)values)->ob_item, **tys = ((PyTupleObject *)types)->ob_item;
        Py_ssize_t m = n < size ? n : size;
        while (j < m && items[j] == want[j] && (PyObject *)Py_TYPE(want[j]) == tys[j] && cfast_identity_equality(tys[j])) {
            j++;
        }
    }
    for (; j < n; j++) {
        PyObject *item;
        if (indices == NULL) {
            /* in order: read borrowed where the test runs no code -- the item is the value
             * itself, of a type whose identity is equality (`cfast_equal`'s first test) */
            Py_ssize_t size = PyList_CheckExact(seq) ? PyList_GET_SIZE(seq) : PyTuple_GET_SIZE(seq);
            PyObject *value = PyTuple_GET_ITEM(values, j);
            item = j < size ? (PyList_CheckExact(seq) ? PyList_GET_ITEM(seq, j) : PyTuple_GET_ITEM(seq, j)) : NULL;
            if (item != NULL && item == value && (PyObject *)Py_TYPE(item) == PyTuple_GET_ITEM(types, j)
                && (PyLong_CheckExact(item) || PyUnicode_CheckExact(item) || PyBytes_CheckExact(item))) {
                continue;
            }
        }
        if (indices != NULL) {
            item = item_of(seq, PyTuple_GET_ITEM(indices, j));
        }
        else if (j < (PyList_CheckExact(seq) ? PyList_GET_SIZE(seq) : PyTuple_GET_SIZE(seq))) {
            item = Py_NewRef(PyList_CheckExact(seq) ? PyList_GET_ITEM(seq, j) : PyTuple_GET_ITEM(seq, j));
        }
        else {
            PyErr_SetString(PyExc_IndexError, "items_are: index out of range");
            item = NULL;
        }
        if (item == NULL) {
            return -1;
        }
        if ((PyObject *)Py_TYPE(item) != PyTuple_GET_ITEM(types, j)) {
            Py_DECREF(item);
            return 0;
        }
        int truth = cfast_equal(item, PyTuple_GET_ITEM(values, j));
        Py_DECREF(item);
        if (truth <= 0) {
            return truth;
        }
    }
    return 1;
}

/* `items_of_type`'s test, for it and for the checks' ASSERT_ITEMS_TYPE: 1 it holds, 0 not */
int
cfast_items_of_type(PyObject *seq, PyObject *t)
{
    if (!PyList_CheckExact(seq)) {
        return 0;  /* the guard checks its type too: never true then */
    }
    /* exact types of builtin scalars: reading them runs no code, and the list cannot change */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(seq); i++) {
        if ((PyObject *)Py_TYPE(PyList_GET_ITEM(seq, i)) != t) {
            return 0;
        }
    }
    return 1;
}

static PyObject *
items_are(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "items_are(seq, indices, types, values): three tuples of one length");
        return NULL;
    }
    int t = cfast_items_are(args[0], args[1], args[2], args[3]);
    return t < 0 ? NULL : Py_NewRef(t ? Py_True : Py_False);
}

static PyObject *
items_of_type(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "items_of_type(seq, t)");
        return NULL;
    }
    return Py_NewRef(cfast_items_of_type(args[0], args[1]) ? Py_True : Py_False);
}

static PyObject *
members_are(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "members_are(s, member_types): a set and a dict");
        return NULL;
    }
    PyObject *s = args[0], *types = args[1];
    if (!PyAnySet_CheckExact(s) || PySet_GET_SIZE(s) != PyDict_GET_SIZE(types)) {
        Py_RETURN_FALSE;
    }
    PyObject *it = PyObject_GetIter(s);
    if (it == NULL) {
        return NULL;
    }
    PyObject *key;
    while ((key = PyIter_Next(it)) != NULL) {
        PyObject *t = PyDict_GetItemWithError(types, key);  /* borrowed */
        int same = t != NULL && (PyObject *)Py_TYPE(key) == t;
        Py_DECREF(key);
        if (!same) {
            Py_DECREF(it);
            if (PyErr_Occurred()) {
                return NULL;
            }
            Py_RETURN_FALSE;
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) {
        return NULL;
    }
    Py_RETURN_TRUE;
}

/* `list(x) == want` is true (1, 0, -1 on an error), `x` iterated as `list(x)` does */
static int
listed_equal(PyObject *x, PyObject *want)
{
    PyObject *got = PySequence_List(x);
    if (got == NULL) {
        return -1;
    }
    PyObject *eq = PyObject_RichCompare(got, want, Py_EQ); /* the lists' own ==: bool */
    Py_DECREF(got);
    if (eq == NULL) {
        return -1;
    }
    int truth = PyObject_IsTrue(eq);
    Py_DECREF(eq);
    return truth;
}

/* the types of what iterating `x` gives, as `list(map(type, x))` makes them */
static PyObject *
types_listed(PyObject *x)
{
    PyObject *it = PyObject_GetIter(x);
    if (it == NULL) {
        return NULL;
    }
    PyObject *out = PyList_New(0), *k;
    while (out != NULL && (k = PyIter_Next(it)) != NULL) {
        int r = PyList_Append(out, (PyObject *)Py_TYPE(k));
        Py_DECREF(k);
        if (r < 0) {
            Py_CLEAR(out);
        }
    }
    Py_DECREF(it);
    if (out != NULL && PyErr_Occurred()) {
        Py_CLEAR(out);
    }
    return out;
}

/* the keys check's two list comparisons as Python makes them, in order, without the calls
 * of `list`, `map` and `type` through the C program (each a call of a Python-level object) */
static PyObject *
keys_are(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyList_CheckExact(args[1]) || !PyList_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "keys_are(d, keys, key_types): a mapping and two lists");
        return NULL;
    }
    int truth = listed_equal(args[0], args[1]);
    if (truth <= 0) {
        return truth < 0 ? NULL : Py_NewRef(Py_False);
    }
    PyObject *types = types_listed(args[0]);
    if (types == NULL) {
        return NULL;
    }
    PyObject *eq = PyObject_RichCompare(types, args[2], Py_EQ);
    Py_DECREF(types);
    if (eq == NULL) {
        return NULL;
    }
    truth = PyObject_IsTrue(eq);
    Py_DECREF(eq);
    return truth < 0 ? NULL : PyBool_FromLong(truth);
}

static PyObject *
bound_to(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "bound_to(method, descriptor)");
        return NULL;
    }
    PyObject *method = args[0], *descr = args[1];
    if (PyCFunction_CheckExact(method) && Py_IS_TYPE(descr, &PyMethodDescr_Type)) {
        /* what method_descriptor.__get__ then builtin method == compare: the same C function
           bound to the same self, which the descriptor accepts */
        PyCFunctionObject *m = (PyCFunctionObject *)method;
        PyMethodDescrObject *d = (PyMethodDescrObject *)descr;
        PyObject *self = m->m_self;
        if (self != NULL && PyObject_TypeCheck(self, PyDescr_TYPE(d))) {
            return PyBool_FromLong(m->m_ml->ml_meth == d->d_method->ml_meth);
        }
    }
    /* the plain way, for every other kind */
    PyObject *self = PyObject_GetAttrString(method, "__self__");
    if (self == NULL) {
        return NULL;
    }
    descrgetfunc get = Py_TYPE(descr)->tp_descr_get;
    PyObject *bound = get != NULL ? get(descr, self, (PyObject *)Py_TYPE(self)) : NULL;
    if (get == NULL) {
        PyErr_SetString(PyExc_TypeError, "bound_to: not a descriptor");
    }
    Py_DECREF(self);
    if (bound == NULL) {
        return NULL;
    }
    PyObject *eq = PyObject_RichCompare(method, bound, Py_EQ);
    Py_DECREF(bound);
    return eq;
}

/* Python classes do not inherit the vectorcall flag in 3.11 (they do from 3.12) */
static PyObject *
vectorcall_class(PyObject *module, PyObject *cls)
{
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &DispatchBaseType)) {
        PyErr_SetString(PyExc_TypeError, "_vectorcall_class: a subclass of DispatchBase");
        return NULL;
    }
    PyTypeObject *t = (PyTypeObject *)cls;
    int on = t->tp_call == dispatch_call && t->tp_vectorcall_offset == offsetof(DispatchBase, vectorcall);
    if (on) {
        t->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
    }
    return PyBool_FromLong(on);
}

extern int recipes_direct_calls; /* _crecipes.c */

/* `*flag` = on's truth; the previous setting (a fast path's switch: off, its reference) */
static PyObject *
switched(int *flag, PyObject *on)
{
    int truth = PyObject_IsTrue(on);
    if (truth < 0) {
        return NULL;
    }
    PyObject *previous = PyBool_FromLong(*flag);
    *flag = truth;
    return previous;
}

static PyObject *
set_key_filters(PyObject *module, PyObject *on)
{
    return switched(&key_filters, on);
}

static PyObject *
set_direct_calls(PyObject *module, PyObject *on)
{
    return switched(&recipes_direct_calls, on);
}

static PyMethodDef cfast_functions[] = {
    {"_set_frame_hook", set_frame_hook, METH_VARARGS,
     "_set_frame_hook(hook, prefixes, mark): an exception leaving a captured call whose\n"
     "traceback runs a frame of a file starting with one of `prefixes` (a tuple of str) or\n"
     "of a code with the local `mark` gets hook(exc) called (it rewrites exc.__traceback__).\n"
     "_set_frame_hook(None): no hook."},
    {"_vectorcall_class", vectorcall_class, METH_O,
     "_vectorcall_class(cls): give the subclass `cls` of DispatchBase, whose __call__ is\n"
     "DispatchBase's, the vectorcall its instances have (3.11 does not inherit it); True if so."},
    {"_key_filters", set_key_filters, METH_O,
     "_key_filters(on): a keyed call's first argument whose hash is none of its position's\n"
     "keys' misses without the table's lookup (True, the default) or is looked up (False:\n"
     "the reference path); returns the previous setting."},
    {"_direct_calls", set_direct_calls, METH_O,
     "_direct_calls(on): a recipe's call of a C function or method descriptor goes straight to\n"
     "its C function (True, the default) or through PyObject_Vectorcall (False: the reference\n"
     "path); returns the previous setting."},
    {"dict_version", dict_version, METH_O, "dict_version(d): the version tag of the dict `d`."},
    {"dicts_unchanged", (PyCFunction)(void (*)(void))dicts_unchanged, METH_FASTCALL,
     "dicts_unchanged(cell, *dicts): the dicts' version tags are those in cell[0] (the tags\n"
     "of the last call whose memoized checks passed); if not, cell[1] = their tags now."},
    {"codes_are", (PyCFunction)(void (*)(void))codes_are, METH_FASTCALL,
     "codes_are(functions, codes): every functions[i].__code__ is codes[i]."},
    {"items_are", (PyCFunction)(void (*)(void))items_are, METH_FASTCALL,
     "items_are(seq, indices, types, values): seq is an exact list or tuple and each\n"
     "seq[indices[j]] has exactly the type types[j] and equals values[j]."},
    {"bound_to", (PyCFunction)(void (*)(void))bound_to, METH_FASTCALL,
     "bound_to(method, descriptor): method == descriptor.__get__(method.__self__,\n"
     "type(method.__self__))."},
    {"raised", (PyCFunction)(void (*)(void))raised, METH_FASTCALL,
     "raised(exc, chain): what an exact link returns to have the captured function's call\n"
     "raise exc (with `chain`, chained to the exception the caller handles, as `raise` does)."},
    {"keys_are", (PyCFunction)(void (*)(void))keys_are, METH_FASTCALL,
     "keys_are(d, keys, key_types): list(d) == keys and list(map(type, d)) == key_types."},
    {"items_of_type", (PyCFunction)(void (*)(void))items_of_type, METH_FASTCALL,
     "items_of_type(seq, t): seq is an exact list whose every item has exactly the type t."},
    {"members_are", (PyCFunction)(void (*)(void))members_are, METH_FASTCALL,
     "members_are(s, member_types): s is an exact set or frozenset whose members are the\n"
     "keys of member_types, each of exactly the type it maps to."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef cfast_module = {
    PyModuleDef_HEAD_INIT, "bcfront._cfast", "bcfront's C fast paths (see bcfront/cfast.py).", -1,
    cfast_functions,
};

int cchecks_add(PyObject *module); /* _cchecks.c */
int recipes_add(PyObject *module);   /* _crecipes.c */

PyMODINIT_FUNC
PyInit__cfast(void)
{
    if (PyType_Ready(&DispatchBaseType) < 0 || PyType_Ready(&RaisedType) < 0) {
        return NULL;
    }
    if (small_zero == NULL && (small_zero = PyLong_FromLong(0)) == NULL) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&cfast_module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "DispatchBase", (PyObject *)&DispatchBaseType) < 0
        || cchecks_add(m) < 0 || recipes_add(m) < 0
        /* what bcfront/cfast.py expects of this source: a stale build is not used */
        || PyModule_AddIntConstant(m, "INTERFACE", 18) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
