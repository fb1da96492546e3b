/* clock.h - wall-clock time in epoch milliseconds, which tests can pin */
#ifndef ART_CLOCK_H
#define ART_CLOCK_H
#include <stdint.h>
#include "err.h"

/*
 * Everything in agentrt that reads the time reads it through a struct
 * art_clock, so a test run can freeze it.  The command-line programs pass
 * $AGENTRT_CLOCK as the spec; lib/ never reads the environment itself.
 * Times are milliseconds since 1970-01-01T00:00:00Z, leap seconds ignored
 * as POSIX does.
 */

/* Embedded; set up by art_clock_init(), needs no _release. */
struct art_clock {
	int	 pinned;	/* 1: frozen at pinned_ms; 0: the real clock */
	int64_t	 pinned_ms;
};

/* "2026-01-02T03:04:05.123Z" and its NUL fit with room to spare. */
#define ART_CLOCK_BUFSZ	32

/*
 * spec NULL or "" selects the real clock (CLOCK_REALTIME).  Anything else
 * freezes the clock at spec: an RFC 3339 time as art_clock_parse() reads
 * it, or a decimal count of milliseconds since the epoch ("1767323045123").
 * Returns 0, or -1 with err->code "usage" for a spec that is neither; the
 * clock is then the real one.  spec is not kept.
 */
int	art_clock_init(struct art_clock *, const char *spec, struct art_err *);

/* The time now, or the pinned time, in epoch milliseconds. */
int64_t	art_clock_now_ms(const struct art_clock *);

/* The real clock, for callers given none: never pinned. */
extern const struct art_clock art_clock_real;

/*
 * Milliseconds on CLOCK_MONOTONIC, for intervals only (a timeout, a
 * delay, a deadline turned into "so many ms from now"): it never jumps
 * with the wall clock and is never pinned, so a test that freezes the
 * clock still sees time pass.  Its zero means nothing.
 */
int64_t	art_clock_mono_ms(void);

/*
 * Writes ms as "YYYY-MM-DDTHH:MM:SS.mmmZ" (always UTC, always three
 * fraction digits) into buf and returns buf.  Times before 1970 are fine;
 * years outside 0000..9999 come out with more digits or a sign, which is no
 * longer RFC 3339 but still fits.
 */
char	*art_clock_format(int64_t ms, char buf[ART_CLOCK_BUFSZ]);

/*
 * Reads an RFC 3339 date-time, "2026-01-02T03:04:05Z": 'T' and 'Z' in
 * either case, an optional fraction of any length (digits past the third
 * are dropped, not rounded) and a zone of 'Z' or +HH:MM / -HH:MM, which is
 * subtracted to give UTC.  Second 60 (a leap second) reads as the next
 * second's start.  Stores the instant in *ms and returns 0, or returns -1
 * with err->code "bad_time" and *ms untouched.
 */
int	art_clock_parse(const char *s, int64_t *ms, struct art_err *);

#endif
