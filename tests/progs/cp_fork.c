/* cp_fork: the parent burns 0.2 s in parent_work, forks a child that burns
 * 0.15 s in child_work, and waits for it.  Prints the child's pid. */
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;

__attribute__((noinline)) static void burn(uint64_t ns)
{
	uint64_t end = cpu_ns() + ns, x = 1;
	do
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
	while (cpu_ns() < end);
	sink += x;
}

/* Not tail calls: each keeps its frame. */
__attribute__((noinline)) static void parent_work(void) { burn(200000000); sink++; }
__attribute__((noinline)) static void child_work(void) { burn(150000000); sink += 2; }

int main(void)
{
	pid_t pid;
	int st;

	parent_work();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		child_work();
		return 0;
	}
	waitpid(pid, &st, 0);
	printf("%d\n", (int)pid);
	return 0;
}
