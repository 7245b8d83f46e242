/*
 * lisp_ihs.h - reading ECL from inside it (lisp_ihs.c): the classes of its
 * object types, the Lisp functions of its invocation history, the names
 * of the compiled functions it installs.
 *
 * The monitor does not link libecl and does not include its headers: it
 * finds ECL's symbols with dlsym and reads ECL's memory by the layout of
 * ECL 21 on x86-64 (stacks.h, object.h, external.h), which it checks
 * against the running ECL before it reads any history (ihs_rewrite).
 */
#ifndef LISP_IHS_H
#define LISP_IHS_H

#include <stdint.h>

/* The mprof paper's breakdown of Lisp objects by type: cons, floating
 * point, structure or vector, other (the four class columns). */
enum { LISP_C, LISP_F, LISP_S, LISP_O };

/* Find ECL's symbols (the recursion guard held; dlsym may allocate). */
void ihs_setup(void);

/* The class of an object of ECL type t (its cl_type). */
int ihs_class(int t);
/* The class of the object at p, an untagged pointer to a live object. */
int ihs_class_of(const void *p);

/*
 * frames[0..depth-1] (innermost first) as the unwinder captured them: each
 * frame in ECL's bytecode interpreter (ecl_interpret) becomes the Lisp
 * function it was interpreting, FORMAT_LISP_FRAME(id), from the innermost
 * out, read from the calling thread's invocation history.  Returns whether
 * any frame changed.  Reads only this thread's stack and live objects.
 */
int ihs_rewrite(uint64_t *frames, int depth);

/* ECL installed cfun (ecl_cmp_defun): its entry and Lisp name go to the
 * entry table, unless its code is ECL's own (libecl has no symbols). */
void ihs_defun(const void *cfun);

#endif
