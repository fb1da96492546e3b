/* json-test - typed getters, parsing, canonical text and equality */
#include "json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

/* A parsed value for a test; aborts on a typo in the test itself. */
static jv
parse(const char *text)
{
	struct art_err err;
	jv v = art_json_parse_str(text, &err);

	if (!jv_is_valid(v)) {
		fprintf(stderr, "bad test input %s: %s\n", text, err.msg);
		abort();
	}
	return v;
}

static int
err_is(const struct art_err *err, const char *code, const char *msg)
{
	return err->code != NULL && strcmp(err->code, code) == 0 &&
	    strcmp(err->msg, msg) == 0;
}

/* The canonical text of text, in buf. */
static const char *
canon(const char *text, char *buf, size_t size)
{
	jv c = art_json_canon(parse(text));

	snprintf(buf, size, "%s", jv_string_value(c));
	jv_free(c);
	return buf;
}

static int
equal(const char *a, const char *b)
{
	jv va = parse(a), vb = parse(b);
	int eq = art_json_equal(&va, &vb);

	jv_free(va);
	jv_free(vb);
	return eq;
}

/* --- getters --- */

static void
test_get_str_returns_a_present_string(void)
{
	struct art_err err;
	const char *s = NULL;
	jv obj = parse("{\"model\":\"mock/echo\",\"n\":1}");

	ok(art_json_get_str(&obj, "model", 1, &s, &err) == 0 && s != NULL &&
	    strcmp(s, "mock/echo") == 0, "a present string is returned");
	ok(jv_get_kind(obj) == JV_KIND_OBJECT &&
	    jv_object_length(jv_copy(obj)) == 2,
	    "obj is borrowed, not consumed");
	ok(strcmp(s, "mock/echo") == 0, "the string lives as long as obj");
	jv_free(obj);
}

static void
test_missing_required_field_is_missing_field(void)
{
	struct art_err err;
	const char *s = "keep";
	int64_t i = 7;
	int b = 7;
	jv obj = parse("{\"y\":1}"), k = jv_true();

	art_err_clear(&err);
	ok(art_json_get_str(&obj, "x", 1, &s, &err) == -1 &&
	    err_is(&err, "bad_field", "missing field 'x'"),
	    "str: -1, bad_field, \"missing field 'x'\" (%s)", err.msg);
	art_err_clear(&err);
	ok(art_json_get_int(&obj, "x", 1, &i, &err) == -1 &&
	    err_is(&err, "bad_field", "missing field 'x'"),
	    "int: -1, bad_field, \"missing field 'x'\"");
	art_err_clear(&err);
	ok(art_json_get_bool(&obj, "x", 1, &b, &err) == -1 &&
	    err_is(&err, "bad_field", "missing field 'x'"),
	    "bool: -1, bad_field, \"missing field 'x'\"");
	art_err_clear(&err);
	ok(art_json_get_kind(&obj, "x", JV_KIND_ARRAY, 1, &k, &err) == -1 &&
	    err_is(&err, "bad_field", "missing field 'x'"),
	    "kind: -1, bad_field, \"missing field 'x'\"");
	ok(strcmp(s, "keep") == 0 && i == 7 && b == 7 &&
	    jv_get_kind(k) == JV_KIND_TRUE, "a failure leaves *out alone");
	jv_free(k);
	jv_free(obj);
}

static void
test_wrong_kind_names_both_kinds(void)
{
	struct art_err err;
	const char *s = NULL;
	int64_t i = 0;
	int b = 0;
	jv obj = parse("{\"x\":1,\"s\":\"1\",\"a\":[],\"o\":{}}"), k;

	ok(art_json_get_str(&obj, "x", 1, &s, &err) == -1 &&
	    err_is(&err, "bad_field", "field 'x': expected string, got number"),
	    "str of a number (%s)", err.msg);
	ok(art_json_get_str(&obj, "x", 0, &s, &err) == -1 &&
	    err_is(&err, "bad_field", "field 'x': expected string, got number"),
	    "an optional field of the wrong kind is an error too");
	ok(art_json_get_int(&obj, "s", 1, &i, &err) == -1 &&
	    strncmp(err.msg, "field 's': expected ", 20) == 0 &&
	    strstr(err.msg, "got string") != NULL,
	    "int of a string (%s)", err.msg);
	ok(art_json_get_bool(&obj, "a", 1, &b, &err) == -1 &&
	    err_is(&err, "bad_field", "field 'a': expected boolean, got array"),
	    "bool of an array (%s)", err.msg);
	ok(art_json_get_kind(&obj, "a", JV_KIND_OBJECT, 1, &k, &err) == -1 &&
	    err_is(&err, "bad_field", "field 'a': expected object, got array"),
	    "kind object of an array (%s)", err.msg);
	ok(art_json_get_kind(&obj, "o", JV_KIND_STRING, 0, &k, &err) == -1 &&
	    err_is(&err, "bad_field", "field 'o': expected string, got object"),
	    "kind string of an object (%s)", err.msg);
	jv_free(obj);
}

static void
test_optional_missing_field_leaves_out_unchanged(void)
{
	struct art_err err;
	const char *s = "keep";
	int64_t i = 42;
	int b = 3;
	jv obj = parse("{\"y\":1}"), k = jv_string("keep");

	ok(art_json_get_str(&obj, "x", 0, &s, &err) == 0 &&
	    strcmp(s, "keep") == 0, "str: 0, *out unchanged");
	ok(art_json_get_int(&obj, "x", 0, &i, &err) == 0 && i == 42,
	    "int: 0, *out unchanged");
	ok(art_json_get_bool(&obj, "x", 0, &b, &err) == 0 && b == 3,
	    "bool: 0, *out unchanged");
	ok(art_json_get_kind(&obj, "x", JV_KIND_OBJECT, 0, &k, &err) == 0 &&
	    jv_get_kind(k) == JV_KIND_STRING &&
	    strcmp(jv_string_value(k), "keep") == 0, "kind: 0, *out unchanged");
	jv_free(k);
	jv_free(obj);
}

static void
test_get_int_takes_exact_integers(void)
{
	static const struct {
		const char	*text;
		int64_t		 want;
	} cases[] = {
		{ "{\"n\":0}", 0 },
		{ "{\"n\":-17}", -17 },
		{ "{\"n\":2.0}", 2 },
		{ "{\"n\":1e2}", 100 },
		{ "{\"n\":9007199254740991}", INT64_C(9007199254740991) },
		{ "{\"n\":-9007199254740991}", -INT64_C(9007199254740991) },
	};
	struct art_err err;
	int64_t n;
	size_t i;
	jv obj;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		obj = parse(cases[i].text);
		n = -1;
		ok(art_json_get_int(&obj, "n", 1, &n, &err) == 0 &&
		    n == cases[i].want, "%s gives %lld", cases[i].text,
		    (long long)cases[i].want);
		jv_free(obj);
	}
}

static void
test_get_int_rejects_fractions_and_inexact_integers(void)
{
	static const char *const cases[] = {
		"{\"n\":1.5}",
		"{\"n\":-0.25}",
		"{\"n\":9007199254740992}",	/* 2^53: 2^53 + 1 reads as it */
		"{\"n\":-9007199254740992}",
		"{\"n\":9007199254740994}",	/* 2^53 + 2: a double */
		"{\"n\":-9007199254740994}",
		"{\"n\":18446744073709551616}",
		"{\"n\":1e300}",
		"{\"n\":1e400}",	/* +infinity in libjq 1.6 */
	};
	struct art_err err;
	int64_t n;
	size_t i;
	jv obj;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		obj = parse(cases[i]);
		n = 99;
		art_err_clear(&err);
		ok(art_json_get_int(&obj, "n", 1, &n, &err) == -1 && n == 99 &&
		    err.code != NULL && strcmp(err.code, "bad_field") == 0 &&
		    strncmp(err.msg, "field 'n': ", 11) == 0,
		    "%s is rejected (%s)", cases[i], err.msg);
		jv_free(obj);
	}
}

static void
test_get_bool_reads_true_and_false(void)
{
	struct art_err err;
	int t = -1, f = -1;
	jv obj = parse("{\"t\":true,\"f\":false}");

	ok(art_json_get_bool(&obj, "t", 1, &t, &err) == 0 && t == 1,
	    "true is 1");
	ok(art_json_get_bool(&obj, "f", 1, &f, &err) == 0 && f == 0,
	    "false is 0");
	jv_free(obj);
}

static void
test_get_kind_gives_an_owned_value(void)
{
	struct art_err err;
	jv obj = parse("{\"args\":{\"q\":[1,2]}}"), args = jv_null();

	ok(art_json_get_kind(&obj, "args", JV_KIND_OBJECT, 1, &args,
	    &err) == 0 && jv_get_kind(args) == JV_KIND_OBJECT,
	    "an object field of kind object");
	jv_free(obj);	/* args must outlive obj: it is the caller's */
	ok(jv_object_length(jv_copy(args)) == 1, "*out is the caller's own");
	jv_free(args);
}

/* --- str and field --- */

static void
test_str_and_field_on_non_objects(void)
{
	static const char *const texts[] = {
		"[\"x\"]", "\"x\"", "null", "1", "true",
	};
	size_t i;
	jv v, f;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		v = parse(texts[i]);
		f = art_json_field(&v, "x");
		ok(art_json_str(&v, "x") == NULL &&
		    jv_get_kind(f) == JV_KIND_NULL,
		    "%s: str is NULL, field is null", texts[i]);
		jv_free(f);
		jv_free(v);
	}
	v = jv_invalid();
	f = art_json_field(&v, "x");
	ok(art_json_str(&v, "x") == NULL && jv_get_kind(f) == JV_KIND_NULL,
	    "invalid: str is NULL, field is null");
	jv_free(f);
	jv_free(v);
}

static void
test_str_and_field_on_objects(void)
{
	jv obj = parse("{\"s\":\"v\",\"n\":1,\"a\":[1]}");
	jv f = art_json_field(&obj, "a"), m = art_json_field(&obj, "missing");
	const char *s = art_json_str(&obj, "s");

	ok(s != NULL && strcmp(s, "v") == 0, "str of a string field");
	ok(art_json_str(&obj, "n") == NULL, "str of a number field is NULL");
	ok(art_json_str(&obj, "missing") == NULL, "str of a missing field");
	ok(jv_get_kind(f) == JV_KIND_ARRAY, "field gives the value");
	ok(jv_get_kind(m) == JV_KIND_NULL, "a missing field is null");
	jv_free(f);
	jv_free(m);
	jv_free(obj);
}

/* --- parse --- */

static void
test_parse_takes_one_value(void)
{
	static const char text[] = " {\"a\" : [1, \"\\u00e9\", null]} \n";
	struct art_err err;
	jv v = art_json_parse(text, sizeof(text) - 1, &err), c;

	if (!ok(jv_is_valid(v), "a valid object parses"))
		return;
	c = art_json_canon(v);
	ok(strcmp(jv_string_value(c), "{\"a\":[1,\"\xc3\xa9\",null]}") == 0,
	    "to the right value (%s)", jv_string_value(c));
	jv_free(c);
	v = art_json_parse_str("42", &err);
	ok(jv_get_kind(v) == JV_KIND_NUMBER && jv_number_value(v) == 42,
	    "a bare number parses");
	jv_free(v);
}

static void
test_parse_failure_is_bad_json_without_the_input(void)
{
	static const char *const bad[] = {
		"{\"key\":SECRET_TOKEN}",
		"{\"key\":\"SECRET_TOKEN\"",
		"{\"key\":\"SECRET_TOKEN\"} {}",
		"[\"SECRET_TOKEN\",]",
		"",
		"   ",
	};
	struct art_err err;
	size_t i;
	jv v;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		art_err_clear(&err);
		v = art_json_parse_str(bad[i], &err);
		ok(!jv_is_valid(v) && err.code != NULL &&
		    strcmp(err.code, "bad_json") == 0,
		    "'%s' is bad_json (%s)", bad[i], err.msg);
		ok(strstr(err.msg, "SECRET") == NULL &&
		    strstr(err.msg, "while parsing") == NULL &&
		    strchr(err.msg, '\n') == NULL,
		    "its message does not quote the input");
		jv_free(v);
	}
}

/*
 * libjq 1.6 leaks the string it refuses after a value that waits in an
 * array or object; the sanitizer build's LeakSanitizer fails this test
 * at exit if any of these lines leaks.  The messages stay libjq's.
 */
static void
test_bad_json_leaks_nothing(void)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ "{\"a\"\"b\"}", "Expected separator between values at "
		    "line 1, column 7" },
		{ "[1 \"b\"]", "Expected separator between values at line "
		    "1, column 6" },
		{ "[1,\n \"a\" \"b\"]", "Expected separator between values "
		    "at line 2, column 8" },
		{ "{\"a\":1 \"b\":2}", "Expected separator" },
		{ "[{} \"a\"]", "Expected separator" },
		{ "[[] \"a\"]", "Expected separator" },
		{ "1[\"a\" \"b\"]", "Expected separator" },
		{ "\xef\xbb\xbf[\"a\" \"b\"]", "Expected separator" },
		{ "[nan \"a\"]", "Expected separator" },
		{ "[1,]", "Expected another array element" },
		{ "{\"a\":}", "" },
		{ "{\"a\":1,}", "" },
		{ "\"abc", "" },
		{ "[\"abc", "" },
		{ "[\"a\" \"\\q\"]", "Invalid escape" },
		{ "[\"a\" \"\\u12\"]", "Invalid \\uXXXX escape" },
		{ "[\"a\" \"\\ud800\"]", "surrogate pair" },
		{ "[\"a\" \"\x01\"]", "control character 0x01 at byte 7" },
		{ "[tru \"a\"]", "Invalid literal" },
		{ "[1e \"a\"]", "Invalid numeric literal" },
		{ "{1:2}", "" },
		{ "[1]]", "" },
		{ "{\"a\":1]", "" },
		{ "\"a\" \"b\"", "" },
		{ "1 2 [\"a\" \"b\"]", "" },
		{ "1\x1e[\"a\" \"b\"]", "control character 0x1e at byte 2" },
		{ "[\"a\x1e\" \"b\"]", "control character 0x1e" },
		/* The fuzzer's: libjq 1.6 leaked the key ("jsonrpc") here. */
		{ "{\"jsonrpc\":\v2.0\",\"id\":1}", "control character 0x0b at byte 12" },
		{ "[nan\x01 \"a\"]", "" },
	};
	/*
	 * libjq reads a literal up to a NUL ([1,\0x "a"] is [1,0 "a"]), and
	 * takes a NUL in a string: JSON takes neither.
	 */
	static const char nul[] = "[1,\0x \"a\"]", nuls[] = "[\"a\0\" \"b\"]";
	struct art_err err;
	size_t i, k;
	int same = 1;
	jv v;

	v = art_json_parse(nul, sizeof(nul) - 1, &err);
	ok(!jv_is_valid(v) && strstr(err.msg, "control character 0x00 at "
	    "byte 4") != NULL, "a NUL in a literal: %s",
	    err.msg);
	jv_free(v);
	v = art_json_parse(nuls, sizeof(nuls) - 1, &err);
	ok(!jv_is_valid(v) && strstr(err.msg, "control character 0x00 at "
	    "byte 4") != NULL, "a NUL in a string: %s",
	    err.msg);
	jv_free(v);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		art_err_clear(&err);
		v = art_json_parse_str(bad[i].text, &err);
		ok(!jv_is_valid(v) && art_err_is(&err, "bad_json") &&
		    strncmp(err.msg, "not valid JSON: ", 16) == 0 &&
		    strstr(err.msg, bad[i].msg) != NULL, "bad line %zu: %s", i,
		    err.msg);
		jv_free(v);
	}
	/* Many of them: a leak of a few bytes each shows even without LSan. */
	for (k = 0; k < 2000; k++) {
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			v = art_json_parse_str(bad[i].text, &err);
			same &= !jv_is_valid(v);
			jv_free(v);
		}
		v = art_json_parse(nul, sizeof(nul) - 1, &err);
		same &= !jv_is_valid(v);
		jv_free(v);
		v = art_json_parse(nuls, sizeof(nuls) - 1, &err);
		same &= !jv_is_valid(v);
		jv_free(v);
	}
	ok(same, "every one fails every time");
	v = art_json_parse_str("{\"a\":[\"b\",\"c\"],\"d\":{\"e\":\"f\"}}",
	    &err);
	ok(jv_get_kind(v) == JV_KIND_OBJECT, "good text still parses");
	jv_free(v);
}

/* --- canonical text --- */

static void
test_canon_sorts_keys_at_every_depth(void)
{
	char buf[256];

	ok(strcmp(canon("{\"b\":{\"d\":1,\"c\":[{\"z\":1,\"y\":{\"q\":0,"
	    "\"p\":0}}]},\"a\":true}", buf, sizeof(buf)),
	    "{\"a\":true,\"b\":{\"c\":[{\"y\":{\"p\":0,\"q\":0},\"z\":1}],"
	    "\"d\":1}}") == 0, "keys sorted at every depth (%s)", buf);
}

static void
test_canon_is_compact(void)
{
	char buf[256];

	ok(strcmp(canon(" {\n\t\"a\" : [ 1 , 2 ] ,\r\n \"b\" : { } } ", buf,
	    sizeof(buf)), "{\"a\":[1,2],\"b\":{}}") == 0,
	    "no whitespace (%s)", buf);
	ok(strcmp(canon("\"a b\"", buf, sizeof(buf)), "\"a b\"") == 0,
	    "spaces inside strings stay");
}

/*
 * By code point, not by UTF-16 unit: U+FF5A sorts before U+1F600 (in
 * UTF-16 the surrogate D83D would put the emoji first).
 */
static void
test_canon_sorts_keys_by_code_point(void)
{
	char buf[256];

	ok(strcmp(canon("{\"\xf0\x9f\x98\x80\":4,\"\xef\xbd\x9a\":3,"
	    "\"\xc3\xa9\":2,\"z\":1,\"Z\":0,\"\":5}", buf, sizeof(buf)),
	    "{\"\":5,\"Z\":0,\"z\":1,\"\xc3\xa9\":2,\"\xef\xbd\x9a\":3,"
	    "\"\xf0\x9f\x98\x80\":4}") == 0, "keys by code point (%s)", buf);
	ok(strcmp(canon("{\"ab\":1,\"a\":2,\"b\":3}", buf, sizeof(buf)),
	    "{\"a\":2,\"ab\":1,\"b\":3}") == 0, "a prefix sorts first");
}

/* --- equality, PROTOCOL-NOTES.md §6 --- */

static void
test_equal_ignores_key_order_and_whitespace(void)
{
	ok(equal("{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}"),
	    "{\"a\":1,\"b\":2} == {\"b\":2,\"a\":1}");
	ok(equal("{\"x\":{\"a\":[1,{\"c\":3,\"d\":4}],\"b\":null}}",
	    " { \"x\" : { \"b\" : null ,\n"
	    "\t\"a\" : [ 1 , {\"d\":4,\"c\":3} ] } }\r\n"),
	    "nested objects in any order and spacing");
	ok(!equal("{\"a\":1,\"b\":2}", "{\"a\":1,\"b\":3}"),
	    "a different value differs");
	ok(!equal("{\"a\":1}", "{\"a\":1,\"b\":2}"), "an extra key differs");
}

static void
test_equal_null_field_differs_from_absent(void)
{
	ok(!equal("{\"a\":null}", "{}"), "{\"a\":null} != {}");
	ok(equal("{\"a\":null}", "{\"a\":null}"), "{\"a\":null} == itself");
	ok(!equal("null", "{}"), "null != {}");
	ok(!equal("[null]", "[]"), "[null] != []");
}

static void
test_equal_arrays_are_ordered(void)
{
	ok(!equal("[1,2]", "[2,1]"), "[1,2] != [2,1]");
	ok(equal("[1,2]", "[ 1 , 2 ]"), "[1,2] == [ 1 , 2 ]");
	ok(!equal("[]", "{}"), "[] != {}");
}

static void
test_equal_strings_by_code_point(void)
{
	ok(equal("\"\\u00e9\"", "\"\xc3\xa9\""),
	    "an escaped and a raw U+00E9 are one string");
	ok(!equal("\"\xc3\xa9\"", "\"e\xcc\x81\""),
	    "U+00E9 differs from e + U+0301 (no normalization)");
	ok(equal("\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\""),
	    "a surrogate-pair escape is its code point");
	ok(!equal("\"a\"", "\"A\""), "case matters");
	ok(!equal("\"1\"", "1"), "\"1\" != 1");
}

/*
 * PROTOCOL-NOTES §6 wants integer 1 != float 1.0, but libjq 1.6 holds every
 * number as a double and cannot tell them apart; json.h documents that on
 * our bus they are one number.
 */
static void
test_equal_one_and_one_point_zero_are_one_number(void)
{
	ok(equal("1", "1.0"), "1 == 1.0");
	ok(equal("{\"n\":100}", "{\"n\":1e2}"), "100 == 1e2");
	ok(!equal("1", "1.5"), "1 != 1.5");
	ok(!equal("true", "1"), "true != 1");
	ok(!equal("false", "null"), "false != null");
}

/* Numbers compare by value (json.h), and -0 == 0 as values. */
static void
test_equal_zero_and_negative_zero_are_one_number(void)
{
	ok(equal("0", "-0"), "0 == -0");
	ok(equal("{\"n\":0.0}", "{\"n\":-0.0}"), "0.0 == -0.0 in an object");
}

static void
test_equal_borrows_both(void)
{
	jv a = parse("{\"a\":[1]}"), b = parse("{\"a\":[1]}");

	ok(art_json_equal(&a, &b) && art_json_equal(&a, &b) &&
	    art_json_equal(&a, &a), "asked again: nothing was consumed");
	jv_free(a);
	jv_free(b);
}

static void
test_kind_names(void)
{
	static const struct {
		jv_kind		 kind;
		const char	*name;
	} kinds[] = {
		{ JV_KIND_INVALID, "invalid" },
		{ JV_KIND_NULL, "null" },
		{ JV_KIND_FALSE, "boolean" },
		{ JV_KIND_TRUE, "boolean" },
		{ JV_KIND_NUMBER, "number" },
		{ JV_KIND_STRING, "string" },
		{ JV_KIND_ARRAY, "array" },
		{ JV_KIND_OBJECT, "object" },
	};
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		ok(strcmp(art_json_kind_name(kinds[i].kind),
		    kinds[i].name) == 0, "kind %d is \"%s\"",
		    (int)kinds[i].kind, kinds[i].name);
}

/* art_json_dump writes what jv_dump_string(v, 0) writes, only faster. */
static void
test_dump_matches_libjq_byte_for_byte(void)
{
	static const char *const cases[] = {
		"{\"a\":[1,2.5,-0,1e400,0.1,1e-7,123456789012345678,1.5e300]}",
		"[0.3,100,1e16,1e17,12345678901234567890,0.000001,0.0001,1e21]",
		"[-2.25e-300,3.14159,-123.456,1e5,5e-324,9007199254740993]",
		"[12000000,-1.2e7,1764620000000,1e15,2.5e15,1e16,0.00012,1.25e-5]",
		"{\"s\":\"q\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u007f\\u0080\"}",
		"{\"u\":\"\u00e9\u00f0\u9fa5 \\ud83d\\ude00\"}",
		"{\"n\":null,\"t\":true,\"f\":false,\"e\":{},\"ea\":[]}",
		"[[[[]]],{\"z\":{\"y\":[1,{\"x\":\"\"}]}}]",
		"\"plain\"", "42", "null",
	};
	struct art_err err;
	size_t i, n;
	char *ours;
	jv v, theirs;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = art_json_parse_str(cases[i], &err);
		theirs = jv_dump_string(jv_copy(v), 0);
		ours = art_json_dump(&v, &n);
		if (!ok(ours != NULL && strcmp(ours, jv_string_value(theirs)) ==
		    0 && n == strlen(ours), "dump of case %zu matches libjq", i))
			printf("#   ours   %s\n#   libjq  %s\n", ours,
			    jv_string_value(theirs));
		free(ours);
		jv_free(theirs);
		jv_free(v);
	}
}

/* Integers take a short way out of the dump: the same bytes as libjq's. */
static void
test_dump_of_integers_matches_libjq(void)
{
	static const double pow10[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7,
	    1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16 };
	struct art_err err;
	size_t n, bad = 0, tried = 0, k;
	char *ours;
	jv v, theirs;
	double d;
	int i;

	(void)err;
	for (k = 0; k < sizeof(pow10) / sizeof(pow10[0]); k++) {
		for (i = -1200; i <= 1200; i += 7) {
			d = (double)i * pow10[k] + (k > 2 ? (double)(i % 3) : 0);
			v = jv_array_append(jv_array(), jv_number(d));
			theirs = jv_dump_string(jv_copy(v), 0);
			ours = art_json_dump(&v, &n);
			tried++;
			if (ours == NULL || strcmp(ours, jv_string_value(theirs)))
				if (bad++ == 0)
					printf("#   ours %s, libjq %s\n", ours,
					    jv_string_value(theirs));
			free(ours);
			jv_free(theirs);
			jv_free(v);
		}
	}
	ok(bad == 0, "%zu integers from -1.2e19 to 1.2e19 dump as libjq "
	    "dumps them (%zu differ)", tried, bad);
}

static int
scan(const char *text, char *type, char *trigger)
{
	return art_json_scan(text, strlen(text), type, trigger, 64);
}

static void
test_scan_finds_type_and_trigger_type_without_parsing(void)
{
	char t[64], tr[64];

	ok(scan("{\"type\":\"decision.request\",\"x\":[1,{\"type\":\"no\"}],"
	    "\"trigger\":{\"id\":\"c\",\"type\":\"tool.execute\"}}", t, tr) &&
	    strcmp(t, "decision.request") == 0 &&
	    strcmp(tr, "tool.execute") == 0,
	    "top-level type and trigger type, nested types ignored");
	ok(scan(" { \"a\" : -1.5e+3 , \"type\" : \"x\" } \r", t, tr) &&
	    strcmp(t, "x") == 0 && *tr == '\0', "whitespace, numbers, no trigger");
	ok(scan("{\"type\":\"a\\u0062\"}", t, tr) && *t == '\0',
	    "an escaped type is not copied (the caller parses)");
	ok(scan("{\"type\":7,\"trigger\":\"s\"}", t, tr) && *t == '\0' &&
	    *tr == '\0', "a type that is not a string is empty");
	ok(scan("{}", t, tr) && scan("{\"a\":[[],{},\"\",true,false,null,0]}",
	    t, tr), "every kind of value");
}

static void
test_scan_refuses_what_is_not_one_object(void)
{
	static const char *const bad[] = {
		"", "[]", "\"s\"", "{", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":1} {}",
		"{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":-}",
		"{\"a\":\"\\x\"}", "{\"a\":\"\\u12g4\"}", "{\"a\":\"\t\"}",
		"{\"a\":tru}", "{\"a\":[1 2]}", "{a:1}", "{\"a\":\"open}",
	};
	char t[64], tr[64], deep[1000];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(!scan(bad[i], t, tr), "not well-formed: %s", bad[i]);
	strcpy(deep, "{\"a\":");
	for (i = 0; i < 300; i++)
		strcat(deep, "[");
	ok(!scan(deep, t, tr), "nested too deep to scan: left to the parser");
}

/* Whatever the scanner accepts, libjq parses: it never waves through a
 * line the next stage would call bad. */
static void
test_scan_accepts_only_what_libjq_parses(void)
{
	static const char *const lines[] = {
		"{\"type\":\"a\",\"n\":[1e400,-0,0.5e-3],\"s\":\"\\ud83d\\ude00\"}",
		"{\"x\":{\"y\":{\"z\":[{}]}}}",
		"{\"type\":\"t\",\"trigger\":{\"type\":\"u\",\"k\":null}}",
	};
	struct art_err err;
	char t[64], tr[64];
	size_t i;
	jv v;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		v = art_json_parse_str(lines[i], &err);
		ok(scan(lines[i], t, tr) && jv_get_kind(v) == JV_KIND_OBJECT,
		    "scanned and parsed alike: %zu", i);
		jv_free(v);
	}
}

static void
test_set_and_set_some(void)
{
	jv o = art_json_set(jv_object(), "a", jv_number(1));
	jv want = jv_parse("{\"a\":1,\"c\":\"x\"}");

	o = art_json_set_some(o, "b", jv_null());
	o = art_json_set_some(o, "b", jv_invalid());
	o = art_json_set_some(o, "c", jv_string("x"));
	ok(art_json_equal(&o, &want), "set sets; set_some leaves out null and "
	    "invalid values");
	o = art_json_set(o, "a", jv_number(2));
	ok(jv_number_value(jv_object_get(jv_copy(o), jv_string("a"))) == 2,
	    "set replaces a key");
	jv_free(o);
	jv_free(want);
}

/*
 * Found by tests/fuzz/schema: a key on top of libjq's deepest level, then
 * one more array, wrote past the leak check's stack.  libjq says the
 * depth limit there, and so must we, reading nothing out of bounds.
 */
static void
test_depth_past_a_key(void)
{
	char text[300];
	struct art_err err;
	jv v;

	memset(text, '[', 255);
	snprintf(text + 255, sizeof(text) - 255, "{\"a\":[1]}");
	v = art_json_parse(text, strlen(text), &err);
	ok(!jv_is_valid(v) && strstr(err.msg, "Exceeds depth limit for "
	    "parsing at line 1, column 261") != NULL, "a key at the depth "
	    "limit, then an array: libjq's depth error (%s)", err.msg);
	jv_free(v);
}

static void
test_string_arrays(void)
{
	struct art_err err;
	jv a = art_json_parse_str("[\"a\",1,\"b\",\"a\"]", &err), b;
	char *t;

	ok(art_json_has_str(&a, "a") && art_json_has_str(&a, "b") &&
	    !art_json_has_str(&a, "1") && !art_json_has_str(&a, ""),
	    "has_str: strings only, exactly");
	b = art_json_without_str(jv_copy(a), "a");
	t = art_json_dump(&b, NULL);
	ok(t != NULL && strcmp(t, "[1,\"b\"]") == 0, "without_str: each "
	    "one gone, the rest in order");
	free(t);
	jv_free(b);
	b = art_json_without_str(jv_array(), "a");
	ok(jv_array_length(b) == 0, "without_str of nothing is nothing");
	jv_free(a);
}

/* check_numbers on text: "" when held, else its error's message. */
static const char *
numbers(const char *text)
{
	static struct art_err err;

	err.msg[0] = '\0';
	if (art_json_check_numbers(text, strlen(text), &err) == 0)
		return "";
	return err.msg;
}

static void
test_check_numbers(void)
{
	ok(strcmp(numbers("{\"a\":1,\"b\":[1.5,-2e10,0.1e-300,"
	    "9007199254740992,-9007199254740992,0,0.0,0e-999,1e308]}"), "") == 0,
	    "numbers a double holds pass, 2^53 and 0e-999 too");
	ok(strcmp(numbers("{\"type\":\"x\",\"v\":1e400}"), "the number at "
	    "/v (1e400) is out of range; send it as a string") == 0,
	    "1e400 is out of range, and named");
	ok(strcmp(numbers("{\"a\":{\"b\":[0,{\"c\":-1e400}]}}"), "the number "
	    "at /a/b/1/c (-1e400) is out of range; send it as a string") == 0,
	    "its member is a JSON pointer through arrays and objects");
	ok(strcmp(numbers("{\"id\":18446744073709551616}"), "the number at "
	    "/id (18446744073709551616) is an integer beyond 2^53, which a "
	    "double cannot hold exactly; send it as a string") == 0,
	    "an integer beyond 2^53");
	ok(strcmp(numbers("[1,2,0.1e-400]"), "the number at /2 (0.1e-400) is "
	    "too small: it would be recorded as 0; send it as a string") == 0,
	    "a number so small it would be 0");
	ok(strcmp(numbers("{\"s\":\"1e400\",\"k\\\"1e400\":2}"), "") == 0,
	    "numbers in strings and keys are not numbers");
	ok(strcmp(numbers("{\"a\":[[[1e999]]]}"), "the number at /a/0/0/0 "
	    "(1e999) is out of range; send it as a string") == 0,
	    "nested arrays count from 0 each");
	ok(strcmp(numbers("{\"a\":1,"), "") == 0 && strcmp(numbers("]]1e400"),
	    "") == 0, "malformed text is left to the parser");
}

int
main(void)
{
	test_string_arrays();
	test_set_and_set_some();
	test_scan_finds_type_and_trigger_type_without_parsing();
	test_scan_refuses_what_is_not_one_object();
	test_scan_accepts_only_what_libjq_parses();
	test_dump_matches_libjq_byte_for_byte();
	test_dump_of_integers_matches_libjq();
	test_get_str_returns_a_present_string();
	test_missing_required_field_is_missing_field();
	test_wrong_kind_names_both_kinds();
	test_optional_missing_field_leaves_out_unchanged();
	test_get_int_takes_exact_integers();
	test_get_int_rejects_fractions_and_inexact_integers();
	test_get_bool_reads_true_and_false();
	test_get_kind_gives_an_owned_value();
	test_str_and_field_on_non_objects();
	test_str_and_field_on_objects();
	test_parse_takes_one_value();
	test_parse_failure_is_bad_json_without_the_input();
	test_bad_json_leaks_nothing();
	test_depth_past_a_key();
	test_canon_sorts_keys_at_every_depth();
	test_canon_is_compact();
	test_canon_sorts_keys_by_code_point();
	test_equal_ignores_key_order_and_whitespace();
	test_equal_null_field_differs_from_absent();
	test_equal_arrays_are_ordered();
	test_equal_strings_by_code_point();
	test_equal_one_and_one_point_zero_are_one_number();
	test_equal_zero_and_negative_zero_are_one_number();
	test_equal_borrows_both();
	test_kind_names();
	test_check_numbers();
	return tap_done();
}
