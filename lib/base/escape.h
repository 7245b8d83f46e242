/*
 * escape.h - text from a data file or the symbolizer made safe to print
 * (escape.c).  Function and file names, module paths, the recorded
 * command line: a data file may hold any byte in them, and a control
 * character printed as it is acts on the terminal (ESC starts a sequence
 * that retitles or clears it, CR overwrites a line) or splits a table's
 * row (a newline).  Every text view prints such strings escaped; bytes
 * from 0x80 (UTF-8) pass as they are.
 */
#ifndef ESCAPE_H
#define ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* A control character: C0 (below 0x20) or DEL. */
static inline int escape_is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* Whether s holds a control character. */
int escape_needed(const char *s);
/* The length of s escaped (escape_buf needs one byte more). */
size_t escape_len(const char *s);
/*
 * s with each control character written as \n, \r, \t or \xHH (\x1b for
 * ESC), into buf (len bytes, at least 1), cut before an escape that would
 * not fit; returns buf.  A backslash stays as it is, so a name that needs
 * no escape prints unchanged and escaping twice changes nothing.
 */
char *escape_buf(char *buf, size_t len, const char *s);
/* Write s escaped to f. */
void escape_put(FILE *f, const char *s);

#endif
