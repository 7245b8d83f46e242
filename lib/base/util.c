/*
 * util.c - checked allocation, error reporting and string interning for the
 * tools.  Library code reports through warnx_(); only commands call die().
 */
#include "base/util.h"
#include "base/escape.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *util_progname = "mprof";

static void oom(size_t n)
{
	fprintf(stderr, "%s: out of memory (%zu bytes)\n", util_progname, n);
	exit(2);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("out of memory");
	return s;
}

void util_grow(void *pp, size_t *cap, size_t n, size_t size)
{
	void **p = pp;
	size_t c = *cap;

	if (n <= c)
		return;
	c = c ? c : 16;
	while (c < n)
		c *= 2;
	*p = xrealloc(*p, c * size);
	*cap = c;
}

/*
 * One message, one write: "PROG: [warning: ]TEXT\n" made whole first, so
 * that another writer on the same terminal (the profiled program, its
 * sampler's warnings, a child it forked) cannot land between the name,
 * the text and the newline and run two messages together.  TEXT is
 * escaped (escape.h): a path or name from a data file or the command
 * line cannot split the one line or reach the terminal as a control.
 */
static void say(const char *tag, const char *fmt, va_list ap)
{
	char text[2048], line[2048];
	int n = snprintf(line, sizeof(line), "%s: %s", util_progname, tag);

	if (n < 0 || (size_t)n >= sizeof(line) - 1)
		n = 0;
	vsnprintf(text, sizeof(text), fmt, ap);
	escape_buf(line + n, sizeof(line) - (size_t)n - 1, text);
	n = (int)strlen(line);
	line[n++] = '\n';
	fwrite(line, 1, (size_t)n, stderr);
	fflush(stderr);
}

void warnx_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("warning: ", fmt, ap);
	va_end(ap);
}

void errx_(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
	exit(2);
}

void util_no_command(int argc, char **argv, const char *cmds)
{
	/* The sibling tools' commands and perf's: a bare word that is a
	 * program's name is an a.out (mprof guile g.data), so not any word. */
	static const char *const verbs[] = { "run",    "record", "report", "list",	"snapshot",
					     "dump",   "timeline", "export", "merge", "diff",
					     "stat",   "annotate", "script", "show",  "view" };
	const char *w = argc > 1 ? argv[1] : "";
	struct stat st;

	if (stat(w, &st) == 0)
		return;
	for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
		if (!strcmp(w, verbs[i]))
			die("%s: no such file, nor a command of %s's (%s)", w, util_progname, cmds);
}

/*
 * stat first, so that a device or FIFO is never opened at all (opening some
 * devices has effects); then open with O_NONBLOCK in case the path was
 * swapped meanwhile, and check again what was opened.
 */
int util_open_file(const char *path, const char **why)
{
	struct stat st;
	int fd;

	if (stat(path, &st) < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file";
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		close(fd);
		return -1;
	}
	return fd;
}

int util_fraction(const char *s, double *f)
{
	char *end;
	double t = strtod(s, &end);

	if (end == s || *end || !(t >= 0 && t <= 1))
		return -1;
	*f = t;
	return 0;
}

/* FNV-1a, 64-bit: small, good enough for our table sizes. */
uint64_t util_hash(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ull ^ seed;

	while (n--)
		h = (h ^ *s++) * 0x100000001b3ull;
	return h;
}

struct strtab {
	char **strs;
	size_t n, cap;
	int borrowed; /* strs are the caller's */
	uint32_t *slots; /* id + 1; 0 = empty */
	size_t nslots;
};

struct strtab *strtab_new(void)
{
	struct strtab *t = xcalloc(1, sizeof(*t));
	t->nslots = 64;
	t->slots = xcalloc(t->nslots, sizeof(uint32_t));
	return t;
}

struct strtab *strtab_new_borrowing(void)
{
	struct strtab *t = strtab_new();

	t->borrowed = 1;
	return t;
}

static size_t slot_of(const struct strtab *t, const char *s)
{
	size_t i = util_hash(s, strlen(s), 0) & (t->nslots - 1);

	while (t->slots[i] && strcmp(t->strs[t->slots[i] - 1], s) != 0)
		i = (i + 1) & (t->nslots - 1);
	return i;
}

uint32_t strtab_intern(struct strtab *t, const char *s)
{
	size_t i = slot_of(t, s);

	if (t->slots[i])
		return t->slots[i] - 1;
	if (2 * (t->n + 1) > t->nslots) {
		free(t->slots);
		t->nslots *= 2;
		t->slots = xcalloc(t->nslots, sizeof(uint32_t));
		for (size_t k = 0; k < t->n; k++)
			t->slots[slot_of(t, t->strs[k])] = (uint32_t)k + 1;
		i = slot_of(t, s);
	}
	util_grow(&t->strs, &t->cap, t->n + 1, sizeof(char *));
	t->strs[t->n] = t->borrowed ? (char *)s : xstrdup(s);
	t->slots[i] = (uint32_t)++t->n;
	return (uint32_t)t->n - 1;
}

const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return id < t->n ? t->strs[id] : NULL;
}

size_t strtab_count(const struct strtab *t)
{
	return t->n;
}

int64_t strtab_find(const struct strtab *t, const char *s)
{
	size_t i = slot_of(t, s);
	return t->slots[i] ? (int64_t)t->slots[i] - 1 : -1;
}

void strtab_free(struct strtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n && !t->borrowed; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->slots);
	free(t);
}
