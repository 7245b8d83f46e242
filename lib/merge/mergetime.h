/*
 * mergetime.h - the heap over time of merged runs (mergetime.c): the
 * TIMELINE and LIFETIMES sections of the merged file, its stacks written
 * as merge.c writes them, file after file.
 */
#ifndef MERGETIME_H
#define MERGETIME_H

struct format_writer;
struct profile;

/* The n runs' timelines side by side, and their lifetimes (mprof files;
 * nothing for files that have none). */
void mergetime_put(struct format_writer *w, const struct profile *p, int n);

#endif
