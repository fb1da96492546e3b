/* retry.c - retry policies, backoff and deadlines for calls and decisions */
#include "retry.h"

#include <math.h>
#include <string.h>

#include "json.h"

/* About 30 years: longer waits are as good as unbounded, and stay finite. */
#define MAX_SECS	1e9

void
art_retry_default(struct art_retry *r, enum art_call_kind kind)
{
	switch (kind) {
	case ART_KIND_LLM:
		*r = (struct art_retry){ 180, 4, 2, 30 };
		break;
	case ART_KIND_TOOL:
		*r = (struct art_retry){ 120, 0, 0, 0 };
		break;
	case ART_KIND_CLIENT_TOOL:
		*r = (struct art_retry){ -1, 0, 0, 0 };
		break;
	case ART_KIND_SUB_AGENT:
		/* A child's turn takes what it takes; opening it may retry. */
		*r = (struct art_retry){ -1, 2, 2, 30 };
		break;
	case ART_KIND_DECISION:
		*r = (struct art_retry){ 300, 9, 2, 60 };
		break;
	}
}

static int
number(const jv *p, const char *key, double *out, int nullable,
    struct art_err *err)
{
	jv v = art_json_field(p, key);
	jv_kind k = jv_get_kind(v);
	int has = jv_is_valid(v) && jv_object_has(jv_copy(*p),
	    jv_string(key));

	if (k == JV_KIND_NUMBER && jv_number_value(v) >= 0)
		*out = jv_number_value(v) > MAX_SECS ? MAX_SECS :
		    jv_number_value(v);
	else if (k == JV_KIND_NULL && has && nullable)
		*out = -1;
	else if (k != JV_KIND_NULL) {
		jv_free(v);
		return art_err_set(err, "bad_field", "retry: field '%s': "
		    "expected a number %s", key, strcmp(key, "max_retries") ==
		    0 ? "of retries" : "of seconds");
	}
	jv_free(v);
	return 0;
}

int
art_retry_layer(struct art_retry *r, const jv *p, struct art_err *err)
{
	double n = r->max_retries;

	if (jv_get_kind(*p) == JV_KIND_NULL)
		return 0;
	if (jv_get_kind(*p) != JV_KIND_OBJECT)
		return art_err_set(err, "bad_field", "retry: expected an "
		    "object");
	if (number(p, "timeout_secs", &r->timeout_secs, 1, err) == -1 ||
	    number(p, "max_retries", &n, 0, err) == -1 ||
	    number(p, "backoff_base_secs", &r->backoff_base_secs, 0,
	    err) == -1 ||
	    number(p, "backoff_max_secs", &r->backoff_max_secs, 0, err) == -1)
		return -1;
	r->max_retries = n > 1000 ? 1000 : (int)n;
	return 0;
}

int
art_retry_check(const jv *p, struct art_err *err)
{
	static const char *const members[] = { "timeout_secs", "max_retries",
	    "backoff_base_secs", "backoff_max_secs", NULL };
	struct art_retry scratch;
	const char *const *k;

	if (jv_get_kind(*p) == JV_KIND_NULL)
		return 0;
	art_retry_default(&scratch, ART_KIND_TOOL);
	if (art_retry_layer(&scratch, p, err) == -1)
		return -1;
	for (k = members; *k != NULL; k++)
		if (!jv_object_has(jv_copy(*p), jv_string(*k)))
			return art_err_set(err, "bad_field", "retry: missing "
			    "member '%s' (a RetryPolicy has all four of "
			    "timeout_secs, max_retries, backoff_base_secs and "
			    "backoff_max_secs)", *k);
	return 0;
}

jv
art_retry_json(const struct art_retry *r)
{
	jv o = jv_object();

	o = jv_object_set(o, jv_string("timeout_secs"), r->timeout_secs < 0 ?
	    jv_null() : jv_number(r->timeout_secs));
	o = jv_object_set(o, jv_string("max_retries"),
	    jv_number(r->max_retries));
	o = jv_object_set(o, jv_string("backoff_base_secs"),
	    jv_number(r->backoff_base_secs));
	return jv_object_set(o, jv_string("backoff_max_secs"),
	    jv_number(r->backoff_max_secs));
}

bool
art_retry_again(const struct art_retry *r, int64_t attempt)
{
	return attempt < (int64_t)r->max_retries + 1;
}

int64_t
art_retry_backoff_ms(const struct art_retry *r, int64_t attempt)
{
	double s = pow(r->backoff_base_secs, (double)attempt);

	if (!isfinite(s) || s > r->backoff_max_secs)
		s = r->backoff_max_secs;
	if (s > MAX_SECS)
		s = MAX_SECS;
	return (int64_t)(s * 1000);
}

int64_t
art_retry_deadline_ms(const struct art_retry *r, int64_t now_ms)
{
	return r->timeout_secs < 0 ? -1 : now_ms + (int64_t)((r->timeout_secs >
	    MAX_SECS ? MAX_SECS : r->timeout_secs) * 1000);
}
