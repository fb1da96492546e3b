/* ndjson.c - newline-delimited JSON: one object a line, bad lines reported
 *
 * Bytes are split on '\n' before any parsing: libjq 1.6's streaming parser,
 * given a truncated value, goes on consuming the next line into it and so
 * loses a good record.  Each line is then checked (NUL, UTF-8) and parsed on
 * its own with jv_parse_sized().  A line longer than the limit is never
 * held: once the buffer passes max_line without a newline the reader keeps
 * only an excerpt and skips to the next newline.
 */
#include "ndjson.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"
#include "utf8.h"

#define READ_CHUNK	65536

struct art_ndjson_reader {
	int		 fd;
	const char	*name;
	size_t		 max_line;
	unsigned	 flags;
	char		*buf;
	size_t		 cap;
	size_t		 start;		/* first unconsumed byte */
	size_t		 end;		/* one past the last byte read */
	size_t		 scanned;	/* bytes from start known to hold no '\n' */
	size_t		 lineno;
	int		 eof;
	int		 skipping;	/* inside an over-long line */
	size_t		 skipped;	/* its length so far */
	char		 excerpt[ART_NDJSON_EXCERPT];
	size_t		 excerpt_len;
	art_ndjson_want_fn *want;
	void		*want_ctx;
	const char	*raw;		/* the last OK or RAW line's bytes */
	size_t		 rawlen;
};

void
art_ndjson_set_filter(struct art_ndjson_reader *rd, art_ndjson_want_fn *want,
    void *ctx)
{
	rd->want = want;
	rd->want_ctx = ctx;
}

const char *
art_ndjson_raw(const struct art_ndjson_reader *rd, size_t *len)
{
	*len = rd->rawlen;
	return rd->raw;
}

/*
 * The type a line names as its first member, {"type":"T", in the form
 * the stages write, into type; 0 when the line does not begin so.
 */
static int
lead_type(const char *s, size_t n, char *type, size_t tn)
{
	static const char lead[] = "{\"type\":\"";
	size_t i, k = sizeof(lead) - 1;

	if (n <= k || memcmp(s, lead, k) != 0)
		return 0;
	for (i = k; i < n && i - k < tn - 1; i++) {
		char c = s[i];

		if (c == '"')
			break;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return 0;
	}
	if (i == k || i + 1 >= n || s[i] != '"' || (s[i + 1] != ',' &&
	    s[i + 1] != '}'))
		return 0;
	memcpy(type, s + k, i - k);
	type[i - k] = '\0';
	return 1;
}

/*
 * What the filter says, asked with no trigger, of a line whose first
 * member names its type: 0, pass it on unread, body and all, since the
 * stage that takes it checks it; ART_NDJSON_WANT_RAW, the stage parses
 * it itself; anything else, take the usual path.  -1 when the line does
 * not begin with its type, or there is no filter.
 */
static int
lead_want(struct art_ndjson_reader *rd, const char *s, size_t n)
{
	char type[64];

	if (rd->want == NULL || !lead_type(s, n, type, sizeof(type)))
		return -1;
	return rd->want(type, NULL, rd->want_ctx);
}

/* A well-formed line with a type the filter does not want? */
static int
passes_by(struct art_ndjson_reader *rd, const char *s, size_t n)
{
	char type[64], trigger[64];

	if (rd->want == NULL || !art_json_scan(s, n, type, trigger,
	    sizeof(type)) || *type == '\0')
		return 0;
	return !rd->want(type, trigger, rd->want_ctx);
}

struct art_ndjson_reader *
art_ndjson_reader_new(int fd, const char *name, size_t max_line,
    unsigned flags)
{
	struct art_ndjson_reader *rd;

	if ((rd = calloc(1, sizeof(*rd))) == NULL)
		return NULL;
	rd->fd = fd;
	rd->name = name != NULL ? name : "<stdin>";
	rd->max_line = max_line > 0 ? max_line : ART_NDJSON_MAX_LINE;
	rd->flags = flags;
	return rd;
}

void
art_ndjson_reader_free(struct art_ndjson_reader *rd)
{
	if (rd == NULL)
		return;
	free(rd->buf);
	free(rd);
}

size_t
art_ndjson_lineno(const struct art_ndjson_reader *rd)
{
	return rd->lineno;
}

const char *
art_ndjson_name(const struct art_ndjson_reader *rd)
{
	return rd->name;
}

static void
keep_excerpt(struct art_ndjson_reader *rd, const char *s, size_t n)
{
	rd->excerpt_len = n < sizeof(rd->excerpt) ? n : sizeof(rd->excerpt);
	memcpy(rd->excerpt, s, rd->excerpt_len);
}

/* Room for want more bytes after end, plus the NUL a parse needs. */
static int
reserve(struct art_ndjson_reader *rd, size_t want, struct art_err *err)
{
	size_t live = rd->end - rd->start, need;

	if (rd->start > 0 && (live == 0 || rd->start >= rd->cap / 2)) {
		memmove(rd->buf, rd->buf + rd->start, live);
		rd->start = 0;
		rd->end = live;
	}
	if (rd->end + want + 1 <= rd->cap)
		return 0;
	/* A whole chunk at first, so that small lines never grow it. */
	need = rd->end + want + 1;
	if (art_grow(&rd->buf, &rd->cap, need < READ_CHUNK ? READ_CHUNK : need,
	    1) == -1)
		return art_err_set(err, "nomem", "out of memory");
	return 0;
}

int
art_ndjson_feed(struct art_ndjson_reader *rd, const void *p, size_t n,
    struct art_err *err)
{
	if (reserve(rd, n, err) == -1)
		return -1;
	memcpy(rd->buf + rd->end, p, n);
	rd->end += n;
	return 0;
}

void
art_ndjson_feed_eof(struct art_ndjson_reader *rd)
{
	rd->eof = 1;
}

/* Reads once from fd: 1 bytes came, 0 end of file, -1 error, -2 again. */
static int
fill(struct art_ndjson_reader *rd, struct art_err *err)
{
	ssize_t n;

	if (reserve(rd, READ_CHUNK, err) == -1)
		return -1;
	do
		n = read(rd->fd, rd->buf + rd->end, READ_CHUNK);
	while (n == -1 && errno == EINTR);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return -2;
	if (n == -1)
		return art_err_set(err, "io", "read %s: %s", rd->name,
		    strerror(errno));
	if (n == 0)
		return 0;
	rd->end += (size_t)n;
	return 1;
}

static int
is_blank(const char *s, size_t n)
{
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n == 0;
}

static int
has_type(const jv *v)
{
	jv t = jv_object_get(jv_copy(*v), jv_string("type"));
	int ok = jv_get_kind(t) == JV_KIND_STRING;

	jv_free(t);
	return ok;
}

/*
 * A string "type" holding a NUL ("\u0000"): strcmp() on its C string
 * would stop at the NUL and take "llm.request\u0000x" for "llm.request".
 */
static int
type_holds_nul(const jv *v, jv *type)
{
	jv t = art_json_field(v, "type");

	if (jv_get_kind(t) == JV_KIND_STRING &&
	    (size_t)jv_string_length_bytes(jv_copy(t)) !=
	    strlen(jv_string_value(t))) {
		*type = t;
		return 1;
	}
	jv_free(t);
	return 0;
}

int
art_ndjson_check_type(const jv *line, struct art_err *err)
{
	jv t, text;

	if (!type_holds_nul(line, &t))
		return 0;
	text = jv_dump_string(t, 0);
	art_err_set(err, "bad_type", "line's \"type\" %.120s holds a NUL "
	    "byte", jv_string_value(text));
	jv_free(text);
	return -1;
}

/* Checks and parses one line; s[n] is writable and becomes a NUL. */
static enum art_ndjson_status
take_line(struct art_ndjson_reader *rd, char *s, size_t n, jv *out,
    struct art_err *err)
{
	size_t bad;
	int lw;
	jv v;

	keep_excerpt(rd, s, n);
	if ((lw = lead_want(rd, s, n)) == 0) {
		rd->raw = s;
		rd->rawlen = n;
		return ART_NDJSON_RAW;
	}
	if (memchr(s, '\0', n) != NULL) {
		art_err_set(err, "nul_byte", "line holds a NUL byte");
		return ART_NDJSON_BAD;
	}
	if (!art_utf8_valid(s, n, &bad)) {
		art_err_set(err, "bad_utf8", "line is not valid UTF-8 "
		    "(byte %zu)", bad + 1);
		return ART_NDJSON_BAD;
	}
	if (lw == ART_NDJSON_WANT_RAW || passes_by(rd, s, n)) {
		rd->raw = s;
		rd->rawlen = n;
		return ART_NDJSON_RAW;
	}
	s[n] = '\0';	/* jv_parse_sized's error path reads a C string */
	if ((rd->flags & ART_NDJSON_EXACT_NUMBERS) &&
	    art_json_check_numbers(s, n, err) == -1)
		return ART_NDJSON_BAD;
	v = art_json_parse(s, n, err);
	if (!jv_is_valid(v))
		return ART_NDJSON_BAD;
	if (jv_get_kind(v) != JV_KIND_OBJECT &&
	    !(jv_get_kind(v) == JV_KIND_ARRAY &&
	    (rd->flags & ART_NDJSON_ARRAYS))) {
		art_err_set(err, "not_object", "line is not a JSON object "
		    "(it is %s)", jv_kind_name(jv_get_kind(v)));
		jv_free(v);
		return ART_NDJSON_BAD;
	}
	if ((rd->flags & ART_NDJSON_REQUIRE_TYPE) && !has_type(&v)) {
		art_err_set(err, "no_type", "line has no string \"type\"");
		jv_free(v);
		return ART_NDJSON_BAD;
	}
	if ((rd->flags & ART_NDJSON_REQUIRE_TYPE) &&
	    art_ndjson_check_type(&v, err) == -1) {
		jv_free(v);
		return ART_NDJSON_BAD;
	}
	rd->raw = s;
	rd->rawlen = n;
	*out = v;
	return ART_NDJSON_OK;
}

static enum art_ndjson_status
too_long(struct art_ndjson_reader *rd, struct art_err *err)
{
	rd->skipping = 0;
	art_err_set(err, "line_too_long", "line is longer than %zu bytes "
	    "(%zu)", rd->max_line, rd->skipped);
	return ART_NDJSON_BAD;
}

/*
 * Starts or continues skipping an over-long line: the excerpt takes its
 * first bytes, the count its length, and the bytes themselves are let go.
 */
static void
skip(struct art_ndjson_reader *rd, const char *p, size_t n)
{
	size_t room;

	if (!rd->skipping) {
		rd->skipping = 1;
		rd->skipped = 0;
		rd->excerpt_len = 0;
	}
	room = sizeof(rd->excerpt) - rd->excerpt_len;
	if (room > n)
		room = n;
	memcpy(rd->excerpt + rd->excerpt_len, p, room);
	rd->excerpt_len += room;
	rd->skipped += n;
}

/*
 * One step of the split: a whole line (returned through s/n, 1), an
 * over-long line finished (2), or nothing yet (0).
 */
static int
split(struct art_ndjson_reader *rd, char **s, size_t *n)
{
	size_t live = rd->end - rd->start;
	char *base, *nl;

	if (live == 0)
		return 0;
	base = rd->buf + rd->start;
	nl = live > rd->scanned ?
	    memchr(base + rd->scanned, '\n', live - rd->scanned) : NULL;
	if (nl == NULL) {
		rd->scanned = live;
		if (rd->skipping || live > rd->max_line) {
			skip(rd, base, live);
			rd->start = rd->end = rd->scanned = 0;
		}
		return 0;
	}
	*s = base;
	*n = (size_t)(nl - base);
	rd->start += *n + 1;
	rd->scanned = 0;
	rd->lineno++;
	if (rd->skipping || *n > rd->max_line) {
		skip(rd, base, *n);
		return 2;
	}
	return 1;
}

/* The unterminated last line at end of input, if any. */
static int
split_last(struct art_ndjson_reader *rd, char **s, size_t *n)
{
	size_t live = rd->end - rd->start;

	if (live == 0 && !rd->skipping)
		return 0;
	*s = rd->buf + rd->start;
	*n = live;
	rd->start = rd->end;
	rd->scanned = 0;
	rd->lineno++;
	if (rd->skipping || live > rd->max_line) {
		skip(rd, *s, live);
		return 2;
	}
	return 1;
}

enum art_ndjson_status
art_ndjson_next(struct art_ndjson_reader *rd, jv *out, struct art_err *err)
{
	char *s;
	size_t n;
	int r;

	rd->raw = NULL;
	rd->rawlen = 0;
	for (;;) {
		r = split(rd, &s, &n);
		if (r == 0 && rd->eof)
			r = split_last(rd, &s, &n);
		if (r == 2)
			return too_long(rd, err);
		if (r == 1) {
			if (n > 0 && s[n - 1] == '\r')
				n--;
			if (is_blank(s, n))
				continue;
			/* split() left room: s[n] is '\r', '\n' or spare. */
			return take_line(rd, s, n, out, err);
		}
		if (rd->eof)
			return ART_NDJSON_EOF;
		if (rd->fd < 0)
			return ART_NDJSON_AGAIN;
		if ((r = fill(rd, err)) == -1)
			return ART_NDJSON_IOERR;
		if (r == -2)
			return ART_NDJSON_AGAIN;
		if (r == 0)
			rd->eof = 1;
	}
}

jv
art_ndjson_error(const char *code, const char *message, const char *input,
    size_t len)
{
	jv e = jv_object();

	e = jv_object_set(e, jv_string("type"), jv_string("error"));
	e = jv_object_set(e, jv_string("code"), jv_string(code));
	e = jv_object_set(e, jv_string("message"), jv_string(message));
	if (input != NULL) {
		if (len > ART_NDJSON_EXCERPT)
			len = ART_NDJSON_EXCERPT;
		e = jv_object_set(e, jv_string("input"),
		    jv_string_sized(input, (int)len));
	}
	return e;
}

const char *
art_ndjson_type(const jv *line)
{
	const char *t = art_json_str(line, "type");
	jv nul;

	if (t == NULL)
		return "";
	if (type_holds_nul(line, &nul)) {
		jv_free(nul);
		return "";
	}
	return t;
}

jv
art_ndjson_bad_line(const struct art_ndjson_reader *rd,
    const struct art_err *err)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s:%zu: %s", rd->name, rd->lineno,
	    err->msg);
	return art_ndjson_error(err->code != NULL ? err->code : "bad_line",
	    msg, rd->excerpt, rd->excerpt_len);
}

int
art_ndjson_write(FILE *f, jv v, struct art_err *err)
{
	size_t n;
	char *p = art_json_dump(&v, &n);
	int failed;

	jv_free(v);
	if (p == NULL)
		return art_err_set(err, "nomem", "out of memory");
	p[n] = '\n';
	failed = fwrite(p, 1, n + 1, f) != n + 1 || fflush(f) == EOF ||
	    ferror(f);
	free(p);
	if (failed)
		return art_err_set(err, "io", "write: %s", strerror(errno));
	return 0;
}
