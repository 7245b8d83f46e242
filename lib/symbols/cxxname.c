/*
 * cxxname.c - C++ names people can read (see cxxname.h for the rules).
 *
 * A demangled name is read as a sequence of tokens at nesting depth 0:
 * words (identifiers, "~Foo"), operator names ("operator<<", "operator
 * new[]", a conversion operator with its type), "::", spaces, single
 * punctuation, and whole bracketed groups: <template arguments>,
 * (parameters, or "(anonymous namespace)"), {lambda(int)#1} and
 * [abi:cxx11] / [clone .cold].  A group is matched by its brackets; inside
 * a (...) only parentheses count (the demangler parenthesises a '>' in an
 * expression), and the symbol after an "operator" is skipped as a whole,
 * so operator< and operator>> never open or close anything.
 *
 * A function name is then [return type ' '] name (parameters) [qualifiers]:
 * the parameter list is the last (...) once trailing qualifiers, clone
 * suffixes and ref-qualifiers are passed over, and the name starts after
 * the last space before it that is not inside an operator name or between
 * an enclosing function's parameters and its "const::".
 */
#include "symbols/cxxname.h"

#include <stdlib.h>
#include <string.h>

/* Deepest nesting of brackets followed; deeper names come back as they are. */
#define MAX_DEPTH 64

/* ---- an output string ------------------------------------------------ */

struct buf {
	char *s;
	size_t n, cap;
	int oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t c = b->cap ? 2 * b->cap : 64;
		char *q;
		while (c < b->n + n + 1)
			c *= 2;
		q = realloc(b->s, c);
		if (!q) {
			b->oom = 1;
			return;
		}
		b->s = q;
		b->cap = c;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}

static void put_str(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static int ends_with(const struct buf *b, const char *suffix)
{
	size_t n = strlen(suffix);
	return b->n >= n && memcmp(b->s + b->n - n, suffix, n) == 0;
}

/* ---- tokens ----------------------------------------------------------- */

enum kind { K_WORD, K_OP, K_SCOPE, K_ANGLE, K_PAREN, K_BRACE, K_BRACKET, K_SPACE, K_PUNCT };

struct tok {
	enum kind k;
	size_t b, e; /* its text: s[b..e) */
};

struct toks {
	struct tok *t;
	size_t n, cap;
};

static int ident(char ch)
{
	unsigned char c = (unsigned char)ch;
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '$' || c == '.' || c >= 0x80;
}

static int word_eq(const char *s, size_t b, size_t e, const char *w)
{
	size_t n = strlen(w);
	return e - b == n && memcmp(s + b, w, n) == 0;
}

static int tok_eq(const char *s, const struct tok *x, const char *w)
{
	return word_eq(s, x->b, x->e, w);
}

static long group_end(const char *s, size_t e, size_t i, int depth);

/* Operator symbols, longest first where one is a prefix of another. */
static const char *const op_syms[] = {
	"->*", "<=>", "<<=", ">>=", "()", "[]", "->", "<<", ">>", "<=", ">=", "==", "!=",
	"&&",  "||",  "++",  "--",  "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "+",
	"-",   "*",   "/",   "%",   "^",  "&",  "|",  "~",  "!",  "=",  "<",  ">",  ",",
	NULL,
};

/* p is just past the word "operator": the end of the operator's name;
 * -1 if a conversion operator's type does not close (then nothing around
 * it can, and giving up at once keeps a scan from starting again at every
 * "operator" inside it). */
static long after_operator(const char *s, size_t e, size_t p, int depth)
{
	if (p < e && s[p] == '"') { /* operator"" _km */
		size_t q = p;
		while (q < e && s[q] == '"')
			q++;
		if (q < e && s[q] == ' ')
			q++;
		while (q < e && ident(s[q]))
			q++;
		return (long)q;
	}
	if (p + 1 < e && s[p] == ' ') {
		size_t q = p + 1, w = q;
		while (w < e && ident(s[w]))
			w++;
		if (word_eq(s, q, w, "new") || word_eq(s, q, w, "delete")) {
			if (w + 1 < e && s[w] == '[' && s[w + 1] == ']')
				w += 2;
			return (long)w;
		}
		if (word_eq(s, q, w, "co_await"))
			return (long)w;
		/* A conversion operator: its type, up to the parameters. */
		while (q < e && s[q] != '(' && s[q] != ')' && s[q] != ',' && s[q] != '>' && s[q] != ']' &&
		       s[q] != '}') {
			if (s[q] == '<' || s[q] == '[' || s[q] == '{') {
				long g = group_end(s, e, q, depth + 1);
				if (g < 0)
					return -1;
				q = (size_t)g;
			} else {
				q++;
			}
		}
		while (q > p && s[q - 1] == ' ')
			q--;
		return (long)(q > p + 1 ? q : p);
	}
	for (int i = 0; op_syms[i]; i++) {
		size_t n = strlen(op_syms[i]);
		if (p + n <= e && memcmp(s + p, op_syms[i], n) == 0) {
			p += n;
			/* "operator< <int>": the demangler's space before the
			 * template arguments of an operator ending in '<'. */
			if (s[p - 1] == '<' && p + 1 < e && s[p] == ' ' && s[p + 1] == '<')
				p++;
			return (long)p;
		}
	}
	return (long)p; /* a word "operator" and no operator: a plain word */
}

/* The end of the group opening at s[i] ('<', '(', '[' or '{'), -1 if it
 * does not close (or too deep). */
static long group_end(const char *s, size_t e, size_t i, int depth)
{
	char open = s[i], close = open == '<' ? '>' : open == '(' ? ')' : open == '[' ? ']' : '}';
	size_t p = i + 1;

	if (depth > MAX_DEPTH)
		return -1;
	while (p < e) {
		char c = s[p];
		if (c == close)
			return (long)p + 1;
		if (c == '(' || c == '[' || c == '{' || (c == '<' && open == '<')) {
			long g = group_end(s, e, p, depth + 1);
			if (g < 0)
				return -1;
			p = (size_t)g;
		} else if (c == ')' || c == ']' || c == '}') {
			return -1; /* another group's end: unbalanced */
		} else if (ident(c)) {
			long w = (long)p;
			while ((size_t)w < e && ident(s[w]))
				w++;
			if (word_eq(s, p, (size_t)w, "operator") && (w = after_operator(s, e, (size_t)w, depth + 1)) < 0)
				return -1;
			p = (size_t)w;
		} else {
			p++;
		}
	}
	return -1;
}

static int push(struct toks *t, enum kind k, size_t b, size_t e)
{
	if (t->n == t->cap) {
		size_t c = t->cap ? 2 * t->cap : 32;
		struct tok *q = realloc(t->t, c * sizeof(*q));
		if (!q)
			return -1;
		t->t = q;
		t->cap = c;
	}
	t->t[t->n++] = (struct tok){ k, b, e };
	return 0;
}

/* The depth-0 tokens of s[b..e); -1 if unbalanced or out of memory. */
static int lex(const char *s, size_t b, size_t e, struct toks *t, int depth)
{
	size_t p = b;

	t->n = 0;
	if (depth > MAX_DEPTH)
		return -1;
	while (p < e) {
		char c = s[p];
		size_t q = p + 1;
		enum kind k = K_PUNCT;

		if (c == ' ') {
			while (q < e && s[q] == ' ')
				q++;
			k = K_SPACE;
		} else if (c == ':' && q < e && s[q] == ':') {
			q++;
			k = K_SCOPE;
		} else if (c == '<' || c == '(' || c == '[' || c == '{') {
			long g = group_end(s, e, p, depth + 1);
			if (g < 0)
				return -1;
			q = (size_t)g;
			k = c == '<' ? K_ANGLE : c == '(' ? K_PAREN : c == '[' ? K_BRACKET : K_BRACE;
		} else if (c == '>' || c == ')' || c == ']' || c == '}') {
			return -1; /* closes nothing: unbalanced */
		} else if (ident(c) || c == '~') {
			while (q < e && ident(s[q]))
				q++;
			k = K_WORD;
			if (word_eq(s, p, q, "operator")) {
				long o = after_operator(s, e, q, depth + 1);
				if (o < 0)
					return -1;
				q = (size_t)o;
				if (q > p + 8)
					k = K_OP;
			}
		}
		if (push(t, k, p, q) < 0)
			return -1;
		p = q;
	}
	return 0;
}

/* ---- pieces of names -------------------------------------------------- */

static int is_anon(const char *s, const struct tok *x)
{
	return x->k == K_PAREN && tok_eq(s, x, "(anonymous namespace)");
}

/* A word after a parameter list: cv-, exception and transaction
 * qualifiers. */
static int is_qualifier(const char *s, const struct tok *x)
{
	static const char *const q[] = { "const", "volatile", "restrict", "__restrict", "noexcept",
					  "throw", "transaction_safe", NULL };
	if (x->k != K_WORD)
		return 0;
	for (int i = 0; q[i]; i++)
		if (tok_eq(s, x, q[i]))
			return 1;
	return 0;
}

/* An inline namespace of a standard library (std::__cxx11, libc++'s
 * std::__1): a detail of the ABI, not of the program. */
static int is_inline_ns(const char *s, const struct tok *x)
{
	return x->k == K_WORD && (tok_eq(s, x, "__cxx11") || tok_eq(s, x, "__1"));
}

/* Whether the space at token k lies between an enclosing function's
 * parameters and the "::" after its qualifiers: "f() const::x". */
static int enclosing_qualifier(const char *s, const struct toks *t, size_t k, size_t end)
{
	if (k == 0 || t->t[k - 1].k != K_PAREN || is_anon(s, &t->t[k - 1]))
		return 0;
	for (k++; k < end; k++) {
		const struct tok *x = &t->t[k];
		if (x->k == K_SCOPE)
			return 1;
		if (x->k != K_SPACE && !is_qualifier(s, x) && !(x->k == K_PUNCT && s[x->b] == '&'))
			return 0;
	}
	return 0;
}

/*
 * The tokens of the function's name: [*start, *end).  Returns 1 when the
 * name is inside a group instead (a function returning a pointer to a
 * function or an array: "void (*pick<int>(int))(int)"), with *start the
 * index of that group.
 */
static int name_range(const char *s, const struct toks *t, size_t *start, size_t *end)
{
	long j = (long)t->n - 1;

	while (j >= 0) {
		const struct tok *x = &t->t[j];
		if (x->k == K_SPACE || x->k == K_BRACKET || is_qualifier(s, x) ||
		    (x->k == K_PUNCT && s[x->b] == '&'))
			j--;
		else if (x->k == K_PAREN && j > 0 && t->t[j - 1].k == K_WORD &&
			 (tok_eq(s, &t->t[j - 1], "noexcept") || tok_eq(s, &t->t[j - 1], "throw")))
			j -= 2;
		else
			break;
	}
	if (j >= 0 && t->t[j].k == K_PAREN && !is_anon(s, &t->t[j])) {
		if (j > 0 && t->t[j - 1].k == K_PAREN && !is_anon(s, &t->t[j - 1])) {
			*start = (size_t)j - 1;
			return 1;
		}
		*end = (size_t)j;
	} else {
		*end = t->n;
		while (*end > 0 && t->t[*end - 1].k == K_SPACE)
			(*end)--;
	}
	*start = 0;
	for (size_t k = 0; k < *end; k++)
		if (t->t[k].k == K_SPACE && !enclosing_qualifier(s, t, k, *end))
			*start = k + 1;
	return 0;
}

/* The first template argument of the group x ("<a, b>" gives a), trimmed:
 * *ab, *ae.  0, or -1 if empty or unparsable. */
static int first_arg(const char *s, const struct tok *x, size_t *ab, size_t *ae, int depth)
{
	struct toks t = { 0 };
	size_t b = x->b + 1, e = x->e - 1;

	if (lex(s, b, e, &t, depth + 1) < 0) {
		free(t.t);
		return -1;
	}
	for (size_t k = 0; k < t.n; k++)
		if (t.t[k].k == K_PUNCT && s[t.t[k].b] == ',') {
			e = t.t[k].b;
			break;
		}
	free(t.t);
	while (b < e && s[b] == ' ')
		b++;
	while (e > b && s[e - 1] == ' ')
		e--;
	*ab = b;
	*ae = e;
	return b < e ? 0 : -1;
}

/*
 * std::basic_X<C> for the typedefs of <string>, <string_view> and
 * <iosfwd>: "std::string" for X = string and C = char, "std::wostream"
 * for ostream and wchar_t, ...  Writes the alias to out; 0 if none.
 */
static int alias(const char *q, size_t qlen, const char *c, size_t clen, struct buf *out)
{
	static const char *const basic[] = { "string", "string_view", "ios", "streambuf", "istream",
					     "ostream", "iostream", "stringbuf", "istringstream",
					     "ostringstream", "stringstream", "filebuf", "ifstream",
					     "ofstream", "fstream", NULL };
	const char *pre = NULL;

	if (qlen <= 11 || memcmp(q, "std::basic_", 11) != 0)
		return 0;
	for (int i = 0; basic[i]; i++) {
		if (!word_eq(q, 11, qlen, basic[i]))
			continue;
		if (word_eq(c, 0, clen, "char"))
			pre = "";
		else if (word_eq(c, 0, clen, "wchar_t"))
			pre = "w";
		else if (i < 2 && word_eq(c, 0, clen, "char8_t"))
			pre = "u8";
		else if (i < 2 && word_eq(c, 0, clen, "char16_t"))
			pre = "u16";
		else if (i < 2 && word_eq(c, 0, clen, "char32_t"))
			pre = "u32";
		if (!pre)
			return 0;
		put_str(out, "std::");
		put_str(out, pre);
		put_str(out, basic[i]);
		return 1;
	}
	return 0;
}

/* Where the qualified name that ends out begins ("std::basic_string" in
 * "foo<std::basic_string"), for alias(): out->n (none) when it is longer
 * than any alias's, so that a name of many template argument lists costs
 * no more than its length. */
static size_t qname_start(const struct buf *out)
{
	size_t r = out->n;
	while (r > 0 && (ident(out->s[r - 1]) || out->s[r - 1] == ':'))
		if (out->n - --r > 40)
			return out->n;
	return r;
}

/* ---- function names --------------------------------------------------- */

/* An operator's name: its symbol, or a conversion operator's type
 * without template arguments. */
static void emit_op(const char *s, const struct tok *x, struct buf *out, int depth)
{
	size_t e = x->e, p = x->b + 8, w = p + 1; /* p: past "operator" */
	struct toks t = { 0 };

	while (e > p && s[e - 1] == ' ')
		e--;
	while (w < e && ident(s[w]))
		w++;
	if (p < e && s[p] == ' ' && !word_eq(s, p + 1, w, "new") && !word_eq(s, p + 1, w, "delete") &&
	    !word_eq(s, p + 1, w, "co_await") && lex(s, p + 1, e, &t, depth + 1) == 0) {
		put_str(out, "operator ");
		for (size_t k = 0; k < t.n; k++) {
			const struct tok *y = &t.t[k];
			if (y->k == K_ANGLE)
				continue;
			if (is_inline_ns(s, y) && ends_with(out, "std::") && k + 1 < t.n &&
			    t.t[k + 1].k == K_SCOPE) {
				k++;
				continue;
			}
			put(out, s + y->b, y->e - y->b);
		}
	} else {
		put(out, s + x->b, e - x->b);
	}
	free(t.t);
}

/* Emit the name's tokens [start, end) of t, simplified. */
static void emit_name(const char *s, const struct toks *t, size_t start, size_t end, struct buf *out,
		      int depth)
{
	for (size_t k = start; k < end; k++) {
		const struct tok *x = &t->t[k];
		size_t ab, ae;

		switch (x->k) {
		case K_WORD:
			if (is_inline_ns(s, x) && ends_with(out, "std::") && k + 1 < end &&
			    t->t[k + 1].k == K_SCOPE) {
				k++;
				break;
			}
			put(out, s + x->b, x->e - x->b);
			break;
		case K_OP:
			emit_op(s, x, out, depth);
			break;
		case K_SCOPE:
			put(out, "::", 2);
			break;
		case K_ANGLE:
			/* Dropped; std::basic_string<char, ...> says std::string. */
			if (first_arg(s, x, &ab, &ae, depth) == 0) {
				size_t r = qname_start(out);
				char *q = out->oom || r == out->n ? NULL : strndup(out->s + r, out->n - r);
				if (q) {
					size_t n = out->n;
					out->n = r;
					if (!alias(q, strlen(q), s + ab, ae - ab, out))
						out->n = n;
					free(q);
				}
			}
			break;
		case K_PAREN:
			if (is_anon(s, x))
				put(out, s + x->b, x->e - x->b);
			else /* an enclosing function's parameters and qualifiers */
				while (k + 1 < end && t->t[k + 1].k != K_SCOPE)
					k++;
			break;
		case K_BRACE:
			/* {lambda(int)#1} is {lambda#1}; {unnamed type#1} stays. */
			if (x->e - x->b > 8 && memcmp(s + x->b, "{lambda", 7) == 0 &&
			    (s[x->b + 7] == '(' || s[x->b + 7] == '<')) {
				size_t h = x->e - 1;
				while (h > x->b && s[h] != '#')
					h--;
				put_str(out, "{lambda");
				if (h > x->b)
					put(out, s + h, x->e - h);
				else
					put_str(out, "}");
			} else {
				put(out, s + x->b, x->e - x->b);
			}
			break;
		case K_BRACKET:
			if (strncmp(s + x->b, "[abi:", 5) != 0 && strncmp(s + x->b, "[clone ", 7) != 0)
				put(out, s + x->b, x->e - x->b);
			break;
		case K_SPACE:
			put(out, " ", 1);
			break;
		case K_PUNCT:
			put(out, s + x->b, 1);
			break;
		}
	}
}

static int simplify_range(const char *s, size_t b, size_t e, struct buf *out, int depth)
{
	struct toks t = { 0 };
	size_t start, end;
	int rc = -1;

	if (depth > 8 || lex(s, b, e, &t, depth) < 0)
		goto done;
	if (name_range(s, &t, &start, &end) == 1) {
		/* "(*name(args))": the name inside, past the '*' or '&'. */
		const struct tok *g = &t.t[start];
		size_t ib = g->b + 1, ie = g->e - 1;
		while (ib < ie && (s[ib] == '*' || s[ib] == '&' || s[ib] == ' '))
			ib++;
		rc = simplify_range(s, ib, ie, out, depth + 1);
		goto done;
	}
	emit_name(s, &t, start, end, out, depth);
	rc = out->n ? 0 : -1;
done:
	free(t.t);
	return rc;
}

/* The demangler's prefixes of special names, kept as they are. */
static const char *const prefixes[] = {
	"non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to ",
	"transaction clone for ", "non-transaction clone for ", "TLS init function for ",
	"TLS wrapper function for ", "guard variable for ", "hidden alias for ",
	"construction vtable for ", "vtable for ", "VTT for ", "typeinfo name for ",
	"typeinfo fn for ", "typeinfo for ", "java Class for ", NULL,
};

char *cxxname_simplify(const char *name)
{
	struct buf out = { 0 };
	size_t b = 0, e = strlen(name);

	for (int i = 0; prefixes[i]; i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) {
			b = strlen(prefixes[i]);
			put(&out, name, b);
			break;
		}
	if (!strncmp(name, "reference temporary #", 21)) {
		const char *f = strstr(name, " for ");
		if (f) {
			b = (size_t)(f + 5 - name);
			put(&out, name, b);
		}
	}
	if (out.oom || simplify_range(name, b, e, &out, 0) < 0 || out.oom) {
		free(out.s);
		return strdup(name);
	}
	return out.s;
}

/* ---- type names ------------------------------------------------------- */

static int type_range(const char *s, size_t b, size_t e, struct buf *out, int depth);

/* A template argument the program did not write: the default of its
 * place when it is the last one, given the first argument. */
static int is_default(const char *a, const char *first)
{
	static const char *const same[] = { "std::less<", "std::equal_to<", "std::hash<",
					    "std::char_traits<", "std::default_delete<", NULL };
	size_t f = strlen(first);

	if (!strncmp(a, "std::allocator<", 15) || !strcmp(a, "(__gnu_cxx::_Lock_policy)2"))
		return 1;
	for (int i = 0; same[i]; i++) {
		size_t n = strlen(same[i]);
		if (!strncmp(a, same[i], n) && !strncmp(a + n, first, f) && !strcmp(a + n + f, ">"))
			return 1;
	}
	return 0;
}

/* A list of arguments, s[b..e) without its brackets, simplified and
 * without the trailing defaults when targs; open and close around it. */
static int args_out(const char *s, size_t b, size_t e, struct buf *out, int depth, int targs,
		    const char *open, const char *close)
{
	struct toks t = { 0 };
	struct buf *a = NULL;
	size_t na = 0, from = b;
	int rc = -1;

	if (lex(s, b, e, &t, depth + 1) < 0)
		goto done;
	a = calloc(t.n + 1, sizeof(*a));
	if (!a)
		goto done;
	for (size_t k = 0; k <= t.n; k++) {
		size_t to = k < t.n ? t.t[k].b : e;
		if (k < t.n && !(t.t[k].k == K_PUNCT && s[t.t[k].b] == ','))
			continue;
		if (type_range(s, from, to, &a[na], depth + 1) < 0 || a[na].oom)
			goto done;
		na++;
		from = k < t.n ? t.t[k].e : e;
	}
	if (targs) {
		size_t r = qname_start(out);
		while (na > 1 && a[na - 1].n && is_default(a[na - 1].s, a[0].n ? a[0].s : ""))
			na--;
		if (na == 1 && a[0].n && r < out->n) {
			char *q = out->oom ? NULL : strndup(out->s + r, out->n - r);
			if (q) {
				size_t n = out->n;
				out->n = r;
				if (!alias(q, strlen(q), a[0].s, a[0].n, out))
					out->n = n;
				else
					na = 0;
				free(q);
			}
			if (!na) {
				rc = 0;
				goto done;
			}
		}
	}
	put_str(out, open);
	for (size_t i = 0; i < na; i++) {
		if (i)
			put_str(out, ", ");
		if (a[i].n)
			put(out, a[i].s, a[i].n);
	}
	put_str(out, close);
	rc = 0;
done:
	if (a)
		for (size_t i = 0; i <= t.n; i++)
			free(a[i].s);
	free(a);
	free(t.t);
	return rc;
}

static int type_range(const char *s, size_t b, size_t e, struct buf *out, int depth)
{
	struct toks t = { 0 };
	int rc = -1;

	if (depth > MAX_DEPTH || lex(s, b, e, &t, depth) < 0)
		goto done;
	for (size_t k = 0; k < t.n; k++) {
		const struct tok *x = &t.t[k];
		switch (x->k) {
		case K_WORD:
			if (is_inline_ns(s, x) && ends_with(out, "std::") && k + 1 < t.n &&
			    t.t[k + 1].k == K_SCOPE) {
				k++;
				break;
			}
			/* fallthrough */
		case K_OP:
		case K_BRACE:
			put(out, s + x->b, x->e - x->b);
			break;
		case K_SCOPE:
			put(out, "::", 2);
			break;
		case K_ANGLE:
			if (args_out(s, x->b + 1, x->e - 1, out, depth, 1, "<", ">") < 0)
				goto done;
			break;
		case K_PAREN:
			if (is_anon(s, x))
				put(out, s + x->b, x->e - x->b);
			else if (args_out(s, x->b + 1, x->e - 1, out, depth, 0, "(", ")") < 0)
				goto done;
			break;
		case K_BRACKET: /* "Widget []" is Widget[] */
			if (ends_with(out, " "))
				out->n--;
			put(out, s + x->b, x->e - x->b);
			break;
		case K_SPACE:
			if (out->n && !ends_with(out, " ") && !ends_with(out, "(") && k + 1 < t.n)
				put(out, " ", 1);
			break;
		case K_PUNCT:
			put(out, s + x->b, 1);
			break;
		}
	}
	rc = 0;
done:
	free(t.t);
	return rc;
}

char *cxxname_type(const char *type)
{
	struct buf out = { 0 };
	size_t b = 0, e = strlen(type);

	while (b < e && type[b] == ' ')
		b++;
	if (type_range(type, b, e, &out, 0) < 0 || out.oom || !out.n) {
		free(out.s);
		return strdup(type);
	}
	return out.s;
}

/* ---- what an allocating frame names ----------------------------------- */

/* One component of a qualified name: its name and its template arguments. */
struct comp {
	const struct tok *name;
	const struct tok *args; /* NULL: none */
};

/* The qualified name of comps[0..n) without template arguments or inline
 * namespaces ("std::__new_allocator"), into out. */
static void qualified(const char *s, const struct comp *c, size_t n, struct buf *out)
{
	for (size_t i = 0; i < n; i++) {
		if (i && is_inline_ns(s, c[i].name) && ends_with(out, "std"))
			continue;
		if (i)
			put(out, "::", 2);
		put(out, s + c[i].name->b, c[i].name->e - c[i].name->b);
	}
}

static int has_alloc(const char *s, size_t b, size_t e)
{
	for (size_t i = b; i + 5 <= e; i++)
		if (!strncmp(s + i, "alloc", 5) || !strncmp(s + i, "Alloc", 5))
			return 1;
	return 0;
}

/* X<T, ...> with X an allocator: T, into *tb, *te. */
static int allocator_arg(const char *s, size_t b, size_t e, size_t *tb, size_t *te, int depth)
{
	struct toks t = { 0 };
	int rc = -1;

	if (lex(s, b, e, &t, depth + 1) == 0 && t.n >= 2 && t.t[t.n - 1].k == K_ANGLE &&
	    t.t[t.n - 2].k == K_WORD && has_alloc(s, t.t[t.n - 2].b, t.t[t.n - 2].e))
		rc = first_arg(s, &t.t[t.n - 1], tb, te, depth + 1);
	free(t.t);
	return rc;
}

char *cxxname_alloc_type(const char *name, enum cxxname_size *how)
{
	struct toks t = { 0 };
	struct comp *c = NULL;
	struct buf q = { 0 };
	size_t start, end, n = 0, tb = 0, te = 0;
	char *r = NULL;

	if (!strstr(name, "allocate") && !strstr(name, "make_unique") && !strstr(name, "basic_string<"))
		return NULL;
	if (lex(name, 0, strlen(name), &t, 0) < 0 || name_range(name, &t, &start, &end) != 0)
		goto done;
	c = calloc(end - start + 1, sizeof(*c));
	if (!c)
		goto done;
	for (size_t k = start; k < end; k++) {
		const struct tok *x = &t.t[k];
		if (x->k == K_WORD || x->k == K_OP || x->k == K_BRACE || is_anon(name, x))
			c[n++] = (struct comp){ x, NULL };
		else if (x->k == K_ANGLE && n && !c[n - 1].args)
			c[n - 1].args = x;
	}
	if (n >= 2 && tok_eq(name, c[n - 1].name, "allocate") && c[n - 2].args) {
		qualified(name, c, n - 1, &q);
		if (q.oom)
			goto done;
		if (!strcmp(q.s, "std::allocator_traits")) {
			size_t ab, ae;
			if (first_arg(name, c[n - 2].args, &ab, &ae, 0) == 0 &&
			    allocator_arg(name, ab, ae, &tb, &te, 0) == 0)
				*how = CXXNAME_SIZE_RETURN;
		} else if (has_alloc(name, c[n - 2].name->b, c[n - 2].name->e) &&
			   first_arg(name, c[n - 2].args, &tb, &te, 0) == 0) {
			*how = CXXNAME_SIZE_RETURN;
		}
	} else if (n >= 1 && c[n - 1].args) {
		qualified(name, c, n, &q);
		if (!q.oom && (!strcmp(q.s, "std::make_unique") || !strcmp(q.s, "std::make_unique_for_overwrite")) &&
		    first_arg(name, c[n - 1].args, &tb, &te, 0) == 0)
			*how = CXXNAME_SIZE_TPARAM;
	}
	if (te == tb && n >= 2 && c[n - 2].args) {
		free(q.s);
		q = (struct buf){ 0 };
		qualified(name, c, n - 1, &q);
		if (!q.oom && !strcmp(q.s, "std::basic_string") &&
		    first_arg(name, c[n - 2].args, &tb, &te, 0) == 0)
			*how = CXXNAME_SIZE_NAME;
	}
	/* A value, not a type (MyPool<64ul>::allocate): nothing. */
	if (te > tb && ((name[tb] >= '0' && name[tb] <= '9') || name[tb] == '-' || name[tb] == '(' ||
			name[tb] == '&' || word_eq(name, tb, te, "true") || word_eq(name, tb, te, "false")))
		te = tb;
	if (te > tb)
		r = strndup(name + tb, te - tb);
done:
	free(q.s);
	free(c);
	free(t.t);
	return r;
}

int cxxname_is_plumbing(const char *name)
{
	static const char *const plumbing[] = { "operator new", "operator new[]",
						"std::__libcpp_operator_new", "std::__libcpp_allocate",
						NULL };
	char *sn;
	int yes = 0;

	if (!strstr(name, "operator new") && !strstr(name, "__libcpp_"))
		return 0;
	sn = cxxname_simplify(name);
	for (int i = 0; sn && plumbing[i]; i++)
		yes |= !strcmp(sn, plumbing[i]);
	free(sn);
	return yes;
}

uint64_t cxxname_builtin_size(const char *type)
{
	static const struct {
		const char *name;
		uint64_t size;
	} b[] = {
		{ "char", 1 },       { "signed char", 1 },    { "unsigned char", 1 },
		{ "bool", 1 },       { "char8_t", 1 },        { "std::byte", 1 },
		{ "short", 2 },      { "unsigned short", 2 }, { "char16_t", 2 },
		{ "int", 4 },        { "unsigned int", 4 },   { "float", 4 },
		{ "char32_t", 4 },   { "wchar_t", 4 },        { "long", 8 },
		{ "unsigned long", 8 }, { "long long", 8 },   { "unsigned long long", 8 },
		{ "double", 8 },     { "decltype(nullptr)", 8 }, { "std::nullptr_t", 8 },
		{ "__int128", 16 },  { "unsigned __int128", 16 }, { "long double", 16 },
	};
	size_t n = strlen(type);

	/* cv-qualifiers do not change the size */
	while (1) {
		if (n > 6 && !strncmp(type + n - 6, " const", 6))
			n -= 6;
		else if (n > 9 && !strncmp(type + n - 9, " volatile", 9))
			n -= 9;
		else
			break;
	}
	if (n && type[n - 1] == '*')
		return 8;
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		if (word_eq(type, 0, n, b[i].name))
			return b[i].size;
	return 0;
}
