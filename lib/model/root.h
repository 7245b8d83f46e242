/*
 * root.h - the function a downward call path profile starts from when
 * none is named: cpprof's `down`, and `diff --paths` of every tool.
 */
#ifndef MODEL_ROOT_H
#define MODEL_ROOT_H

#include "format/format.h"
#include "model/model.h"

/*
 * A Lisp program's top level; a Python program's <module>; main if some
 * stack passes through it; in a stripped program, the function glibc's
 * start calls, whatever it is named (xz+0x36a0).  NULL if none of these.
 * The name lives as long as m.
 */
const char *model_default_root(const struct profile *p, const struct model *m);

#endif
