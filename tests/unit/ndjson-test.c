/* ndjson-test - splitting, checking and parsing lines; error lines; UTF-8 */
#include "ndjson.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "utf8.h"
#include "tap.h"

#define FIXTURES	"tests/fixtures/ndjson-bad-input"
#define MIB		((size_t)1 << 20)

/* What one call of art_ndjson_next() should give. */
struct want {
	enum art_ndjson_status	 st;
	const char		*code;		/* BAD only */
	size_t			 lineno;
};

/* What one call did give, kept to compare two runs. */
struct got {
	enum art_ndjson_status	 st;
	const char		*code;
	size_t			 lineno;
	char			*text;		/* canonical value or error */
};

static const char *
status_name(enum art_ndjson_status st)
{
	switch (st) {
	case ART_NDJSON_OK:	return "OK";
	case ART_NDJSON_BAD:	return "BAD";
	case ART_NDJSON_AGAIN:	return "AGAIN";
	case ART_NDJSON_EOF:	return "EOF";
	case ART_NDJSON_IOERR:	return "IOERR";
	case ART_NDJSON_RAW:	return "RAW";
	}
	return "?";
}

static const char *
srcdir(void)
{
	const char *d = getenv("top_srcdir");

	return d != NULL && *d != '\0' ? d : ".";
}

static int
open_fixture(const char *file)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s/%s", srcdir(), FIXTURES, file);
	return open(path, O_RDONLY);
}

/* An fd reading n bytes of s from a temporary file; *keep owns it. */
static int
fd_of(const char *s, size_t n, FILE **keep)
{
	FILE *f = tmpfile();

	*keep = f;
	if (f == NULL || fwrite(s, 1, n, f) != n || fflush(f) == EOF)
		return -1;
	rewind(f);
	return fileno(f);
}

/*
 * A valid line {"type":"t","p":"xxx…"} of exactly len bytes (len >= 19),
 * without a newline; the caller frees it.
 */
static char *
object_line(size_t len)
{
	static const char head[] = "{\"type\":\"t\",\"p\":\"";
	char *s = malloc(len + 1);
	size_t h = sizeof(head) - 1;

	if (s == NULL)
		abort();
	memcpy(s, head, h);
	memset(s + h, 'x', len - h - 2);
	memcpy(s + len - 2, "\"}", 2);
	s[len] = '\0';
	return s;
}

static void
append(char *buf, size_t *len, const char *s, size_t n)
{
	memcpy(buf + *len, s, n);
	*len += n;
}

/* Feeds s in pieces of step bytes, calling next after each; last status. */
static enum art_ndjson_status
feed_in_pieces(struct art_ndjson_reader *rd, const char *s, size_t n,
    size_t step, jv *v, struct art_err *err)
{
	enum art_ndjson_status st = ART_NDJSON_AGAIN;
	size_t i, k;

	for (i = 0; i < n && st == ART_NDJSON_AGAIN; i += k) {
		k = n - i < step ? n - i : step;
		if (art_ndjson_feed(rd, s + i, k, err) == -1)
			return ART_NDJSON_IOERR;
		st = art_ndjson_next(rd, v, err);
	}
	return st;
}

static int
code_is(const struct art_err *err, const char *code)
{
	return err->code != NULL && strcmp(err->code, code) == 0;
}

static char *
take_text(jv s)
{
	char *t = strdup(jv_string_value(s));

	jv_free(s);
	if (t == NULL)
		abort();
	return t;
}

/* Compares one result with what was wanted, as one test point. */
static void
check_one(const struct art_ndjson_reader *rd, const char *what,
    enum art_ndjson_status st, const struct art_err *err,
    const struct want *w)
{
	int same = st == w->st && art_ndjson_lineno(rd) == w->lineno &&
	    (w->st != ART_NDJSON_BAD || code_is(err, w->code));

	ok(same, "%s: line %zu is %s %s (got %s %s at line %zu)", what,
	    w->lineno, status_name(w->st), w->code != NULL ? w->code : "",
	    status_name(st), st == ART_NDJSON_BAD && err->code ? err->code : "",
	    art_ndjson_lineno(rd));
}

/* Reads a whole fd and checks every result, then EOF. */
static void
expect_fd(int fd, const char *what, size_t max_line, unsigned flags,
    const struct want *w, size_t n)
{
	struct art_ndjson_reader *rd;
	enum art_ndjson_status st;
	struct art_err err;
	size_t i;
	jv v;

	if (!ok(fd != -1, "%s: opened", what))
		return;
	rd = art_ndjson_reader_new(fd, what, max_line, flags);
	for (i = 0; i < n; i++) {
		art_err_clear(&err);
		st = art_ndjson_next(rd, &v, &err);
		check_one(rd, what, st, &err, &w[i]);
		if (st == ART_NDJSON_OK)
			jv_free(v);
	}
	st = art_ndjson_next(rd, &v, &err);
	ok(st == ART_NDJSON_EOF, "%s: then EOF (got %s)", what,
	    status_name(st));
	if (st == ART_NDJSON_OK)
		jv_free(v);
	art_ndjson_reader_free(rd);
}

static void
expect_fixture(const char *file, unsigned flags, const struct want *w,
    size_t n)
{
	int fd = open_fixture(file);

	expect_fd(fd, file, ART_NDJSON_MAX_LINE, flags, w, n);
	if (fd != -1)
		close(fd);
}

#define NWANT(w)	(sizeof(w) / sizeof((w)[0]))

/* The one object of a fixture read with REQUIRE_TYPE, or jv_invalid(). */
static jv
only_object(const char *file)
{
	struct art_ndjson_reader *rd;
	struct art_err err;
	int fd = open_fixture(file);
	jv v = jv_invalid(), extra;

	if (fd == -1)
		return v;
	rd = art_ndjson_reader_new(fd, file, ART_NDJSON_MAX_LINE,
	    ART_NDJSON_REQUIRE_TYPE);
	if (art_ndjson_next(rd, &v, &err) != ART_NDJSON_OK)
		v = jv_invalid();
	else if (art_ndjson_next(rd, &extra, &err) != ART_NDJSON_EOF) {
		jv_free(v);
		v = jv_invalid();
	}
	art_ndjson_reader_free(rd);
	close(fd);
	return v;
}

/* --- the fixtures in tests/fixtures/ndjson-bad-input --- */

static const char *const covered[] = {
	"crlf-and-blank-lines.ndjson",
	"embedded-raw-newline-in-string.ndjson",
	"huge-numbers.ndjson",
	"invalid-utf8.ndjson",
	"malformed-line-between-good.ndjson",
	"missing-type.ndjson",
	"no-trailing-newline.ndjson",
	"nul-byte-in-line.ndjson",
	"unknown-trigger-type.ndjson",
	"wrong-types.ndjson",
};

static void
test_every_fixture_file_is_covered(void)
{
	char path[4096];
	struct dirent *de;
	size_t i, nfiles = 0;
	int found;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", srcdir(), FIXTURES);
	if (!ok((d = opendir(path)) != NULL, "open %s", path))
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		nfiles++;
		found = 0;
		for (i = 0; i < NWANT(covered); i++)
			found |= strcmp(de->d_name, covered[i]) == 0;
		ok(found, "fixture %s has a test", de->d_name);
	}
	closedir(d);
	ok(nfiles == NWANT(covered), "%zu fixture files, %zu covered", nfiles,
	    NWANT(covered));
}

static void
test_bad_line_does_not_swallow_the_next(void)
{
	static const struct want w[] = {
		{ ART_NDJSON_OK, NULL, 1 },
		{ ART_NDJSON_BAD, "bad_json", 2 },
		{ ART_NDJSON_OK, NULL, 3 },
	};

	expect_fixture("malformed-line-between-good.ndjson",
	    ART_NDJSON_REQUIRE_TYPE, w, NWANT(w));
}

static void
test_raw_newline_in_a_string_makes_two_bad_lines(void)
{
	static const struct want w[] = {
		{ ART_NDJSON_BAD, "bad_json", 1 },
		{ ART_NDJSON_BAD, "bad_json", 2 },
	};

	expect_fixture("embedded-raw-newline-in-string.ndjson",
	    ART_NDJSON_REQUIRE_TYPE, w, NWANT(w));
}

/* libjq 1.6 would swap C3 28 and FF FE for U+FFFD; we refuse the line. */
static void
test_invalid_utf8_is_bad_utf8_not_replaced(void)
{
	static const struct want w[] = {
		{ ART_NDJSON_BAD, "bad_utf8", 1 },
	};

	expect_fixture("invalid-utf8.ndjson", ART_NDJSON_REQUIRE_TYPE, w,
	    NWANT(w));
}

/* libjq 1.6 would take the raw NUL as \u0000; we refuse the line. */
static void
test_nul_byte_is_reported_not_truncated(void)
{
	static const struct want w[] = {
		{ ART_NDJSON_BAD, "nul_byte", 1 },
	};

	expect_fixture("nul-byte-in-line.ndjson", ART_NDJSON_REQUIRE_TYPE, w,
	    NWANT(w));
}

static double
arg_number(const jv *v, const char *key)
{
	jv args = art_json_field(v, "args");
	jv n = art_json_field(&args, key);
	double d = jv_get_kind(n) == JV_KIND_NUMBER ? jv_number_value(n) : NAN;

	jv_free(n);
	jv_free(args);
	return d;
}

/*
 * Huge numbers parse; libjq 1.6 holds them as doubles.  1e400 overflows to
 * +infinity in the jv, and libjq prints that clamped to DBL_MAX
 * (1.7976931348623157e+308), so on the wire it comes out as DBL_MAX.  2^64
 * keeps only 53 bits (being a power of two it is exact, 2^64+1 would not
 * be), -0 stays negative zero and 0.1e-400 underflows to 0.  Ids and
 * sequence numbers travel as strings, or stay below 2^53.
 */
static void
test_huge_numbers_parse_as_clamped_doubles(void)
{
	jv v = only_object("huge-numbers.ndjson");
	char *text;
	double d;

	if (!ok(jv_is_valid(v), "huge-numbers.ndjson: one OK object"))
		return;
	text = take_text(art_json_canon(jv_copy(v)));
	d = arg_number(&v, "big");
	ok(isinf(d) && d > 0, "1e400 is held as +infinity (%g)", d);
	ok(strstr(text, "\"big\":1.7976931348623157e+308") != NULL,
	    "and printed clamped to DBL_MAX");
	d = arg_number(&v, "u64");
	ok(d == 18446744073709551616.0, "2^64 is the double 2^64 (%g)", d);
	d = arg_number(&v, "neg0");
	ok(d == 0 && signbit(d), "-0 is negative zero");
	d = arg_number(&v, "frac");
	ok(d == 0 && !signbit(d), "0.1e-400 underflows to 0 (%g)", d);
	jv_free(v);
	free(text);
}

static void
test_wrong_types_are_not_object_or_no_type(void)
{
	static const struct want w[] = {
		{ ART_NDJSON_OK, NULL, 1 },	/* field types are not ours */
		{ ART_NDJSON_BAD, "no_type", 2 },	/* "type": 42 */
		{ ART_NDJSON_BAD, "not_object", 3 },	/* [] */
		{ ART_NDJSON_BAD, "not_object", 4 },	/* "just a string" */
		{ ART_NDJSON_BAD, "not_object", 5 },	/* null */
	};

	expect_fixture("wrong-types.ndjson", ART_NDJSON_REQUIRE_TYPE, w,
	    NWANT(w));
}

static void
test_unknown_type_is_ok(void)
{
	jv v = only_object("unknown-trigger-type.ndjson");
	const char *t = art_json_str(&v, "type");

	ok(t != NULL && strcmp(t, "no.such.trigger") == 0,
	    "unknown-trigger-type.ndjson: OK with its type kept");
	jv_free(v);
}

static void
test_missing_type_is_no_type_with_require_type(void)
{
	static const struct want w[] = {
		{ ART_NDJSON_BAD, "no_type", 1 },
	};

	expect_fixture("missing-type.ndjson", ART_NDJSON_REQUIRE_TYPE, w,
	    NWANT(w));
}

static void
test_missing_type_is_ok_without_require_type(void)
{
	static const struct want w[] = {
		{ ART_NDJSON_OK, NULL, 1 },
	};

	expect_fixture("missing-type.ndjson", 0, w, NWANT(w));
}

static void
test_crlf_and_blank_lines_are_skipped_but_counted(void)
{
	static const struct want w[] = {
		{ ART_NDJSON_OK, NULL, 1 },	/* ends in \r\n */
		/* line 2 is "\r", line 3 is three spaces */
		{ ART_NDJSON_OK, NULL, 4 },	/* ends in \r\n */
	};

	expect_fixture("crlf-and-blank-lines.ndjson", ART_NDJSON_REQUIRE_TYPE,
	    w, NWANT(w));
}

static void
test_last_line_without_newline_is_taken(void)
{
	static const struct want w[] = {
		{ ART_NDJSON_OK, NULL, 1 },
	};

	expect_fixture("no-trailing-newline.ndjson", ART_NDJSON_REQUIRE_TYPE,
	    w, NWANT(w));
}

/* --- over-long lines, made here --- */

static void
test_line_of_exactly_max_line_is_ok(void)
{
	static const struct want w[] = {
		{ ART_NDJSON_OK, NULL, 1 },
		{ ART_NDJSON_OK, NULL, 2 },
	};
	char *line = object_line(100), buf[256];
	size_t len = 0;
	FILE *keep;

	append(buf, &len, line, 100);
	append(buf, &len, "\n{\"type\":\"next\"}\n", 17);
	expect_fd(fd_of(buf, len, &keep), "100 bytes, max_line 100", 100,
	    ART_NDJSON_REQUIRE_TYPE, w, NWANT(w));
	if (keep != NULL)
		fclose(keep);
	free(line);
}

/* Without its newline the line is max_line bytes, not over: it waits. */
static void
test_line_of_exactly_max_line_fed_byte_by_byte_is_ok(void)
{
	struct art_ndjson_reader *rd;
	char *line = object_line(100);
	enum art_ndjson_status st;
	struct art_err err;
	jv v;

	rd = art_ndjson_reader_new(-1, "bytes", 100, ART_NDJSON_REQUIRE_TYPE);
	st = feed_in_pieces(rd, line, 100, 1, &v, &err);
	ok(st == ART_NDJSON_AGAIN, "AGAIN after 100 bytes and no newline");
	art_ndjson_feed(rd, "\n", 1, &err);
	st = art_ndjson_next(rd, &v, &err);
	if (ok(st == ART_NDJSON_OK && art_ndjson_lineno(rd) == 1,
	    "its newline makes it OK (got %s %s)", status_name(st),
	    st == ART_NDJSON_BAD ? err.msg : ""))
		jv_free(v);
	art_ndjson_reader_free(rd);
	free(line);
}

static void
test_line_one_over_max_line_is_too_long_and_the_next_comes_back(void)
{
	static const struct want w[] = {
		{ ART_NDJSON_OK, NULL, 1 },
		{ ART_NDJSON_BAD, "line_too_long", 2 },
		{ ART_NDJSON_OK, NULL, 3 },
	};
	char *line = object_line(101), buf[256];
	size_t len = 0;
	FILE *keep;

	append(buf, &len, "{\"type\":\"before\"}\n", 18);
	append(buf, &len, line, 101);
	append(buf, &len, "\n{\"type\":\"after\"}\n", 18);
	expect_fd(fd_of(buf, len, &keep), "101 bytes, max_line 100", 100,
	    ART_NDJSON_REQUIRE_TYPE, w, NWANT(w));
	if (keep != NULL)
		fclose(keep);
	free(line);
}

static void
test_over_long_last_line_without_newline_is_too_long(void)
{
	static const struct want w[] = {
		{ ART_NDJSON_OK, NULL, 1 },
		{ ART_NDJSON_BAD, "line_too_long", 2 },
	};
	char *line = object_line(150), buf[256];
	size_t len = 0;
	FILE *keep;

	append(buf, &len, "{\"type\":\"before\"}\n", 18);
	append(buf, &len, line, 150);
	expect_fd(fd_of(buf, len, &keep), "150 bytes at EOF, max_line 100",
	    100, ART_NDJSON_REQUIRE_TYPE, w, NWANT(w));
	if (keep != NULL)
		fclose(keep);
	free(line);
}

/* The "input" of the error line for the BAD line the reader just gave. */
static int
input_is(const struct art_ndjson_reader *rd, const struct art_err *err,
    const char *want, size_t n)
{
	jv e = art_ndjson_bad_line(rd, err);
	jv in = art_json_field(&e, "input");
	int same = jv_get_kind(in) == JV_KIND_STRING &&
	    (size_t)jv_string_length_bytes(jv_copy(in)) == n &&
	    memcmp(jv_string_value(in), want, n) == 0;

	jv_free(in);
	jv_free(e);
	return same;
}

static void
test_too_long_excerpt_is_the_first_256_bytes(void)
{
	struct art_ndjson_reader *rd;
	char *line = object_line(1000);
	struct art_err err;
	FILE *keep;
	int fd;
	jv v;

	line[999] = '\n';	/* the '}' goes: 999 bytes and a newline */
	fd = fd_of(line, 1000, &keep);
	rd = art_ndjson_reader_new(fd, "long", 100, 0);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_BAD &&
	    code_is(&err, "line_too_long"), "999 bytes over 100 is too long");
	ok(input_is(rd, &err, line, ART_NDJSON_EXCERPT),
	    "its error line quotes exactly the first %d bytes",
	    ART_NDJSON_EXCERPT);
	art_ndjson_reader_free(rd);
	fclose(keep);
	free(line);
}

/*
 * The same, with bytes arriving in small pieces: the reader drops the line
 * as soon as it passes max_line (101 bytes here) but must still quote the
 * first 256 bytes, as the header promises.
 */
static void
test_too_long_excerpt_is_the_first_256_bytes_when_fed_in_pieces(void)
{
	struct art_ndjson_reader *rd;
	char *line = object_line(1000);
	enum art_ndjson_status st;
	struct art_err err;
	jv v;

	line[999] = '\n';
	rd = art_ndjson_reader_new(-1, "pieces", 100, 0);
	st = feed_in_pieces(rd, line, 1000, 10, &v, &err);
	ok(st == ART_NDJSON_BAD && code_is(&err, "line_too_long"),
	    "999 bytes fed 10 at a time over 100 is too long");
	ok(input_is(rd, &err, line, ART_NDJSON_EXCERPT),
	    "its error line quotes exactly the first %d bytes",
	    ART_NDJSON_EXCERPT);
	art_ndjson_reader_free(rd);
	free(line);
}

/*
 * "line is longer than 100 bytes (N)": N is the line's own length, also
 * for an over-long line that follows another one.
 */
static void
test_too_long_message_gives_each_lines_own_length(void)
{
	struct art_ndjson_reader *rd;
	char *a = object_line(300), *b = object_line(150);
	enum art_ndjson_status st;
	struct art_err err;
	jv v;

	rd = art_ndjson_reader_new(-1, "twice", 100, 0);
	a[299] = b[149] = '\n';		/* 299 and 149 bytes and newlines */
	st = feed_in_pieces(rd, a, 300, 7, &v, &err);
	ok(st == ART_NDJSON_BAD && strstr(err.msg, "(299)") != NULL,
	    "the first over-long line says 299 bytes (%s)", err.msg);
	st = feed_in_pieces(rd, b, 150, 7, &v, &err);
	ok(st == ART_NDJSON_BAD && strstr(err.msg, "(149)") != NULL,
	    "the second over-long line says 149 bytes (%s)", err.msg);
	art_ndjson_reader_free(rd);
	free(a);
	free(b);
}

/*
 * ART_NDJSON_MAX_LINE + 1 bytes, fed 1 MiB at a time with next() after
 * each piece as a filter would: the reader drops the line once it passes
 * the limit (its memory cannot be measured here), reports it when its
 * newline comes, and the next line comes back.
 */
static void
test_default_limit_plus_one_fed_in_chunks_is_too_long(void)
{
	static const char after[] = "\n{\"type\":\"after\"}\n";
	struct art_ndjson_reader *rd;
	enum art_ndjson_status st = ART_NDJSON_AGAIN;
	struct art_err err;
	char *chunk = malloc(MIB), want[64];
	size_t i, again = 0;
	jv v;

	if (chunk == NULL)
		abort();
	memset(chunk, 'x', MIB);
	rd = art_ndjson_reader_new(-1, "<big>", ART_NDJSON_MAX_LINE,
	    ART_NDJSON_REQUIRE_TYPE);
	for (i = 0; i < ART_NDJSON_MAX_LINE / MIB; i++) {
		art_ndjson_feed(rd, chunk, MIB, &err);
		again += art_ndjson_next(rd, &v, &err) == ART_NDJSON_AGAIN;
	}
	art_ndjson_feed(rd, "x", 1, &err);
	again += art_ndjson_next(rd, &v, &err) == ART_NDJSON_AGAIN;
	ok(again == ART_NDJSON_MAX_LINE / MIB + 1,
	    "AGAIN while the 64 MiB + 1 line has no newline");
	art_ndjson_feed(rd, after, sizeof(after) - 1, &err);
	st = art_ndjson_next(rd, &v, &err);
	snprintf(want, sizeof(want), "(%zu)", ART_NDJSON_MAX_LINE + 1);
	ok(st == ART_NDJSON_BAD && code_is(&err, "line_too_long") &&
	    art_ndjson_lineno(rd) == 1 && strstr(err.msg, want) != NULL,
	    "64 MiB + 1 bytes is line_too_long at line 1 (%s)", err.msg);
	st = art_ndjson_next(rd, &v, &err);
	ok(st == ART_NDJSON_OK && art_ndjson_lineno(rd) == 2,
	    "the next line comes back OK");
	if (st == ART_NDJSON_OK)
		jv_free(v);
	art_ndjson_feed_eof(rd);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_EOF, "then EOF");
	art_ndjson_reader_free(rd);
	free(chunk);
}

/* libjq 1.6 stops at depth 257 ("Exceeds depth limit for parsing"). */
static void
test_limit_of_open_brackets_is_bad_json_not_a_crash(void)
{
	static const char after[] = "\n{\"type\":\"after\"}\n";
	struct art_ndjson_reader *rd;
	enum art_ndjson_status st;
	struct art_err err;
	char *chunk = malloc(MIB);
	size_t i;
	jv v;

	if (chunk == NULL)
		abort();
	memset(chunk, '[', MIB);
	rd = art_ndjson_reader_new(-1, "<brackets>", ART_NDJSON_MAX_LINE,
	    ART_NDJSON_REQUIRE_TYPE);
	for (i = 0; i < ART_NDJSON_MAX_LINE / MIB; i++) {
		art_ndjson_feed(rd, chunk, MIB, &err);
		(void)art_ndjson_next(rd, &v, &err);
	}
	art_ndjson_feed(rd, after, sizeof(after) - 1, &err);
	art_ndjson_feed_eof(rd);
	st = art_ndjson_next(rd, &v, &err);
	ok(st == ART_NDJSON_BAD && code_is(&err, "bad_json") &&
	    art_ndjson_lineno(rd) == 1,
	    "64 MiB of '[' is bad_json at line 1 (%s)", err.msg);
	ok(strlen(err.msg) < 200 && strstr(err.msg, "[[[") == NULL,
	    "its message does not quote the brackets");
	st = art_ndjson_next(rd, &v, &err);
	ok(st == ART_NDJSON_OK && art_ndjson_lineno(rd) == 2,
	    "the next line comes back OK");
	if (st == ART_NDJSON_OK)
		jv_free(v);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_EOF, "then EOF");
	art_ndjson_reader_free(rd);
	free(chunk);
}

/* --- the feed API --- */

#define MIXED_MAX_LINE	300
#define MAXGOT		32

static const struct want mixed_want[] = {
	{ ART_NDJSON_OK, NULL, 1 },
	{ ART_NDJSON_BAD, "bad_json", 2 },
	/* 3 is "\r", 4 is " \t " */
	{ ART_NDJSON_OK, NULL, 5 },
	{ ART_NDJSON_BAD, "nul_byte", 6 },
	{ ART_NDJSON_BAD, "bad_utf8", 7 },
	{ ART_NDJSON_BAD, "not_object", 8 },
	{ ART_NDJSON_BAD, "no_type", 9 },
	{ ART_NDJSON_BAD, "line_too_long", 10 },
	{ ART_NDJSON_OK, NULL, 11 },
	{ ART_NDJSON_OK, NULL, 12 },	/* no newline */
};

/* One line of every kind; *len gets its length. */
static char *
mixed_input(size_t *len)
{
	static const char lines[] =
	    "{\"type\":\"a\",\"n\":1}\n"
	    "{\"type\":\"b\",\n"
	    "\r\n"
	    " \t \n"
	    "{\"type\":\"c\"}\r\n"
	    "{\"type\":\"d\",\"s\":\"a\0b\"}\n"
	    "{\"type\":\"e\",\"s\":\"\xc3\x28\"}\n"
	    "[1,2]\n"
	    "{\"x\":1}\n";
	static const char tail[] =
	    "\n{\"type\":\"\xc3\xa9 \xf0\x9f\x98\x80\"}\n"
	    "{\"type\":\"last\"}";
	char *buf = malloc(sizeof(lines) + 500 + sizeof(tail)), *big;

	if (buf == NULL)
		abort();
	*len = 0;
	append(buf, len, lines, sizeof(lines) - 1);
	big = object_line(500);
	append(buf, len, big, 500);
	free(big);
	append(buf, len, tail, sizeof(tail) - 1);
	return buf;
}

/* Calls next until AGAIN or EOF, keeping every result; returns the last. */
static enum art_ndjson_status
drain(struct art_ndjson_reader *rd, struct got *g, size_t *ng)
{
	enum art_ndjson_status st;
	struct art_err err;
	jv v;

	for (;;) {
		art_err_clear(&err);
		st = art_ndjson_next(rd, &v, &err);
		if (st == ART_NDJSON_AGAIN || st == ART_NDJSON_EOF ||
		    *ng == MAXGOT)
			return st;
		g[*ng].st = st;
		g[*ng].code = err.code;
		g[*ng].lineno = art_ndjson_lineno(rd);
		if (st == ART_NDJSON_OK)
			g[*ng].text = take_text(art_json_canon(v));
		else
			g[*ng].text = take_text(art_json_canon(
			    art_ndjson_bad_line(rd, &err)));
		(*ng)++;
	}
}

static void
free_got(struct got *g, size_t n)
{
	while (n > 0)
		free(g[--n].text);
}

static void
check_mixed(const char *what, const struct got *g, size_t n)
{
	size_t i;

	ok(n == NWANT(mixed_want), "%s: %zu results (got %zu)", what,
	    NWANT(mixed_want), n);
	for (i = 0; i < n && i < NWANT(mixed_want); i++)
		ok(g[i].st == mixed_want[i].st &&
		    g[i].lineno == mixed_want[i].lineno &&
		    (g[i].st != ART_NDJSON_BAD ||
		    (g[i].code && !strcmp(g[i].code, mixed_want[i].code))),
		    "%s: line %zu is %s %s (got %s %s at %zu)", what,
		    mixed_want[i].lineno, status_name(mixed_want[i].st),
		    mixed_want[i].code ? mixed_want[i].code : "",
		    status_name(g[i].st), g[i].code ? g[i].code : "",
		    g[i].lineno);
}

/* Everything at once: all lines but the unterminated last, then it. */
static size_t
run_in_one_piece(struct got *g)
{
	struct art_ndjson_reader *rd;
	struct art_err err;
	size_t len, n = 0;
	char *in = mixed_input(&len);

	rd = art_ndjson_reader_new(-1, "<mixed>", MIXED_MAX_LINE,
	    ART_NDJSON_REQUIRE_TYPE);
	ok(art_ndjson_feed(rd, in, len, &err) == 0, "one piece: fed");
	ok(drain(rd, g, &n) == ART_NDJSON_AGAIN &&
	    n == NWANT(mixed_want) - 1,
	    "one piece: AGAIN after all but the unterminated last line");
	art_ndjson_feed_eof(rd);
	ok(drain(rd, g, &n) == ART_NDJSON_EOF, "one piece: EOF after feed_eof");
	art_ndjson_reader_free(rd);
	free(in);
	return n;
}

/* A byte at a time: a result only once its newline is in. */
static size_t
run_byte_by_byte(struct got *g)
{
	struct art_ndjson_reader *rd;
	struct art_err err;
	size_t len, i, before, n = 0, early = 0, notagain = 0;
	char *in = mixed_input(&len);

	rd = art_ndjson_reader_new(-1, "<mixed>", MIXED_MAX_LINE,
	    ART_NDJSON_REQUIRE_TYPE);
	for (i = 0; i < len; i++) {
		art_ndjson_feed(rd, in + i, 1, &err);
		before = n;
		notagain += drain(rd, g, &n) != ART_NDJSON_AGAIN;
		early += n != before && in[i] != '\n';
	}
	ok(notagain == 0, "byte by byte: next ends in AGAIN after each byte");
	ok(early == 0, "byte by byte: a line comes back only with its newline");
	ok(n == NWANT(mixed_want) - 1,
	    "byte by byte: the unterminated last line waits for feed_eof");
	art_ndjson_feed_eof(rd);
	ok(drain(rd, g, &n) == ART_NDJSON_EOF,
	    "byte by byte: EOF after feed_eof");
	art_ndjson_reader_free(rd);
	free(in);
	return n;
}

static void
test_feed_in_one_piece_and_byte_by_byte_agree(void)
{
	struct got one[MAXGOT], bytes[MAXGOT];
	size_t n1 = run_in_one_piece(one), n2 = run_byte_by_byte(bytes), i;

	check_mixed("one piece", one, n1);
	check_mixed("byte by byte", bytes, n2);
	for (i = 0; i < n1 && i < n2; i++)
		ok(one[i].st == bytes[i].st &&
		    one[i].lineno == bytes[i].lineno &&
		    strcmp(one[i].text, bytes[i].text) == 0,
		    "result %zu is the same both ways: %s", i + 1, one[i].text);
	free_got(one, n1);
	free_got(bytes, n2);
}

/*
 * A fresh reader has no buffer yet.  Under clang -fsanitize=undefined this
 * catches split() computing rd->buf + rd->start on a NULL buf.
 */
static void
test_next_on_a_fresh_reader_is_again(void)
{
	struct art_ndjson_reader *rd;
	struct art_err err;
	jv v;

	rd = art_ndjson_reader_new(-1, "<fresh>", 0, 0);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_AGAIN &&
	    art_ndjson_lineno(rd) == 0, "AGAIN at line 0 before any bytes");
	art_ndjson_reader_free(rd);
}

static void
test_unterminated_last_line_comes_only_after_feed_eof(void)
{
	struct art_ndjson_reader *rd;
	struct art_err err;
	jv v;

	rd = art_ndjson_reader_new(-1, "<feed>", 0, ART_NDJSON_REQUIRE_TYPE);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_AGAIN,
	    "AGAIN before any bytes");
	art_ndjson_feed(rd, "{\"type\":\"a\"}", 12, &err);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_AGAIN,
	    "AGAIN with an unterminated line");
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_AGAIN, "and again");
	art_ndjson_feed_eof(rd);
	if (ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_OK &&
	    art_ndjson_lineno(rd) == 1, "OK at line 1 after feed_eof"))
		jv_free(v);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_EOF, "then EOF");
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_EOF, "and EOF again");
	art_ndjson_reader_free(rd);
}

static void
test_feed_eof_with_nothing_fed_is_eof(void)
{
	struct art_ndjson_reader *rd;
	struct art_err err;
	jv v;

	rd = art_ndjson_reader_new(-1, "<empty>", 0, 0);
	art_ndjson_feed_eof(rd);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_EOF &&
	    art_ndjson_lineno(rd) == 0, "no bytes at all is EOF at line 0");
	art_ndjson_reader_free(rd);
	/* Not a point: it can only fail by crashing, which fails the
	 * test's plan. */
	art_ndjson_reader_free(NULL);
}

/* --- pipes and read errors --- */

static void
test_nonblocking_empty_pipe_is_again(void)
{
	struct art_ndjson_reader *rd;
	struct art_err err;
	int p[2];
	jv v;

	if (!ok(pipe(p) == 0 && fcntl(p[0], F_SETFL, O_NONBLOCK) == 0,
	    "a non-blocking pipe"))
		return;
	rd = art_ndjson_reader_new(p[0], "<pipe>", 0, ART_NDJSON_REQUIRE_TYPE);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_AGAIN,
	    "nothing to read is AGAIN");
	ok(write(p[1], "{\"type\":\"a\"}", 12) == 12 &&
	    art_ndjson_next(rd, &v, &err) == ART_NDJSON_AGAIN,
	    "half a line is AGAIN");
	if (ok(write(p[1], "\n", 1) == 1 &&
	    art_ndjson_next(rd, &v, &err) == ART_NDJSON_OK,
	    "its newline makes it OK"))
		jv_free(v);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_AGAIN,
	    "nothing more is AGAIN");
	art_ndjson_reader_free(rd);
	close(p[0]);
	close(p[1]);
}

static void
test_closed_pipe_is_eof(void)
{
	struct art_ndjson_reader *rd;
	struct art_err err;
	int p[2];
	jv v;

	if (!ok(pipe(p) == 0 && fcntl(p[0], F_SETFL, O_NONBLOCK) == 0,
	    "a non-blocking pipe"))
		return;
	rd = art_ndjson_reader_new(p[0], "<pipe>", 0, ART_NDJSON_REQUIRE_TYPE);
	ok(write(p[1], "{\"type\":\"a\"}", 12) == 12 && close(p[1]) == 0,
	    "half a line, then the writer closes");
	if (ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_OK &&
	    art_ndjson_lineno(rd) == 1, "the unterminated line is OK"))
		jv_free(v);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_EOF,
	    "a closed pipe is EOF");
	art_ndjson_reader_free(rd);
	close(p[0]);
}

static void
test_read_error_is_ioerr(void)
{
	struct art_ndjson_reader *rd;
	struct art_err err;
	int fd = open("/dev/null", O_WRONLY);
	jv v;

	rd = art_ndjson_reader_new(fd, "<wronly>", 0, 0);
	art_err_clear(&err);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_IOERR &&
	    code_is(&err, "io"), "reading a write-only fd is IOERR, io (%s)",
	    err.msg);
	art_ndjson_reader_free(rd);
	close(fd);
}

/* --- error lines --- */

static int
field_is(const jv *e, const char *key, const char *want)
{
	const char *s = art_json_str(e, key);

	return s != NULL && strcmp(s, want) == 0;
}

/* The error line for a one-line input fed to a fresh reader. */
static jv
error_line_for(const char *line, size_t n, struct art_err *err)
{
	struct art_ndjson_reader *rd;
	enum art_ndjson_status st;
	jv v, e = jv_invalid();

	rd = art_ndjson_reader_new(-1, "in.ndjson", 0, ART_NDJSON_REQUIRE_TYPE);
	art_ndjson_feed(rd, "{\"type\":\"ok\"}\n", 14, err);
	art_ndjson_feed(rd, line, n, err);
	art_ndjson_feed_eof(rd);
	while ((st = art_ndjson_next(rd, &v, err)) == ART_NDJSON_OK)
		jv_free(v);
	if (st == ART_NDJSON_BAD)
		e = art_ndjson_bad_line(rd, err);
	art_ndjson_reader_free(rd);
	return e;
}

static void
test_bad_line_is_an_error_record(void)
{
	static const char line[] = "[\"no\",\"object\"]\r\n";
	struct art_err err;
	char want[300];
	jv e = error_line_for(line, sizeof(line) - 1, &err);

	if (!ok(jv_get_kind(e) == JV_KIND_OBJECT, "a BAD line gives an object"))
		return;
	snprintf(want, sizeof(want), "in.ndjson:2: %s", err.msg);
	ok(field_is(&e, "type", "error"), "type is \"error\"");
	ok(field_is(&e, "code", "not_object"), "code is \"not_object\"");
	ok(field_is(&e, "message", want), "message is \"%s\"", want);
	ok(field_is(&e, "input", "[\"no\",\"object\"]"),
	    "input is the line without its CR and newline");
	jv_free(e);
}

static void
test_bad_json_message_does_not_quote_the_input(void)
{
	static const char line[] = "{\"type\":\"x\",\"k\":SECRET_TOKEN}\n";
	struct art_err err;
	const char *m;
	jv e = error_line_for(line, sizeof(line) - 1, &err);

	ok(code_is(&err, "bad_json"), "an invalid literal is bad_json");
	m = art_json_str(&e, "message");
	ok(m != NULL && strncmp(m, "in.ndjson:2: ", 13) == 0,
	    "message starts with name and line (%s)", m ? m : "null");
	ok(m != NULL && strstr(m, "SECRET") == NULL &&
	    strstr(m, "while parsing") == NULL,
	    "message does not quote the input");
	ok(strstr(err.msg, "SECRET") == NULL, "neither does err->msg (%s)",
	    err.msg);
	ok(field_is(&e, "input", "{\"type\":\"x\",\"k\":SECRET_TOKEN}"),
	    "input holds the line");
	jv_free(e);
}

static void
test_bad_line_input_is_cut_at_256_bytes(void)
{
	struct art_err err;
	char *line = object_line(1000);
	jv e, in;

	line[998] = '\n';	/* no closing brace: bad_json, 998 bytes */
	e = error_line_for(line, 999, &err);
	in = art_json_field(&e, "input");
	ok(code_is(&err, "bad_json") && jv_get_kind(in) == JV_KIND_STRING &&
	    jv_string_length_bytes(jv_copy(in)) == ART_NDJSON_EXCERPT &&
	    memcmp(jv_string_value(in), line, ART_NDJSON_EXCERPT) == 0,
	    "input is exactly the first %d bytes", ART_NDJSON_EXCERPT);
	jv_free(in);
	jv_free(e);
	free(line);
}

static void
test_nul_byte_line_keeps_its_nul_in_input(void)
{
	static const char line[] = "{\"type\":\"a\0b\"}\n";
	struct art_err err;
	jv e = error_line_for(line, sizeof(line) - 1, &err);
	jv in = art_json_field(&e, "input");

	ok(code_is(&err, "nul_byte") && jv_get_kind(in) == JV_KIND_STRING &&
	    (size_t)jv_string_length_bytes(jv_copy(in)) == sizeof(line) - 2 &&
	    memcmp(jv_string_value(in), line, sizeof(line) - 2) == 0,
	    "input holds all %zu bytes, NUL included", sizeof(line) - 2);
	jv_free(in);
	jv_free(e);
}

static void
test_error_without_input_has_no_input_field(void)
{
	jv e = art_ndjson_error("store", "open store: no", NULL, 0);
	jv in = art_json_field(&e, "input");

	ok(field_is(&e, "type", "error") && field_is(&e, "code", "store") &&
	    field_is(&e, "message", "open store: no") &&
	    jv_get_kind(in) == JV_KIND_NULL, "no input, no \"input\"");
	jv_free(in);
	jv_free(e);
}

static void
test_reader_name_is_kept(void)
{
	struct art_ndjson_reader *rd;
	const char *name = "some/file.ndjson";

	rd = art_ndjson_reader_new(-1, name, 0, 0);
	ok(art_ndjson_name(rd) == name, "art_ndjson_name is the name given");
	art_ndjson_reader_free(rd);
}

/* --- writing --- */

static void
test_write_is_one_compact_line(void)
{
	struct art_err err;
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	jv v = art_json_parse_str("{ \"type\" : \"x\", \"s\" : \"a\\nb\", "
	    "\"a\" : [ 1, { \"b\" : null } ] }", &err);
	jv back, orig = jv_copy(v);

	if (!ok(f != NULL && jv_is_valid(v), "a memory stream and a value"))
		return;
	ok(art_ndjson_write(f, v, &err) == 0, "write returns 0");
	fclose(f);
	ok(size > 0 && buf[size - 1] == '\n' &&
	    memchr(buf, '\n', size) == buf + size - 1,
	    "exactly one line, ending in a newline");
	ok(strchr(buf, ' ') == NULL, "compact: no spaces (%.*s)",
	    (int)size - 1, buf);
	buf[size - 1] = '\0';
	back = art_json_parse_str(buf, &err);
	ok(art_json_equal(&back, &orig), "it reads back as the same value");
	jv_free(back);
	jv_free(orig);
	free(buf);
}

static void
test_write_to_dev_full_is_io_error(void)
{
	struct art_err err;
	FILE *f = fopen("/dev/full", "w");

	if (!ok(f != NULL, "open /dev/full"))
		return;
	art_err_clear(&err);
	ok(art_ndjson_write(f, jv_parse("{\"type\":\"x\"}"), &err) == -1 &&
	    code_is(&err, "io"), "a full device is -1, io (%s)", err.msg);
	fclose(f);
}

/* --- UTF-8 --- */

static int
utf8_bad_at(const char *s, size_t n, size_t at)
{
	size_t bad = (size_t)-1;

	return !art_utf8_valid(s, n, &bad) && bad == at;
}

static void
test_utf8_ascii_and_multibyte_are_valid(void)
{
	static const char s[] =
	    "plain ASCII \x7f"
	    "\xc2\x80 \xdf\xbf"				/* U+0080, U+07FF */
	    "\xe0\xa0\x80 \xef\xbf\xbf \xe2\x82\xac"	/* U+0800 U+FFFF € */
	    "\xed\x9f\xbf \xee\x80\x80"			/* U+D7FF U+E000 */
	    "\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf";	/* U+10000 U+10FFFF */

	ok(art_utf8_valid("", 0, NULL), "empty is valid");
	ok(art_utf8_valid("a", 1, NULL), "ASCII is valid");
	ok(art_utf8_valid(s, sizeof(s) - 1, NULL),
	    "2, 3 and 4-byte sequences at their edges are valid");
	ok(art_utf8_valid("a\0b", 3, NULL), "NUL is valid UTF-8");
}

static void
test_utf8_overlongs_are_invalid(void)
{
	ok(utf8_bad_at("\xc0\x80", 2, 0), "C0 80 (overlong NUL)");
	ok(utf8_bad_at("\xc1\xbf", 2, 0), "C1 BF (overlong 7F)");
	ok(utf8_bad_at("\xe0\x80\x80", 3, 0), "E0 80 80 (overlong)");
	ok(utf8_bad_at("\xe0\x9f\xbf", 3, 0), "E0 9F BF (overlong U+07FF)");
	ok(utf8_bad_at("\xf0\x80\x80\x80", 4, 0), "F0 80 80 80 (overlong)");
	ok(utf8_bad_at("\xf0\x8f\xbf\xbf", 4, 0), "F0 8F BF BF (overlong)");
}

static void
test_utf8_surrogates_are_invalid(void)
{
	ok(utf8_bad_at("\xed\xa0\x80", 3, 0), "ED A0 80 (U+D800)");
	ok(utf8_bad_at("\xed\xbf\xbf", 3, 0), "ED BF BF (U+DFFF)");
	ok(utf8_bad_at("\xed\xa0\xbd\xed\xb8\x80", 6, 0),
	    "a CESU-8 surrogate pair");
}

static void
test_utf8_above_max_code_point_is_invalid(void)
{
	ok(utf8_bad_at("\xf4\x90\x80\x80", 4, 0), "F4 90 80 80 (U+110000)");
	ok(utf8_bad_at("\xf5\x80\x80\x80", 4, 0), "F5 lead byte");
	ok(utf8_bad_at("\xff", 1, 0), "FF");
	ok(utf8_bad_at("\xfe", 1, 0), "FE");
}

static void
test_utf8_truncated_and_stray_bytes_are_invalid(void)
{
	ok(utf8_bad_at("\xc3", 1, 0), "C3 at the end");
	ok(utf8_bad_at("\xe2\x82", 2, 0), "E2 82 at the end");
	ok(utf8_bad_at("\xf0\x9f\x98", 3, 0), "F0 9F 98 at the end");
	ok(utf8_bad_at("\xc3\x28", 2, 0), "C3 then ASCII");
	ok(utf8_bad_at("\xe2\x82(", 3, 0), "E2 82 then ASCII");
	ok(utf8_bad_at("\x80", 1, 0), "a lone continuation byte");
	ok(utf8_bad_at("\xbf", 1, 0), "another lone continuation byte");
	ok(utf8_bad_at("\xe2\x82\xac", 2, 0),
	    "a valid sequence cut by len is invalid");
}

static void
test_utf8_reports_offset_of_first_bad_byte(void)
{
	static const char s[] = "ab\xc3\xa9" "c\xe2\x82\xac" "\xff\xfe";
	size_t bad = 0;

	ok(utf8_bad_at(s, sizeof(s) - 1, 8), "FF after 8 good bytes is at 8");
	ok(utf8_bad_at("abc\xed\xa0\x80xyz", 9, 3), "a surrogate at 3");
	ok(utf8_bad_at("\xc3\xa9\xc3", 3, 2), "a truncated tail at 2");
	ok(art_utf8_valid("abc", 3, &bad) && bad == 0,
	    "valid input leaves *bad alone");
	ok(!art_utf8_valid("\xff", 1, NULL), "bad may be NULL");
}


static int
want_tool(const char *type, const char *trigger, void *ctx)
{
	(void)ctx;
	return strcmp(type, "decision.request") == 0 &&
	    (trigger == NULL || strcmp(trigger, "tool.execute") == 0);
}

/* A reader fed all of text, then the end. */
static struct art_ndjson_reader *
fed(const char *text, art_ndjson_want_fn *want)
{
	struct art_ndjson_reader *rd = art_ndjson_reader_new(-1, "t", 0,
	    ART_NDJSON_REQUIRE_TYPE);
	struct art_err err;

	art_ndjson_set_filter(rd, want, NULL);
	art_ndjson_feed(rd, text, strlen(text), &err);
	art_ndjson_feed_eof(rd);
	return rd;
}

/* The next line is st, and its bytes are want's (NULL: it has none). */
static int
next_is(struct art_ndjson_reader *rd, enum art_ndjson_status st,
    const char *want)
{
	struct art_err err;
	const char *raw;
	size_t n;
	jv v;
	enum art_ndjson_status got = art_ndjson_next(rd, &v, &err);

	if (got == ART_NDJSON_OK)
		jv_free(v);
	raw = art_ndjson_raw(rd, &n);
	if (got != st)
		return 0;
	if (want == NULL)
		return raw == NULL && n == 0;
	return raw != NULL && n == strlen(want) && memcmp(raw, want, n) == 0;
}

/*
 * "llm.request\u0000x" is a JSON string of 13 bytes whose C string is
 * "llm.request": it must be a bad line, not an llm.request, even when a
 * filter would pass an llm.request by, and without a filter too.
 */
static void
test_type_holding_a_nul_is_bad_type(void)
{
	static const char text[] =
	    "{\"type\":\"llm.request\\u0000x\",\"id\":\"c1\"}\n"
	    "{\"type\":\"decision.request\\u0000\",\"trigger\":"
	    "{\"type\":\"tool.execute\"}}\n"
	    "{\"type\":\"ok\"}\n";
	art_ndjson_want_fn *filters[] = { want_tool, NULL };
	struct art_ndjson_reader *rd;
	struct art_err err;
	enum art_ndjson_status st;
	jv v, e;
	int i;

	for (i = 0; i < 2; i++) {
		rd = fed(text, filters[i]);
		st = art_ndjson_next(rd, &v, &err);
		ok(st == ART_NDJSON_BAD && code_is(&err, "bad_type") &&
		    strcmp(err.msg, "line's \"type\" \"llm.request\\u0000x\" "
		    "holds a NUL byte") == 0, "%s: a NUL in the type is "
		    "bad_type, quoting it", filters[i] ? "filtered" : "plain");
		e = art_ndjson_bad_line(rd, &err);
		ok(strcmp(art_json_str(&e, "code"), "bad_type") == 0 &&
		    strncmp(art_json_str(&e, "input"), text, 36) == 0,
		    "its error line names it and quotes the line");
		jv_free(e);
		st = art_ndjson_next(rd, &v, &err);
		ok(st == ART_NDJSON_BAD && code_is(&err, "bad_type") &&
		    art_ndjson_lineno(rd) == 2, "a type ending in a NUL too");
		ok(next_is(rd, filters[i] ? ART_NDJSON_RAW : ART_NDJSON_OK,
		    "{\"type\":\"ok\"}"), "the next line comes back");
		art_ndjson_reader_free(rd);
	}
	rd = art_ndjson_reader_new(-1, "t", 0, 0);
	art_ndjson_feed(rd, text, strlen(text), &err);
	art_ndjson_feed_eof(rd);
	st = art_ndjson_next(rd, &v, &err);
	ok(st == ART_NDJSON_OK, "without REQUIRE_TYPE a type is not looked at");
	if (st == ART_NDJSON_OK)
		jv_free(v);
	art_ndjson_reader_free(rd);
}

/* Lines made some other way: the type reads as none, and is checked. */
static void
test_type_with_a_nul_matches_no_name(void)
{
	struct art_err err;
	jv a = art_json_parse_str("{\"type\":\"llm.request\\u0000x\"}", &err);
	jv b = art_json_parse_str("{\"type\":\"llm.request\"}", &err);
	jv c = art_json_parse_str("{\"type\":7}", &err);
	jv d = art_json_parse_str("[]", &err);

	ok(strcmp(art_ndjson_type(&a), "") == 0,
	    "a type holding a NUL reads as no type");
	ok(strcmp(art_ndjson_type(&b), "llm.request") == 0,
	    "a type without one reads as itself");
	ok(strcmp(art_ndjson_type(&c), "") == 0 &&
	    strcmp(art_ndjson_type(&d), "") == 0,
	    "no string type, or no object, reads as none");
	ok(art_ndjson_check_type(&a, &err) == -1 &&
	    code_is(&err, "bad_type"), "check_type: a NUL is bad_type");
	ok(art_ndjson_check_type(&b, &err) == 0 &&
	    art_ndjson_check_type(&c, &err) == 0 &&
	    art_ndjson_check_type(&d, &err) == 0,
	    "check_type: anything else is not its business");
	jv_free(a);
	jv_free(b);
	jv_free(c);
	jv_free(d);
}

/* A stage's filter: unwanted well-formed lines come back raw, unparsed. */
static void
test_filtered_lines_pass_by_raw_and_counted(void)
{
	struct art_ndjson_reader *rd = fed(
	    "{\"type\":\"llm.request\",\"n\":1.50}\n"
	    "{\"type\":\"decision.request\",\"trigger\":"
	    "{\"type\":\"tool.execute\"}}\n"
	    "{\"type\":\"decision.request\",\"trigger\":"
	    "{\"type\":\"llm.execute\"}}\n"
	    "{\"type\": \"bad\",}\n"
	    "{\"no\":\"type\"}\n", want_tool);
	struct art_err err;
	jv v;

	ok(next_is(rd, ART_NDJSON_RAW, "{\"type\":\"llm.request\",\"n\":1.50}"),
	    "an unwanted line comes back raw, its bytes untouched (1.50)");
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_OK &&
	    art_ndjson_lineno(rd) == 2, "a wanted line is parsed, line 2");
	jv_free(v);
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_RAW,
	    "another trigger type passes by");
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_BAD &&
	    art_err_is(&err, "bad_json") && art_ndjson_lineno(rd) == 4,
	    "a malformed line is still an error, at line 4");
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_BAD &&
	    art_err_is(&err, "no_type"), "a line without a type is still one");
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_EOF, "then the end");
	art_ndjson_reader_free(rd);
}

/*
 * A line whose first member names a type the filter wants none of passes
 * unread: a bad byte or a slip further on is the taker's to find.
 */
static void
test_an_unwanted_type_passes_unread(void)
{
	static const char text[] =
	    "{\"type\":\"llm.request\",\"x\":\"\xff\"}\n"
	    "{\"type\":\"llm.request\",}\n"
	    "{\"type\":\"decision.request\",}\n"
	    "{\"id\":1,\"type\":\"llm.request\",\"x\":\"\xff\"}\n"
	    "{\"type\":\"llm.request\"}\n";
	struct art_ndjson_reader *rd = fed(text, want_tool);
	struct art_err err;
	jv v;

	ok(next_is(rd, ART_NDJSON_RAW,
	    "{\"type\":\"llm.request\",\"x\":\"\xff\"}"),
	    "a bad byte after an unwanted leading type is not looked for");
	ok(next_is(rd, ART_NDJSON_RAW, "{\"type\":\"llm.request\",}"),
	    "nor a slip in the JSON");
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_BAD &&
	    art_err_is(&err, "bad_json"), "a wanted type's line is checked");
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_BAD &&
	    art_err_is(&err, "bad_utf8"),
	    "a type that is not the first member: the line is checked");
	ok(next_is(rd, ART_NDJSON_RAW, "{\"type\":\"llm.request\"}"),
	    "a line that is only its type passes too");
	art_ndjson_reader_free(rd);
}

static int
want_raw(const char *type, const char *trigger, void *ctx)
{
	(void)ctx;
	if (trigger == NULL && strcmp(type, "llm.request") == 0)
		return ART_NDJSON_WANT_RAW;
	return strcmp(type, "decision.request") == 0;
}

/* A stage that parses a type itself gets its lines unscanned, checked. */
static void
test_a_type_wanted_raw_is_not_scanned(void)
{
	static const char text[] =
	    "{\"type\":\"llm.request\",}\n"
	    "{\"type\":\"llm.request\",\"x\":\"\xff\"}\n"
	    "{\"type\":\"decision.request\",}\n";
	struct art_ndjson_reader *rd = fed(text, want_raw);
	struct art_err err;
	jv v;

	ok(next_is(rd, ART_NDJSON_RAW, "{\"type\":\"llm.request\",}"),
	    "a type wanted raw comes back raw, its JSON not scanned");
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_BAD &&
	    art_err_is(&err, "bad_utf8"), "its bytes are still checked");
	ok(art_ndjson_next(rd, &v, &err) == ART_NDJSON_BAD &&
	    art_err_is(&err, "bad_json"),
	    "a type the filter may want takes the usual path");
	art_ndjson_reader_free(rd);
}

/* A parsed line's bytes too, as written, for a stage that passes it on. */
static void
test_every_line_gives_its_bytes_as_written(void)
{
	struct art_ndjson_reader *rd = fed(
	    "{\"type\":\"a\",\"x\":1.50}\n"
	    "  {\"type\":\"b\", \"n\":100000000000000000001}  \r\n"
	    "\n"
	    "nope\n"
	    "{\"type\":\"c\"}", NULL);

	ok(next_is(rd, ART_NDJSON_OK, "{\"type\":\"a\",\"x\":1.50}"),
	    "a parsed line's bytes are kept as written (1.50)");
	ok(next_is(rd, ART_NDJSON_OK, "  {\"type\":\"b\", "
	    "\"n\":100000000000000000001}  "),
	    "with its blanks and digits, less \\r\\n");
	ok(next_is(rd, ART_NDJSON_BAD, NULL),
	    "a bad line gives no bytes: its excerpt is in the error line");
	ok(next_is(rd, ART_NDJSON_OK, "{\"type\":\"c\"}") &&
	    art_ndjson_lineno(rd) == 5,
	    "an unterminated last line's bytes, at line 5");
	ok(next_is(rd, ART_NDJSON_EOF, NULL), "none at the end");
	art_ndjson_reader_free(rd);
}

int
main(void)
{
	test_every_line_gives_its_bytes_as_written();
	test_filtered_lines_pass_by_raw_and_counted();
	test_an_unwanted_type_passes_unread();
	test_a_type_wanted_raw_is_not_scanned();
	test_type_holding_a_nul_is_bad_type();
	test_type_with_a_nul_matches_no_name();
	test_every_fixture_file_is_covered();
	test_bad_line_does_not_swallow_the_next();
	test_raw_newline_in_a_string_makes_two_bad_lines();
	test_invalid_utf8_is_bad_utf8_not_replaced();
	test_nul_byte_is_reported_not_truncated();
	test_huge_numbers_parse_as_clamped_doubles();
	test_wrong_types_are_not_object_or_no_type();
	test_unknown_type_is_ok();
	test_missing_type_is_no_type_with_require_type();
	test_missing_type_is_ok_without_require_type();
	test_crlf_and_blank_lines_are_skipped_but_counted();
	test_last_line_without_newline_is_taken();

	test_line_of_exactly_max_line_is_ok();
	test_line_of_exactly_max_line_fed_byte_by_byte_is_ok();
	test_line_one_over_max_line_is_too_long_and_the_next_comes_back();
	test_over_long_last_line_without_newline_is_too_long();
	test_too_long_excerpt_is_the_first_256_bytes();
	test_too_long_excerpt_is_the_first_256_bytes_when_fed_in_pieces();
	test_too_long_message_gives_each_lines_own_length();
	test_default_limit_plus_one_fed_in_chunks_is_too_long();
	test_limit_of_open_brackets_is_bad_json_not_a_crash();

	test_next_on_a_fresh_reader_is_again();
	test_feed_in_one_piece_and_byte_by_byte_agree();
	test_unterminated_last_line_comes_only_after_feed_eof();
	test_feed_eof_with_nothing_fed_is_eof();

	test_nonblocking_empty_pipe_is_again();
	test_closed_pipe_is_eof();
	test_read_error_is_ioerr();

	test_bad_line_is_an_error_record();
	test_bad_json_message_does_not_quote_the_input();
	test_bad_line_input_is_cut_at_256_bytes();
	test_nul_byte_line_keeps_its_nul_in_input();
	test_error_without_input_has_no_input_field();
	test_reader_name_is_kept();

	test_write_is_one_compact_line();
	test_write_to_dev_full_is_io_error();

	test_utf8_ascii_and_multibyte_are_valid();
	test_utf8_overlongs_are_invalid();
	test_utf8_surrogates_are_invalid();
	test_utf8_above_max_code_point_is_invalid();
	test_utf8_truncated_and_stray_bytes_are_invalid();
	test_utf8_reports_offset_of_first_bad_byte();
	return tap_done();
}
