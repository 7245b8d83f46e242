/*
 * monitor_ctl.c - the monitor's control (mon_*; the monitor is one module
 * in two files, monitor.c records): initialisation and configuration,
 * saving (the writer's source: the blocks' sums, INFO's extra entries;
 * autosave), the API's mon_set_autosave, mon_stop and mon_restart, fork,
 * and the constructor and destructor that save at exit.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "addrmap.h"
#include "blocks.h"
#include "custom.h"
#include "execs.h"
#include "exitlist.h"
#include "freeres.h"
#include "keep.h"
#include "langname.h"
#include "layout.h"
#include "leakscan.h"
#include "lifetime.h"
#include "lisp.h"
#include "lname.h"
#include "lock.h"
#include "mkeep.h"
#include "modules.h"
#include "monitor.h"
#include "newfile.h"
#include "outfile.h"
#include "peak.h"
#include "python.h"
#include "real.h"
#include "sample.h"
#include "sandbox.h"
#include "stacks.h"
#include "timeline.h"
#include "unwind.h"
#include "writer.h"

/* The monitor's root in the keep (mkeep.h); this copy when there is none. */
static struct mkeep mkeep_none;
struct mkeep *mon_keep = &mkeep_none;
/* The process the monitor counts for: a vfork child (no fork handler ran)
 * that calls _exit is not it. */
static pid_t mon_pid;

/* ---- initialisation ---- */

/*
 * lock.c's watchdog: a wait for a monitor lock outlasted the bound, so a
 * thread of the program holds a lock of its own that the lock's holder
 * waits for (or worse).  Stop, and let every thread through.
 */
static void lock_timeout(const char *name, uint64_t ms)
{
	char what[160] = "waited ", num[24];
	size_t n = strlen(what), k = 0;

	do
		num[k++] = (char)('0' + ms % 10);
	while ((ms /= 10) && k < sizeof num);
	while (k)
		what[n++] = num[--k];
	what[n] = 0;
	strcat(what, " ms for ");
	strncat(what, name, 48);
	strcat(what, " (a deadlock with the program)");
	mon_trouble(what, NULL);
}

uint64_t mon_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The decimal digits s starts with into *v, *end after them; -1 when
 * there are none or too many. */
static int parse_u64_prefix(const char *s, uint64_t *v, char **end)
{
	uint64_t x = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	*end = (char *)s;
	return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	return parse_u64_prefix(s, v, &end) < 0 || *end ? -1 : 0;
}

/*
 * Make name absolute against the current directory, into out[PATH_MAX].
 * A name that does not fit is left as it is (then open(2) will judge).
 */
static void resolve(char *out, const char *name)
{
	size_t n, k = strlen(name);

	if (name[0] != '/' && getcwd(out, PATH_MAX)) {
		n = strlen(out);
		if (n + 1 + k < PATH_MAX) {
			if (n > 1)
				out[n++] = '/';
			memcpy(out + n, name, k + 1);
			return;
		}
	}
	if (k < PATH_MAX)
		memcpy(out, name, k + 1);
}

static void autosave_set(int count);
static void sandboxed(void);
static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

extern char **environ;

/* Why a run that asked for the leak scan (MPROF_LEAKS=scan, --leaks) has
 * none: it ended without its exit handlers, where the scan runs.  Said
 * in the file (a Go program, or one that calls _exit, had a plain leak
 * table and no word why), and in the keep, for a file the launcher
 * writes. */
static const char scan_skipped_end[] =
	"skipped: the program ended without its exit handlers (_exit, exit_group, a signal)";
/* Why this save has no scan (a run that asked for one), or NULL. */
static const char *mon_scan_skip;
static int mon_scan_kept;

void mon_config(void)
{
	int expect = 0;
	const char *s;
	uint64_t v;

	if (!__atomic_compare_exchange_n(&mon.configured, &expect, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		/* Another thread is at it (it takes no lock of ours, but
		 * pthread_atfork takes libc's): wait, bounded. */
		if (lock_await(&mon.configured, 2, "the monitor's configuration") < 0)
			mon.nosave = 1; /* no output name yet: write nothing */
		return;
	}
	newfile_keep_umask();
	s = getenv("MPROF_OUT");
	resolve(mon.out, s && *s ? s : "mprof.data");
	keep_out(mon.out); /* for mprof snapshot: the environment may not last */
	if (parse_u64(getenv("MPROF_AUTOSAVE"), &v) == 0 && v <= INT_MAX && !mon.autosave)
		autosave_set((int)v);
	if (parse_u64(getenv("MPROF_ROOT_PID"), &v) == 0)
		mon.root_pid = (pid_t)v;
	else
		mon.root_pid = getpid();
	s = getenv("MPROF_FREERES");
	mon.no_freeres = s && !strcmp(s, "0");
	s = getenv("MPROF_LEAKS");
	/* The leak scan classifies every live object: the sampled monitor
	 * knows only its samples. */
	mon.leak_scan = s && !strcmp(s, "scan") && !mon.sample;
	if (mon.leak_scan && !mon_scan_kept) {
		keep_info("leak_scan", scan_skipped_end);
		mon_scan_kept = 1;
	}
	/* Bytes a thread may hold back from the others' view of the heap
	 * (peak.h): 0 makes the peak exact with threads too, at a cost. */
	if (parse_u64(getenv("MPROF_PEAK_SLACK"), &v) == 0 && v <= (uint64_t)INT64_MAX)
		peak_set_slack((int64_t)v);
	/* For tests of the watchdog: the bound of a wait for a monitor lock. */
	if (parse_u64(getenv("MPROF_LOCK_WAIT_MS"), &v) == 0 && v > 0)
		lock_set_bound(v);
	blocks_init();
	exit_lookup(); /* dlsym now, never in _exit (exit.c) */
	sandbox_on(sandboxed);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	__atomic_store_n(&mon.configured, 2, __ATOMIC_RELEASE);
}

/*
 * MPROF_SAMPLE=BYTES (a suffix k, m or g for KiB, MiB, GiB): the sampled
 * monitor, one sample every BYTES bytes allocated on average (sample.h).
 * Read when the monitor starts, maybe before libc has its environment.
 */
static void sample_config(void)
{
	char v[32], *end;
	uint64_t r;

	mon.on = MON_ON;
	if (keep_env("MPROF_SAMPLE", v, sizeof v) < 0 || !v[0])
		return;
	if (parse_u64_prefix(v, &r, &end) < 0)
		end = v; /* bad */
	else
		switch (*end) {
		case 'k': case 'K': r <<= 10; end++; break;
		case 'm': case 'M': r <<= 20; end++; break;
		case 'g': case 'G': r <<= 30; end++; break;
		}
	if (end == v || *end || r == 0 || r > (1ull << 40)) {
		/* Said, as mprof run --sample=bogus refuses it: a user who
		 * asked for the sampled monitor got the exact one silently. */
		static const char pre[] = "mprof: MPROF_SAMPLE=",
				  post[] = ": not a number of bytes from 1 to 1t (512k); "
					   "recording every allocation\n";

		outfile_say(pre, sizeof pre - 1);
		outfile_say(v, strnlen(v, sizeof v));
		outfile_say(post, sizeof post - 1);
		return;
	}
	mon.sample = r;
	mon.on = MON_SAMPLING;
	if (keep_env("MPROF_SAMPLE_SEED", v, sizeof v) == 0 && parse_u64(v, &r) == 0)
		sample_seed = r;
}

/*
 * Under a launcher (mprof run), the tables a save reads go in its keep
 * (keep.h), so that it can write the profile of a program that dies
 * without exit: before the first table is made.  The keep also gets the
 * INFO entries and counters a file of this run has whatever the end.
 */
static void keep_start(void)
{
	struct mkeep *k;

	char snap[8];

	keep_attach("MPROF_KEEP", "MPROF_ROOT_PID", FORMAT_KIND_MPROF, MKEEP_LAYOUT);
	/* No launcher, and snapshots asked for: a keep of our own. */
	if (!keep_h && keep_env("MPROF_SNAPSHOT", snap, sizeof snap) == 0 && !strcmp(snap, "1"))
		keep_own(FORMAT_KIND_MPROF, MKEEP_LAYOUT);
	if (!keep_h || !(k = keep_map(sizeof *k)) || !keep_has(k))
		return;
	mon_keep = k;
	peak_pe_mirror = &k->peak_pe;
	langname_keep_at(&k->lang);
	keep_set_root(k);
	keep_info("cmdline", outfile_cmdline());
	keep_info("exe", outfile_exe());
	keep_info("monitor", "mprof-runtime 1");
	keep_info("unwinder", unwind_name);
	if (mon.sample) {
		char num[24];

		keep_info("sample_bytes", outfile_u64(num, mon.sample));
		k->sample = mon.sample;
	}
	for (int i = 0; i < MPROF_NCOUNTERS_ALL; i++)
		keep_counter(format_mprof_counter_names[i], format_mprof_counter_units[i]);
}

/*
 * A program that defines malloc itself (an allocator linked into it, as
 * rustup's rustc links jemalloc; or another preload before this one)
 * takes every call to it, libc's too: the monitor sees none and writes
 * nothing.  Said once, at start, naming the object that has it (under
 * cargo, the rustc processes left no profile and said nothing).  A
 * program linked with libmprof and run preloaded too has the linked
 * monitor's malloc: that one records (18-rt-double.t), and this says so
 * as well, as it cannot tell a monitor from another allocator.
 */
static void foreign_malloc(void)
{
	static const char pre[] = "mprof: ",
			  post[] = " has a malloc of its own (an allocator, or a monitor, linked "
				   "into it): this monitor sees no allocation and writes no profile\n";
	Dl_info a, b;
	void *m = dlsym(RTLD_DEFAULT, "malloc");
	const char *who;

	if (!m || !dladdr(m, &a) || !dladdr((void *)foreign_malloc, &b) || a.dli_fbase == b.dli_fbase)
		return;
	who = a.dli_fname && *a.dli_fname ? a.dli_fname : "the program";
	outfile_say(pre, sizeof pre - 1);
	outfile_say(who, strlen(who));
	outfile_say(post, sizeof post - 1);
}

void mon_init(void)
{
	int expect = MON_UNINIT, g = mon_guard, e = errno;

	if (!__atomic_compare_exchange_n(&mon.state, &expect, MON_INITING, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	mon_guard = 1;
	if (!real_init()) {
		foreign_malloc();
		__atomic_store_n(&mon.state, MON_OFF, __ATOMIC_RELEASE);
		mon_dispatch();
		mon_guard = g;
		errno = e;
		return;
	}
	mon_pid = getpid();
	sample_config();
	keep_start();
	/* glibc's chunks are 32 bytes apart at least (MINSIZE). */
	addrmap_init(real_is_glibc() ? 32 : 16);
	lock_on_timeout(lock_timeout);
	mon.epoch = 1;
	peak_restart(1);
	timeline_restart(1);
	lifetime_restart(1);
	mon.start_ns = mon_now_ns();
	mon_keep->epoch = mon.epoch;
	mon_keep->start_ns = mon.start_ns;
	/* Before libc has set up environ (allocations by the dynamic loader),
	 * the configuration waits for the constructor or the first save. */
	if (environ)
		mon_config();
	/* A Lisp process or not (lisp.h): decided before any event is
	 * recorded, so that the C allocator's hot paths need not ask. */
	if (__atomic_load_n(&lisp_on, __ATOMIC_ACQUIRE) == -1)
		lisp_detect();
	__atomic_store_n(&mon.state, mon.on, __ATOMIC_RELEASE);
	mon_dispatch();
	mon_guard = g;
	errno = e;
}

/* ---- saving ---- */

/* Summing for the writer (blocks.h), for this profile (the save lock is
 * held: the epoch is stable). */
static void mon_read_totals(struct writer_totals *out)
{
	blocks_read_totals(mon.epoch, out);
	/* Sampled: the bins are estimates, the exact totals counted apart. */
	if (mon.sample)
		blocks_read_sampled(mon.epoch, &out->allocs, &out->bytes);
	out->dropped = __atomic_load_n(&mon.dropped, __ATOMIC_RELAXED);
}

static void mon_read_bins(uint64_t (*bins)[4])
{
	blocks_read_bins(mon.epoch, bins);
}

static void mon_read_counters(uint32_t idx, uint32_t n, uint64_t (*out)[MPROF_NCOUNTERS_SCAN])
{
	uint32_t k;

	blocks_read_counters(mon.epoch, idx, n, out);
	if (leakscan_done())
		for (k = 0; k < n; k++)
			leakscan_counters(idx + k, out[k] + MPROF_NCOUNTERS_ALL);
}

/* How the release of libc's buffers went at exit (INFO freeres): NULL
 * before, or where the profile is in trouble. */
static const char *mon_freeres;

/* INFO's extra entries: how the leak scan went, the category names. */
static size_t mon_extra_info(const char *kv[][2], size_t max)
{
	static char ns[24], sb[24]; /* under the save lock */
	const char *st = leakscan_status();
	size_t n = 0;

	if (!st && mon.leak_scan)
		st = mon_scan_skip;
	if (st && max >= 2) {
		kv[0][0] = "leak_scan";
		kv[0][1] = st;
		kv[1][0] = "leak_scan_ns";
		kv[1][1] = outfile_u64(ns, leakscan_ns());
		n = 2;
	}
	if (mon.sample && max > n) {
		kv[n][0] = "sample_bytes";
		kv[n++][1] = outfile_u64(sb, mon.sample);
	}
	if (mon_freeres && max > n) {
		kv[n][0] = "freeres";
		kv[n++][1] = mon_freeres;
	}
	return n + custom_info(kv + n, max - n);
}

static void save_failed(const char *what, const char *detail)
{
	mon.nosave = 1;
	mon_trouble(what, detail);
}

/* The sections of the heap over time: the timeline, the lifetimes. */
static void put_time(struct format_writer *w, uint64_t peak, int64_t peak_objects, uint32_t base)
{
	timeline_put(w, peak, peak_objects, base);
	lifetime_put(w, base, stacks_count());
}

/* INFO's entries of a Lisp profile (lname.h) or of a language's frames
 * (langname.h): one kind or neither in a process. */
static size_t lname_n;

static size_t more_info_count(void)
{
	lname_n = lname_info_count();
	return lname_n + langname_info_count();
}

static void more_info_put(struct format_writer *w)
{
	if (lname_n)
		lname_info_put(w);
	langname_info_put(w);
}

/* Write the profile (writer.h), or a file aside (its suffix; NULL: the
 * profile's own): the caller holds the save lock and the guard.  Like
 * the save, the configuration leaves errno as it was. */
static int save_as(const char *reason, const char *ended, const char *aside)
{
	struct writer_source src;
	int e = errno;

	mon_config();
	errno = e;
	blocks_read_peak(mon.epoch);
	src = (struct writer_source){
		.out = mon.out,
		.root_pid = mon.root_pid,
		.start_ns = mon.start_ns,
		.now_ns = mon_now_ns,
		.read_totals = mon_read_totals,
		.ncounters = leakscan_done() ? MPROF_NCOUNTERS_SCAN : MPROF_NCOUNTERS_ALL,
		.read_counters = mon_read_counters,
		.read_bins = mon_read_bins,
		.extra_info = mon_extra_info,
		.more_info_count = more_info_count,
		.more_info_put = more_info_put,
		.fail = save_failed,
		.ended = ended,
		.aside = aside,
		.put_timeline = put_time,
	};
	return writer_save(reason, &src);
}

static int save(const char *reason, const char *ended)
{
	return save_as(reason, ended, NULL);
}

void mon_autosave(void)
{
	MON_KEEP_ERRNO;
	if (writer_trylock() != 0)
		return; /* a save is under way: it will do */
	if (!mon.nosave && mon_on(__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE)))
		save("autosave", NULL);
	writer_unlock();
}

/* ---- the API ---- */

/* Autosave counts allocations in one shared counter, only while it is on;
 * it starts from the allocations so far. */
static void autosave_set(int count)
{
	struct writer_totals t;

	if (count > 0 && !__atomic_load_n(&mon.autosave, __ATOMIC_RELAXED)) {
		mon_read_totals(&t);
		__atomic_store_n(&mon.nallocs, t.allocs, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&mon.autosave, count > 0 ? count : 0, __ATOMIC_RELAXED);
}

void mon_set_autosave(int count)
{
	int g = mon_guard;

	mon_guard = 1;
	if (writer_lock() == 0) {
		autosave_set(count);
		writer_unlock();
	}
	mon_guard = g;
}

/* Enter for an API call or the destructor: initialised, configured, guard. */
static int api_enter(void)
{
	int g = mon_guard;

	if (__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_UNINIT)
		mon_init();
	mon_guard = 1;
	mon_config();
	return g;
}

void mon_stop(void)
{
	int g = api_enter(), st;

	if (writer_lock() < 0) { /* the watchdog stopped profiling */
		mon_guard = g;
		return;
	}
	st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	if (mon_on(st) || st == MON_TROUBLE) {
		if (mon_on(st)) {
			__atomic_store_n(&mon.state, MON_STOPPED, __ATOMIC_RELEASE);
			mon_dispatch();
		}
		if (!mon.nosave)
			save("stop", NULL);
		/* Once written, a stopped profile is not written again at exit. */
		__atomic_store_n(&mon.state, MON_STOPPED, __ATOMIC_RELEASE);
		mon_dispatch();
	}
	writer_unlock();
	mon_guard = g;
}

/*
 * The program installs a seccomp filter, in this thread, now (sandbox.h):
 * the filter may forbid what recording and saving need (mmap, open).  As
 * mprof_stop: recording stops and the file is saved while its system
 * calls are still allowed (INFO ended says where it stopped); nothing
 * more at exit.
 */
static void sandboxed(void)
{
	int g = api_enter(), st;

	if (writer_lock() < 0) {
		mon.nosave = 1;
		mon_guard = g;
		return;
	}
	st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	if ((mon_on(st) || st == MON_TROUBLE) && getpid() == mon_pid) {
		__atomic_store_n(&mon.state, MON_STOPPED, __ATOMIC_RELEASE);
		mon_dispatch();
		if (!mon.nosave)
			save("stop", "stopped at its seccomp filter");
	}
	mon.nosave = 1;
	writer_unlock();
	mon_guard = g;
}

void mon_restart(const char *filename)
{
	int g = api_enter(), e = errno;

	if (__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_OFF || mon.tainted) {
		mon_guard = g;
		return;
	}
	if (writer_lock() < 0) {
		errno = e;
		mon_guard = g;
		return;
	}
	if (stacks_lock() < 0) {
		writer_unlock();
		errno = e;
		mon_guard = g;
		return;
	}
	/* The address map keeps the old objects: their stack indices are below
	 * the new profile's, so their frees count as unknown. */
	stacks_reset();
	/* Per-thread counts go with the old epoch (their owners zero them). */
	__atomic_store_n(&mon.dropped, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&mon.nallocs, 0, __ATOMIC_RELAXED);
	/* Before the epoch: a thread that sees the new one finds the new
	 * profile's peak word (an old one's publish, the old word). */
	peak_restart(mon.epoch + 1);
	timeline_restart(mon.epoch + 1);
	lifetime_restart(mon.epoch + 1);
	__atomic_store_n(&mon.epoch, mon.epoch + 1, __ATOMIC_RELEASE);
	mon.start_ns = mon_now_ns();
	mon_keep->epoch = mon.epoch;
	mon_keep->start_ns = mon.start_ns;
	__atomic_store_n(&mon_keep->dropped, 0, __ATOMIC_RELAXED);
	keep_recording();
	mon.nosave = 0;
	if (filename && *filename) {
		char was[PATH_MAX];

		memcpy(was, mon.out, sizeof was);
		resolve(mon.out, filename);
		/* The launcher writes the file it named: this profile's
		 * tables, salvaged, would replace the one saved there. */
		if (strcmp(was, mon.out))
			keep_void("mprof_restart named another file");
	}
	__atomic_store_n(&mon.state, mon.on, __ATOMIC_RELEASE);
	mon_dispatch();
	stacks_unlock();
	writer_unlock();
	errno = e;
	mon_guard = g;
}

/* ---- fork: a consistent snapshot of every table goes to the child ---- */

static int mon_fork_guard;
static int mon_fork_held; /* fork_prepare holds every lock */

static void fork_prepare(void)
{
	mon_fork_guard = mon_guard;
	mon_guard = 1; /* whatever allocates until the handlers: not us */
	mon_fork_held = 0;
	/* A lock the watchdog gave up on (it stopped profiling): no snapshot. */
	if (writer_lock() < 0)
		return;
	if (blocks_lock() < 0)
		goto writer;
	if (stacks_lock() < 0)
		goto blocks;
	if (addrmap_lock_all() < 0)
		goto stacks;
	if (custom_lock() < 0)
		goto addrmap;
	mon_fork_held = 1;
	keep_fork_prepare(); /* the child's copy of the keep, consistent */
	return;
addrmap:
	addrmap_unlock_all();
stacks:
	stacks_unlock();
blocks:
	blocks_unlock();
writer:
	writer_unlock();
}

static void fork_parent(void)
{
	keep_fork_parent();
	if (mon_fork_held) {
		custom_unlock();
		addrmap_unlock_all();
		stacks_unlock();
		blocks_unlock();
		writer_unlock();
	}
	mon_guard = mon_fork_guard;
}

/*
 * The child keeps the parent's profile so far: its heap is a copy of the
 * parent's, so the objects in the map are its objects too, and their frees
 * must find them.  It writes FILE.PID (writer.c), never the parent's FILE.
 */
static void fork_child(void)
{
	addrmap_lock_reinit();
	custom_lock_reinit();
	stacks_lock_reinit();
	blocks_lock_reinit();
	writer_lock_reinit();
	timeline_lock_reinit();
	lifetime_lock_reinit();
	mon_pid = getpid();
	/* The tables in the keep are the parent's: the child's own copy
	 * first, or no profile for the child. */
	if (keep_fork_child() < 0)
		mon_fork_held = 0;
	modules_fork_child();
	if (!mon_fork_held) {
		/* Another thread may have been half way through a table: the
		 * child (profiling stopped) writes nothing, and never restarts. */
		mon.nosave = 1;
		mon.tainted = 1;
		mon_guard = mon_fork_guard;
		return;
	}
	/* The other threads are gone: their blocks go back to the pool. */
	blocks_fork_child();
	mon_guard = mon_fork_guard;
}

/* ---- constructor and destructor ---- */

__attribute__((constructor(101))) static void mon_ctor(void)
{
	int g = api_enter();


	/* Before the interpreter starts (python.h): the exact monitor in a
	 * process that is not a Lisp one. */
	if (__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_ON && lisp_on == 0 && !mon.sample)
		python_start();
	else if (__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_SAMPLING && lisp_on == 0)
		python_sampled();
	mon_guard = g;
}

static void mon_fini_last(void);

/*
 * Priority 101: the last destructor of its object, so it runs after the
 * program's atexit handlers and (linked statically) after the program's
 * own destructors; allocations made there are counted.  But the loader
 * runs a preloaded library's destructors before those of the libraries
 * the program linked (a library before its dependencies, the preloaded
 * first): what their destructors freed was kept in the profile (a
 * library freeing in its destructor what its constructor allocated:
 * 100,000 bytes kept, memcheck's none in use; cmake --version, gnutls's,
 * 107,618).  So the work is deferred to an exit handler registered here:
 * glibc runs one registered while it runs the handlers (the loader's
 * _dl_fini, which calls the destructors, is one) after the one running,
 * after every destructor.  The library is never unloaded (preloaded or
 * linked), so the handler's code is there then.
 */
__attribute__((destructor(101))) static void mon_fini(void)
{
	static int deferred;

	if (!deferred && !sandbox_entered()) {
		int g = api_enter();

		deferred = atexit(mon_fini_last) == 0;
		mon_guard = g;
		if (deferred)
			return;
	}
	mon_fini_last();
}

static void mon_fini_last(void)
{
	int g, st;

	if (sandbox_entered()) /* no system call of ours: it may be forbidden */
		return;
	g = api_enter();

	keep_exit_handlers();
	/* libc's own buffers, released as valgrind does (freeres.c), their
	 * frees recorded: they are not the program's leaks.  Where they are
	 * not, the file says why (INFO freeres): what they hold is kept. */
	if (mon_on(__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE)) && !mon.tainted) {
		const char *why = mon.no_freeres ? "skipped: MPROF_FREERES=0"
						 : freeres_why_not((const void *)mon_fini);

		if (!why) {
			mon_guard = 0;
			freeres_run();
			mon_guard = 1;
			mon_freeres = "done";
		} else {
			mon_freeres = why;
		}
		/* And the blocks of the exit functions libc runs after this
		 * one, which it frees then (exitlist.c): the exact monitor's
		 * (a sample stands for others, its free too). */
		if (__atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_ON)
			exitlist_freed();
	}
	if (writer_lock() < 0) { /* the watchdog stopped profiling */
		mon_guard = g;
		return;
	}
	st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	/* What is kept, classified (leakscan.h): this frame and those above
	 * it are roots; a profile in trouble may miss objects. */
	if (mon_on(st) && !mon.nosave && mon.leak_scan && !mon.tainted)
		leakscan_run(stacks_base(), stacks_count());
	if ((mon_on(st) || st == MON_TROUBLE) && !mon.nosave)
		save("exit", "exit");
	/* What later destructors (of other objects) do is not in the file:
	 * stop recording it. */
	if (mon_on(st) || st == MON_TROUBLE) {
		__atomic_store_n(&mon.state, MON_STOPPED, __ATOMIC_RELEASE);
		mon_dispatch();
	}
	writer_unlock();
	mon_guard = g;
}

/*
 * The program execs path (execs.h): an image that spent enough CPU time
 * has its profile written aside, FILE.exec1 (FILE.PID.exec1 in a forked
 * child), as at _exit (no leak scan, libc's buffers in use), and goes on
 * recording: the exec may fail.  Not in a vfork child (mon_pid): it shares
 * its parent's memory and tables.  No signal cuts the save short.
 */
void rt_exec_save(const char *path)
{
	char suffix[24], ended[96];
	int g = mon_guard, st;
	sigset_t all, old;

	if (sandbox_entered() || __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_UNINIT ||
	    getpid() != mon_pid || !execs_aside(path, suffix, sizeof suffix, ended, sizeof ended))
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	mon_guard = 1;
	if (writer_trylock() == 0) {
		st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
		if ((mon_on(st) || st == MON_TROUBLE) && !mon.nosave && !mon.tainted) {
			/* The image goes on; its file aside has no scan. */
			mon_scan_skip = "skipped: written as the program exec'd another";
			save_as("exec", ended, suffix);
			mon_scan_skip = NULL;
		}
		writer_unlock();
	}
	mon_guard = g;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * The program calls _exit (exit.c): no destructor will run.  Under a
 * launcher the keep has the tables, and the launcher writes the file (it
 * is told the status); else (no keep, or a void one) save now, as at exit but without libc's
 * buffers (still in use) or the leak scan, and only if no save is under
 * way (this may be a signal handler's _exit that interrupted one).  Not in
 * a vfork child: it shares its parent's memory and tables.
 */
void mon_exit_now(int status)
{
	int g = mon_guard, st;
	char what[40] = "_exit(", num[24];
	sigset_t all, old;

	if (sandbox_entered() || __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE) == MON_UNINIT)
		return;
	/* The process is ending: bare, it would be gone before a signal sent
	 * now arrived (multiprocessing's terminate() sends its workers
	 * SIGTERM as they _exit; a timer set to fire just after), so none may
	 * cut the save short; the real _exit then drops any that came.  Held
	 * first thing, given back if this process does not save. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/* A launcher's keep has the tables, and a language's names only if
	 * it had room when the first came (langname.h): with names, the
	 * runtime saves, and the launcher does not. */
	if (getpid() != mon_pid || (keep_exiting(status) && !langname_any()))
		goto back;
	mon_guard = 1;
	if (writer_trylock() != 0) {
		mon_guard = g;
		goto back;
	}
	st = __atomic_load_n(&mon.state, __ATOMIC_ACQUIRE);
	if (!((mon_on(st) || st == MON_TROUBLE) && !mon.nosave && !mon.tainted)) {
		writer_unlock();
		mon_guard = g;
		goto back;
	}
	mon_config();
	strcat(what, outfile_u64(num, (uint64_t)(status & 0377)));
	strcat(what, ")");
	mon_scan_skip = scan_skipped_end;
	save("exit", what);
	__atomic_store_n(&mon.state, MON_STOPPED, __ATOMIC_RELEASE);
	mon_dispatch();
	writer_unlock();
	mon_guard = g;
	return; /* signals stay held: the real _exit comes next */
back:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
