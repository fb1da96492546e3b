/* retry-test - retry policies: defaults, layering, backoff, deadlines */
#include <string.h>

#include "json.h"
#include "retry.h"
#include "tap.h"
#include "testjv.h"

static int
same(const struct art_retry *r, double timeout, int retries, double base,
    double max)
{
	return r->timeout_secs == timeout && r->max_retries == retries &&
	    r->backoff_base_secs == base && r->backoff_max_secs == max;
}

/* Lays the JSON text over r; returns art_retry_layer's result. */
static int
layer(struct art_retry *r, const char *text, struct art_err *err)
{
	jv p = art_json_parse_str(text, err);
	int rc = art_retry_layer(r, &p, err);

	jv_free(p);
	return rc;
}

static void
test_each_kind_has_its_default_policy(void)
{
	struct art_retry r;

	art_retry_default(&r, ART_KIND_LLM);
	ok(same(&r, 180, 4, 2, 30), "llm: 180 s, 4 retries, backoff 2/30");
	art_retry_default(&r, ART_KIND_TOOL);
	ok(same(&r, 120, 0, 0, 0), "worker tool: 120 s, never retried");
	art_retry_default(&r, ART_KIND_CLIENT_TOOL);
	ok(r.timeout_secs < 0 && same(&r, r.timeout_secs, 0, 0, 0),
	    "client tool: unbounded, never retried");
	ok(art_retry_deadline_ms(&r, 1000) == -1,
	    "a client tool's attempt has no deadline");
	art_retry_default(&r, ART_KIND_DECISION);
	ok(same(&r, 300, 9, 2, 60), "decision: 300 s, 9 retries, backoff 2/60");
}

static void
test_layering_keeps_absent_fields(void)
{
	struct art_retry r;
	struct art_err err;

	art_retry_default(&r, ART_KIND_LLM);
	ok(layer(&r, "{\"max_retries\":2}", &err) == 0 &&
	    same(&r, 180, 2, 2, 30),
	    "only the given field changes");
	ok(layer(&r, "{\"backoff_base_secs\":0,\"backoff_max_secs\":5}",
	    &err) == 0 && same(&r, 180, 2, 0, 5), "layers stack");
	ok(layer(&r, "{}", &err) == 0 && same(&r, 180, 2, 0, 5),
	    "an empty policy changes nothing");
	ok(layer(&r, "null", &err) == 0 && same(&r, 180, 2, 0, 5),
	    "a null policy changes nothing");
	ok(layer(&r, "{\"max_retries\":null,\"backoff_max_secs\":null}",
	    &err) == 0 && same(&r, 180, 2, 0, 5),
	    "null counts and backoffs keep what was there");
	ok(layer(&r, "{\"timeout_secs\":7.5}", &err) == 0 &&
	    r.timeout_secs == 7.5, "a fractional timeout is kept");
}

static void
test_a_null_timeout_is_unbounded(void)
{
	struct art_retry r;
	struct art_err err;

	art_retry_default(&r, ART_KIND_TOOL);
	ok(layer(&r, "{\"timeout_secs\":null}", &err) == 0 &&
	    r.timeout_secs < 0, "timeout_secs null: unbounded");
	ok(art_retry_deadline_ms(&r, 5000) == -1, "so there is no deadline");
	ok(is_json(art_retry_json(&r), "{\"timeout_secs\":null,"
	    "\"max_retries\":0,\"backoff_base_secs\":0,\"backoff_max_secs\":"
	    "0}"),
	    "and the wire shows it as null");
	art_retry_default(&r, ART_KIND_TOOL);
	ok(layer(&r, "{\"max_retries\":1}", &err) == 0 && r.timeout_secs == 120,
	    "an absent timeout_secs is not a null one");
}

static void
test_bad_policies_are_refused(void)
{
	static const char *const bad[] = {
		"[]", "3", "\"x\"", "true",
		"{\"timeout_secs\":\"60\"}",
		"{\"timeout_secs\":-1}",
		"{\"max_retries\":\"2\"}",
		"{\"max_retries\":true}",
		"{\"max_retries\":-1}",
		"{\"backoff_base_secs\":[2]}",
		"{\"backoff_max_secs\":{}}",
		NULL
	};
	const char *const *b;
	struct art_retry r;
	struct art_err err;

	for (b = bad; *b != NULL; b++) {
		art_retry_default(&r, ART_KIND_LLM);
		err.code = NULL;
		ok(layer(&r, *b, &err) == -1 && art_err_is(&err, "bad_field"),
		    "refused: %s", *b);
	}
	art_retry_default(&r, ART_KIND_LLM);
	ok(layer(&r, "{\"max_retries\":\"2\"}", &err) == -1 &&
	    strstr(err.msg, "max_retries") != NULL,
	    "the message names the field: %s", err.msg);
}

/* max_retries counts retries after the first attempt, attempts from 1. */
static void
test_retry_again_counts_attempts_from_one(void)
{
	struct art_retry r;

	art_retry_default(&r, ART_KIND_LLM);
	r.max_retries = 2;
	ok(art_retry_again(&r, 1), "max_retries 2: attempt 1 may retry");
	ok(art_retry_again(&r, 2), "attempt 2 may retry");
	ok(!art_retry_again(&r, 3), "attempt 3 is the last");
	ok(!art_retry_again(&r, 4), "and so is anything after it");
	r.max_retries = 0;
	ok(!art_retry_again(&r, 1), "max_retries 0: the first attempt is all");
	art_retry_default(&r, ART_KIND_LLM);
	ok(art_retry_again(&r, 4) && !art_retry_again(&r, 5),
	    "the llm default allows five attempts");
	art_retry_default(&r, ART_KIND_DECISION);
	ok(art_retry_again(&r, 9) && !art_retry_again(&r, 10),
	    "a decision is delivered at most ten times");
}

static void
test_backoff_is_base_to_the_attempt_capped(void)
{
	struct art_retry r = { 60, 9, 2, 30 };

	ok(art_retry_backoff_ms(&r, 1) == 2000, "2^1 s");
	ok(art_retry_backoff_ms(&r, 2) == 4000, "2^2 s");
	ok(art_retry_backoff_ms(&r, 4) == 16000, "2^4 s");
	ok(art_retry_backoff_ms(&r, 5) == 30000, "2^5 s capped at 30 s");
	ok(art_retry_backoff_ms(&r, 5000) == 30000,
	    "a huge power saturates at the cap");
	r.backoff_base_secs = 0;
	ok(art_retry_backoff_ms(&r, 1) == 0 && art_retry_backoff_ms(&r, 3) == 0,
	    "base 0: no wait");
	r = (struct art_retry){ 60, 9, 3, 100 };
	ok(art_retry_backoff_ms(&r, 2) == 9000, "base 3: 3^2 s");
	r = (struct art_retry){ 60, 9, 2, 0 };
	ok(art_retry_backoff_ms(&r, 3) == 0, "max 0: no wait");
	r = (struct art_retry){ 60, 9, 1.5, 60 };
	ok(art_retry_backoff_ms(&r, 2) == 2250, "fractional base: 1.5^2 s");
}

static void
test_deadline_is_now_plus_the_timeout(void)
{
	struct art_retry r;

	art_retry_default(&r, ART_KIND_LLM);
	ok(art_retry_deadline_ms(&r, 1767323045000) == 1767323225000,
	    "llm: now + 180 s");
	r.timeout_secs = 0.25;
	ok(art_retry_deadline_ms(&r, 1000) == 1250, "fractions of a second");
	r.timeout_secs = 0;
	ok(art_retry_deadline_ms(&r, 1000) == 1000, "timeout 0: due at once");
}

/*
 * A policy comes from a worker's response, so its numbers are untrusted:
 * a huge one must be refused or saturate, never wrap into the past.
 */
static void
test_huge_policies_do_not_wrap(void)
{
	struct art_retry r;
	struct art_err err;
	int64_t now = 1767323045000;
	int rc;

	art_retry_default(&r, ART_KIND_LLM);
	rc = layer(&r, "{\"timeout_secs\":1e300}", &err);
	ok(rc == -1 || art_retry_deadline_ms(&r, now) >= now,
	    "timeout_secs 1e300: refused, or a deadline not before now");
	art_retry_default(&r, ART_KIND_LLM);
	rc = layer(&r, "{\"backoff_base_secs\":10,\"backoff_max_secs\":1e300}",
	    &err);
	ok(rc == -1 || art_retry_backoff_ms(&r, 400) >= 0,
	    "backoff_max_secs 1e300: refused, or a wait that is not negative");
}

static void
test_policies_round_trip_as_json(void)
{
	struct art_retry r, back;
	struct art_err err;
	jv j;

	art_retry_default(&r, ART_KIND_LLM);
	ok(is_json(art_retry_json(&r), "{\"timeout_secs\":180,"
	    "\"max_retries\":4,\"backoff_base_secs\":2,\"backoff_max_secs\":"
	    "30}"),
	    "the seed's RetryPolicy fields");
	r = (struct art_retry){ -1, 3, 0, 7 };
	j = art_retry_json(&r);
	art_retry_default(&back, ART_KIND_DECISION);
	ok(art_retry_layer(&back, &j, &err) == 0 && same(&back, -1, 3, 0, 7),
	    "laying a policy's JSON over another gives it back");
	jv_free(j);
}

static int
check(const char *text, struct art_err *err)
{
	jv p = art_json_parse_str(text, err);
	int rc = art_retry_check(&p, err);

	jv_free(p);
	return rc;
}

static void
test_a_policy_given_whole_names_what_it_lacks(void)
{
	struct art_err err;

	ok(check("{\"timeout_secs\":null,\"max_retries\":1,"
	    "\"backoff_base_secs\":0,\"backoff_max_secs\":0}", &err) == 0,
	    "all four members: a RetryPolicy");
	ok(check("null", &err) == 0, "null: no policy, nothing to check");
	ok(check("{\"max_retries\":1,\"backoff_base_secs\":0,"
	    "\"backoff_max_secs\":0}", &err) == -1 &&
	    strcmp(err.code, "bad_field") == 0 &&
	    strstr(err.msg, "missing member 'timeout_secs'") != NULL,
	    "a missing timeout_secs is named");
	ok(check("{\"timeout_secs\":5,\"max_retries\":1,"
	    "\"backoff_base_secs\":0}", &err) == -1 &&
	    strstr(err.msg, "'backoff_max_secs'") != NULL,
	    "a missing backoff_max_secs is named");
	ok(check("{}", &err) == -1 && strstr(err.msg, "'timeout_secs'") !=
	    NULL, "an empty policy is not one");
	ok(check("{\"timeout_secs\":5,\"max_retries\":\"1\","
	    "\"backoff_base_secs\":0,\"backoff_max_secs\":0}", &err) == -1 &&
	    strstr(err.msg, "max_retries") != NULL, "a mistyped member is named");
	ok(check("3", &err) == -1, "a number is not a policy");
}

int
main(void)
{
	test_each_kind_has_its_default_policy();
	test_layering_keeps_absent_fields();
	test_a_null_timeout_is_unbounded();
	test_bad_policies_are_refused();
	test_retry_again_counts_attempts_from_one();
	test_backoff_is_base_to_the_attempt_capped();
	test_deadline_is_now_plus_the_timeout();
	test_huge_policies_do_not_wrap();
	test_policies_round_trip_as_json();
	test_a_policy_given_whole_names_what_it_lacks();
	return tap_done();
}
