/*
 * langname.h - the names of a profile's language frames (langname.c):
 * the functions of an interpreted language (Python) that stand in a
 * captured stack in place of the interpreter's C frame that ran them,
 * as pseudo-frames FORMAT_LANG_FRAME(id) (format.h), and the INFO
 * entries that carry their names (doc/format.md, "Language frames").
 *
 * A frame is found by the language module's key for it (Python: its code
 * object and instruction), checked by a second word the key's object
 * must still have (the code's name: a code object freed and another made
 * at its address is not taken for it).  Finding takes no lock: an entry
 * is written whole before its key is stored (release) and never changes.
 * Adding one takes the lock.  Nothing here allocates with malloc.
 */
#ifndef LANGNAME_H
#define LANGNAME_H

#include <stddef.h>
#include <stdint.h>

struct format_writer;

/* Ids at most (later frames get 0: unnamed), and bytes of a name kept. */
#define LANGNAME_MAX (1u << 16)
#define LANGNAME_LEN 240

/* The profile is a language one: lang (e.g. "python 3.11.2"), and how
 * its frames are read (INFO lang.frames: "read", or "none: " and why). */
void langname_profile(const char *lang);
void langname_status(const char *status);
/* Whether frames were named: then the runtime saves at _exit itself
 * (monitor_ctl.c, sampler.c), with every name, where the keep may hold
 * none (a full keep, or none when the first frame came). */
int langname_any(void);

/* The id of the frame (key, sub) whose check is check: 0 if none yet. */
uint32_t langname_find(uintptr_t key, uint32_t sub, uintptr_t check);
/* Add it, named fn (fnlen bytes) at file:line: its id, 0 when full. */
uint32_t langname_add(uintptr_t key, uint32_t sub, uintptr_t check, const char *fn, size_t fnlen,
		      const char *file, size_t filelen, int line);

/* The kind of object frame id made (the type of the first object made
 * there that the monitor looked at; n bytes, printable): kept once.
 * Whether id has one.  The value of lang.fn.N then ends in a tab and
 * the kind (doc/format.md). */
void langname_set_kind(uint32_t id, const char *kind, size_t n);
int langname_has_kind(uint32_t id);

/* INFO entries for the writer (as lname.h's): the count, fixed; then
 * exactly those.  The caller holds the save lock. */
size_t langname_info_count(void);
void langname_info_put(struct format_writer *w);

/* In a forked child: whatever the parent's threads held. */
void langname_lock_reinit(void);

/*
 * The names where a launcher finds them in a dead program's keep
 * (keep.h): the names and kinds are kept in it (keep_map), and this
 * mirror, in it too, leads to them; the collector's root holds its
 * address (mkeep.h's lang).  lib/run/salvage_mprof.c writes INFO's
 * lang, lang.frames and lang.fn.N from it as langname_info_put does.
 * Each field is stored after what it leads to: n after names[n] and the
 * string it points to (a kind may be missed: stored after n moved on).
 */
struct langname_keep {
	char lang[48];    /* langname_profile's, cut; "": not a language profile */
	char status[112]; /* lang.frames, cut */
	uint64_t names;   /* address of names[0..LANGNAME_MAX]: "NAME<tab>FILE:LINE" */
	uint64_t kinds;   /* address of kinds[0..LANGNAME_MAX]: NULL or the kind */
	uint32_t n, pad;  /* names[1..n] */
};
/* Once, before the first frame: where the mirror's address goes (the
 * collector's root in the keep). */
void langname_keep_at(uint64_t *where);

#endif
