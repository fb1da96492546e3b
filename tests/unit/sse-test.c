/* sse-test - event streams parsed whole, split anywhere, and at their limits */
#include "sse.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jv.h>

#include "tap.h"

#define FIXTURES	"tests/fixtures/sse"
#define MIB		((size_t)1 << 20)
#define STOP		7		/* a callback's "stop" */
#define NONE		((size_t)-1)

/* One event as a callback saw it, copied out of the borrowed one. */
struct got {
	char	*event;
	char	*data;
	size_t	 data_len;
	char	*id;
	long	 retry;
};

/*
 * What one run said: every event, and the results of the calls, as one
 * string (so two runs compare with memcmp), and the events themselves when
 * keep is set.
 */
struct rec {
	char		*log;
	size_t		 len;
	size_t		 cap;
	size_t		 n;		/* events seen */
	size_t		 stop_at;	/* return STOP here; 0: never */
	int		 keep;
	struct got	 ev[64];
};

static const char *
srcdir(void)
{
	const char *d = getenv("top_srcdir");

	return d != NULL && *d != '\0' ? d : ".";
}

static void *
xmalloc(size_t n)
{
	void *p = malloc(n > 0 ? n : 1);

	if (p == NULL)
		abort();
	return p;
}

static char *
dup_bytes(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* The fixture's bytes followed by extra (may be ""); the caller frees it. */
static char *
load(const char *file, const char *extra, size_t *len)
{
	char path[4096], *buf;
	size_t n, x = strlen(extra);
	long sz;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", srcdir(), FIXTURES, file);
	if ((f = fopen(path, "rb")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "sse-test: open %s failed\n", path);
		exit(99);
	}
	buf = xmalloc((size_t)sz + x + 1);
	n = fread(buf, 1, (size_t)sz, f);
	fclose(f);
	memcpy(buf + n, extra, x + 1);
	*len = n + x;
	return buf;
}

static void
log_add(struct rec *r, const char *s, size_t n)
{
	char *p;

	if (r->len + n > r->cap) {
		r->cap = r->cap > 0 ? r->cap : 4096;
		while (r->cap < r->len + n)
			r->cap *= 2;
		if ((p = realloc(r->log, r->cap)) == NULL)
			abort();
		r->log = p;
	}
	memcpy(r->log + r->len, s, n);
	r->len += n;
}

static void __attribute__((format(printf, 2, 3)))
log_printf(struct rec *r, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_add(r, line, (size_t)n < sizeof(line) ? (size_t)n :
	    sizeof(line) - 1);
}

static int
record(const struct art_sse_event *ev, void *ctx)
{
	struct rec *r = ctx;
	struct got *g;

	/* Raw, not printf: a split test logs each event once per cut. */
	log_add(r, ev->event, strlen(ev->event) + 1);
	log_add(r, (const char *)&ev->data_len, sizeof(ev->data_len));
	log_add(r, ev->data, ev->data_len);
	log_add(r, ev->id, strlen(ev->id) + 1);
	log_add(r, (const char *)&ev->retry, sizeof(ev->retry));
	if (r->keep && r->n < sizeof(r->ev) / sizeof(r->ev[0])) {
		g = &r->ev[r->n];
		g->event = dup_bytes(ev->event, strlen(ev->event));
		g->data = dup_bytes(ev->data, ev->data_len);
		g->data_len = ev->data_len;
		g->id = dup_bytes(ev->id, strlen(ev->id));
		g->retry = ev->retry;
	}
	r->n++;
	return r->stop_at != 0 && r->n == r->stop_at ? STOP : 0;
}

static void
rec_clear(struct rec *r)
{
	size_t i;

	for (i = 0; r->keep && i < r->n && i < 64; i++) {
		free(r->ev[i].event);
		free(r->ev[i].data);
		free(r->ev[i].id);
	}
	r->len = 0;
	r->n = 0;
}

static void
rec_free(struct rec *r)
{
	rec_clear(r);
	free(r->log);
}

/*
 * Feeds s[0..cut) as one chunk, then the rest in chunks of step bytes,
 * then finishes, logging any call that did not return 0, then whether the
 * parser was left pending.  Returns what finish returned.
 */
static int
run(const char *s, size_t n, size_t cut, size_t step, struct rec *r)
{
	struct art_sse *sse = art_sse_new(0);
	struct art_err err;
	size_t off, k;
	int rc;

	if ((rc = art_sse_feed(sse, s, cut, record, r, &err)) != 0)
		log_printf(r, "feed %d\n", rc);
	for (off = cut; off < n; off += k) {
		k = n - off < step ? n - off : step;
		if ((rc = art_sse_feed(sse, s + off, k, record, r, &err)) != 0)
			log_printf(r, "feed %d\n", rc);
	}
	rc = art_sse_finish(sse, record, r, &err);
	log_printf(r, "finish %d pending %d\n", rc, art_sse_is_pending(sse));
	art_sse_free(sse);
	return rc;
}

/* Parses a whole string; the caller rec_free()s r. */
static int
parse(const char *s, size_t n, struct rec *r)
{
	memset(r, 0, sizeof(*r));
	r->keep = 1;
	return run(s, n, n, n, r);
}

/* Parses a fixture whole, with extra bytes after it. */
static int
parse_fixture(const char *file, const char *extra, struct rec *r)
{
	size_t n;
	char *s = load(file, extra, &n);
	int rc = parse(s, n, r);

	free(s);
	return rc;
}

static int
events_are(const struct rec *r, const char *const *want, size_t nwant)
{
	size_t i;

	if (r->n != nwant)
		return 0;
	for (i = 0; i < nwant; i++)
		if (strcmp(r->ev[i].event, want[i]) != 0)
			return 0;
	return 1;
}

static int
data_is(const struct got *g, const char *want)
{
	return g->data_len == strlen(want) && memcmp(g->data, want, g->data_len)
	    == 0;
}

static int
data_has(const struct got *g, const char *needle)
{
	return strstr(g->data, needle) != NULL;
}

static size_t
count_done(const struct rec *r)
{
	struct art_sse_event ev = { 0 };
	size_t i, k = 0;

	for (i = 0; i < r->n; i++) {
		ev.data = r->ev[i].data;
		ev.data_len = r->ev[i].data_len;
		k += art_sse_is_done(&ev);
	}
	return k;
}

/* Every fixture, with the events a whole parse gives and how it ends. */
static const struct fixture {
	const char	*file;
	size_t		 nevents;
	int		 finish;	/* 1: an event was cut off */
} fixtures[] = {
	{ "chat-stream-text-with-usage.sse",		34, 0 },
	{ "chat-stream-parallel-tool-calls.sse",	26, 0 },
	{ "chat-stream-finish-length.sse",		 5, 0 },
	{ "chat-stream-midstream-error.sse",		 4, 0 },
	{ "chat-stream-truncated-mid-event.sse",	 5, 1 },
	{ "messages-stream-text.sse",			 8, 1 },
	{ "messages-stream-tool-use.sse",		14, 1 },
	{ "messages-stream-max-tokens-partial-tool-json.sse", 15, 1 },
	{ "messages-stream-error-overloaded.sse",	 1, 0 },
	{ "messages-stream-text-then-error.sse",	 5, 0 },
	{ "comments-retry-id.sse",			 1, 0 },
	{ "crlf-line-endings.sse",			 3, 0 },
	{ "data-without-event.sse",			 1, 0 },
	{ "data-without-space.sse",			 1, 0 },
	{ "event-without-data.sse",			 1, 0 },
	{ "multi-line-data.sse",			 1, 0 },
	{ "multibyte-utf8-text.sse",			 1, 0 },
	{ "openai-done-without-trailing-blank.sse",	 1, 1 },
	{ "openai-non-json-data.sse",			 3, 0 },
	{ "unterminated-final-event.sse",		 1, 1 },
};
#define NFIXTURES	(sizeof(fixtures) / sizeof(fixtures[0]))

static void
test_every_fixture_file_is_covered(void)
{
	char path[4096];
	struct dirent *de;
	size_t i, seen = 0, len;
	int found;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", srcdir(), FIXTURES);
	if (!ok((d = opendir(path)) != NULL, "open %s", path))
		return;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 4 || strcmp(de->d_name + len - 4, ".sse") != 0)
			continue;
		seen++;
		for (i = 0, found = 0; i < NFIXTURES; i++)
			found |= strcmp(fixtures[i].file, de->d_name) == 0;
		ok(found, "fixture %s has expectations here", de->d_name);
	}
	closedir(d);
	ok(seen == NFIXTURES, "all %zu fixtures are on disk (found %zu)",
	    NFIXTURES, seen);
}

static void
test_each_fixture_gives_its_events_and_ending(void)
{
	struct rec r;
	size_t i;
	int rc;

	for (i = 0; i < NFIXTURES; i++) {
		rc = parse_fixture(fixtures[i].file, "", &r);
		ok(r.n == fixtures[i].nevents && rc == fixtures[i].finish,
		    "%s: %zu events, finish %d (got %zu, %d)",
		    fixtures[i].file, fixtures[i].nevents, fixtures[i].finish,
		    r.n, rc);
		rec_free(&r);
	}
}

/* The first cut of s whose two-chunk run logs differently from whole. */
static size_t
first_bad_split(const char *s, size_t n, const struct rec *whole,
    struct rec *r)
{
	size_t cut;

	for (cut = 0; cut <= n; cut++) {
		rec_clear(r);
		run(s, n, cut, n, r);
		if (r->len != whole->len ||
		    memcmp(r->log, whole->log, r->len) != 0)
			return cut;
	}
	return NONE;
}

static void
test_every_split_gives_the_same_events(void)
{
	struct rec whole = { 0 }, r = { 0 };
	size_t i, n, bad;
	char *s, cut[32];

	for (i = 0; i < NFIXTURES; i++) {
		s = load(fixtures[i].file, "", &n);
		rec_clear(&whole);
		run(s, n, n, n, &whole);
		bad = first_bad_split(s, n, &whole, &r);
		ok(bad == NONE, "%s: split in two at each of %zu offsets, "
		    "same events (first differing cut: %s)", fixtures[i].file,
		    n + 1, bad == NONE ? "none" : (snprintf(cut, sizeof(cut),
		    "%zu", bad), cut));
		rec_clear(&r);
		run(s, n, 0, 1, &r);
		ok(r.len == whole.len && memcmp(r.log, whole.log, r.len) == 0,
		    "%s: one byte at a time, same events", fixtures[i].file);
		free(s);
	}
	rec_free(&whole);
	rec_free(&r);
}

static void
test_openai_streams_end_with_one_done(void)
{
	static const char *const files[] = {
		"chat-stream-text-with-usage.sse",
		"chat-stream-parallel-tool-calls.sse",
		"chat-stream-finish-length.sse",
	};
	struct rec r;
	size_t i, k;
	int plain;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		parse_fixture(files[i], "", &r);
		for (k = 0, plain = 1; k < r.n; k++)
			plain &= strcmp(r.ev[k].event, "message") == 0 &&
			    r.ev[k].id[0] == '\0' && r.ev[k].retry == -1;
		ok(plain, "%s: every event is a plain message", files[i]);
		ok(r.n > 0 && count_done(&r) == 1 &&
		    data_is(&r.ev[r.n - 1], "[DONE]"),
		    "%s: one [DONE], the last event", files[i]);
		rec_free(&r);
	}
}

static void
test_openai_usage_chunk_comes_before_done(void)
{
	struct rec r;
	const struct got *u;

	parse_fixture("chat-stream-text-with-usage.sse", "", &r);
	u = &r.ev[32];
	ok(r.n == 34 && data_has(u, "\"choices\":[]") &&
	    data_has(u, "\"usage\":{\"prompt_tokens\":14"),
	    "the 33rd of 34 events is the usage chunk, with no choices");
	ok(data_has(&r.ev[31], "\"finish_reason\":\"stop\""),
	    "the one before it carries finish_reason stop");
	ok(data_has(&r.ev[0], "\"role\":\"assistant\"") &&
	    r.ev[0].data[0] == '{', "the first carries the role, and the "
	    "space after data: is gone");
	rec_free(&r);
}

static void
test_openai_midstream_error_is_the_last_event(void)
{
	struct rec r;
	int rc = parse_fixture("chat-stream-midstream-error.sse", "", &r);

	ok(r.n == 4 && strncmp(r.ev[3].data, "{\"error\":", 9) == 0 &&
	    data_has(&r.ev[3], "server_error"),
	    "the fourth event is the error, after three chunks");
	ok(count_done(&r) == 0 && rc == 0,
	    "no [DONE], yet the stream ended at an event boundary");
	rec_free(&r);
}

static void
test_openai_truncated_mid_event_is_pending(void)
{
	struct rec r;
	int rc = parse_fixture("chat-stream-truncated-mid-event.sse", "", &r);
	size_t i;
	int whole = 1;
	jv v;

	for (i = 0; i < r.n; i++) {
		v = jv_parse_sized(r.ev[i].data, (int)r.ev[i].data_len);
		whole &= jv_get_kind(v) == JV_KIND_OBJECT;
		jv_free(v);
	}
	ok(r.n == 5 && whole, "five whole JSON chunks come out");
	ok(rc == 1, "finish reports the half event as dropped");
	rec_free(&r);
}

static void
test_anthropic_text_events_in_order(void)
{
	static const char *const want[] = {
		"message_start", "content_block_start", "ping",
		"content_block_delta", "content_block_delta",
		"content_block_delta", "content_block_stop", "message_delta",
		"message_stop",
	};
	struct rec r;
	int rc;

	rc = parse_fixture("messages-stream-text.sse", "", &r);
	ok(events_are(&r, want, 8) && rc == 1, "as recorded (no final blank "
	    "line): message_start..message_delta, message_stop dropped");
	rec_free(&r);
	rc = parse_fixture("messages-stream-text.sse", "\n\n", &r);
	ok(events_are(&r, want, 9) && rc == 0,
	    "with the blank line: message_start..message_stop, not pending");
	ok(data_is(&r.ev[2], "{\"type\": \"ping\"}"), "the ping's data");
	ok(data_has(&r.ev[4], "\" there\""), "a delta's text keeps its space");
	ok(data_has(&r.ev[7], "\"stop_reason\":\"end_turn\""),
	    "message_delta says end_turn");
	rec_free(&r);
}

static void
test_anthropic_tool_use_ends_with_message_stop(void)
{
	struct rec r;
	int rc = parse_fixture("messages-stream-tool-use.sse", "\n\n", &r);

	ok(r.n == 15 && rc == 0 && strcmp(r.ev[14].event, "message_stop")
	    == 0 && strcmp(r.ev[0].event, "message_start") == 0,
	    "tool use: 15 events, message_start to message_stop");
	ok(data_has(&r.ev[13], "\"stop_reason\":\"tool_use\""),
	    "message_delta says tool_use");
	rec_free(&r);
}

static void
test_anthropic_max_tokens_keeps_inner_spaces(void)
{
	struct rec r;
	size_t i;
	int delta = 0;

	parse_fixture("messages-stream-max-tokens-partial-tool-json.sse",
	    "\n\n", &r);
	for (i = 0; i < r.n; i++)
		if (strcmp(r.ev[i].event, "message_delta") == 0)
			delta = data_has(&r.ev[i], "\"max_tokens\"") &&
			    data_has(&r.ev[i], "124}    }");
	ok(r.n == 16 && delta,
	    "max tokens: message_delta says max_tokens, spaces kept");
	ok(r.n == 16 && data_is(&r.ev[15], "{\"type\":\"message_stop\" }"),
	    "message_stop's data keeps its space");
	rec_free(&r);
}

static void
test_anthropic_error_events(void)
{
	static const char *const want[] = {
		"message_start", "content_block_start", "ping",
		"content_block_delta", "error",
	};
	struct rec r;

	parse_fixture("messages-stream-error-overloaded.sse", "", &r);
	ok(r.n == 1 && strcmp(r.ev[0].event, "error") == 0 &&
	    data_has(&r.ev[0], "\"overloaded_error\""),
	    "an error event alone: event error, overloaded_error");
	rec_free(&r);
	parse_fixture("messages-stream-text-then-error.sse", "", &r);
	ok(events_are(&r, want, 5), "an error event after partial output");
	rec_free(&r);
}

static void
test_crlf_fixture_has_no_cr_in_its_events(void)
{
	static const char *const want[] = {
		"message_start", "content_block_delta", "message_stop",
	};
	struct rec r;
	size_t i;
	int cr = 0;

	parse_fixture("crlf-line-endings.sse", "", &r);
	for (i = 0; i < r.n; i++)
		cr |= memchr(r.ev[i].data, '\r', r.ev[i].data_len) != NULL ||
		    strchr(r.ev[i].event, '\r') != NULL;
	ok(events_are(&r, want, 3) && !cr, "CRLF: three events, no '\\r'");
	ok(data_is(&r.ev[2], "{\"type\":\"message_stop\"}"),
	    "CRLF: the last event's data");
	rec_free(&r);
}

static void
test_comments_retry_and_id(void)
{
	struct rec r;

	parse_fixture("comments-retry-id.sse", "", &r);
	ok(r.n == 1 && strcmp(r.ev[0].event, "content_block_delta") == 0,
	    "comments and a lone retry dispatch nothing; one event");
	ok(strcmp(r.ev[0].id, "42") == 0 && r.ev[0].retry == 3000,
	    "the event carries id 42 and retry 3000");
	rec_free(&r);
}

static void
test_multi_line_data_joins_with_newline(void)
{
	struct rec r;
	jv v, t;

	parse_fixture("multi-line-data.sse", "", &r);
	ok(r.n == 1 && data_is(&r.ev[0], "{\n\"type\":\n\n\n\"ping\"}"),
	    "five data lines, two of them empty, join with '\\n'");
	v = jv_parse_sized(r.ev[0].data, (int)r.ev[0].data_len);
	t = jv_get_kind(v) == JV_KIND_OBJECT ?
	    jv_object_get(jv_copy(v), jv_string("type")) : jv_invalid();
	ok(jv_get_kind(t) == JV_KIND_STRING &&
	    strcmp(jv_string_value(t), "ping") == 0,
	    "the joined data is the JSON {\"type\":\"ping\"}");
	jv_free(t);
	jv_free(v);
	rec_free(&r);
}

static void
test_data_without_space(void)
{
	struct rec r;

	parse_fixture("data-without-space.sse", "", &r);
	ok(r.n == 1 && strcmp(r.ev[0].event, "content_block_delta") == 0 &&
	    strncmp(r.ev[0].data, "{\"type\"", 7) == 0,
	    "event:x and data:{...} with no space parse");
	rec_free(&r);
}

static void
test_multibyte_text_is_intact(void)
{
	struct rec r;

	parse_fixture("multibyte-utf8-text.sse", "", &r);
	ok(r.n == 1 && data_has(&r.ev[0], "\"text\":\"\xd0\xb8\xd0\xb7"
	    "\xd0\xb2\xd0\xb5\xd1\x81\xd1\x82\xd0\xbd\xd0\xb8 \xe6\x97\xa5"
	    "\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x8e\x89\"}}"),
	    "Cyrillic, CJK and an emoji come out byte for byte");
	rec_free(&r);
}

static void
test_event_without_data_is_not_dispatched(void)
{
	struct rec r;

	parse_fixture("event-without-data.sse", "", &r);
	ok(r.n == 1 && strcmp(r.ev[0].event, "message_stop") == 0,
	    "event: ping with no data is not dispatched; message_stop is");
	rec_free(&r);
	parse_fixture("data-without-event.sse", "", &r);
	ok(r.n == 1 && strcmp(r.ev[0].event, "message") == 0 &&
	    data_is(&r.ev[0], "{\"foo\":true}"),
	    "data with no event is a \"message\"");
	rec_free(&r);
}

static void
test_unterminated_final_event_is_dropped(void)
{
	struct rec r;
	int rc;

	rc = parse_fixture("unterminated-final-event.sse", "", &r);
	ok(r.n == 1 && strcmp(r.ev[0].event, "message_start") == 0 &&
	    rc == 1, "message_start only; message_stop dropped, pending");
	rec_free(&r);
	rc = parse_fixture("openai-done-without-trailing-blank.sse", "", &r);
	ok(r.n == 1 && count_done(&r) == 0 && rc == 1,
	    "a [DONE] with no blank line after it is not dispatched");
	rec_free(&r);
	rc = parse_fixture("openai-done-without-trailing-blank.sse", "\n",
	    &r);
	ok(r.n == 1 && rc == 1, "nor with only its line ended");
	rec_free(&r);
}

static void
test_non_json_data_is_passed_through(void)
{
	struct rec r;

	parse_fixture("openai-non-json-data.sse", "", &r);
	ok(r.n == 3 && data_is(&r.ev[1], "{this is not json") &&
	    art_sse_is_done(&(struct art_sse_event){ .data = r.ev[2].data,
	    .data_len = r.ev[2].data_len }),
	    "the parser does not judge data: non-JSON, then [DONE]");
	rec_free(&r);
}

/* Feeds each string of pieces in turn to one parser; returns finish. */
static int
feed_pieces(const char *const *pieces, size_t npieces, struct rec *r)
{
	struct art_sse *sse = art_sse_new(0);
	struct art_err err;
	size_t i;
	int rc;

	memset(r, 0, sizeof(*r));
	r->keep = 1;
	for (i = 0; i < npieces; i++)
		art_sse_feed(sse, pieces[i], strlen(pieces[i]), record, r,
		    &err);
	rc = art_sse_finish(sse, NULL, NULL, &err);
	art_sse_free(sse);
	return rc;
}

static void
test_crlf_split_across_chunks_is_one_line_end(void)
{
	static const char *const a[] = {
		"event: a\r", "\ndata: 1\r", "\ndata: 2\r", "\n\r", "\n",
	};
	static const char *const b[] = { "data: x\r", "\n", "\r", "\n" };
	struct rec r;
	int rc;

	rc = feed_pieces(a, 5, &r);
	ok(r.n == 1 && strcmp(r.ev[0].event, "a") == 0 &&
	    data_is(&r.ev[0], "1\n2") && rc == 0,
	    "\\r | \\n is one line end: one event a, data \"1\\n2\"");
	rec_free(&r);
	rc = feed_pieces(b, 4, &r);
	ok(r.n == 1 && data_is(&r.ev[0], "x") && rc == 0,
	    "\\r | \\n | \\r | \\n is two line ends: one event");
	rec_free(&r);
}

static void
test_lone_cr_and_mixed_line_ends(void)
{
	static const char *const a[] = { "data: a\rdata: b\r\revent: e\n" };
	static const char *const b[] = { "data: c\r\n\ndata: d\n\r\n" };
	struct rec r;

	feed_pieces(a, 1, &r);
	ok(r.n == 1 && data_is(&r.ev[0], "a\nb"), "lone '\\r' ends lines");
	rec_free(&r);
	feed_pieces(b, 1, &r);
	ok(r.n == 2 && data_is(&r.ev[0], "c") && data_is(&r.ev[1], "d"),
	    "\\r\\n then \\n, and \\n then \\r\\n, each end an event");
	rec_free(&r);
}

static void
test_bom_is_skipped_only_at_the_start(void)
{
	static const char *const whole[] = { "\357\273\277data: x\n\n" };
	static const char *const split[] = {
		"\357", "\273", "\277data", ": x\n\n",
	};
	static const char *const twice[] = {
		"\357\273\277\357\273\277data: x\n\ndata: y\n\n",
	};
	static const char *const comment[] = { "\357\273\277: hi\n" };
	static const char *const half[] = { "\357\273" };
	static const char *const not_bom[] = { "\357\273data: x\n\n" };
	struct rec r;
	int rc;

	feed_pieces(whole, 1, &r);
	ok(r.n == 1 && data_is(&r.ev[0], "x"), "a BOM at the start is skipped");
	rec_free(&r);
	feed_pieces(split, 4, &r);
	ok(r.n == 1 && data_is(&r.ev[0], "x"), "also fed a byte at a time");
	rec_free(&r);
	feed_pieces(twice, 1, &r);
	ok(r.n == 1 && data_is(&r.ev[0], "y"),
	    "a second BOM is part of a field name, so that line is ignored");
	rec_free(&r);
	rc = feed_pieces(comment, 1, &r);
	ok(r.n == 0 && rc == 0, "a comment right after the BOM is a comment");
	rec_free(&r);
	rc = feed_pieces(half, 1, &r);
	ok(r.n == 0 && rc == 1, "a stream cut inside the BOM is pending");
	rec_free(&r);
	feed_pieces(not_bom, 1, &r);
	ok(r.n == 0, "two BOM bytes then text open an unknown field");
	rec_free(&r);
}

static void
test_field_syntax(void)
{
	static const char *const bare[] = { "data\n\ndata\ndata\n\n" };
	static const char *const spaces[] = { "data:  x\ndata:y \n\n" };
	static const char *const colons[] = { "data: a: b\n\n" };
	static const char *const names[] = {
		"foo: bar\nDATA: no\ndata : no\nevent:\ndata: y\n\n",
	};
	static const char *const nul[] = { "data: a" };
	struct rec r;

	feed_pieces(bare, 1, &r);
	ok(r.n == 2 && data_is(&r.ev[0], "") && data_is(&r.ev[1], "\n"),
	    "\"data\" alone is an empty value, and it does dispatch");
	rec_free(&r);
	feed_pieces(spaces, 1, &r);
	ok(r.n == 1 && data_is(&r.ev[0], " x\ny "),
	    "one space after the colon is removed, no more, none at the end");
	rec_free(&r);
	feed_pieces(colons, 1, &r);
	ok(r.n == 1 && data_is(&r.ev[0], "a: b"), "later colons are value");
	rec_free(&r);
	feed_pieces(names, 1, &r);
	ok(r.n == 1 && data_is(&r.ev[0], "y") &&
	    strcmp(r.ev[0].event, "message") == 0,
	    "unknown, upper-case and spaced field names are ignored; "
	    "an empty event name is \"message\"");
	rec_free(&r);
	memset(&r, 0, sizeof(r));
	r.keep = 1;
	{
		struct art_sse *sse = art_sse_new(0);
		struct art_err err;

		art_sse_feed(sse, nul[0], 7, record, &r, &err);
		art_sse_feed(sse, "\0b\n\n", 4, record, &r, &err);
		art_sse_free(sse);
	}
	ok(r.n == 1 && r.ev[0].data_len == 3 &&
	    memcmp(r.ev[0].data, "a\0b", 3) == 0, "a NUL in data is kept");
	rec_free(&r);
}

static void
test_event_type_resets_after_each_event(void)
{
	static const char *const a[] = {
		"event: a\n\ndata: 1\n\nevent: b\ndata: 2\n\ndata: 3\n\n",
	};
	static const char *const want[] = { "message", "b", "message" };
	struct rec r;

	feed_pieces(a, 1, &r);
	ok(events_are(&r, want, 3), "an event name lasts one event, and an "
	    "event with no data drops its name");
	rec_free(&r);
}

static void
test_id_persists_and_nul_id_is_ignored(void)
{
	static const char id_nul[] = "id: x\0y\ndata: c\n\n";
	struct art_sse *sse = art_sse_new(0);
	struct art_err err;
	struct rec r = { .keep = 1 };

	art_sse_feed(sse, "data: 0\n\nid: 1\ndata: a\n\ndata: b\n\n", 33,
	    record, &r, &err);
	art_sse_feed(sse, id_nul, sizeof(id_nul) - 1, record, &r, &err);
	art_sse_feed(sse, "id\ndata: d\n\nid: 2\n\ndata: e\n\n", 28, record,
	    &r, &err);
	art_sse_free(sse);
	ok(r.n == 6 && strcmp(r.ev[0].id, "") == 0 &&
	    strcmp(r.ev[1].id, "1") == 0 && strcmp(r.ev[2].id, "1") == 0,
	    "no id is \"\"; an id lasts to the next events");
	ok(r.n == 6 && strcmp(r.ev[3].id, "1") == 0, "an id with a NUL is "
	    "ignored");
	ok(r.n == 6 && strcmp(r.ev[4].id, "") == 0, "\"id\" alone clears it");
	ok(r.n == 6 && strcmp(r.ev[5].id, "2") == 0,
	    "an id in an event with no data still counts");
	rec_free(&r);
}

static void
test_retry_takes_digits_only(void)
{
	static const char *const a[] = {
		"data: a\n\nretry: 1500\ndata: b\n\n"
		"retry: 12a\nretry:\nretry: -5\nretry: 1.5\nretry:  7\n"
		"retry: 99999999999999999999999\ndata: c\n\n"
		"retry\nretry: 0\ndata: d\n\n",
	};
	struct rec r;

	feed_pieces(a, 1, &r);
	ok(r.n == 4 && r.ev[0].retry == -1 && r.ev[1].retry == 1500,
	    "no retry is -1; retry: 1500 sets it");
	ok(r.n == 4 && r.ev[2].retry == 1500, "letters, empty, a sign, a "
	    "point, a second space and overflow are all ignored");
	ok(r.n == 4 && r.ev[3].retry == 0, "retry: 0 sets it to 0");
	rec_free(&r);
}

static void
test_callback_can_stop_the_feed(void)
{
	struct art_sse *sse = art_sse_new(0);
	struct art_err err;
	struct rec r = { .keep = 1, .stop_at = 1 };
	int rc;

	rc = art_sse_feed(sse, "data: 1\n\ndata: 2\n\n", 18, record, &r,
	    &err);
	ok(rc == STOP && r.n == 1 && data_is(&r.ev[0], "1"),
	    "a callback's non-zero return is returned and stops at once");
	art_sse_free(sse);
	rec_free(&r);
}

static void
test_done_is_exact(void)
{
	struct art_sse_event ev = { .event = "message", .id = "" };

	ev.data = "[DONE]";
	ev.data_len = 6;
	ok(art_sse_is_done(&ev), "[DONE] is done");
	ev.data = "[DONE] ";
	ev.data_len = 7;
	ok(!art_sse_is_done(&ev), "[DONE] with a space is not");
	ev.data = "[DONE]\n";
	ev.data_len = 7;
	ok(!art_sse_is_done(&ev), "[DONE] and a newline is not");
	ev.data = "[done]";
	ev.data_len = 6;
	ok(!art_sse_is_done(&ev), "[done] is not");
}

static void
test_pending_follows_event_boundaries(void)
{
	struct art_sse *sse = art_sse_new(0);
	struct art_err err;

	ok(!art_sse_is_pending(sse) && art_sse_finish(sse, NULL, NULL, &err)
	    == 0, "a fresh parser is not pending");
	art_sse_feed(sse, "data: x", 7, NULL, NULL, &err);
	ok(art_sse_is_pending(sse), "part of a line is pending");
	art_sse_feed(sse, "\n", 1, NULL, NULL, &err);
	ok(art_sse_is_pending(sse), "a field line without its blank line is");
	art_sse_feed(sse, "\n", 1, NULL, NULL, &err);
	ok(!art_sse_is_pending(sse), "after the blank line it is not");
	art_sse_feed(sse, ": keep-alive", 12, NULL, NULL, &err);
	ok(art_sse_is_pending(sse), "part of a comment is pending");
	art_sse_feed(sse, "\r", 1, NULL, NULL, &err);
	ok(!art_sse_is_pending(sse) && art_sse_finish(sse, NULL, NULL, &err)
	    == 0, "a whole comment is not");
	art_sse_feed(sse, "event: ping\n\n", 13, NULL, NULL, &err);
	ok(!art_sse_is_pending(sse), "nor an event dropped for no data");
	art_sse_feed(sse, "retry: 5\n", 9, NULL, NULL, &err);
	ok(art_sse_is_pending(sse) && art_sse_finish(sse, NULL, NULL, &err)
	    == 1, "any field line opens an event");
	art_sse_free(sse);
	/* Not a point: it can only fail by crashing, which fails the
	 * test's plan. */
	art_sse_free(NULL);
}

/* s of n bytes: "data: " then 'x's (n >= 6); the caller frees it. */
static char *
data_line(size_t n)
{
	char *s = xmalloc(n + 1);

	memcpy(s, "data: ", 6);
	memset(s + 6, 'x', n - 6);
	s[n] = '\0';
	return s;
}

/* Feeds s (n bytes) whole, or a byte at a time; returns the first -1. */
static int
feed_all(struct art_sse *sse, const char *s, size_t n, int bytewise,
    struct art_err *err)
{
	size_t i;

	if (!bytewise)
		return art_sse_feed(sse, s, n, NULL, NULL, err);
	for (i = 0; i < n; i++)
		if (art_sse_feed(sse, s + i, 1, NULL, NULL, err) == -1)
			return -1;
	return 0;
}

static void
test_line_over_the_limit_is_an_error(void)
{
	struct art_sse *sse;
	struct art_err err;
	char *s;
	int bw;

	for (bw = 0; bw < 2; bw++) {
		sse = art_sse_new(64);
		s = data_line(64);
		ok(feed_all(sse, s, 64, bw, &err) == 0 &&
		    art_sse_feed(sse, "\n\n", 2, NULL, NULL, &err) == 0,
		    "a line of exactly the limit is fine (%s)",
		    bw ? "bytewise" : "whole");
		free(s);
		s = data_line(65);
		ok(feed_all(sse, s, 65, bw, &err) == -1 &&
		    art_err_is(&err, "sse_too_large") &&
		    strstr(err.msg, "64 bytes") != NULL,
		    "one byte over is sse_too_large (%s): %s",
		    bw ? "bytewise" : "whole", err.msg);
		free(s);
		art_err_clear(&err);
		ok(art_sse_feed(sse, "\n\n", 2, NULL, NULL, &err) == -1 &&
		    art_err_is(&err, "sse_too_large") &&
		    art_sse_finish(sse, NULL, NULL, &err) == -1,
		    "after it every call fails the same way");
		art_sse_free(sse);
	}
}

static void
test_event_data_over_the_limit_is_an_error(void)
{
	struct art_sse *sse = art_sse_new(16);
	struct art_err err;
	struct rec r = { .keep = 1 };
	const char *fits = "data: 0123456789\ndata: 12345\n\n";
	const char *over = "data: 0123456789\ndata: 123456\n";

	ok(art_sse_feed(sse, fits, strlen(fits), record, &r, &err) == 0 &&
	    r.n == 1 && r.ev[0].data_len == 16,
	    "data of exactly the limit, over two lines, is fine");
	ok(art_sse_feed(sse, over, strlen(over), record, &r, &err) == -1 &&
	    art_err_is(&err, "sse_too_large") && r.n == 1,
	    "one byte more is sse_too_large: %s", err.msg);
	art_sse_free(sse);
	rec_free(&r);
	sse = art_sse_new(16);
	ok(art_sse_feed(sse, fits, 29, NULL, NULL, &err) == 0 &&
	    art_sse_feed(sse, "data:\n", 6, NULL, NULL, &err) == -1 &&
	    art_err_is(&err, "sse_too_large"),
	    "an empty data line after a full buffer is one byte over");
	art_sse_free(sse);
}

static void
test_comments_are_not_held(void)
{
	struct art_sse *sse = art_sse_new(16);
	struct art_err err;
	struct rec r = { .keep = 1 };
	char *big = xmalloc(MIB);
	size_t i;
	int rc = 0;

	memset(big, 'c', MIB);
	big[0] = ':';
	for (i = 0; i < 4 && rc == 0; i++)
		rc = art_sse_feed(sse, big, MIB, record, &r, &err);
	if (rc == 0)
		rc = art_sse_feed(sse, "\ndata: ok\n\n", 11, record, &r, &err);
	ok(rc == 0 && r.n == 1 && data_is(&r.ev[0], "ok"),
	    "a 4 MiB comment under a 16-byte limit is skipped, not held");
	free(big);
	art_sse_free(sse);
	rec_free(&r);
}

static void
test_default_limit_takes_a_large_event(void)
{
	struct art_sse *sse = art_sse_new(0);
	struct art_err err;
	struct rec r = { .keep = 1 };
	char *s = data_line(MIB + 6);

	ok(art_sse_feed(sse, s, MIB + 6, record, &r, &err) == 0 &&
	    art_sse_feed(sse, "\n\n", 2, record, &r, &err) == 0 &&
	    r.n == 1 && r.ev[0].data_len == MIB,
	    "with limit 0 (64 MiB) a 1 MiB event is fine");
	free(s);
	art_sse_free(sse);
	rec_free(&r);
}

static void
test_empty_feed_is_nothing(void)
{
	struct art_sse *sse = art_sse_new(0);
	struct art_err err;

	ok(art_sse_feed(sse, NULL, 0, NULL, NULL, &err) == 0 &&
	    !art_sse_is_pending(sse), "feeding no bytes does nothing");
	art_sse_free(sse);
}

int
main(void)
{
	test_every_fixture_file_is_covered();
	test_each_fixture_gives_its_events_and_ending();
	test_every_split_gives_the_same_events();

	test_openai_streams_end_with_one_done();
	test_openai_usage_chunk_comes_before_done();
	test_openai_midstream_error_is_the_last_event();
	test_openai_truncated_mid_event_is_pending();
	test_anthropic_text_events_in_order();
	test_anthropic_tool_use_ends_with_message_stop();
	test_anthropic_max_tokens_keeps_inner_spaces();
	test_anthropic_error_events();
	test_crlf_fixture_has_no_cr_in_its_events();
	test_comments_retry_and_id();
	test_multi_line_data_joins_with_newline();
	test_data_without_space();
	test_multibyte_text_is_intact();
	test_event_without_data_is_not_dispatched();
	test_unterminated_final_event_is_dropped();
	test_non_json_data_is_passed_through();

	test_crlf_split_across_chunks_is_one_line_end();
	test_lone_cr_and_mixed_line_ends();
	test_bom_is_skipped_only_at_the_start();
	test_field_syntax();
	test_event_type_resets_after_each_event();
	test_id_persists_and_nul_id_is_ignored();
	test_retry_takes_digits_only();
	test_callback_can_stop_the_feed();
	test_done_is_exact();
	test_pending_follows_event_boundaries();

	test_line_over_the_limit_is_an_error();
	test_event_data_over_the_limit_is_an_error();
	test_comments_are_not_held();
	test_default_limit_takes_a_large_event();
	test_empty_feed_is_nothing();
	return tap_done();
}
