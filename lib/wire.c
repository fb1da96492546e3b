/* wire.c - finding a wire format by name, and reading Retry-After
 *
 * Retry-After is either a count of seconds or an HTTP-date.  RFC 9110
 * asks a recipient to accept all three HTTP-date forms, the IMF-fixdate
 * every server sends today and the obsolete RFC 850 and asctime ones, so
 * each is read here and rewritten as RFC 3339 for art_clock_parse(), which
 * already does the calendar and checks each field's range.
 */
#include "wire.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"

static const struct art_wire *const wires[] = {
	&art_openai_wire,
	&art_anthropic_wire,
};

static const char *const days[] = {
	"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"
};
static const char *const long_days[] = {
	"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
	"Sunday"
};
static const char *const months[] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
	"Nov", "Dec"
};

/* The fields of an HTTP-date, before their ranges are checked. */
struct date {
	int	 year, mon, mday, hour, min, sec;
};

const struct art_wire *
art_wire_find(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < sizeof(wires) / sizeof(wires[0]); i++)
		if (strcmp(wires[i]->name, name) == 0)
			return wires[i];
	return NULL;
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Reads exactly n digits. */
static bool
digits(const char **sp, int n, int *out)
{
	const char *s = *sp;
	int v = 0;

	for (; n > 0; n--, s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	*sp = s;
	return true;
}

static bool
lit(const char **sp, const char *want)
{
	size_t n = strlen(want);

	if (strncmp(*sp, want, n) != 0)
		return false;
	*sp += n;
	return true;
}

/* Reads one of the n words in tbl (case matters, as in HTTP-date). */
static bool
word(const char **sp, const char *const *tbl, int n, int *out)
{
	int i;

	for (i = 0; i < n; i++)
		if (lit(sp, tbl[i])) {
			*out = i;
			return true;
		}
	return false;
}

/* "08:49:37" */
static bool
clock_time(const char **sp, struct date *d)
{
	return digits(sp, 2, &d->hour) && lit(sp, ":") &&
	    digits(sp, 2, &d->min) && lit(sp, ":") && digits(sp, 2, &d->sec);
}

/* "Sun, 06 Nov 1994 08:49:37 GMT" */
static bool
imf_fixdate(const char *s, struct date *d)
{
	int wd;

	if (!(word(&s, days, 7, &wd) && lit(&s, ", ") &&
	    digits(&s, 2, &d->mday) && lit(&s, " ") &&
	    word(&s, months, 12, &d->mon) && lit(&s, " ") &&
	    digits(&s, 4, &d->year) && lit(&s, " ") && clock_time(&s, d) &&
	    lit(&s, " GMT")))
		return false;
	d->mon++;
	return *s == '\0';
}

/* "Sunday, 06-Nov-94 08:49:37 GMT"; a two-digit year below 70 is 20xx. */
static bool
rfc850_date(const char *s, struct date *d)
{
	int wd;

	if (!(word(&s, long_days, 7, &wd) && lit(&s, ", ") &&
	    digits(&s, 2, &d->mday) && lit(&s, "-") &&
	    word(&s, months, 12, &d->mon) && lit(&s, "-") &&
	    digits(&s, 2, &d->year) && lit(&s, " ") && clock_time(&s, d) &&
	    lit(&s, " GMT")))
		return false;
	d->mon++;
	d->year += d->year < 70 ? 2000 : 1900;
	return *s == '\0';
}

/* "Sun Nov  6 08:49:37 1994" */
static bool
asctime_date(const char *s, struct date *d)
{
	int wd;

	if (!(word(&s, days, 7, &wd) && lit(&s, " ") &&
	    word(&s, months, 12, &d->mon) && lit(&s, " ")))
		return false;
	if (!(lit(&s, " ") ? digits(&s, 1, &d->mday) :
	    digits(&s, 2, &d->mday)))
		return false;
	if (!(lit(&s, " ") && clock_time(&s, d) && lit(&s, " ") &&
	    digits(&s, 4, &d->year)))
		return false;
	d->mon++;
	return *s == '\0';
}

/* An HTTP-date in s as epoch milliseconds; -1 when it is not one. */
static int
http_date(const char *s, int64_t *ms)
{
	char buf[ART_CLOCK_BUFSZ];
	struct date d;

	if (!imf_fixdate(s, &d) && !rfc850_date(s, &d) &&
	    !asctime_date(s, &d))
		return -1;
	/* Leap second 60 is not in an HTTP-date. */
	if (d.sec > 59)
		return -1;
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02dZ", d.year,
	    d.mon, d.mday, d.hour, d.min, d.sec);
	return art_clock_parse(buf, ms, NULL);
}

/*
 * Seconds as digits with at most one '.', and a digit somewhere; the
 * milliseconds rounded up, so a caller never retries early.
 */
static int
seconds(const char *s, int64_t *ms)
{
	/* Past a few million years a delay means nothing: clamp it. */
	const int64_t max_ms = INT64_MAX / 2;
	int64_t whole = 0, frac = 0, scale = 100;
	bool any = false, up = false;

	for (; *s >= '0' && *s <= '9'; s++, any = true)
		if ((whole = whole * 10 + (*s - '0')) > max_ms / 1000)
			whole = max_ms / 1000;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, any = true) {
			if (scale > 0)
				frac += (*s - '0') * scale;
			else if (*s != '0')
				up = true;	/* below a millisecond */
			scale /= 10;
		}
	if (!any || *s != '\0')
		return -1;
	*ms = whole * 1000 + frac + up;
	if (*ms > max_ms)
		*ms = max_ms;
	return 0;
}

int64_t
art_wire_retry_after(const char *value, int64_t now_ms)
{
	char buf[64];
	size_t n;
	int64_t ms;

	if (value == NULL)
		return -1;
	while (is_space(*value))
		value++;
	n = strlen(value);
	while (n > 0 && is_space(value[n - 1]))
		n--;
	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, value, n);
	buf[n] = '\0';
	if (seconds(buf, &ms) == 0)
		return ms;
	if (http_date(buf, &ms) == 0)
		return ms > now_ms ? ms - now_ms : 0;
	return -1;
}

jv
art_wire_error(jv msg, bool retryable, const char *code)
{
	jv e = jv_object_set(jv_object(), jv_string("error"), msg);

	e = jv_object_set(e, jv_string("retryable"), jv_bool(retryable));
	return jv_object_set(e, jv_string("code"), jv_string(code));
}
