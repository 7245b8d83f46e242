/*
 * langview.h - the language frames of a profile (langview.c;
 * doc/format.md, "Language frames"): pseudo-frames FORMAT_LANG_FRAME(id)
 * that stand for a function of an interpreted language (Python) at a
 * line, named by INFO lang.fn.<id> as "NAME<tab>FILE:LINE".
 */
#ifndef LANGVIEW_H
#define LANGVIEW_H

#include <stddef.h>
#include <stdint.h>

struct profile;
struct langview;

/* p's language frames, or NULL when it has none (no INFO lang).  peer, if
 * not NULL, is the other side of a diff: a function takes as many parts
 * of its module's path as the peer's name of it (a.util.f where the peer
 * has b/util.py's f too), so that the two sides name it alike. */
struct langview *langview_open(const struct profile *p, const struct profile *peer);
void langview_free(struct langview *l);

/* The name of frame id into *fn and its file:line into *loc (NULL when
 * the file gives none), both of the profile's storage: 0, else -1 (no
 * such frame: *fn gets NULL). */
/* The kind of object frame id made (its type's name), or NULL. */
const char *langview_kind(const struct langview *l, uint32_t id);
int langview_frame(const struct langview *l, uint32_t id, const char **fn, size_t *fnlen,
		   const char **loc);

/* The frames' ids are below this. */
uint32_t langview_count(const struct langview *l);
/* The name frame id is shown by (MODULE.QUALNAME) when its own qualified
 * name is qualname (what a user types: load, Enc.default), else NULL. */
const char *langview_shown_if(const struct langview *l, uint32_t id, const char *qualname);

/* The id of an INFO key lang.fn.<id> (1 and up), else 0. */
uint32_t langview_fn_id(const char *key);

#endif
