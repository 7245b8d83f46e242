/*
 * fuzz_reader.c - libFuzzer target for the data file reader: any input must
 * be either accepted or rejected with a reason, never crash, leak or read
 * out of bounds.  `make fuzz` builds it with clang and runs it for a minute
 * from a seed corpus of real data files.
 */
#include "reader.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	char err[256];

	err[0] = 0;
	if (reader_parse(data, size, &p, err, sizeof(err)) == 0)
		reader_release(&p);
	else if (!err[0])
		abort(); /* a rejection must say why */
	return 0;
}
