/*
 * lisp.h - the Lisp port of the monitor (lisp.c): a process running ECL
 * (Embeddable Common Lisp) is profiled as a Lisp program, the mprof
 * paper's "Lisp Implementation".  Its Lisp objects are recorded, from
 * libecl's allocation entry points, by type (c f s o) and under the Lisp
 * functions that made them; its mallocs are not recorded.
 */
#ifndef LISP_H
#define LISP_H

/* -1 not known yet, 0 a C profile, 1 a Lisp profile (libecl is loaded). */
extern int lisp_on __attribute__((visibility("hidden")));

/* Decide lisp_on, once; with the recursion guard held (dlsym). */
void lisp_detect(void);

#endif
