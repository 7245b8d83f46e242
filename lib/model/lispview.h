/*
 * lispview.h - reading a Lisp profile (lispview.c; doc/format.md, "Lisp
 * profiles"): one the monitor wrote for a program running on ECL, whose
 * objects are counted by type and whose stacks name Lisp functions.
 *
 * The mprof paper, "Lisp Implementation": the tables of a Lisp program
 * name Lisp functions, not the C frames of the Lisp system, and break
 * memory down by type: cons (c), floating point (f), structure or vector
 * (s), other (o).  The stacks hold the C frames the unwinder saw, the
 * interpreter's replaced by the Lisp function each one ran (a
 * pseudo-frame, FORMAT_LISP_FRAME); the Lisp view keeps those, and the
 * C frames of compiled Lisp functions, named as Lisp names them, and
 * leaves out ECL's own C frames.  What ECL's primitives make is charged
 * to the Lisp function that called them.
 */
#ifndef LISPVIEW_H
#define LISPVIEW_H

#include <stddef.h>
#include <stdint.h>

struct profile;
struct symbols;
struct lispview;

/* The class columns' labels of p: "c f s o" for a Lisp profile (INFO
 * classes), NULL for a C one (size classes s m l x). */
const char *lispview_classes(const struct profile *p);

/* The Lisp view of p's frames, or NULL when p is no Lisp profile or the
 * monitor could not read ECL's history (INFO lisp.names): then its C
 * frames are shown as in any profile. */
struct lispview *lispview_open(const struct profile *p);
void lispview_free(struct lispview *l);

/*
 * The Lisp name of frame addr (is_ret: a return address), into buf (len
 * bytes), or NULL when the frame is none of a Lisp function's (ECL's own
 * C code: the view leaves it out).  A pseudo-frame is named by the file;
 * a C frame by the entry table (the exact Lisp name of a compiled
 * function), else, in a compiled Lisp file (.fas), from its C name.
 */
const char *lispview_frame(struct lispview *l, struct symbols *sy, uint64_t addr, int is_ret,
			   char *buf, size_t len);

/* The id of an INFO key lisp.fn.<id> (1 and up), else 0. */
uint32_t lispview_fn_id(const char *key);
/* The address of an INFO key lisp.entry.<hex> into *addr: 0, else -1. */
int lispview_entry_addr(const char *key, uint64_t *addr);

/* The name of top-level forms, and of a stack with no Lisp function. */
#define LISP_TOPLEVEL "(top-level)"
#define LISP_NONE "(no Lisp function)"

#endif
