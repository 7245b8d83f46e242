/*
 * custom.h - the objects a program reports itself (mprof.h: mprof_alloc,
 * mprof_free, mprof_category): pool, arena and garbage-collector objects
 * that malloc never sees, and the names of their categories.
 *
 * Such objects may lie closer together than the address map's granules
 * (a Lisp cons is 16 bytes; a pool packs its objects) and inside a block
 * malloc gave the pool (the address map's slot for the block's start is
 * the block's), so they have a map of their own: address -> (stack index,
 * size), a hash table in memory from mmap under one lock.  The custom
 * path is a report the program chose to make, not malloc's hot path.
 *
 * A category is a name, interned here (at most CUSTOM_MAX_CATEGORIES); its
 * number goes in the flags of the stacks its objects are counted on
 * (FORMAT_STACK_CATEGORY), and the names in INFO as category.N.
 */
#ifndef CUSTOM_H
#define CUSTOM_H

#include <stddef.h>
#include <stdint.h>

#define CUSTOM_MAX_CATEGORIES 255

/* The number of category name (1..CUSTOM_MAX_CATEGORIES), made if new; 0
 * when the table is full, the name is empty or the lock was not had. */
int custom_category(const char *name);
/* Whether category c has been made (a report's category is checked). */
int custom_category_ok(int c);

/* Record p's stack index and size: 0, or -1 (no memory, or the lock was
 * not had).  A second report of a live address replaces the first. */
int custom_put(uintptr_t p, uint32_t idx, uint64_t size);
/* Take p out: 1 with its index and size, 0 when it is not there. */
int custom_take(uintptr_t p, uint32_t *idx, uint64_t *size);
/* The map's lock, taken last of the monitor's (monitor.h), held across
 * fork so the child's copy is whole: 0, or -1 (not had). */
int custom_lock(void);
void custom_unlock(void);
/* In a forked child: whatever the parent's threads held. */
void custom_lock_reinit(void);

/*
 * Every object in the map, in no order: fn(ctx, p, index, size), under the
 * map's lock (fn must not report objects).  For the leak scan at exit
 * (leakscan.c).  0; -1 when fn asked to stop (returned non-zero) or the
 * lock was not had.
 */
int custom_each(int (*fn)(void *ctx, uintptr_t p, uint32_t idx, uint64_t size), void *ctx);

/* INFO's category.N entries: up to max (key, name) pairs into kv. */
size_t custom_info(const char *kv[][2], size_t max);

#endif
