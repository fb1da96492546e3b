/* price.c - what a model call cost, from a table of prices per token */
#include "price.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"

/* Prices are held in 1e-9 dollars per million tokens. */
#define SCALE_DIGITS	9

enum { P_INPUT, P_OUTPUT, P_CACHE_READ, P_CACHE_WRITE, NPRICES };

static const char *const price_keys[NPRICES] = { "input", "output",
    "cache_read", "cache_write" };

struct entry {
	char		*model;
	uint64_t	 price[NPRICES];
};

struct art_prices {
	struct entry	*e;
	size_t		 n, cap;
};

/*
 * Built in: list prices in dollars per million tokens as the providers
 * published them in 2025.  Prices change; a --prices file replaces any of
 * these and adds more.
 */
static const char builtin[] =
"{"
"\"openai/gpt-4o\":{\"input\":\"2.50\",\"output\":\"10.00\","
    "\"cache_read\":\"1.25\"},"
"\"openai/gpt-4o-mini\":{\"input\":\"0.15\",\"output\":\"0.60\","
    "\"cache_read\":\"0.075\"},"
"\"openai/gpt-4.1\":{\"input\":\"2.00\",\"output\":\"8.00\","
    "\"cache_read\":\"0.50\"},"
"\"openai/gpt-4.1-mini\":{\"input\":\"0.40\",\"output\":\"1.60\","
    "\"cache_read\":\"0.10\"},"
"\"openai/gpt-4.1-nano\":{\"input\":\"0.10\",\"output\":\"0.40\","
    "\"cache_read\":\"0.025\"},"
"\"anthropic/claude-3-5-haiku\":{\"input\":\"0.80\",\"output\":\"4.00\","
    "\"cache_read\":\"0.08\",\"cache_write\":\"1.00\"},"
"\"anthropic/claude-3-5-sonnet\":{\"input\":\"3.00\",\"output\":\"15.00\","
    "\"cache_read\":\"0.30\",\"cache_write\":\"3.75\"},"
"\"anthropic/claude-sonnet-4\":{\"input\":\"3.00\",\"output\":\"15.00\","
    "\"cache_read\":\"0.30\",\"cache_write\":\"3.75\"},"
"\"anthropic/claude-opus-4\":{\"input\":\"15.00\",\"output\":\"75.00\","
    "\"cache_read\":\"1.50\",\"cache_write\":\"18.75\"}"
"}";

/* "2.5", 2.5 → 2500000000.  -1 when not a price. */
static int
parse_price(const jv *v, uint64_t *out)
{
	char buf[64];
	const char *s, *p;
	uint64_t whole = 0, frac = 0;
	int digits = 0, any = 0;

	if (jv_get_kind(*v) == JV_KIND_NUMBER) {
		double d = jv_number_value(*v);

		if (!(d >= 0 && d < 1e9))
			return -1;
		snprintf(buf, sizeof(buf), "%.9f", d);
		s = buf;
	} else if (jv_get_kind(*v) == JV_KIND_STRING)
		s = jv_string_value(*v);
	else
		return -1;
	for (p = s; isdigit((unsigned char)*p); p++, any = 1) {
		if (whole >= 1000000000u)	/* a billion dollars */
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++, any = 1) {
			if (digits == SCALE_DIGITS)
				continue;	/* beyond a nano-dollar */
			frac = frac * 10 + (uint64_t)(*p - '0');
			digits++;
		}
	if (!any || *p != '\0')
		return -1;
	for (; digits < SCALE_DIGITS; digits++)
		frac *= 10;
	*out = whole * 1000000000u + frac;
	return 0;
}

static struct entry *
find_exact(const struct art_prices *t, const char *model, size_t len)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strlen(t->e[i].model) == len &&
		    strncmp(t->e[i].model, model, len) == 0)
			return &t->e[i];
	return NULL;
}

/* Reads one entry into e (prices only); -1 with err. */
static int
read_entry(const char *model, const jv *v, struct entry *e,
    struct art_err *err)
{
	int i;
	jv p;

	if (jv_get_kind(*v) != JV_KIND_OBJECT)
		return art_err_set(err, "bad_prices", "'%s': expected an "
		    "object of prices", model);
	for (i = 0; i < NPRICES; i++) {
		p = art_json_field(v, price_keys[i]);
		if (jv_get_kind(p) == JV_KIND_NULL && i >= P_CACHE_READ)
			e->price[i] = e->price[P_INPUT];
		else if (jv_get_kind(p) == JV_KIND_NULL) {
			jv_free(p);
			return art_err_set(err, "bad_prices", "'%s': missing "
			    "'%s'", model, price_keys[i]);
		} else if (parse_price(&p, &e->price[i]) == -1) {
			jv_free(p);
			return art_err_set(err, "bad_prices", "'%s': '%s' is "
			    "not a price in dollars (\"0.15\")", model,
			    price_keys[i]);
		}
		jv_free(p);
	}
	return 0;
}

int
art_prices_add(struct art_prices *t, const jv *table, struct art_err *err)
{
	struct entry *fresh, *old;
	size_t n = 0, i;

	if (jv_get_kind(*table) != JV_KIND_OBJECT)
		return art_err_set(err, "bad_prices", "expected an object of "
		    "models, got %s", art_json_kind_name(
		    jv_get_kind(*table)));
	/* Check every entry before changing anything. */
	if ((fresh = calloc((size_t)jv_object_length(jv_copy(*table)) + 1,
	    sizeof(*fresh))) == NULL)
		return art_err_set(err, "nomem", "out of memory");
	jv_object_foreach(*table, k, v) {
		if (read_entry(jv_string_value(k), &v, &fresh[n], err) == -1) {
			jv_free(k);
			jv_free(v);
			goto fail;
		}
		fresh[n].model = strdup(jv_string_value(k));
		jv_free(k);
		jv_free(v);
		if (fresh[n++].model == NULL) {
			art_err_set(err, "nomem", "out of memory");
			goto fail;
		}
	}
	for (i = 0; i < n; i++) {
		if ((old = find_exact(t, fresh[i].model,
		    strlen(fresh[i].model))) != NULL) {
			free(old->model);
			*old = fresh[i];
			continue;
		}
		if (art_grow(&t->e, &t->cap, t->n + 1, sizeof(*t->e)) == -1) {
			art_err_set(err, "nomem", "out of memory");
			for (; i < n; i++)
				free(fresh[i].model);
			free(fresh);
			return -1;
		}
		t->e[t->n++] = fresh[i];
	}
	free(fresh);
	return 0;
fail:
	for (i = 0; i < n; i++)
		free(fresh[i].model);
	free(fresh);
	return -1;
}

/* A price held as 1e-9 dollars, as dollars. */
static jv
dollars(uint64_t p)
{
	return jv_number((double)(p / 1000000000u) +
	    (double)(p % 1000000000u) / 1e9);
}

static int
by_model(const void *a, const void *b)
{
	return strcmp((*(const struct entry *const *)a)->model,
	    (*(const struct entry *const *)b)->model);
}

jv
art_prices_list(const struct art_prices *t)
{
	static const char *const names[NPRICES] = {
	    "input_per_million_tokens", "output_per_million_tokens",
	    "cache_read_per_million_tokens", "cache_write_per_million_tokens" };
	const struct entry **sorted;
	const char *slash;
	jv out = jv_array(), e, pricing;
	size_t i;
	int k;

	if ((sorted = calloc(t->n + 1, sizeof(*sorted))) == NULL) {
		jv_free(out);
		return jv_invalid();
	}
	for (i = 0; i < t->n; i++)
		sorted[i] = &t->e[i];
	qsort(sorted, t->n, sizeof(*sorted), by_model);
	for (i = 0; i < t->n; i++) {
		slash = strchr(sorted[i]->model, '/');
		e = art_json_set(jv_object(), "model",
		    jv_string(sorted[i]->model));
		e = art_json_set(e, "model_id", jv_string(slash != NULL ?
		    slash + 1 : sorted[i]->model));
		e = art_json_set(e, "provider", slash != NULL ?
		    jv_string_sized(sorted[i]->model,
		    (int)(slash - sorted[i]->model)) : jv_string(""));
		pricing = jv_object();
		for (k = 0; k < NPRICES; k++)
			pricing = art_json_set(pricing, names[k],
			    dollars(sorted[i]->price[k]));
		out = jv_array_append(out, art_json_set(e, "pricing",
		    pricing));
	}
	free(sorted);
	return out;
}

struct art_prices *
art_prices_new(void)
{
	struct art_prices *t = calloc(1, sizeof(*t));
	jv b;
	int r;

	if (t == NULL)
		return NULL;
	b = jv_parse(builtin);
	r = art_prices_add(t, &b, NULL);
	jv_free(b);
	if (r == -1) {
		art_prices_free(t);
		return NULL;
	}
	return t;
}

void
art_prices_free(struct art_prices *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++)
		free(t->e[i].model);
	free(t->e);
	free(t);
}

int
art_prices_load(struct art_prices *t, const char *path, struct art_err *err)
{
	jv table = jv_load_file(path, 0), msg;
	int r;

	if (!jv_is_valid(table)) {
		msg = jv_invalid_get_msg(table);
		art_err_set(err, "bad_prices", "prices '%s': %s", path,
		    jv_get_kind(msg) == JV_KIND_STRING ?
		    jv_string_value(msg) : "cannot read");
		jv_free(msg);
		return -1;
	}
	/* jv_load_file() gives every value the file holds. */
	if (jv_array_length(jv_copy(table)) != 1) {
		jv_free(table);
		return art_err_set(err, "bad_prices", "prices '%s': expected "
		    "one JSON object", path);
	}
	table = jv_array_get(table, 0);
	r = art_prices_add(t, &table, err);
	jv_free(table);
	return r == -1 ? art_err_prefix(err, "prices '%s'", path) : 0;
}

/* The entry for model: whole, else the longest one up to a '-'. */
static const struct entry *
find(const struct art_prices *t, const char *model)
{
	const struct entry *e;
	size_t len = strlen(model);

	while (len > 0) {
		if ((e = find_exact(t, model, len)) != NULL)
			return e;
		while (len > 0 && model[--len] != '-')
			;
	}
	return NULL;
}

static uint64_t
count(const jv *usage, const char *key, int *any)
{
	jv v = art_json_field(usage, key);
	double d = jv_get_kind(v) == JV_KIND_NUMBER ? jv_number_value(v) : 0;

	if (jv_get_kind(v) == JV_KIND_NUMBER)
		*any = 1;
	jv_free(v);
	return d > 0 && d < 1e15 ? (uint64_t)d : 0;
}

jv
art_prices_cost(const struct art_prices *t, const char *model,
    const jv *usage)
{
	static const char *const count_keys[NPRICES] = { "uncached_input",
	    "output", "cache_read", "cache_write" };
	const struct entry *e;
	unsigned __int128 total = 0;
	const uint64_t unit = 1000000000000000u;	/* 1e15 per dollar */
	char frac[16], buf[64];
	int i, any = 0, n;
	size_t len;

	if (t == NULL || model == NULL || jv_get_kind(*usage) !=
	    JV_KIND_OBJECT || (e = find(t, model)) == NULL)
		return jv_null();
	for (i = 0; i < NPRICES; i++)
		total += (unsigned __int128)count(usage, count_keys[i], &any) *
		    e->price[i];
	if (!any)
		return jv_null();
	/* Tokens times 1e-9 $/Mtok is 1e-15 dollars. */
	snprintf(frac, sizeof(frac), "%015" PRIu64,
	    (uint64_t)(total % unit));
	len = strlen(frac);
	while (len > 0 && frac[len - 1] == '0')
		frac[--len] = '\0';
	n = snprintf(buf, sizeof(buf), "%" PRIu64 "%s%s",
	    (uint64_t)(total / unit), len > 0 ? "." : "", frac);
	return n > 0 ? jv_string(buf) : jv_null();
}

/* Is s a plain decimal: digits, then maybe '.' and digits? */
static bool
plain_decimal(const char *s)
{
	const char *p = s;

	while (isdigit((unsigned char)*p))
		p++;
	if (p == s)
		return false;
	if (*p == '.') {
		const char *f = ++p;

		while (isdigit((unsigned char)*p))
			p++;
		if (p == f)
			return false;
	}
	return *p == '\0';
}

/* The digits of s before its point, and after it (NULL: none). */
static void
decimal_parts(const char *s, size_t *wlen, const char **frac, size_t *flen)
{
	const char *dot = strchr(s, '.');

	*wlen = dot != NULL ? (size_t)(dot - s) : strlen(s);
	*frac = dot != NULL ? dot + 1 : "";
	*flen = strlen(*frac);
}

/* A cost as a double, for one that is not a plain decimal. */
static double
cost_double(const jv *v)
{
	if (jv_get_kind(*v) == JV_KIND_NUMBER)
		return jv_number_value(*v);
	if (jv_get_kind(*v) == JV_KIND_STRING)
		return strtod(jv_string_value(*v), NULL);
	return 0;
}

jv
art_prices_sum(const jv *a, const jv *b)
{
	const char *x = jv_get_kind(*a) == JV_KIND_STRING ?
	    jv_string_value(*a) : NULL;
	const char *y = jv_get_kind(*b) == JV_KIND_STRING ?
	    jv_string_value(*b) : NULL;
	const char *xf, *yf;
	size_t xw, yw, xl, yl, w, f, i, n;
	char *out, buf[64];
	int carry = 0, d;
	jv r;

	if ((x != NULL && !plain_decimal(x)) || (y != NULL &&
	    !plain_decimal(y)) || (x == NULL && jv_get_kind(*a) ==
	    JV_KIND_NUMBER) || (y == NULL && jv_get_kind(*b) ==
	    JV_KIND_NUMBER)) {
		snprintf(buf, sizeof(buf), "%.15g", cost_double(a) +
		    cost_double(b));
		return jv_string(buf);
	}
	if (x == NULL)
		x = "0";
	if (y == NULL)
		y = "0";
	decimal_parts(x, &xw, &xf, &xl);
	decimal_parts(y, &yw, &yf, &yl);
	w = (xw > yw ? xw : yw) + 1;	/* a carry may add a digit */
	f = xl > yl ? xl : yl;
	if ((out = malloc(w + f + 2)) == NULL)
		return jv_string("0");
	/* From the last place of the longer fraction up. */
	for (i = f; i-- > 0;) {
		d = (i < xl ? xf[i] - '0' : 0) + (i < yl ? yf[i] - '0' : 0) +
		    carry;
		out[w + 1 + i] = (char)('0' + d % 10);
		carry = d / 10;
	}
	for (i = 0; i < w; i++) {
		d = (i < xw ? x[xw - 1 - i] - '0' : 0) +
		    (i < yw ? y[yw - 1 - i] - '0' : 0) + carry;
		out[w - 1 - i] = (char)('0' + d % 10);
		carry = d / 10;
	}
	out[w] = '.';
	n = w + 1 + f;
	out[n] = '\0';
	while (n > w + 1 && out[n - 1] == '0')	/* "0.0120" is "0.012" */
		out[--n] = '\0';
	if (n == w + 1)
		out[--n] = '\0';		/* "3." is "3" */
	for (i = 0; i + 1 < w && out[i] == '0'; i++)
		;			/* "03" is "3" */
	r = jv_string(out + i);
	free(out);
	return r;
}
