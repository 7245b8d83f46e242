/*
 * watch.c - owns the watcher thread (wt_*).  Not written yet: without it,
 * real time is not sampled and context switches are not read.
 */
#include "watch.h"

int wt_start(void) { return 0; }
void wt_stop(void) {}
int wt_running(void) { return 0; }
void wt_after_fork(void) {}
