/* price-test - costs from the price table, exact in decimal */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "price.h"
#include "tap.h"
#include "testjv.h"

static jv
usage(const char *text)
{
	return jv_parse(text);
}

/* The cost as text ("null" when none), for comparing. */
static int
cost_is(const struct art_prices *t, const char *model, const char *u,
    const char *want)
{
	jv us = usage(u), c = art_prices_cost(t, model, &us);
	int r;

	jv_free(us);
	if (jv_get_kind(c) == JV_KIND_NULL)
		r = strcmp(want, "null") == 0;
	else
		r = jv_get_kind(c) == JV_KIND_STRING &&
		    strcmp(jv_string_value(c), want) == 0;
	if (!r) {
		jv d = jv_dump_string(jv_copy(c), 0);

		printf("#   got %s want %s\n", jv_string_value(d), want);
		jv_free(d);
	}
	jv_free(c);
	return r;
}

/* The sum of two cost texts (NULL: missing), as a C string compare. */
static int
sum_is(const char *a, const char *b, const char *want)
{
	jv x = a != NULL ? jv_string(a) : jv_null();
	jv y = b != NULL ? jv_string(b) : jv_null();
	jv r = art_prices_sum(&x, &y);
	int yes = jv_get_kind(r) == JV_KIND_STRING &&
	    strcmp(jv_string_value(r), want) == 0;

	if (!yes)
		printf("#   %s + %s: got %s, want %s\n", a ? a : "null",
		    b ? b : "null", jv_get_kind(r) == JV_KIND_STRING ?
		    jv_string_value(r) : "?", want);
	jv_free(x);
	jv_free(y);
	jv_free(r);
	return yes;
}

static void
test_costs_add_up_exactly(void)
{
	jv n1 = jv_number(0.5), s1 = jv_string("1"), r;

	ok(sum_is("0.00000255", "0.000000451", "0.000003001"),
	    "no place is lost: 0.00000255 + 0.000000451");
	ok(sum_is("0.000000000000001", "0", "0.000000000000001"),
	    "1e-15 dollars survives a sum");
	ok(sum_is("0.5", "0.5", "1") && sum_is("9.99", "0.01", "10") &&
	    sum_is("99", "1", "100"), "carries, trailing zeros and points go");
	ok(sum_is(NULL, "0.012", "0.012") && sum_is(NULL, NULL, "0"),
	    "a missing cost counts as 0");
	ok(sum_is("1e-6", "0.000001", "2e-06"),
	    "a cost in another form is added as a double");
	r = art_prices_sum(&n1, &s1);
	ok(jv_get_kind(r) == JV_KIND_STRING &&
	    strcmp(jv_string_value(r), "1.5") == 0, "a number too");
	jv_free(r);
	jv_free(n1);
	jv_free(s1);
}

static void
test_the_table_lists(void)
{
	struct art_prices *t = art_prices_new();
	struct art_err err;
	jv all, extra;

	all = art_prices_list(t);
	ok(is_json(jv_array_get(jv_copy(all), 0), "{\"model\":"
	    "\"anthropic/claude-3-5-haiku\",\"model_id\":\"claude-3-5-haiku\","
	    "\"provider\":\"anthropic\",\"pricing\":{"
	    "\"input_per_million_tokens\":0.8,\"output_per_million_tokens\":4,"
	    "\"cache_read_per_million_tokens\":0.08,"
	    "\"cache_write_per_million_tokens\":1}}"),
	    "an entry as the runtime API's ModelEntry, sorted first");
	ok(jv_array_length(jv_copy(all)) == 9, "the nine built in");
	jv_free(all);
	extra = jv_parse("{\"openai/aaa\":{\"input\":\"0.000000001\","
	    "\"output\":\"1000\"}}");
	ok(art_prices_add(t, &extra, &err) == 0, "one more added");
	jv_free(extra);
	all = art_prices_list(t);
	ok(is_json(jv_array_get(jv_copy(all), 4), "{\"model\":"
	    "\"openai/aaa\",\"model_id\":\"aaa\",\"provider\":\"openai\","
	    "\"pricing\":{\"input_per_million_tokens\":1e-09,"
	    "\"output_per_million_tokens\":1000,"
	    "\"cache_read_per_million_tokens\":1e-09,"
	    "\"cache_write_per_million_tokens\":1e-09}}") &&
	    jv_array_length(jv_copy(all)) == 10,
	    "an added model takes its place in the order; cache prices not "
	    "given are the input's");
	jv_free(all);
	art_prices_free(t);
}

int
main(void)
{
	struct art_prices *t = art_prices_new();
	struct art_err err;
	char path[] = "/tmp/price-test-XXXXXX";
	FILE *f;
	int fd;
	jv bad;

	ok(t != NULL, "a table with the built-in prices");
	/* 1000 uncached in at 0.15, 200 cached at 0.075, 500 out at 0.60. */
	ok(cost_is(t, "openai/gpt-4o-mini", "{\"uncached_input\":1000,"
	    "\"cache_read\":200,\"output\":500}", "0.000465"),
	    "gpt-4o-mini: input, cached input and output priced apart");
	ok(cost_is(t, "openai/gpt-4o-mini-2024-07-18",
	    "{\"uncached_input\":1,\"output\":0}", "0.00000015"),
	    "a dated name takes the entry up to a '-'");
	ok(cost_is(t, "openai/gpt-4o", "{\"uncached_input\":3,"
	    "\"output\":7}", "0.0000775"),
	    "gpt-4o is not taken for gpt-4o-mini nor the other way");
	ok(cost_is(t, "anthropic/claude-sonnet-4-20250514",
	    "{\"uncached_input\":11,\"cache_write\":100,\"cache_read\":50,"
	    "\"output\":6}", "0.000513"),
	    "anthropic: cache writes dearer than input, reads cheaper");
	ok(cost_is(t, "mock/echo", "{\"uncached_input\":10}", "null"),
	    "a model with no price has no cost");
	ok(cost_is(t, "openai/gpt-4o-mini", "{}", "null"),
	    "usage with no counts has no cost");
	ok(cost_is(t, "openai/gpt-4o-mini", "{\"uncached_input\":0,"
	    "\"output\":0}", "0"), "zero tokens cost \"0\"");

	fd = mkstemp(path);
	f = fdopen(fd, "w");
	fputs("{\"local/llama\":{\"input\":\"0.000000001\",\"output\":2},"
	    "\"openai/gpt-4o-mini\":{\"input\":\"1\",\"output\":\"1\"}}", f);
	fclose(f);
	ok(art_prices_load(t, path, &err) == 0, "a prices file loads");
	ok(cost_is(t, "local/llama", "{\"uncached_input\":1000000,"
	    "\"output\":1}", "0.000002001"),
	    "a file adds a model; numbers and nano-dollar strings both do");
	ok(cost_is(t, "openai/gpt-4o-mini", "{\"uncached_input\":1000000,"
	    "\"cache_read\":1000000,\"output\":0}", "2"),
	    "a file replaces a built-in entry; cache_read defaults to input");
	ok(cost_is(t, "openai/gpt-4o-mini", "{\"uncached_input\":1000000000,"
	    "\"output\":1000000000}", "2000"), "large counts stay exact");

	f = fopen(path, "w");
	fputs("{\"x/y\":{\"input\":\"cheap\",\"output\":\"1\"}}", f);
	fclose(f);
	ok(art_prices_load(t, path, &err) == -1 &&
	    strstr(err.msg, "'x/y': 'input' is not a price") != NULL,
	    "a price that is not a number is refused, naming it: %s",
	    err.msg);
	f = fopen(path, "w");
	fputs("{\"x/y\":{\"input\":\"1\"}}", f);
	fclose(f);
	ok(art_prices_load(t, path, &err) == -1 &&
	    strstr(err.msg, "missing 'output'") != NULL,
	    "a missing output price is refused: %s", err.msg);
	f = fopen(path, "w");
	fputs("not json", f);
	fclose(f);
	ok(art_prices_load(t, path, &err) == -1 &&
	    strstr(err.msg, path) != NULL && art_err_is(&err, "bad_prices"),
	    "a file that is not JSON is refused, naming it: %s", err.msg);
	ok(art_prices_load(t, "/nonexistent/prices.json", &err) == -1,
	    "a missing file is refused: %s", err.msg);
	bad = jv_parse("[1]");
	ok(art_prices_add(t, &bad, &err) == -1, "a table that is not an "
	    "object is refused: %s", err.msg);
	jv_free(bad);
	ok(cost_is(t, "x/y", "{\"uncached_input\":1}", "null"),
	    "a refused file adds nothing");
	unlink(path);
	art_prices_free(t);
	art_prices_free(NULL);
	test_costs_add_up_exactly();
	test_the_table_lists();
	return tap_done();
}
