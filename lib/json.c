/* json.c - typed access, canonical text and equality over libjq's jv */
#include "json.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"

/* 2^53 - 1: above it, a double no longer tells neighbours apart. */
#define MAX_EXACT	9007199254740991.0

const char *
art_json_kind_name(jv_kind k)
{
	switch (k) {
	case JV_KIND_INVALID:	return "invalid";
	case JV_KIND_NULL:	return "null";
	case JV_KIND_FALSE:
	case JV_KIND_TRUE:	return "boolean";
	case JV_KIND_NUMBER:	return "number";
	case JV_KIND_STRING:	return "string";
	case JV_KIND_ARRAY:	return "array";
	case JV_KIND_OBJECT:	return "object";
	}
	return "unknown";
}

jv
art_json_field(const jv *obj, const char *key)
{
	jv v;

	if (jv_get_kind(*obj) != JV_KIND_OBJECT)
		return jv_null();
	v = jv_object_get(jv_copy(*obj), jv_string(key));
	return jv_is_valid(v) ? v : (jv_free(v), jv_null());
}

const char *
art_json_str(const jv *obj, const char *key)
{
	jv v = art_json_field(obj, key);
	const char *s = jv_get_kind(v) == JV_KIND_STRING ?
	    jv_string_value(v) : NULL;

	jv_free(v);	/* obj still holds the string, so s stays valid */
	return s;
}

/*
 * The field, if present: 1 found (*v owned by the caller), 0 absent or
 * null and not required, -1 missing and required.
 */
static int
lookup(const jv *obj, const char *key, int required, jv *v,
    struct art_err *err)
{
	*v = art_json_field(obj, key);
	if (jv_get_kind(*v) != JV_KIND_NULL)
		return 1;
	jv_free(*v);
	if (required)
		return art_err_set(err, "bad_field", "missing field '%s'", key);
	return 0;
}

static int
wrong_kind(jv v, const char *key, const char *want, struct art_err *err)
{
	art_err_set(err, "bad_field", "field '%s': expected %s, got %s", key,
	    want, art_json_kind_name(jv_get_kind(v)));
	jv_free(v);
	return -1;
}

int
art_json_get_str(const jv *obj, const char *key, int required,
    const char **out, struct art_err *err)
{
	jv v;
	int r;

	if ((r = lookup(obj, key, required, &v, err)) <= 0)
		return r;
	if (jv_get_kind(v) != JV_KIND_STRING)
		return wrong_kind(v, key, "string", err);
	*out = jv_string_value(v);
	jv_free(v);	/* obj still holds the string */
	return 0;
}

int
art_json_get_int(const jv *obj, const char *key, int required,
    int64_t *out, struct art_err *err)
{
	double d;
	jv v;
	int r;

	if ((r = lookup(obj, key, required, &v, err)) <= 0)
		return r;
	if (jv_get_kind(v) != JV_KIND_NUMBER)
		return wrong_kind(v, key, "integer", err);
	d = jv_number_value(v);
	jv_free(v);
	if (d != floor(d) || fabs(d) > MAX_EXACT)
		return art_err_set(err, "bad_field", "field '%s': expected an "
		    "integer, got %g", key, d);
	*out = (int64_t)d;
	return 0;
}

int
art_json_get_bool(const jv *obj, const char *key, int required, int *out,
    struct art_err *err)
{
	jv v;
	int r;

	if ((r = lookup(obj, key, required, &v, err)) <= 0)
		return r;
	if (jv_get_kind(v) != JV_KIND_TRUE && jv_get_kind(v) != JV_KIND_FALSE)
		return wrong_kind(v, key, "boolean", err);
	*out = jv_get_kind(v) == JV_KIND_TRUE;
	jv_free(v);
	return 0;
}

int
art_json_get_kind(const jv *obj, const char *key, jv_kind kind,
    int required, jv *out, struct art_err *err)
{
	jv v;
	int r;

	if ((r = lookup(obj, key, required, &v, err)) <= 0)
		return r;
	if (jv_get_kind(v) != kind)
		return wrong_kind(v, key, art_json_kind_name(kind), err);
	*out = v;
	return 0;
}

/*
 * libjq 1.6 leaks the string its parser refuses when a value already
 * waits in an array or object ({"a""b"}, [1 "b"], [{} "x"]: "Expected
 * separator between values"): the new string is never freed (jq 1.7
 * frees it).  A filter that lives for days on such lines would grow
 * without bound, so that text never reaches libjq.  jq_would_leak()
 * follows libjq's parser over the text, as far as it would go, and says
 * whether it would reach such a string, and where; art_json_parse() then
 * makes libjq's message itself.  Where libjq stops earlier it is left to
 * libjq, which frees what it built.  Each check below is at most as
 * strict as libjq's: one too lenient costs a message (ours where libjq's
 * would name an earlier fault), one too strict would let a leak through.
 */
#define JQ_DEPTH	256	/* libjq 1.6's limit; a key may sit on top */

enum { NEXT_NONE, NEXT_STRING, NEXT_OTHER };

struct jqsim {
	int		 line, col;
	int		 next;		/* the value waiting, as p->next */
	int		 depth, values;
	size_t		 tok;		/* bytes of the literal being read */
	const char	*tokp;
	unsigned char	 kind[JQ_DEPTH + 1];	/* '[', '{', or 'k' (a key) */
	unsigned char	 full[JQ_DEPTH + 1];	/* has a member */
};

static int
jq_in(const char *set, char c)
{
	return c != '\0' && strchr(set, c) != NULL;
}

/* Could libjq read this literal?  true, false, null, nan or a number. */
static int
jq_literal_ok(const char *s, size_t n)
{
	const char *e = s + n, *nul;
	int digits = 0;

	if (s[0] == 't')
		return n == 4 && memcmp(s, "true", 4) == 0;
	if (s[0] == 'f')
		return n == 5 && memcmp(s, "false", 5) == 0;
	if (s[0] == 'n' && n != 3)	/* three letters may be nan */
		return n == 4 && memcmp(s, "null", 4) == 0;
	/* libjq reads the rest with strtod, which stops at a NUL. */
	if ((nul = memchr(s, '\0', n)) != NULL)
		e = nul;
	if (s == e)
		return 1;
	if (s < e && (*s == '+' || *s == '-'))
		s++;
	if ((e - s == 3 && (strncasecmp(s, "nan", 3) == 0 ||
	    strncasecmp(s, "inf", 3) == 0)) || (e - s == 8 &&
	    strncasecmp(s, "infinity", 8) == 0))
		return 1;
	for (; s < e && *s >= '0' && *s <= '9'; s++)
		digits++;
	if (s < e && *s == '.')
		for (s++; s < e && *s >= '0' && *s <= '9'; s++)
			digits++;
	if (digits == 0)
		return 0;
	if (s < e && (*s == 'e' || *s == 'E')) {
		if (++s < e && (*s == '+' || *s == '-'))
			s++;
		for (digits = 0; s < e && *s >= '0' && *s <= '9'; s++)
			digits++;
		if (digits == 0)
			return 0;
	}
	return s == e;
}

/*
 * A control byte libjq 1.6 refuses in a string: 0x01 to 0x1e.  It takes
 * NUL and 0x1f (its check is c > 0 && c < 0x1f).
 */
static int
jq_control(char c)
{
	return (unsigned char)c >= 0x01 && (unsigned char)c <= 0x1e;
}

/* Would libjq take this string's body (escapes, control bytes)? */
static int
jq_string_ok(const char *s, const char *end)
{
	static const char hex[] = "0123456789abcdefABCDEF";

	for (; s < end; s++) {
		if (jq_control(*s))
			return 0;
		if (*s != '\\')
			continue;
		if (++s == end)
			return 0;
		if (jq_in("\\\"/bfnrt", *s))
			continue;
		if (*s != 'u' || end - s < 5 || !jq_in(hex, s[1]) ||
		    !jq_in(hex, s[2]) || !jq_in(hex, s[3]) || !jq_in(hex, s[4]))
			return 0;
		s += 4;
		/* A high surrogate needs its low half; be lenient past that. */
		if (jq_in("dD", s[-3]) && jq_in("89abAB", s[-2]) &&
		    (end - s < 7 || s[1] != '\\' || s[2] != 'u'))
			return 0;
	}
	return 1;
}

/* A value done: 1 when libjq refuses it, 2 when that leaks it. */
static int
jq_value(struct jqsim *q, int kind)
{
	if (q->next != NEXT_NONE)
		return kind == NEXT_STRING ? 2 : 1;
	q->next = kind;
	return 0;
}

/* libjq's structural tokens; 1 where it stops. */
static int
jq_token(struct jqsim *q, char ch)
{
	unsigned char *top = q->depth > 0 ? &q->kind[q->depth - 1] : NULL;

	switch (ch) {
	case '[':
	case '{':
		if (q->next != NEXT_NONE || q->depth >= JQ_DEPTH)
			return 1;
		q->kind[q->depth] = (unsigned char)ch;
		q->full[q->depth++] = 0;
		return 0;
	case ':':
		if (q->next != NEXT_STRING || top == NULL || *top != '{' ||
		    q->depth > JQ_DEPTH)
			return 1;
		q->kind[q->depth++] = 'k';
		q->next = NEXT_NONE;
		return 0;
	case ',':
		if (q->next == NEXT_NONE || top == NULL || *top == '{')
			return 1;
		if (*top == 'k')
			q->depth--;
		q->full[q->depth - 1] = 1;
		q->next = NEXT_NONE;
		return 0;
	case ']':
		if (top == NULL || *top != '[' || (q->next == NEXT_NONE &&
		    q->full[q->depth - 1]))
			return 1;
		q->depth--;
		q->next = NEXT_OTHER;
		return 0;
	default:	/* '}' */
		if (top == NULL)
			return 1;
		if (q->next != NEXT_NONE) {
			if (*top != 'k')
				return 1;
			q->depth--;
		} else if (*top != '{' || q->full[q->depth - 1])
			return 1;
		q->depth--;
		q->next = NEXT_OTHER;
		return 0;
	}
}

/* The literal being read ends; 1 where libjq stops. */
static int
jq_end_literal(struct jqsim *q)
{
	size_t n = q->tok;

	q->tok = 0;
	if (n == 0)
		return 0;
	return !jq_literal_ok(q->tokp, n) || jq_value(q, NEXT_OTHER) != 0;
}

/* A value at the top ends one parse: 1 at the second, where libjq stops. */
static int
jq_top_done(struct jqsim *q)
{
	if (q->depth > 0 || q->next == NEXT_NONE)
		return 0;
	q->next = NEXT_NONE;
	return ++q->values == 2;
}

/*
 * The closing quote of the string whose body starts at p, or NULL when
 * there is none or the body holds a control byte libjq refuses (RS and
 * newline among them): it then reaches no later string.
 */
static const char *
jq_string_end(const char *p, const char *end)
{
	for (; p < end; p++) {
		if (jq_control(*p))
			return NULL;
		if (*p == '"')
			return p;
		if (*p == '\\' && (++p == end || jq_control(*p)))
			return NULL;
	}
	return NULL;
}

/* How libjq's scanner sorts a byte outside strings. */
enum { JQ_LITERAL, JQ_SPACE, JQ_QUOTE, JQ_TOKEN };
static const unsigned char jq_class[256] = {
	[' '] = JQ_SPACE, ['\t'] = JQ_SPACE, ['\r'] = JQ_SPACE,
	['\n'] = JQ_SPACE, ['"'] = JQ_QUOTE, ['['] = JQ_TOKEN,
	[']'] = JQ_TOKEN, ['{'] = JQ_TOKEN, ['}'] = JQ_TOKEN,
	[','] = JQ_TOKEN, [':'] = JQ_TOKEN,
};

/*
 * 1 when libjq 1.6 would leak on text, with *line and *col where it
 * would report it; 0 otherwise.
 */
static int
jq_would_leak(const char *p, const char *end, int *line, int *col)
{
	struct jqsim q;
	const char *close;
	int c, r;

	q.line = 1;
	q.col = q.next = q.depth = q.values = 0;
	q.tok = 0;
	q.tokp = NULL;
	if (end - p >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	else if (p < end && *p == '\xef')
		return 0;
	for (; p < end; p++) {
		q.col++;
		if ((c = jq_class[(unsigned char)*p]) == JQ_LITERAL) {
			if (q.tok++ == 0)
				q.tokp = p;
			continue;
		}
		if (*p == '\n') {
			q.line++;
			q.col = 0;
		}
		if (jq_end_literal(&q) != 0)
			return 0;
		/* libjq hands over a value that ends here first. */
		if (jq_top_done(&q))
			return 0;
		if (c == JQ_TOKEN && jq_token(&q, *p) != 0)
			return 0;
		if (c == JQ_QUOTE) {
			if ((close = jq_string_end(p + 1, end)) == NULL ||
			    !jq_string_ok(p + 1, close))
				return 0;
			q.col += (int)(close - p);
			p = close;
			if ((r = jq_value(&q, NEXT_STRING)) != 0) {
				*line = q.line;
				*col = q.col;
				return r == 2;
			}
		}
		if (jq_top_done(&q))
			return 0;
	}
	return 0;
}

/* The first control character JSON text may not hold, or NULL. */
static const char *
control_char(const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 && text[i] != '\t' &&
		    text[i] != '\n' && text[i] != '\r')
			return text + i;
	return NULL;
}

jv
art_json_parse(const char *text, size_t len, struct art_err *err)
{
	jv v, msg;
	char why[200] = "parse error";
	const char *cut;
	int line, col;

	if (len > 0x7fffffff) {
		art_err_set(err, "bad_json", "JSON text too long (%zu bytes)",
		    len);
		return jv_invalid();
	}
	/*
	 * JSON allows no control character but tab, newline and return
	 * outside a string's escapes.  libjq 1.6 takes an RS (0x1e) as the
	 * end of a record, even in a string, and goes on after it (RFC 7464
	 * sequences), and reads others (a NUL, a vertical tab) as part of a
	 * literal, further than jq_would_leak() follows: such text can leak.
	 */
	if ((cut = control_char(text, len)) != NULL) {
		art_err_set(err, "bad_json", "not valid JSON: control character "
		    "0x%02x at byte %zu", (unsigned char)*cut,
		    (size_t)(cut - text) + 1);
		return jv_invalid();
	}
	if (jq_would_leak(text, text + len, &line, &col)) {
		art_err_set(err, "bad_json", "not valid JSON: Expected "
		    "separator between values at line %d, column %d", line,
		    col);
		return jv_invalid();
	}
	v = jv_parse_sized(text, (int)len);
	if (jv_is_valid(v))
		return v;
	msg = jv_invalid_get_msg(v);
	if (jv_get_kind(msg) == JV_KIND_STRING) {
		snprintf(why, sizeof(why), "%s", jv_string_value(msg));
		if ((cut = strstr(why, " (while parsing")) != NULL)
			why[cut - why] = '\0';
	}
	jv_free(msg);
	art_err_set(err, "bad_json", "not valid JSON: %s", why);
	return jv_invalid();
}

jv
art_json_parse_str(const char *text, struct art_err *err)
{
	return art_json_parse(text, strlen(text), err);
}

jv
art_json_canon(jv v)
{
	return jv_dump_string(v, JV_PRINT_SORTED);
}

int
art_json_equal(const jv *a, const jv *b)
{
	/* jv_equal compares objects by key set, numbers by value. */
	return jv_equal(jv_copy(*a), jv_copy(*b));
}

struct out {
	struct art_buf	 b;
	int		 nomem;
};

/* Inline while there is room, as a dump is mostly small puts. */
static void
put(struct out *o, const char *s, size_t n)
{
	if (o->nomem)
		return;
	if (o->b.cap - o->b.len > n) {
		memcpy(o->b.p + o->b.len, s, n);
		o->b.len += n;
	} else if (art_buf_add(&o->b, s, n) == -1)
		o->nomem = 1;
}

/*
 * The shortest digits that read back as d, laid out as libjq 1.6's
 * jvp_dtoa_fmt does (David Gay's g_fmt, with jq's wider margin):
 * exponential when the point is far left (decpt <= -4) or far right of
 * the digits (decpt > ndigits + 15: libjq writes 12000000, not 1.2e+07).
 */
/*
 * An integer below 1e15 the way put_number() lays it out, without its
 * search for the shortest digits (up to 17 snprintf and strtod calls):
 * those are the integer's own digits, and below 1e15 the layout is never
 * exponential, so it is written whole.  Returns 0 for anything else.
 */
static int
put_integer(struct out *o, double d)
{
	char buf[24];
	unsigned long long v;
	int len = 0;

	if (d != floor(d) || fabs(d) >= 1e15)
		return 0;
	v = (unsigned long long)fabs(d);
	do {
		buf[sizeof(buf) - 1 - len++] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	if (d < 0)
		buf[sizeof(buf) - 1 - len++] = '-';
	put(o, buf + sizeof(buf) - len, (size_t)len);
	return 1;
}

static void
put_number(struct out *o, double d)
{
	char buf[40], digits[20], out[64];
	int prec, n = 0, decpt, len = 0, i;
	const char *p;

	if (d != d) {
		put(o, "null", 4);
		return;
	}
	if (d > DBL_MAX)
		d = DBL_MAX;
	if (d < -DBL_MAX)
		d = -DBL_MAX;
	if (d == 0) {
		put(o, signbit(d) ? "-0" : "0", signbit(d) ? 2 : 1);
		return;
	}
	if (put_integer(o, d))
		return;
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	for (p = buf; *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[n++] = *p;
	while (n > 1 && digits[n - 1] == '0')
		n--;
	decpt = atoi(p + 1) + 1;
	if (d < 0)
		out[len++] = '-';
	if (decpt <= -4 || decpt > n + 15) {
		out[len++] = digits[0];
		if (n > 1)
			out[len++] = '.';
		for (i = 1; i < n; i++)
			out[len++] = digits[i];
		len += snprintf(out + len, sizeof(out) - len, "e%c%02d",
		    decpt - 1 < 0 ? '-' : '+', abs(decpt - 1));
	} else if (decpt <= 0) {
		out[len++] = '0';
		out[len++] = '.';
		for (i = 0; i < -decpt; i++)
			out[len++] = '0';
		for (i = 0; i < n; i++)
			out[len++] = digits[i];
	} else {
		for (i = 0; i < n || i < decpt; i++) {
			if (i == decpt)
				out[len++] = '.';
			out[len++] = i < n ? digits[i] : '0';
		}
	}
	put(o, out, (size_t)len);
}

static void
put_string(struct out *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i, run = 0;
	char esc[6];

	put(o, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned c = p[i];
		const char *e = NULL;

		if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f)
			continue;
		put(o, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"':  e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\n': e = "\\n"; break;
		case '\t': e = "\\t"; break;
		case '\r': e = "\\r"; break;
		case '\b': e = "\\b"; break;
		case '\f': e = "\\f"; break;
		}
		if (e != NULL)
			put(o, e, 2);
		else {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			put(o, esc, 6);
		}
	}
	put(o, s + run, n - run);
	put(o, "\"", 1);
}

static void
put_value(struct out *o, jv v)
{
	int i, n, first = 1;
	jv k, x;

	switch (jv_get_kind(v)) {
	case JV_KIND_NULL:	put(o, "null", 4); break;
	case JV_KIND_TRUE:	put(o, "true", 4); break;
	case JV_KIND_FALSE:	put(o, "false", 5); break;
	case JV_KIND_NUMBER:	put_number(o, jv_number_value(v)); break;
	case JV_KIND_STRING:
		put_string(o, jv_string_value(v),
		    (size_t)jv_string_length_bytes(jv_copy(v)));
		break;
	case JV_KIND_ARRAY:
		put(o, "[", 1);
		n = jv_array_length(jv_copy(v));
		for (i = 0; i < n; i++) {
			if (i > 0)
				put(o, ",", 1);
			x = jv_array_get(jv_copy(v), i);
			put_value(o, x);
			jv_free(x);
		}
		put(o, "]", 1);
		break;
	case JV_KIND_OBJECT:
		put(o, "{", 1);
		for (i = jv_object_iter(v); jv_object_iter_valid(v, i);
		    i = jv_object_iter_next(v, i)) {
			if (!first)
				put(o, ",", 1);
			first = 0;
			k = jv_object_iter_key(v, i);
			x = jv_object_iter_value(v, i);
			put_string(o, jv_string_value(k),
			    (size_t)jv_string_length_bytes(jv_copy(k)));
			put(o, ":", 1);
			put_value(o, x);
			jv_free(k);
			jv_free(x);
		}
		put(o, "}", 1);
		break;
	default:
		put(o, "null", 4);
	}
}

char *
art_json_dump(const jv *v, size_t *len)
{
	struct out o = { ART_BUF_INIT, 0 };

	put_value(&o, *v);
	if (o.nomem || art_buf_reserve(&o.b, 0) == -1) {
		art_buf_release(&o.b);
		return NULL;
	}
	return art_buf_detach(&o.b, len);
}

jv
art_json_set(jv o, const char *key, jv v)
{
	return jv_object_set(o, jv_string(key), v);
}

jv
art_json_delete(jv o, const char *key)
{
	jv out;

	if (jv_get_kind(o) != JV_KIND_OBJECT)
		return o;
	o = jv_object_delete(o, jv_string(key));
	out = jv_object();
	jv_object_foreach(o, k, v)
		out = jv_object_set(out, k, v);
	jv_free(o);
	return out;
}

jv
art_json_set_some(jv o, const char *key, jv v)
{
	if (!jv_is_valid(v) || jv_get_kind(v) == JV_KIND_NULL) {
		jv_free(v);
		return o;
	}
	return jv_object_set(o, jv_string(key), v);
}

jv
art_json_set_after(jv o, const char *after, const char *key, jv v)
{
	jv out = jv_object();
	int put = 0;

	o = jv_object_delete(o, jv_string(key));
	jv_object_foreach(o, k, x) {
		out = jv_object_set(out, jv_copy(k), x);
		if (!put && strcmp(jv_string_value(k), after) == 0) {
			out = jv_object_set(out, jv_string(key), jv_copy(v));
			put = 1;
		}
		jv_free(k);
	}
	if (!put)
		out = jv_object_set(out, jv_string(key), jv_copy(v));
	jv_free(v);
	jv_free(o);
	return out;
}

jv
art_json_append_dump(jv s, const jv *v)
{
	size_t n;
	char *t = art_json_dump(v, &n);

	if (t == NULL) {
		jv_free(s);
		return jv_invalid();
	}
	s = jv_string_append_buf(s, t, (int)n);
	free(t);
	return s;
}

bool
art_json_has_str(const jv *a, const char *s)
{
	bool found = false;

	jv_array_foreach(*a, i, x) {
		found = found || (jv_get_kind(x) == JV_KIND_STRING &&
		    strcmp(jv_string_value(x), s) == 0);
		jv_free(x);
		(void)i;
	}
	return found;
}

jv
art_json_without_str(jv a, const char *s)
{
	jv out = jv_array();

	jv_array_foreach(a, i, x) {
		if (jv_get_kind(x) != JV_KIND_STRING ||
		    strcmp(jv_string_value(x), s) != 0)
			out = jv_array_append(out, x);
		else
			jv_free(x);
		(void)i;
	}
	jv_free(a);
	return out;
}

/* --- scanning without building ---------------------------------------- */

#define SCAN_DEPTH	200

struct scan {
	const char	*p, *end;
	char		*type, *trigger;
	size_t		 tn;
};

static void
skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
	    *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

/* A string; *plain says it had no escapes.  1 ok, 0 malformed. */
static int
scan_string(struct scan *s, const char **start, size_t *n, int *plain)
{
	int k;

	if (s->p >= s->end || *s->p != '"')
		return 0;
	*start = ++s->p;
	*plain = 1;
	while (s->p < s->end && *s->p != '"') {
		if ((unsigned char)*s->p < 0x20)
			return 0;
		if (*s->p == '\\') {
			*plain = 0;
			if (++s->p >= s->end)
				return 0;
			if (*s->p == 'u') {
				for (k = 1; k <= 4; k++)
					if (s->p + k >= s->end || !is_hex(s->p[k]))
						return 0;
				s->p += 4;
			} else if (strchr("\"\\/bfnrt", *s->p) == NULL)
				return 0;
		}
		s->p++;
	}
	if (s->p >= s->end)
		return 0;
	*n = (size_t)(s->p - *start);
	s->p++;
	return 1;
}

static int
digits(struct scan *s)
{
	const char *b = s->p;

	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
	return s->p > b;
}

static int
scan_number(struct scan *s)
{
	if (s->p < s->end && *s->p == '-')
		s->p++;
	if (s->p < s->end && *s->p == '0')
		s->p++;
	else if (!digits(s))
		return 0;
	if (s->p < s->end && *s->p == '.') {
		s->p++;
		if (!digits(s))
			return 0;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (!digits(s))
			return 0;
	}
	return 1;
}

static int	scan_value(struct scan *, int, char *);

static int
scan_word(struct scan *s, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
		return 0;
	s->p += n;
	return 1;
}

/* Copies a plain string value into out, when out wants it. */
static void
keep_string(char *out, size_t tn, const char *p, size_t n, int plain)
{
	if (out != NULL && plain && n < tn) {
		memcpy(out, p, n);
		out[n] = '\0';
	}
}

/*
 * An object at depth; at depth 0 its "type" goes to s->type and its
 * "trigger" object's "type" to s->trigger (want says which to keep).
 */
static int
scan_object(struct scan *s, int depth, char *want)
{
	const char *k, *v;
	size_t kn, vn;
	int plain, vplain;

	s->p++;
	skip_ws(s);
	if (s->p < s->end && *s->p == '}')
		return s->p++, 1;
	for (;;) {
		skip_ws(s);
		if (!scan_string(s, &k, &kn, &plain))
			return 0;
		skip_ws(s);
		if (s->p >= s->end || *s->p++ != ':')
			return 0;
		skip_ws(s);
		if (want != NULL && plain && kn == 4 && memcmp(k, "type", 4) ==
		    0 && s->p < s->end && *s->p == '"') {
			if (!scan_string(s, &v, &vn, &vplain))
				return 0;
			keep_string(want, s->tn, v, vn, vplain);
		} else if (depth == 0 && plain && kn == 7 &&
		    memcmp(k, "trigger", 7) == 0 && s->p < s->end &&
		    *s->p == '{') {
			if (!scan_object(s, depth + 1, s->trigger))
				return 0;
		} else if (!scan_value(s, depth + 1, NULL))
			return 0;
		skip_ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == '}')
			return s->p++, 1;
		return 0;
	}
}

static int
scan_value(struct scan *s, int depth, char *want)
{
	const char *v;
	size_t n;
	int plain;

	if (depth > SCAN_DEPTH || s->p >= s->end)
		return 0;
	switch (*s->p) {
	case '{':
		return scan_object(s, depth, want);
	case '[':
		s->p++;
		skip_ws(s);
		if (s->p < s->end && *s->p == ']')
			return s->p++, 1;
		for (;;) {
			skip_ws(s);
			if (!scan_value(s, depth + 1, NULL))
				return 0;
			skip_ws(s);
			if (s->p < s->end && *s->p == ',') {
				s->p++;
				continue;
			}
			if (s->p < s->end && *s->p == ']')
				return s->p++, 1;
			return 0;
		}
	case '"':
		return scan_string(s, &v, &n, &plain);
	case 't':
		return scan_word(s, "true");
	case 'f':
		return scan_word(s, "false");
	case 'n':
		return scan_word(s, "null");
	default:
		return scan_number(s);
	}
}

int
art_json_scan(const char *text, size_t len, char *type, char *trigger,
    size_t tn)
{
	struct scan s = { text, text + len, type, trigger, tn };

	type[0] = trigger[0] = '\0';
	skip_ws(&s);
	if (s.p >= s.end || *s.p != '{' || !scan_object(&s, 0, type))
		return 0;
	skip_ws(&s);
	return s.p == s.end;
}

/* --- numbers a double holds ----------------------------------------- */

#define NUM_DEPTH	64
#define NUM_PATH	200

/* Where the scan is: the member's JSON pointer, and each container's. */
struct numscan {
	char	 path[NUM_PATH + 1];
	size_t	 len;
	size_t	 at[NUM_DEPTH];		/* path's length at each container */
	long	 index[NUM_DEPTH];	/* an array's, or -1 for an object */
	bool	 key[NUM_DEPTH];	/* an object waiting for a key */
	int	 depth;
};

/* Sets the path's last segment to s[0..n) (a key), or to index i. */
static void
num_segment(struct numscan *ns, const char *s, size_t n, long i)
{
	char seg[24];
	size_t room;

	ns->len = ns->at[ns->depth - 1];
	if (s == NULL) {
		snprintf(seg, sizeof(seg), "%ld", i);
		s = seg;
		n = strlen(seg);
	}
	room = NUM_PATH - ns->len;
	if (room < 2)
		return;
	ns->path[ns->len++] = '/';
	if (n > room - 1)
		n = room - 1;
	memcpy(ns->path + ns->len, s, n);
	ns->len += n;
	ns->path[ns->len] = '\0';
}

/* Why the number text[0..n) is not held exactly, or NULL when it is. */
static const char *
num_why(const char *text, size_t n)
{
	char small[64], *buf = small;
	const char *why = NULL, *p;
	bool integer = true, nonzero = false, mantissa = true;
	double v;

	for (p = text; p < text + n; p++) {
		if (*p == '.' || *p == 'e' || *p == 'E')
			integer = false;
		if (*p == 'e' || *p == 'E')
			mantissa = false;
		if (mantissa && *p >= '1' && *p <= '9')
			nonzero = true;
	}
	if (n >= sizeof(small) && (buf = malloc(n + 1)) == NULL)
		return NULL;
	memcpy(buf, text, n);
	buf[n] = '\0';
	errno = 0;
	v = strtod(buf, NULL);
	if (isinf(v) || (errno == ERANGE && fabs(v) > 1.0))
		why = "out of range";
	else if (integer && fabs(v) > 9007199254740992.0)
		why = "an integer beyond 2^53, which a double cannot hold "
		    "exactly";
	else if (errno == ERANGE && v == 0.0 && nonzero)
		why = "too small: it would be recorded as 0";
	if (buf != small)
		free(buf);
	return why;
}

int
art_json_check_numbers(const char *text, size_t len, struct art_err *err)
{
	struct numscan ns = { "", 0, { 0 }, { 0 }, { false }, 0 };
	const char *p = text, *end = text + len, *s, *why;
	size_t n;

	while (p < end) {
		switch (*p) {
		case '"':
			for (s = ++p; p < end && *p != '"'; p++)
				if (*p == '\\' && p + 1 < end)
					p++;
			if (ns.depth > 0 && ns.key[ns.depth - 1]) {
				num_segment(&ns, s, (size_t)(p - s), 0);
				ns.key[ns.depth - 1] = false;
			}
			p++;
			continue;
		case '{':
		case '[':
			if (ns.depth == NUM_DEPTH)
				return 0;	/* too deep to say: the parser will */
			ns.at[ns.depth] = ns.len;
			ns.index[ns.depth] = *p == '[' ? 0 : -1;
			ns.key[ns.depth] = *p == '{';
			ns.depth++;
			if (*p == '[')
				num_segment(&ns, NULL, 0, 0);
			break;
		case '}':
		case ']':
			if (ns.depth == 0)
				return 0;
			ns.len = ns.at[--ns.depth];
			ns.path[ns.len] = '\0';
			break;
		case ',':
			if (ns.depth == 0)
				return 0;
			if (ns.index[ns.depth - 1] >= 0)
				num_segment(&ns, NULL, 0, ++ns.index[ns.depth -
				    1]);
			else
				ns.key[ns.depth - 1] = true;
			break;
		default:
			if (*p != '-' && (*p < '0' || *p > '9'))
				break;
			for (s = p; p < end && strchr("0123456789+-.eE", *p) !=
			    NULL && *p != '\0'; p++)
				;
			n = (size_t)(p - s);
			if ((why = num_why(s, n)) != NULL)
				return art_err_set(err, "bad_input", "the number "
				    "at %s (%.*s%s) is %s; send it as a string",
				    ns.len > 0 ? ns.path : "/", n > 40 ? 40 :
				    (int)n, s, n > 40 ? "..." : "", why);
			continue;
		}
		p++;
	}
	return 0;
}
