/*
 * test_escape.c - the one spelling of control characters in text output
 * (escape.c): which bytes are escaped and how, UTF-8 passed, a buffer too
 * small cut before an escape, and escaping twice the same as once.
 */
#include "base/escape.h"
#include "tap.h"

#include <stdlib.h>

int main(void)
{
	char buf[64], again[64];
	const char *hostile = "a\033]0;t\007b\nc\rd\te\177f\001";
	const char *want = "a\\x1b]0;t\\x07b\\nc\\rd\\te\\x7ff\\x01";

	is_int(escape_needed("main > f::g<int> (x.c:12)"), 0, "a plain name needs nothing");
	is_str(escape_buf(buf, sizeof buf, "std::vector \\ back"), "std::vector \\ back",
	       "and prints as it is, backslash too");
	is_int(escape_needed(hostile), 1, "ESC, BEL, newline, CR, tab, DEL, SOH need escapes");
	is_str(escape_buf(buf, sizeof buf, hostile), want, "\\n \\r \\t by name, the others \\xHH");
	is_int(escape_len(hostile), (long long)strlen(want), "escape_len counts them");
	is_str(escape_buf(again, sizeof again, buf), buf, "escaping twice is escaping once");
	is_str(escape_buf(buf, sizeof buf, "caf\xc3\xa9 \xe2\x86\x92"), "caf\xc3\xa9 \xe2\x86\x92",
	       "UTF-8 (bytes from 0x80) passes");
	is_str(escape_buf(buf, 6, "abc\033d"), "abc",
	       "a short buffer is cut before an escape, not in it");
	is_str(escape_buf(buf, 1, "x"), "", "a buffer of one byte holds the terminator");
	return tap_done();
}
