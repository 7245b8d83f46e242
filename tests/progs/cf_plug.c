/* cf_plug.c - an instrumented plugin of tests/progs/cf_plugins.c. */
#define CAT(a, b) a##b
#define NAME(p, s) CAT(p, s)
#define INNER NAME(NAME(plug, PLUG), _inner)
#define ENTRY NAME(NAME(plug, PLUG), _entry)

__attribute__((noinline)) long INNER(long x)
{
	return x * 2 + 1;
}

long ENTRY(int k)
{
	long s = 0;
	for (int i = 0; i < k; i++)
		s += INNER(i);
	return s;
}
