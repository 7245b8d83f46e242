/*
 * langrec.c - owns the monitor's memory of language stacks (langrec_*,
 * langrec.h).
 */
#include <string.h>

#include "arena.h"
#include "blocks.h"
#include "format.h"
#include "langrec.h"

static uint64_t generation; /* owners given out */

static void forget_stacks(struct langrec *lr)
{
	memset(lr->set, 0, sizeof lr->set);
}

static void new_owner(struct langrec *lr)
{
	lr->owner = 1ull << 63 | __atomic_add_fetch(&generation, 1, __ATOMIC_RELAXED);
}

/* Every record forgotten: no remembered walk of the old owner counts. */
static void forget_all(struct langrec *lr)
{
	new_owner(lr);
	lr->ncrec = lr->nframes = 0;
	memset(lr->index, 0, sizeof lr->index);
	forget_stacks(lr);
}

struct langrec *langrec_get(struct blocks_thread *t, uint64_t e)
{
	struct langrec *lr = t->lang;

	if (__builtin_expect(!lr, 0)) {
		if (t->lang_failed || !(lr = arena_map(sizeof *lr))) {
			t->lang_failed = 1;
			return NULL;
		}
		new_owner(lr); /* the rest is zeros: nothing kept */
		lr->epoch = e;
		t->lang = lr;
	}
	if (__builtin_expect(lr->epoch != e, 0)) {
		forget_stacks(lr);
		lr->epoch = e;
	}
	return lr;
}

int64_t langrec_add(struct langrec *lr, const uint64_t *frames, int depth, uint32_t flags,
		    int (*strip)(uint64_t *frames, int depth))
{
	uint64_t *kept, h = 0x84222325cbf29ce4ull;
	uint32_t j, hash;

	if (depth < 0 || depth > LANGREC_FRAMES / 16)
		return -1;
	if (lr->ncrec == LANGREC_CRECS || lr->nframes + (uint32_t)depth > LANGREC_FRAMES)
		forget_all(lr);
	/* Stripped where it would be kept; kept only if new. */
	kept = &lr->frames[lr->nframes];
	memcpy(kept, frames, (size_t)depth * sizeof *frames);
	depth = strip(kept, depth);
	for (int i = 0; i < depth; i++)
		h = (h ^ kept[i]) * 0x100000001b3ull;
	hash = (uint32_t)(h >> 32 ^ h ^ flags);
	for (j = hash & (LANGREC_INDEX - 1); lr->index[j]; j = (j + 1) & (LANGREC_INDEX - 1)) {
		uint32_t c = lr->index[j] - 1;

		if (lr->crec[c].hash == hash && lr->crec[c].depth == (uint32_t)depth &&
		    lr->crec[c].flags == flags &&
		    !memcmp(&lr->frames[lr->crec[c].off], kept, (size_t)depth * sizeof *kept))
			return c;
	}
	lr->index[j] = lr->ncrec + 1;
	lr->crec[lr->ncrec].off = lr->nframes;
	lr->crec[lr->ncrec].depth = (uint32_t)depth;
	lr->crec[lr->ncrec].flags = flags;
	lr->crec[lr->ncrec].hash = hash;
	lr->nframes += (uint32_t)depth;
	return lr->ncrec++;
}

int langrec_frames(const struct langrec *lr, uint64_t c, uint64_t *frames, uint32_t *flags)
{
	int depth = (int)lr->crec[c].depth;

	memcpy(frames, &lr->frames[lr->crec[c].off], (size_t)depth * sizeof *frames);
	*flags = lr->crec[c].flags;
	return depth;
}

void langrec_put(struct langrec *lr, uint64_t c, const uint64_t k[2], uint64_t idx1)
{
	uint32_t s = langrec_set(c, k);
	struct langrec_stack *w = &lr->set[s][lr->next[s]];

	lr->next[s] = (uint8_t)((lr->next[s] + 1) % LANGREC_WAYS);
	w->k0 = k[0];
	w->k1 = k[1];
	w->crec = c;
	w->idx1 = idx1;
}
