/* sse.c - Server-Sent Events: an event stream parsed as its bytes arrive
 *
 * The parser holds only what the rules need between chunks: the line being
 * read, the event's data and type buffers, the last event ID, and two bits
 * of position (how much of a BOM has been seen, and whether the last line
 * ended in '\r', so that a '\n' opening the next chunk belongs to it).
 * Each chunk is cut at line ends and the pieces appended to the line, so
 * the cost is linear in the bytes however they are chunked.
 */
#include "sse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

#define BOM		"\xEF\xBB\xBF"
#define BOM_LEN		3

struct art_sse {
	size_t		 max_event;
	struct art_buf	 line;		/* the line so far, no line end */
	struct art_buf	 data;		/* data lines, each + '\n' */
	struct art_buf	 type;		/* the event type buffer */
	struct art_buf	 id;		/* the last event ID buffer */
	long		 retry;		/* -1 until a valid "retry" */
	int		 bom;		/* BOM bytes seen; BOM_LEN: past */
	bool		 after_cr;	/* last line ended in '\r' */
	bool		 in_line;	/* a byte of this line came */
	bool		 in_comment;	/* this line starts with ':' */
	bool		 fields;	/* field lines since a blank */
	bool		 failed;
	struct art_err	 why;		/* the failure, for later calls */
};

struct art_sse *
art_sse_new(size_t max_event)
{
	struct art_sse *sse;

	if ((sse = calloc(1, sizeof(*sse))) == NULL)
		return NULL;
	sse->max_event = max_event > 0 ? max_event : ART_SSE_MAX_EVENT;
	sse->retry = -1;
	return sse;
}

void
art_sse_free(struct art_sse *sse)
{
	if (sse == NULL)
		return;
	art_buf_release(&sse->line);
	art_buf_release(&sse->data);
	art_buf_release(&sse->type);
	art_buf_release(&sse->id);
	free(sse);
}

/* Records e as the parser's failure, so later calls report it too. */
static int
fail(struct art_sse *sse, const struct art_err *e)
{
	sse->failed = true;
	sse->why = *e;
	return -1;
}

static int
too_large(struct art_sse *sse, const char *what, struct art_err *err)
{
	struct art_err e;

	art_err_set(&e, "sse_too_large", "read event stream: %s longer than "
	    "%zu bytes", what, sse->max_event);
	if (err != NULL)
		*err = e;
	return fail(sse, &e);
}

static int
grow(struct art_sse *sse, struct art_buf *b, const char *s, size_t n,
    struct art_err *err)
{
	struct art_err e;

	if (art_buf_add(b, s, n) == 0)
		return 0;
	art_err_set(&e, "nomem", "out of memory");
	if (err != NULL)
		*err = e;
	return fail(sse, &e);
}

/* Appends n bytes to the current line; a comment line is not kept. */
static int
take(struct art_sse *sse, const char *p, size_t n, struct art_err *err)
{
	if (n == 0)
		return 0;
	if (!sse->in_line && p[0] == ':')
		sse->in_comment = true;
	sse->in_line = true;
	if (sse->in_comment)
		return 0;
	if (n > sse->max_event - sse->line.len)
		return too_large(sse, "line", err);
	return grow(sse, &sse->line, p, n, err);
}

/* Consumes the BOM bytes at the start of the stream from *p. */
static int
skip_bom(struct art_sse *sse, const char **p, size_t *n, struct art_err *err)
{
	int had;

	while (sse->bom < BOM_LEN && *n > 0) {
		if (**p == BOM[sse->bom]) {
			sse->bom++;
			(*p)++;
			(*n)--;
			continue;
		}
		/* Not a BOM after all: what matched opens the first line. */
		had = sse->bom;
		sse->bom = BOM_LEN;
		if (take(sse, BOM, (size_t)had, err) == -1)
			return -1;
	}
	return 0;
}

static bool
field_is(const char *name, size_t len, const char *want)
{
	return len == strlen(want) && memcmp(name, want, len) == 0;
}

/* "retry" takes only ASCII digits; anything else, or overflow, is ignored. */
static void
set_retry(struct art_sse *sse, const char *v, size_t n)
{
	long r = 0;
	size_t i;
	int d;

	if (n == 0)
		return;
	for (i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return;
		d = v[i] - '0';
		if (r > (LONG_MAX - d) / 10)
			return;
		r = r * 10 + d;
	}
	sse->retry = r;
}

static int
field(struct art_sse *sse, const char *s, size_t len, struct art_err *err)
{
	const char *colon = memchr(s, ':', len), *v;
	size_t nlen = colon != NULL ? (size_t)(colon - s) : len, vlen;

	v = colon != NULL ? colon + 1 : s + len;
	vlen = len - (size_t)(v - s);
	if (vlen > 0 && *v == ' ') {
		v++;
		vlen--;
	}
	sse->fields = true;
	if (field_is(s, nlen, "event")) {
		sse->type.len = 0;
		return grow(sse, &sse->type, v, vlen, err);
	}
	if (field_is(s, nlen, "data")) {
		/* data.len counts the '\n' that joins this line on */
		if (sse->data.len > sse->max_event ||
		    vlen > sse->max_event - sse->data.len)
			return too_large(sse, "event data", err);
		if (grow(sse, &sse->data, v, vlen, err) == -1)
			return -1;
		return grow(sse, &sse->data, "\n", 1, err);
	}
	if (field_is(s, nlen, "id")) {
		if (memchr(v, '\0', vlen) != NULL)
			return 0;
		sse->id.len = 0;
		return grow(sse, &sse->id, v, vlen, err);
	}
	if (field_is(s, nlen, "retry"))
		set_retry(sse, v, vlen);
	return 0;
}

static int
dispatch(struct art_sse *sse, art_sse_event_fn *fn, void *ctx)
{
	struct art_sse_event ev;
	int rc = 0;

	sse->fields = false;
	if (sse->data.len == 0) {
		sse->type.len = 0;
		return 0;
	}
	sse->data.p[--sse->data.len] = '\0';	/* the last line's '\n' */
	ev.event = sse->type.len > 0 ? sse->type.p : "message";
	ev.data = sse->data.p;
	ev.data_len = sse->data.len;
	ev.id = sse->id.len > 0 ? sse->id.p : "";
	ev.retry = sse->retry;
	if (fn != NULL)
		rc = fn(&ev, ctx);
	sse->data.len = 0;
	sse->type.len = 0;
	return rc;
}

/* The current line has ended: a blank line dispatches, others are fields. */
static int
end_line(struct art_sse *sse, art_sse_event_fn *fn, void *ctx,
    struct art_err *err)
{
	bool blank = !sse->in_line, comment = sse->in_comment;
	int rc = 0;

	if (!blank && !comment)
		rc = field(sse, sse->line.p, sse->line.len, err);
	sse->line.len = 0;
	sse->in_line = false;
	sse->in_comment = false;
	if (rc != 0)
		return rc;
	return blank ? dispatch(sse, fn, ctx) : 0;
}

/* The bytes before the first '\r' or '\n' in p[0..n). */
static size_t
line_span(const char *p, size_t n)
{
	const char *lf = memchr(p, '\n', n), *cr;

	if (lf != NULL)
		n = (size_t)(lf - p);
	cr = memchr(p, '\r', n);
	return cr != NULL ? (size_t)(cr - p) : n;
}

static int
failed(const struct art_sse *sse, struct art_err *err)
{
	if (err != NULL)
		*err = sse->why;
	return -1;
}

int
art_sse_feed(struct art_sse *sse, const char *p, size_t n,
    art_sse_event_fn *fn, void *ctx, struct art_err *err)
{
	size_t k;
	int rc;

	if (sse->failed)
		return failed(sse, err);
	if (n == 0)
		return 0;
	if (sse->bom < BOM_LEN && skip_bom(sse, &p, &n, err) == -1)
		return -1;
	while (n > 0) {
		if (sse->after_cr) {
			sse->after_cr = false;
			if (*p == '\n') {
				p++;
				n--;
				continue;
			}
		}
		k = line_span(p, n);
		if (take(sse, p, k, err) == -1)
			return -1;
		if (k == n)
			break;
		sse->after_cr = p[k] == '\r';
		p += k + 1;
		n -= k + 1;
		if ((rc = end_line(sse, fn, ctx, err)) != 0)
			return rc;
	}
	return 0;
}

int
art_sse_finish(struct art_sse *sse, art_sse_event_fn *fn, void *ctx,
    struct art_err *err)
{
	(void)fn;
	(void)ctx;
	if (sse->failed)
		return failed(sse, err);
	return art_sse_is_pending(sse) ? 1 : 0;
}

bool
art_sse_is_pending(const struct art_sse *sse)
{
	return (sse->bom > 0 && sse->bom < BOM_LEN) || sse->in_line ||
	    sse->fields;
}

bool
art_sse_is_done(const struct art_sse_event *ev)
{
	return ev->data_len == 6 && memcmp(ev->data, "[DONE]", 6) == 0;
}
