/*
 * floor.c - the least any in-process sampler driven by overflow signals can
 * cost: preloaded, it opens one perf event for the main thread and takes
 * its overflow signal in a handler that does nothing.  bench/cpprof/run
 * runs the workloads under it beside cpprof.
 *
 * FLOOR_EVENT=cpu: task-clock, a signal per ms of CPU time (cpprof's
 * default); FLOOR_EVENT=faults: a signal every 10th page fault.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void nothing(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
}

__attribute__((constructor)) static void start(void)
{
	const char *ev = getenv("FLOOR_EVENT");
	struct f_owner_ex own = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };
	struct perf_event_attr a;
	struct sigaction sa;
	int fd;

	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	if (ev && !strcmp(ev, "faults")) {
		a.config = PERF_COUNT_SW_PAGE_FAULTS;
		a.sample_period = 10;
	} else {
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		a.sample_period = 1000000;
	}
	a.wakeup_events = 1;
	a.exclude_kernel = 1;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = nothing;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return;
	fcntl(fd, F_SETFL, O_ASYNC);
	fcntl(fd, F_SETSIG, SIGPROF);
	fcntl(fd, F_SETOWN_EX, &own);
}
