/*
 * lname.h - what a Lisp profile adds to the data file (lname.c):
 * the names of Lisp functions, the entry addresses of compiled ones, and
 * the INFO entries that carry them (doc/format.md, "Lisp profiles").
 *
 * A Lisp function met in ECL's invocation history (lisp_ihs.c) is a
 * pseudo-frame in a stack, FORMAT_LISP_FRAME(id), its name interned here
 * under id and written as INFO lisp.fn.<id>.  A compiled Lisp function
 * (a .fas) is a real C frame, symbolized offline; its entry address and
 * Lisp name, recorded when ECL installs it, go to INFO as
 * lisp.entry.<hex address>, so the tools name it as Lisp does.
 *
 * Interning takes a lock; reading (the writer's INFO) takes none: entries
 * are published by a release store of their count, after they are whole,
 * and never change.  Nothing here allocates with malloc.
 */
#ifndef LNAME_H
#define LNAME_H

#include <stddef.h>
#include <stdint.h>

struct format_writer;

/* Names interned at most; later ones get id 0 (not named). */
#define LNAME_MAX (1u << 16)
/* Longest name kept, in bytes (longer ones are cut). */
#define LNAME_LEN 128

/* This process's profile is a Lisp one (INFO lisp and classes); once. */
void lname_profile(void);
int lname_is_profile(void);

/* The id (1..LNAME_MAX) of name[0..len), made if new; 0 when the table
 * is full or the lock was not had. */
uint32_t lname_intern(const char *name, size_t len);
/* The name of id (NULL if there is none yet). */
const char *lname_get(uint32_t id);
/* Compiled Lisp function at entry address addr is called id. */
void lname_entry(uint64_t addr, uint32_t id);

/* How the Lisp names were found (INFO lisp.names): "ihs", or why not. */
void lname_status(const char *s);
/* A capture had more interpreter frames than the invocation history had
 * bytecoded functions (INFO lisp.unmatched counts them). */
void lname_unmatched(void);

/*
 * INFO entries for the writer: lname_info_count() says how many (0 in a
 * profile that is not a Lisp one) and fixes them; lname_info_put()
 * writes exactly those.  Caller holds the save lock.
 */
size_t lname_info_count(void);
void lname_info_put(struct format_writer *w);

/* In a forked child: whatever the parent's threads held. */
void lname_lock_reinit(void);

#endif
