/*
 * escape.c - owns escaping control characters for text output (escape_*;
 * escape.h): one spelling for every view, message and export.  It
 * depends on nothing, so the one error reporter (util.c) can use it.
 */
#include "base/escape.h"

#include <string.h>

/* The escape of control character c into out (room for 5); its length. */
static size_t spell(unsigned char c, char *out)
{
	static const char hex[] = "0123456789abcdef";

	out[0] = '\\';
	switch (c) {
	case '\n': out[1] = 'n'; return 2;
	case '\r': out[1] = 'r'; return 2;
	case '\t': out[1] = 't'; return 2;
	}
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
	return 4;
}

int escape_needed(const char *s)
{
	for (; *s; s++)
		if (escape_is_control((unsigned char)*s))
			return 1;
	return 0;
}

char *escape_buf(char *buf, size_t len, const char *s)
{
	size_t n = 0;

	for (; *s; s++) {
		char e[5];
		size_t k = 1;

		if (escape_is_control((unsigned char)*s))
			k = spell((unsigned char)*s, e);
		else
			e[0] = *s;
		if (n + k >= len)
			break;
		memcpy(buf + n, e, k);
		n += k;
	}
	buf[n] = 0;
	return buf;
}

size_t escape_len(const char *s)
{
	size_t n = 0;
	char e[5];

	for (; *s; s++)
		n += escape_is_control((unsigned char)*s) ? spell((unsigned char)*s, e) : 1;
	return n;
}

void escape_put(FILE *f, const char *s)
{
	for (; *s; s++) {
		char e[5];

		if (escape_is_control((unsigned char)*s))
			fwrite(e, 1, spell((unsigned char)*s, e), f);
		else
			fputc(*s, f);
	}
}
