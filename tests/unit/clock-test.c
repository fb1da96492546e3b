/* clock-test - formatting, parsing and pinning the clock */
#include "clock.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tap.h"

static const struct {
	int64_t		 ms;
	const char	*text;
} instants[] = {
	{ 0, "1970-01-01T00:00:00.000Z" },
	{ 1767323045123LL, "2026-01-02T03:04:05.123Z" },
	{ 1709210096789LL, "2024-02-29T12:34:56.789Z" },
	{ 951782400000LL, "2000-02-29T00:00:00.000Z" },
	{ 4107542400000LL, "2100-03-01T00:00:00.000Z" },
	{ 2147483647000LL, "2038-01-19T03:14:07.000Z" },
	{ 2147483648000LL, "2038-01-19T03:14:08.000Z" },
	{ 253402300799999LL, "9999-12-31T23:59:59.999Z" },
	{ -1, "1969-12-31T23:59:59.999Z" },
	{ -62135596800000LL, "0001-01-01T00:00:00.000Z" },
	{ -62167219200000LL, "0000-01-01T00:00:00.000Z" },
};
#define NINSTANTS (sizeof(instants) / sizeof(instants[0]))

static void
test_known_instants_format_exactly(void)
{
	char buf[ART_CLOCK_BUFSZ];
	size_t i;

	for (i = 0; i < NINSTANTS; i++)
		ok(strcmp(art_clock_format(instants[i].ms, buf),
		    instants[i].text) == 0, "%lld formats as %s (got %s)",
		    (long long)instants[i].ms, instants[i].text, buf);
}

static void
test_known_instants_parse_exactly(void)
{
	struct art_err err;
	int64_t ms;
	size_t i;

	for (i = 0; i < NINSTANTS; i++) {
		ms = INT64_MIN;
		ok(art_clock_parse(instants[i].text, &ms, &err) == 0 &&
		    ms == instants[i].ms, "%s parses as %lld",
		    instants[i].text, (long long)instants[i].ms);
	}
}

static void
test_extreme_instants_fit_the_buffer(void)
{
	char buf[ART_CLOCK_BUFSZ];

	ok(strlen(art_clock_format(INT64_MAX, buf)) < ART_CLOCK_BUFSZ - 1,
	    "the largest instant formats within the buffer (%s)", buf);
	ok(strlen(art_clock_format(INT64_MIN, buf)) < ART_CLOCK_BUFSZ - 1,
	    "the smallest instant formats within the buffer (%s)", buf);
}

/* Every 1/7th of a year or so from 0000 to 9999, at odd milliseconds. */
static void
test_format_then_parse_round_trips(void)
{
	const int64_t lo = -62167219200000LL, hi = 253402300799999LL;
	char buf[ART_CLOCK_BUFSZ];
	int64_t ms, got;
	int bad = 0, n = 0;

	for (ms = lo; ms <= hi; ms += 4500000007LL, n++) {
		if (art_clock_parse(art_clock_format(ms, buf), &got, NULL) ||
		    got != ms)
			bad++;
	}
	ok(bad == 0, "%d instants from 0000 to 9999 round-trip through "
	    "format and parse (%d do not)", n, bad);
}

static void
test_every_day_of_a_leap_cycle_round_trips(void)
{
	char buf[ART_CLOCK_BUFSZ];
	int64_t ms, got, day;
	int bad = 0;

	for (day = -146097; day < 2 * 146097; day++) {
		ms = day * 86400000LL + 43200000;
		if (art_clock_parse(art_clock_format(ms, buf), &got, NULL) ||
		    got != ms)
			bad++;
	}
	ok(bad == 0, "noon of each day 1570..2770 round-trips (%d do not)",
	    bad);
}

static int64_t
parsed(const char *s)
{
	int64_t ms = INT64_MIN;

	art_clock_parse(s, &ms, NULL);
	return ms;
}

static void
test_fractions_keep_milliseconds(void)
{
	ok(parsed("2026-01-02T03:04:05.1Z") == 1767323045100LL,
	    "one fraction digit is tenths");
	ok(parsed("2026-01-02T03:04:05.12Z") == 1767323045120LL,
	    "two fraction digits are hundredths");
	ok(parsed("2026-01-02T03:04:05.123999999Z") == 1767323045123LL,
	    "fraction digits past milliseconds are dropped, not rounded");
	ok(parsed("2026-01-02T03:04:05Z") == 1767323045000LL,
	    "no fraction is zero milliseconds");
}

static void
test_offsets_are_subtracted_to_give_utc(void)
{
	int64_t want = 1767323045000LL;	/* 2026-01-02T03:04:05Z */

	ok(parsed("2026-01-02T03:04:05+00:00") == want, "+00:00 is UTC");
	ok(parsed("2026-01-02T03:04:05-00:00") == want, "-00:00 is UTC");
	ok(parsed("2026-01-02T05:04:05+02:00") == want,
	    "+02:00 is two hours east of UTC");
	ok(parsed("2026-01-01T22:34:05-04:30") == want,
	    "-04:30 crosses back over midnight and the year");
	ok(parsed("2026-01-02T08:49:05.000+05:45") == want,
	    "+05:45 with a fraction");
	ok(parsed("2026-01-02t03:04:05z") == want,
	    "lowercase t and z are accepted, as RFC 3339 allows");
}

static void
test_leap_second_reads_as_the_next_second(void)
{
	ok(parsed("2016-12-31T23:59:60Z") == parsed("2017-01-01T00:00:00Z"),
	    "23:59:60 is read as the next day's midnight");
}

static void
test_bad_times_are_rejected_with_bad_time(void)
{
	static const char *bad[] = {
		"", "2026", "2026-01-02", "2026-01-02T03:04:05",
		"2026-01-02T03:04Z", "2026-1-02T03:04:05Z",
		"2026-01-02 03:04:05Z", "2026-01-02X03:04:05Z",
		"2026-00-10T00:00:00Z", "2026-13-01T00:00:00Z",
		"2026-01-00T00:00:00Z", "2026-01-32T00:00:00Z",
		"2026-04-31T00:00:00Z", "2026-02-29T00:00:00Z",
		"2100-02-29T00:00:00Z", "2026-01-02T24:00:00Z",
		"2026-01-02T03:60:00Z", "2026-01-02T03:04:61Z",
		"2026-01-02T03:04:05.Z", "2026-01-02T03:04:05,5Z",
		"2026-01-02T03:04:05+02", "2026-01-02T03:04:05+2:00",
		"2026-01-02T03:04:05+0200", "2026-01-02T03:04:05+24:00",
		"2026-01-02T03:04:05+02:60", "2026-01-02T03:04:05ZZ",
		"2026-01-02T03:04:05Z ", " 2026-01-02T03:04:05Z",
		"+2026-01-02T03:04:05Z", "2026-01-02T03:04:05UTC",
		"2026-01-02T03-04-05Z", "2026:01:02T03:04:05Z",
		"2026-01-02T03:04:05MZ", "2026-01-02T03:04:05+02Z00",
	};
	struct art_err err;
	size_t i;
	int64_t ms;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ms = 42;
		art_err_clear(&err);
		ok(art_clock_parse(bad[i], &ms, &err) == -1 &&
		    art_err_is(&err, "bad_time") && ms == 42,
		    "'%s' is rejected and *ms is untouched", bad[i]);
	}
	art_clock_parse("nope", &ms, &err);
	ok(strcmp(err.msg, "bad time 'nope': expected an RFC 3339 time like "
	    "2026-01-02T03:04:05Z") == 0, "the message quotes the input");
}

static void
test_pinned_clock_returns_the_pinned_time(void)
{
	struct art_clock c;
	struct art_err err;

	ok(art_clock_init(&c, "2026-01-02T03:04:05.123Z", &err) == 0 &&
	    c.pinned && art_clock_now_ms(&c) == 1767323045123LL &&
	    art_clock_now_ms(&c) == 1767323045123LL,
	    "an RFC 3339 spec pins the clock, and it stays there");
	ok(art_clock_init(&c, "2026-01-02T05:04:05+02:00", &err) == 0 &&
	    art_clock_now_ms(&c) == 1767323045000LL,
	    "an RFC 3339 spec with an offset pins the clock at UTC");
	ok(art_clock_init(&c, "1767323045123", &err) == 0 &&
	    art_clock_now_ms(&c) == 1767323045123LL,
	    "an epoch-milliseconds spec pins the clock");
	ok(art_clock_init(&c, "0", &err) == 0 && c.pinned &&
	    art_clock_now_ms(&c) == 0, "spec 0 pins the clock at the epoch");
	ok(art_clock_init(&c, "9223372036854775807", &err) == 0 &&
	    art_clock_now_ms(&c) == INT64_MAX,
	    "the largest epoch-milliseconds spec is accepted");
}

/*
 * Whether c reads the system's real time.  The system clock may be stepped
 * (a VM's clock is corrected now and then) between two readings, so a
 * reading that falls outside the second around it is tried again, a few
 * times, before it counts as wrong.
 */
static int
near_real_time(const struct art_clock *c)
{
	int64_t before, now, after;
	int tries;

	for (tries = 0; tries < 5; tries++) {
		before = (int64_t)time(NULL) * 1000;
		now = art_clock_now_ms(c);
		after = (int64_t)time(NULL) * 1000;
		if (now >= before - 1000 && now <= after + 1000)
			return 1;
	}
	return 0;
}

static void
test_empty_spec_is_the_real_clock(void)
{
	struct art_clock c;
	struct art_err err;

	ok(art_clock_init(&c, NULL, &err) == 0 && !c.pinned &&
	    near_real_time(&c), "a NULL spec gives the real clock");
	ok(art_clock_init(&c, "", &err) == 0 && !c.pinned &&
	    near_real_time(&c), "an empty spec gives the real clock");
}

static void
test_bad_specs_are_usage_errors(void)
{
	static const char *bad[] = {
		"xyz", "-5", "12a", " 12", "1.5", "+12",
		"99999999999999999999", "9223372036854775808",
		"2026-01-02T03:04:05", "2026-02-30T00:00:00Z", "now",
	};
	struct art_clock c;
	struct art_err err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		art_err_clear(&err);
		ok(art_clock_init(&c, bad[i], &err) == -1 &&
		    art_err_is(&err, "usage") && !c.pinned,
		    "clock spec '%s' is a usage error and leaves the clock "
		    "real", bad[i]);
	}
	art_clock_init(&c, "xyz", &err);
	ok(strcmp(err.msg, "bad clock 'xyz': expected an RFC 3339 time or "
	    "epoch milliseconds") == 0, "the message names the bad spec: %s",
	    err.msg);
}

int
main(void)
{
	test_known_instants_format_exactly();
	test_known_instants_parse_exactly();
	test_extreme_instants_fit_the_buffer();
	test_format_then_parse_round_trips();
	test_every_day_of_a_leap_cycle_round_trips();
	test_fractions_keep_milliseconds();
	test_offsets_are_subtracted_to_give_utc();
	test_leap_second_reads_as_the_next_second();
	test_bad_times_are_rejected_with_bad_time();
	test_pinned_clock_returns_the_pinned_time();
	test_empty_spec_is_the_real_clock();
	test_bad_specs_are_usage_errors();
	return tap_done();
}
