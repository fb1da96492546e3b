/* clock.c - wall-clock time in epoch milliseconds, which tests can pin */
#include "clock.h"

#include <stdio.h>
#include <time.h>

/*
 * Calendar arithmetic is done here rather than with gmtime_r() and
 * timegm(): timegm() is not POSIX, and doing both directions with the same
 * formulas keeps format and parse exact inverses at any instant.  Dates are
 * proleptic Gregorian, counted in 400-year eras of 146097 days that start
 * on March 1st so that the leap day falls at the end of each year.
 */

#define MS_PER_DAY	86400000LL
#define DAYS_0000_TO_1970	719468	/* 0000-03-01 to 1970-01-01 */

struct fields {
	int64_t	 year;
	int	 mon, mday, hour, min, sec, msec;
	int	 off;			/* zone offset east of UTC, minutes */
};

static int64_t
floordiv(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

/* Days since 1970-01-01 of a valid y-m-d. */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy;

	if (m <= 2)
		y--;			/* January and February end the year */
	era = floordiv(y, 400);
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy -
	    DAYS_0000_TO_1970;
}

/* The inverse of days_from_civil(). */
static void
civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += DAYS_0000_TO_1970;
	era = floordiv(z, 146097);
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int
days_in_month(int64_t y, int m)
{
	static const int mdays[12] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31
	};
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return mdays[m - 1] + (m == 2 && leap);
}

char *
art_clock_format(int64_t ms, char buf[ART_CLOCK_BUFSZ])
{
	int64_t days = floordiv(ms, MS_PER_DAY), in_day = ms % MS_PER_DAY;
	int64_t year;
	int mon, mday, sec;

	if (in_day < 0)
		in_day += MS_PER_DAY;
	sec = (int)(in_day / 1000);
	civil_from_days(days, &year, &mon, &mday);
	snprintf(buf, ART_CLOCK_BUFSZ, "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    (long long)year, mon, mday, sec / 3600, sec / 60 % 60, sec % 60,
	    (int)(in_day % 1000));
	return buf;
}

/* Reads exactly n digits; returns -1 if there are fewer. */
static int
digits(const char **sp, int n, int *out)
{
	const char *s = *sp;
	int v = 0;

	for (; n > 0; n--, s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	*sp = s;
	return 0;
}

/* Reads the character c, or its lowercase form if c is a capital. */
static int
expect(const char **sp, char c)
{
	int lower = c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;

	if (**sp != c && **sp != lower)
		return -1;
	(*sp)++;
	return 0;
}

/* ".123456": keeps milliseconds, drops the rest. */
static int
fraction(const char **sp, int *msec)
{
	const char *s = *sp + 1;
	int scale = 100;

	*msec = 0;
	if (**sp != '.')
		return 0;
	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++, scale /= 10)
		*msec += (*s - '0') * scale;
	*sp = s;
	return 0;
}

static int
zone(const char **sp, int *off)
{
	int sign = **sp == '-' ? -1 : 1, h, m;

	if (expect(sp, 'Z') == 0) {
		*off = 0;
		return 0;
	}
	if (**sp != '+' && **sp != '-')
		return -1;
	(*sp)++;
	if (digits(sp, 2, &h) == -1 || expect(sp, ':') == -1 ||
	    digits(sp, 2, &m) == -1 || h > 23 || m > 59)
		return -1;
	*off = sign * (h * 60 + m);
	return 0;
}

static int
parse_fields(const char *s, struct fields *f)
{
	int year;

	if (digits(&s, 4, &year) == -1 || expect(&s, '-') == -1 ||
	    digits(&s, 2, &f->mon) == -1 || expect(&s, '-') == -1 ||
	    digits(&s, 2, &f->mday) == -1 || expect(&s, 'T') == -1 ||
	    digits(&s, 2, &f->hour) == -1 || expect(&s, ':') == -1 ||
	    digits(&s, 2, &f->min) == -1 || expect(&s, ':') == -1 ||
	    digits(&s, 2, &f->sec) == -1 || fraction(&s, &f->msec) == -1 ||
	    zone(&s, &f->off) == -1 || *s != '\0')
		return -1;
	f->year = year;
	if (f->mon < 1 || f->mon > 12 ||
	    f->mday < 1 || f->mday > days_in_month(f->year, f->mon) ||
	    f->hour > 23 || f->min > 59 || f->sec > 60)
		return -1;
	return 0;
}

int
art_clock_parse(const char *s, int64_t *ms, struct art_err *err)
{
	struct fields f;
	int64_t secs;

	if (parse_fields(s, &f) == -1)
		return art_err_set(err, "bad_time", "bad time '%.64s': "
		    "expected an RFC 3339 time like 2026-01-02T03:04:05Z", s);
	secs = days_from_civil(f.year, f.mon, f.mday) * 86400 +
	    f.hour * 3600 + f.min * 60 + f.sec - f.off * 60;
	*ms = secs * 1000 + f.msec;
	return 0;
}

/* A plain decimal count of milliseconds; -1 if s is not one or overflows. */
static int
parse_epoch_ms(const char *s, int64_t *ms)
{
	int64_t v = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > (INT64_MAX - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	*ms = v;
	return 0;
}

int
art_clock_init(struct art_clock *c, const char *spec, struct art_err *err)
{
	int64_t ms;

	c->pinned = 0;
	c->pinned_ms = 0;
	if (spec == NULL || *spec == '\0')
		return 0;
	if (parse_epoch_ms(spec, &ms) == -1 &&
	    art_clock_parse(spec, &ms, NULL) == -1)
		return art_err_set(err, "usage", "bad clock '%.64s': expected "
		    "an RFC 3339 time or epoch milliseconds", spec);
	c->pinned = 1;
	c->pinned_ms = ms;
	return 0;
}

int64_t
art_clock_now_ms(const struct art_clock *c)
{
	struct timespec ts;

	if (c->pinned)
		return c->pinned_ms;
	/* CLOCK_REALTIME always exists, so this cannot fail. */
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const struct art_clock art_clock_real = { 0, 0 };

int64_t
art_clock_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
