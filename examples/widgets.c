/*
 * widgets.c - the producer/consumer example of the mprof paper (Zorn and
 * Hilfinger 1988, Figure 1), made deterministic.
 *
 * Two producers make red and blue widgets at random; the consumer frees
 * them, but has a bug: it never frees red widgets.  mprof's leak table traces
 * the lost memory to main > make_red_widget > make_widget.
 *
 * random_flip() is a fixed linear congruential generator, so every run makes
 * the same widgets: 10000 widgets of 204 bytes, 4907 of them red, so
 * 1001028 bytes leak (valgrind --leak-check=full agrees: "definitely lost").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_WIDGETS 10000

enum color { RED, BLUE };

struct widget {
	enum color color;
	char name[200];
};

static unsigned long seed = 12345;

/* 1 or 0 with (nearly) equal probability, the same sequence every run. */
int random_flip(void)
{
	seed = seed * 1103515245 + 12345;
	return (seed >> 16) & 1;
}

struct widget *make_widget(enum color color, int serial)
{
	struct widget *w = malloc(sizeof(*w));

	if (!w)
		abort();
	w->color = color;
	snprintf(w->name, sizeof(w->name), "%s widget %d", color == RED ? "red" : "blue", serial);
	return w;
}

struct widget *make_red_widget(int serial)
{
	return make_widget(RED, serial);
}

struct widget *make_blue_widget(int serial)
{
	return make_widget(BLUE, serial);
}

/* The bug: red widgets are never freed. */
void consume_widget(struct widget *w)
{
	if (w->color == BLUE)
		free(w);
}

static int simulate(void)
{
	int red = 0;

	for (int i = 0; i < N_WIDGETS; i++) {
		struct widget *w;
		if (random_flip()) {
			w = make_red_widget(i);
			red++;
		} else {
			w = make_blue_widget(i);
		}
		consume_widget(w);
	}
	return red;
}

int main(void)
{
	char msg[128];
	int red = simulate();
	int n = snprintf(msg, sizeof(msg), "made %d widgets of %zu bytes, %d red (never freed)\n",
			 N_WIDGETS, sizeof(struct widget), red);

	/* write(2), not stdio: stdout's buffer would be an allocation of its own. */
	if (write(1, msg, (size_t)n) != n)
		return 1;
	return 0;
}
