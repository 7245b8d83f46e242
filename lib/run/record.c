/*
 * record.c - owns the options the recording commands share (record_*):
 * cpprof record samples stacks, cfprof record charges the current
 * function, and both sample the same resources (resources.h).
 */
#include "run/record.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* The variable that turns perf_event_open off, if it is set to 1. */
static const char *no_perf(const struct record_opts *r)
{
	const char *s = getenv(r->no_perf);
	return s && s[0] == '1' ? r->no_perf : NULL;
}

void record_init(struct record_opts *r, const char *out, const char *env)
{
	memset(r, 0, sizeof(*r));
	r->random = 1;
	r->out = out;
	r->no_perf = !strcmp(env, "CFPROF_") ? "CFPROF_NO_PERF" : "CPPROF_NO_PERF";
}

/* One RESOURCE[:INTERVAL] of -e's list. */
static void want(struct record_opts *r, char *spec)
{
	char *colon = strchr(spec, ':');
	uint64_t iv;
	int k;

	if (colon)
		*colon = 0;
	k = res_find(spec);
	if (k < 0)
		die("record: unknown resource '%s' (cpprof list shows them)", spec);
	iv = res_table[k].interval;
	if (colon && res_parse_interval(k, colon + 1, &iv) < 0)
		die("record: bad interval '%s' for %s (a positive count of %s%s)", colon + 1, spec,
		    res_table[k].unit,
		    !strcmp(res_table[k].unit, "ns")      ? "; or with ns, us, ms, s"
		    : !strcmp(res_table[k].unit, "bytes") ? "; or with k, m"
							  : "");
	/* One interval a resource: a second, different one is refused, not
	 * silently taken in place of the first. */
	if (r->want[k] && r->interval[k] != iv)
		die("record: -e names %s twice, with different intervals (one a resource)", spec);
	if (!r->want[k])
		r->nwant++;
	r->want[k] = 1;
	r->interval[k] = iv;
}

int record_option(struct record_opts *r, int argc, char **argv, int *i, const char *usage)
{
	const char *a = argv[*i];

	if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
		if (*i + 1 >= argc)
			die("record: -o needs a file name");
		r->out = argv[++*i];
	} else if (!strcmp(a, "-e") || !strcmp(a, "--event")) {
		char spec[256], *tok, *save = NULL;

		if (*i + 1 >= argc)
			die("record: -e needs a resource (cpprof list shows them)");
		if (snprintf(spec, sizeof spec, "%s", argv[++*i]) >= (int)sizeof spec)
			die("record: -e '%s': too long", argv[*i]);
		/* A list, as perf's -e takes: cpu,syscalls:10. */
		if (!spec[0] || spec[0] == ',' || spec[strlen(spec) - 1] == ',' || strstr(spec, ",,"))
			die("record: -e '%s': a resource missing from the list (cpprof list shows them)",
			    argv[*i]);
		for (tok = strtok_r(spec, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			want(r, tok);
	} else if (!strcmp(a, "--no-random")) {
		r->random = 0;
	} else {
		(void)usage;
		return 0;
	}
	return 1;
}

void record_help(const char *usage, const char *extra)
{
	printf("%s\n"
	       "  -e RESOURCE[:INTERVAL]  sample RESOURCE (cpprof list shows them; cpu if no -e),\n"
	       "                          once every INTERVAL gticks on average (ns, us, ms, s\n"
	       "                          for time, k, m for bytes); -e again, or a list\n"
	       "                          (-e cpu,syscalls:10), for more: one interval each\n"
	       "  -o FILE                 the data file\n"
	       "  --no-random             fixed intervals, not drawn around the mean\n"
	       "%s",
	       usage, extra ? extra : "");
}

void record_events(const struct record_opts *r, char *events, size_t len)
{
	char how[512], why[512];
	int usable = 0;

	events[0] = 0;
	for (int k = 0; k < RES_N; k++) {
		size_t n = strlen(events);
		uint64_t iv = r->interval[k];

		if (!r->want[k] && !(k == RES_CPU && !r->nwant))
			continue;
		if (!r->want[k])
			iv = res_table[k].interval;
		if (res_probe(k, no_perf(r), how, sizeof how, why, sizeof why) < 0) {
			errx_("record: %s not sampled: %s", res_table[k].name, why);
			continue;
		}
		if ((k == RES_CPU || k == RES_REAL) && strncmp(how, "perf", 4) &&
		    strncmp(how, "on CPU: perf", 12))
			errx_("record: %s: %s", res_table[k].name, how);
		snprintf(events + n, len - n, "%s%s:%" PRIu64, n ? "," : "", res_table[k].name, iv);
		usable++;
	}
	if (!usable)
		die("record: none of the resources asked for can be sampled here");
}
