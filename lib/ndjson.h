/* ndjson.h - newline-delimited JSON: one object a line, bad lines reported */
#ifndef ART_NDJSON_H
#define ART_NDJSON_H

#include <stddef.h>
#include <stdio.h>

#include <jv.h>

#include "err.h"

/* The longest line read by default, in bytes before its '\n'. */
#define ART_NDJSON_MAX_LINE	((size_t)64 << 20)
/* How much of a bad line an error line quotes. */
#define ART_NDJSON_EXCERPT	256

enum art_ndjson_status {
	ART_NDJSON_OK,		/* *out holds the next object */
	ART_NDJSON_BAD,		/* the line was bad; err says why; go on */
	ART_NDJSON_AGAIN,	/* no whole line yet: feed more, or poll fd */
	ART_NDJSON_EOF,		/* end of input, every line returned */
	ART_NDJSON_IOERR,	/* reading failed; err says why */
	ART_NDJSON_RAW		/* a well-formed line the filter passes by */
};

/* Every line must also carry a string "type" (the bus rule). */
#define ART_NDJSON_REQUIRE_TYPE	0x1
/* A line may also be a JSON array (a JSON-RPC batch); *out is that array. */
#define ART_NDJSON_ARRAYS	0x2
/*
 * A client's line: a number that parsing would change (out of a double's
 * range, an integer beyond 2^53, so small it becomes 0) makes the line
 * ART_NDJSON_BAD, err code "bad_input" naming the member
 * (art_json_check_numbers), rather than be recorded changed.
 */
#define ART_NDJSON_EXACT_NUMBERS	0x4

struct art_ndjson_reader;

/*
 * A reader of fd (which it never closes), or of bytes handed to
 * art_ndjson_feed() when fd is -1.  name labels messages ("<stdin>", a
 * file's path) and is borrowed for the reader's life.  Lines longer than
 * max_line bytes are reported, never held whole (with the feed API, as
 * long as the caller calls art_ndjson_next() between feeds).  Returns NULL
 * only when out of memory.
 */
struct art_ndjson_reader *art_ndjson_reader_new(int fd, const char *name,
	    size_t max_line, unsigned flags);
void	art_ndjson_reader_free(struct art_ndjson_reader *);

/*
 * The next line.  Splits on '\n' before parsing, so a bad line never
 * swallows the good one after it.  Strips a '\r' before the newline, skips
 * blank lines, and takes a last line that has no newline.  A line holding
 * a NUL byte or invalid UTF-8, one that is not exactly one JSON object, or
 * one over max_line is ART_NDJSON_BAD with err->code "nul_byte",
 * "bad_utf8", "bad_json", "not_object" or "line_too_long"; with
 * ART_NDJSON_REQUIRE_TYPE, so is one with no string "type" ("no_type") or
 * whose type holds a NUL ("bad_type", art_ndjson_check_type()).  On
 * ART_NDJSON_OK the caller owns *out.  With fd -1, or a non-blocking fd
 * that has nothing to read, returns ART_NDJSON_AGAIN when no whole line is
 * buffered.
 */
enum art_ndjson_status art_ndjson_next(struct art_ndjson_reader *, jv *out,
	    struct art_err *);
/*
 * A stage that answers few of the lines it reads sets a filter: each
 * well-formed line's "type" and trigger "type" go to want() first, and a
 * line it does not want is checked but never parsed: art_ndjson_next()
 * returns ART_NDJSON_RAW, to be passed on as art_ndjson_raw() gives it.
 * Lines that are not well-formed take the usual path, so they still
 * become error lines.  Before that, a line whose first member is its
 * type, as the stages write them ({"type":"T",…), goes to want() with
 * trigger_type NULL: "may you want any line of type T?"  A filter that
 * says no has the line passed on without a byte of its body read (a
 * 200 KB model request through a decide stage); the stage that takes it
 * checks it.  One that answers ART_NDJSON_WANT_RAW has the line, once
 * its bytes are checked for NULs and UTF-8, as ART_NDJSON_RAW without a
 * scan of its JSON: the stage parses it itself and says what is wrong
 * with it (agentrt-llm and its model requests).  A line with two "type"
 * members is judged by its first here and by its last where it is parsed
 * (libjq keeps the last); no stage writes one, and the engine refuses
 * what it cannot place.
 */
#define ART_NDJSON_WANT_RAW	2
typedef int art_ndjson_want_fn(const char *type, const char *trigger_type,
	    void *ctx);
void	art_ndjson_set_filter(struct art_ndjson_reader *, art_ndjson_want_fn *,
	    void *ctx);
/*
 * The bytes of the line just returned as ART_NDJSON_OK or ART_NDJSON_RAW
 * as they were read, less the newline and a '\r' before it, so a stage
 * can pass a line on byte for byte; NULL (and *len 0) after any other
 * status.  Valid until the next call on the reader.
 */
const char *art_ndjson_raw(const struct art_ndjson_reader *, size_t *len);

/* Appends bytes to a reader made with fd -1; -1 and err "nomem" on failure. */
int	art_ndjson_feed(struct art_ndjson_reader *, const void *, size_t,
	    struct art_err *);
/* Says no more bytes will come: the last unterminated line is then taken. */
void	art_ndjson_feed_eof(struct art_ndjson_reader *);

/* The number of the line last returned, from 1. */
size_t	art_ndjson_lineno(const struct art_ndjson_reader *);
const char *art_ndjson_name(const struct art_ndjson_reader *);

/*
 * The error line for the line art_ndjson_next() just reported BAD:
 * {"type":"error","code":…,"message":"<name>:<line>: <why>","input":…}
 * with input the line's first ART_NDJSON_EXCERPT bytes.  Caller owns it.
 */
jv	art_ndjson_bad_line(const struct art_ndjson_reader *,
	    const struct art_err *);

/*
 * An error line {"type":"error","code":…,"message":…} with "input" the
 * first ART_NDJSON_EXCERPT bytes of input when input is not NULL.
 */
jv	art_ndjson_error(const char *code, const char *message,
	    const char *input, size_t len);

/*
 * The line's "type" (line borrowed), or "" when it has none or when it
 * holds a NUL byte: a type is a JSON string, and one with a "\u0000" in
 * it must match no type name, though its C string would.  Valid while
 * line lives.  Every comparison of a bus line's type goes through this.
 */
const char *art_ndjson_type(const jv *line);
/*
 * 0 when line's "type" (borrowed) is absent, not a string, or a string
 * without a NUL byte; -1 with err code "bad_type" and a message quoting
 * the type when it holds one.  The reader applies it to every line under
 * ART_NDJSON_REQUIRE_TYPE; a line made some other way is checked with it.
 */
int	art_ndjson_check_type(const jv *line, struct art_err *);

/*
 * Writes v (consumed) as one compact line and flushes.  Returns -1 with
 * err code "io" when the write fails (a reader gone, a full disk).
 */
int	art_ndjson_write(FILE *, jv v, struct art_err *);

#endif
