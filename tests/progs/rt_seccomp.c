/*
 * rt_seccomp: a program that enters a seccomp sandbox, as sshd's
 * pre-authentication child does: a filter that allows only what it does
 * from then on (read, write, the sleeps, futex, exit) and kills the
 * thread for any other system call, rt_sigreturn among them (it has no
 * signal handler of its own).  Before: 100 allocations of 123 bytes and
 * 0.2 s of CPU in before(); after: 0.2 s of CPU in after(), 0.2 s asleep,
 * "ok", and exit_group(5).  argv[1]: "prctl" (PR_SET_SECCOMP) or
 * "syscall" (the seccomp system call through syscall(), as libseccomp).
 * "spawn": a filter that kills the process at memfd_create only (a common
 * hardening rule), then this program run by posix_spawn as "kid" (ten
 * allocations of 77 bytes, "kid ok", exit 0), and how it ended.
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ALLOW(n) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, n, 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

extern char **environ;
static volatile uint64_t sink;
static void *volatile kept[100];

__attribute__((noinline)) static void spin(uint64_t n)
{
	uint64_t x = 1;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1;
	sink += x;
}

/* CPU time without a system call after the filter: calibrated before. */
static uint64_t per_ms;

__attribute__((noinline)) static void before(void)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	spin(20000000);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	per_ms = 20000000ull * 1000000 /
		 (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec) + 1);
	do {
		spin(per_ms);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec) < 200000000);
}

__attribute__((noinline)) static void after(void)
{
	spin(per_ms * 200);
}

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ALLOW(__NR_read),
		ALLOW(__NR_write),
		ALLOW(__NR_exit),
		ALLOW(__NR_exit_group),
		ALLOW(__NR_futex),
		ALLOW(__NR_nanosleep),
		ALLOW(__NR_clock_nanosleep),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_THREAD),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };
	struct timespec nap = { 0, 200000000 };
	int rc;

	if (argc > 1 && !strcmp(argv[1], "kid")) {
		for (int i = 0; i < 10; i++)
			kept[i] = malloc(77);
		printf("kid ok\n");
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "spawn")) {
		struct sock_filter g[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_memfd_create, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog gp = { sizeof g / sizeof g[0], g };
		char *const args[] = { argv[0], "kid", NULL };
		pid_t p;
		int st;

		fflush(stdout);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &gp) != 0)
			return 8;
		if (posix_spawn(&p, argv[0], NULL, NULL, args, environ) != 0 || waitpid(p, &st, 0) != p)
			return 7;
		printf("kid %s %d\n", WIFSIGNALED(st) ? "signal" : "status",
		       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return 0;
	}

	for (int i = 0; i < 100; i++)
		kept[i] = malloc(123);
	before();
	fflush(stdout);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return 9;
	if (argc > 1 && !strcmp(argv[1], "syscall"))
		rc = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	else
		rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
	if (rc != 0)
		return 8;
	after();
	nanosleep(&nap, NULL);
	(void)!write(1, "ok\n", 3);
	syscall(SYS_exit_group, 5);
	return 0;
}
