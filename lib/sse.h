/* sse.h - Server-Sent Events: an event stream parsed as its bytes arrive */
#ifndef ART_SSE_H
#define ART_SSE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/*
 * The WHATWG "event stream interpretation" rules, byte by byte, so any
 * chunking of the same bytes gives the same events.  Lines end with
 * "\r\n", "\n" or "\r" (a '\r' ending one chunk and a '\n' starting the
 * next are one line end); a blank line dispatches; a line starting with
 * ':' is a comment; "field:value" loses one space after the colon, and a
 * line without a colon is a field with an empty value.  "data" lines join
 * with '\n'; "event" names the event; "id" sets the last event ID unless
 * its value holds a NUL; "retry" sets the reconnection time when its value
 * is all ASCII digits; other fields are ignored.  A UTF-8 BOM at the very
 * start is skipped.  An event whose data buffer is empty (no "data" line
 * since the last dispatch) is not dispatched, and neither is one that is
 * not ended by a blank line before the end of the stream.
 */

/* The largest line, and the largest event data, by default: 64 MiB. */
#define ART_SSE_MAX_EVENT	((size_t)64 << 20)

/*
 * One dispatched event; every pointer is borrowed for the callback only.
 * event is "message" when no "event" field named it.  data is the data
 * lines joined with '\n'; it may hold NULs, and data[data_len] is NUL.
 * id is the last event ID, "" when none; retry the last "retry" in
 * milliseconds, -1 when none (both last from event to event).
 */
struct art_sse_event {
	const char	*event;
	const char	*data;
	size_t		 data_len;
	const char	*id;
	long		 retry;
};

/*
 * Called once per dispatched event.  Returns 0 to go on; any other value
 * stops art_sse_feed(), which returns it.  A callback that fails can fill
 * an art_err it reaches through ctx and return -1.
 */
typedef int art_sse_event_fn(const struct art_sse_event *, void *ctx);

struct art_sse;

/*
 * A parser for one stream.  No line, and no event's data, may be longer
 * than max_event bytes (0: ART_SSE_MAX_EVENT); comment lines are skipped
 * without being held, so they have no limit.  Returns NULL only when out
 * of memory.
 */
struct art_sse *art_sse_new(size_t max_event);
void	art_sse_free(struct art_sse *);

/*
 * Parses the n bytes at p (p may be NULL when n is 0), calling fn (which
 * may be NULL) for each event they complete.  Returns 0, or what a
 * callback returned to stop (the rest of p is then not parsed: stopping
 * is for a "[DONE]" or an error event, not for pausing), or -1 with err
 * code "sse_too_large" for a line or event over the limit, or "nomem".
 * After -1 the parser is broken: each later call fails the same way.
 */
int	art_sse_feed(struct art_sse *, const char *p, size_t n,
	    art_sse_event_fn *fn, void *ctx, struct art_err *);

/*
 * Ends the stream.  By the rules an event not ended by a blank line is
 * dropped, so fn is never called (fn and ctx are taken so that the end of
 * a stream reads like its middle; both may be NULL).  Returns 0 when the
 * stream ended at an event boundary, 1 when bytes of an unfinished event
 * were dropped (what a provider calls a truncated stream), or -1 with err
 * set if the parser had failed.  Leaves the parser as it was.
 */
int	art_sse_finish(struct art_sse *, art_sse_event_fn *fn, void *ctx,
	    struct art_err *);

/*
 * True when the bytes fed so far do not end at an event boundary: part of
 * a line (a comment, even a lone byte of the BOM) is held, or field lines
 * came after the last blank line.  Whole comment lines leave it false.
 */
bool	art_sse_is_pending(const struct art_sse *);

/* True when ev's data is exactly "[DONE]", OpenAI's end of stream. */
bool	art_sse_is_done(const struct art_sse_event *);

#endif
