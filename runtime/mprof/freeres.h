/*
 * freeres.h - libc's own buffers released at exit, as valgrind does, so
 * they stop showing as leaks (mprof.1, ENVIRONMENT: MPROF_FREERES).
 */
#ifndef FREERES_H
#define FREERES_H

/* Whether __libc_freeres may run now, in the monitor's exit save: libc
 * has it, this is the process's only thread (another may still use what
 * it frees), and the monitor is a shared object (linked into the
 * executable, its destructor runs before other libraries', which may
 * still use libc's buffers and locale). */
int freeres_safe(const void *self);
/* NULL where it is, else why not, for the file's INFO freeres
 * ("skipped: another thread was alive", ...). */
const char *freeres_why_not(const void *self);
/* Call it (the caller lets the monitor record its frees). */
void freeres_run(void);

#endif
