# cpprof's descriptors stay out of the program's way: a thread's perf
# event took the lowest free number (3), which a program counts on being
# its own (a shell's `exec 3>file` would have closed it; a program that
# lists its descriptors, as Python's subprocess tests do, saw it).  Now
# from half the limit on (512 under 1024), below the keep's.
. "$(dirname "$0")/../lib.sh"
plan 3
CPPROF=$B/bin/cpprof
cd "$T" || exit 1
cat > fds.c <<'CEOF'
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < 50000000ul; i++) /* samples */
		x += i;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
			printf("%s\n", e->d_name);
	return 0;
}
CEOF
cc -O0 -o fds fds.c || exit 1
./fds > bare
"$CPPROF" record -o f.data ./fds > out
is "$?" 0 "the program ran"
is "$(awk '$1 < 512' out | sort -n | tr '\n' ' ')" "$(sort -n bare | tr '\n' ' ')" \
	"below 512, the descriptors it has bare, and none of cpprof's"
ok "$([ "$(awk '$1 >= 512' out | wc -l)" -ge 1 ]; echo $?)" \
	"its perf event and the keep's are there, from 512 on ($(awk '$1 >= 512' out | tr '\n' ' '))"
done_testing
