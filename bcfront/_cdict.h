/* A dict's version tag (PEP 509), as both parts of `bcfront._cfast` read it: the guard
 * memo's `dict_version` / `dicts_unchanged` (_cfast.c) and the checked links' cached
 * item reads (_cchecks.c).  The field is deprecated (3.12+) but still kept current on
 * every store but one (3.13's, below); `frontend.model.guard_memo.dict_version_reader`
 * probes that once. */
#ifndef BCFRONT_CDICT_H
#define BCFRONT_CDICT_H

#include <Python.h>
#include <stdint.h>

#if PY_VERSION_HEX >= 0x030D0000
/* 3.13 stores an attribute of an object whose dict views its inline values (a split dict)
 * without a new tag -- dict watchers are told, the tag stays -- so such a dict's tag says
 * nothing: each read of it is a tag never read before (the top bit set, which no real tag
 * reaches), and it reads as changed every time.  One counter for the whole module
 * (`_cfast.c` defines it): two files' fresh tags never meet. */
extern uint64_t cdict_fresh_tags;
#endif

/* the version tag of `d`, an exact dict (unchecked) */
static inline uint64_t
dict_tag(PyObject *d)
{
#if PY_VERSION_HEX >= 0x030D0000
    if (((PyDictObject *)d)->ma_values != NULL) {
        return ((uint64_t)1 << 63) | cdict_fresh_tags++;
    }
#endif
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
    return ((PyDictObject *)d)->ma_version_tag;
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
}

#endif
