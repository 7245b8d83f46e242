/*
 * cf_throw.cc - C++ exceptions through instrumented frames.  g++ runs the
 * exit hook of every frame an exception unwinds through (a cleanup); a
 * profiler must stay exact through them, and clang emits none, so a
 * profiler that resynchronizes by frame address must do so too.
 *
 *   1000 times: main calls thrower(50), which recurses to thrower(0) and
 *               throws; main catches and calls after_catch()
 *   1000 times: main calls middle(), which calls thrower(20) in a try
 *               block, catches, and calls in_middle() from its handler
 *   100000 times: main calls after()
 *
 * The program counts everything itself and prints "name count"
 * (tests/e2e/70-cf-calls.t): thrower (72000 = 1000 x 51 + 1000 x 21),
 * thrower_from_main, thrower_from_middle (1000 each), middle, after_catch,
 * in_middle (1000 each), after (100000), caught (2000).
 */
#include <cstdio>

struct Boom {
	int depth;
};

static long n_thrower, n_thrower_from_main, n_thrower_from_middle, n_middle, n_after_catch,
	n_in_middle, n_after, n_caught;
static volatile long sink;

__attribute__((noinline)) int thrower(int depth)
{
	n_thrower++;
	if (depth == 0)
		throw Boom{depth};
	int r = thrower(depth - 1) + 1;
	sink = sink + r;
	return r;
}

__attribute__((noinline)) void after_catch()
{
	n_after_catch++;
	sink = sink + 1;
}

__attribute__((noinline)) void in_middle()
{
	n_in_middle++;
	sink = sink + 2;
}

__attribute__((noinline)) void middle()
{
	n_middle++;
	try {
		n_thrower_from_middle++;
		thrower(20);
	} catch (const Boom &b) {
		n_caught++;
		in_middle();
	}
}

__attribute__((noinline)) void after(long i)
{
	n_after++;
	sink = sink + (i & 3);
}

int main()
{
	for (int i = 0; i < 1000; i++) {
		try {
			n_thrower_from_main++;
			thrower(50);
		} catch (const Boom &b) {
			n_caught++;
			after_catch();
		}
	}
	for (int i = 0; i < 1000; i++)
		middle();
	for (long i = 0; i < 100000; i++)
		after(i);
	std::printf("thrower %ld\nthrower_from_main %ld\nthrower_from_middle %ld\nmiddle %ld\n"
		    "after_catch %ld\nin_middle %ld\nafter %ld\ncaught %ld\n",
		    n_thrower, n_thrower_from_main, n_thrower_from_middle, n_middle, n_after_catch,
		    n_in_middle, n_after, n_caught);
	return 0;
}
