/* A dict's version tag (PEP 509), as both parts of `bcfront._cfast` read it: the guard
 * memo's `dict_version` / `dicts_unchanged` (_cfast.c) and the checked links' cached
 * item reads (_cchecks.c).  The field is deprecated (3.12+) but still kept current on
 * every store; `frontend.model.guard_memo.dict_version_reader` probes that once. */
#ifndef BCFRONT_CDICT_H
#define BCFRONT_CDICT_H

#include <Python.h>
#include <stdint.h>

/* the version tag of `d`, an exact dict (unchecked) */
static inline uint64_t
dict_tag(PyObject *d)
{
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
