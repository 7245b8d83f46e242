/*
 * reader_int.h - what the reader's files share, and nothing outside the
 * reader may use (its interface is reader.h): reader.c reads and checks
 * a file, reader_stacks.c keeps and decodes its stacks, reader_timeline.c
 * reads the heap over time.
 */
#ifndef READER_INT_H
#define READER_INT_H

struct profile;

/* The mapped file is given back to the kernel this much at a time. */
#define FORGET_STEP (4u << 20)

/* The pages of the mapped file before q (p->forgotten on, whole steps of
 * FORGET_STEP) leave memory: they read back from the page cache if
 * touched again.  Nothing for a copy, or for q outside the file. */
void reader_forget_before(const struct profile *p, const unsigned char *q);

/* TIMELINE's payload (len bytes at at; after STACKS) into p->timeline: 0,
 * or -1 with a reason in err (reader_timeline.c). */
int reader_timeline(struct profile *p, const unsigned char *at, size_t len, char *err,
		    size_t errlen);

/* LIFETIMES' payload the same way, into p->lifetimes. */
int reader_lifetimes(struct profile *p, const unsigned char *at, size_t len, char *err,
		     size_t errlen);

#endif
