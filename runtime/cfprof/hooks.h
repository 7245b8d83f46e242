/*
 * hooks.h - the -finstrument-functions hooks and the calls that move the
 * stack under them (hooks.c).
 */
#ifndef CF_HOOKS_H
#define CF_HOOKS_H

/* Look up the real longjmp family now (the constructor): never dlsym later. */
void hooks_init(void);

#endif
