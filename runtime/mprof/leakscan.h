/*
 * leakscan.h - what is kept at exit, classified (issue 15): each object
 * still live when the program ends is still reachable, possibly lost,
 * indirectly lost or definitely lost, as memcheck says (its manual,
 * "Memory leak detection"), found by a conservative scan of the roots
 * (leakroots.h) through the objects of the address map and the custom map.
 *
 *   reachable  a chain of start pointers leads to it from a root (or an
 *              interior pointer that memcheck's heuristics take for one:
 *              a std::string's characters, a length-prefixed block, a
 *              new[] array past its count, a base of a class with
 *              several bases);
 *   possible   some chain reaches it, but only through an interior
 *              pointer or through a possibly lost object;
 *   indirect   no chain from a root, but another lost object points to it;
 *   lost       nothing points to it (of a cycle of lost objects, the one
 *              at the lowest address; the others are indirect).
 *
 * The monitor calls leakscan_run at exit (MPROF_LEAKS=scan) and then, for
 * each stack, leakscan_counters: the bytes and objects of each class
 * (format.h, MPROF_C_LOST_BYTES on).  Nothing here allocates.
 */
#ifndef LEAKSCAN_H
#define LEAKSCAN_H

#include <stdint.h>

/*
 * Scan and classify every recorded object; those of stacks [base, count)
 * (this profile's) are counted.  Called by the exit save with the save
 * lock and the recursion guard held, below the program's call to exit
 * (whose caller's frame and registers are roots; failing that, the
 * caller's of this function).  0, or -1 when the scan was skipped
 * (leakscan_status says why).  errno is left as it was.
 */
int leakscan_run(uint32_t base, uint32_t count);

/* Whether a scan ran to the end: its counters are then to be written. */
int leakscan_done(void);

/* The 8 counters of stack idx, from MPROF_C_LOST_BYTES on (zeros for a
 * stack the scan did not count). */
void leakscan_counters(uint32_t idx, uint64_t *out);

/* INFO's leak_scan: "complete", "N other threads scanned by their
 * stacks, not their registers" or "skipped: REASON"; NULL when no scan
 * was made.  And leak_scan_ns, its duration. */
const char *leakscan_status(void);
uint64_t leakscan_ns(void);

#endif
